// Package status maps the C ABI's wk_status codes to Go errors, for both
// builds of every system package. The generic codes (0–99) and their errors
// live here; each system package registers the errors of its own range at
// init (Register), so a new system plugs in without editing this file.
//
// Texts are the library's (wk_status_str). Where a build has no library (the
// pure-Go build), the same texts are written here and in the system packages,
// and the tests check them against testdata/*/statuses.json and, in the cgo
// build, against wk_status_str and wk_status_is.
package status

import (
	"errors"
	"strconv"
	"sync"
)

// Code is a wk_status value. Values are numbered in ranges by system (0–99
// generic, 100–199 admission, …) and never reused.
type Code uint32

// The generic codes.
const (
	OK              Code = 0
	NullArgument    Code = 1
	InvalidArgument Code = 2
	Panic           Code = 3
	InvalidHandle   Code = 4
	BufferTooSmall  Code = 5
	NotFound        Code = 6
	AlreadyExists   Code = 7
	Timeout         Code = 8
	Full            Code = 9
)

// Error is the error of one known code: the library's text and the errors of
// the identities it wraps (errors.Is follows wk_status_is). Its Code says
// which status it stands for.
type Error struct {
	code  Code
	text  string
	wraps []error
}

// New returns the error of code with text, wrapping the given identities.
func New(code Code, text string, wraps ...error) *Error {
	return &Error{code: code, text: text, wraps: wraps}
}

// Error returns the text.
func (e *Error) Error() string { return e.text }

// Unwrap returns the wrapped identities.
func (e *Error) Unwrap() []error { return e.wraps }

// Code returns the status code.
func (e *Error) Code() Code { return e.code }

// The generic errors.
var (
	ErrNullArgument    = New(NullArgument, "wkcore: null argument")
	ErrInvalidArgument = New(InvalidArgument, "wkcore: invalid argument")
	ErrPanic           = New(Panic, "wkcore: panic")
	ErrInvalidHandle   = New(InvalidHandle, "wkcore: invalid handle")
	ErrBufferTooSmall  = New(BufferTooSmall, "wkcore: buffer too small")
	ErrNotFound        = New(NotFound, "wkcore: not found")
	ErrAlreadyExists   = New(AlreadyExists, "wkcore: already exists")
	ErrTimeout         = New(Timeout, "wkcore: timeout")
	ErrFull            = New(Full, "wkcore: full")
)

// ErrHandleClosed is returned by every method of a wrapper after Close, and
// by a Close that lost a race with another Close. It is the Go layer's own: no
// C call is made on a closed wrapper.
var ErrHandleClosed = errors.New("wkcore: handle closed")

var (
	mu    sync.RWMutex
	table = map[Code]*Error{}
)

func init() {
	for _, e := range []*Error{ErrNullArgument, ErrInvalidArgument, ErrPanic, ErrInvalidHandle,
		ErrBufferTooSmall, ErrNotFound, ErrAlreadyExists, ErrTimeout, ErrFull} {
		Register(e)
	}
}

// Register adds the errors of a system's codes. It is called from package
// init; a code registered twice panics (two systems claimed one range).
func Register(errs ...*Error) {
	mu.Lock()
	defer mu.Unlock()
	for _, e := range errs {
		if _, dup := table[e.code]; dup {
			panic("wkcore: status " + strconv.FormatUint(uint64(e.code), 10) + " registered twice")
		}
		table[e.code] = e
	}
}

// Known returns every registered error, for tests.
func Known() []*Error {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]*Error, 0, len(table))
	for _, e := range table {
		out = append(out, e)
	}
	return out
}

// Lookup returns the error of code: nil for OK, the registered error, or an
// error saying the code is unknown (a newer library). The tables are complete
// after init, so this takes a read lock on a cold path only: callers cache
// the errors of their hot statuses in variables.
func Lookup(code Code) error {
	if code == OK {
		return nil
	}
	mu.RLock()
	e, ok := table[code]
	mu.RUnlock()
	if ok {
		return e
	}
	return UnknownError(code)
}

// UnknownError is the error of a status this Go package does not know: the
// linked library is newer than the package.
type UnknownError Code

func (e UnknownError) Error() string {
	return "wkcore: status " + strconv.FormatUint(uint64(e), 10) + " is unknown to this Go package (newer library?)"
}
