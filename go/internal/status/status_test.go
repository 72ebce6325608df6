package status

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// The generic codes and texts are testdata/abi/statuses.json's, each
// registered, each matching only itself.
func TestGenericStatusesMatchTestdata(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/abi/statuses.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		System   string    `json:"system"`
		Range    [2]uint32 `json:"range"`
		Statuses []struct {
			Name     string   `json:"name"`
			Code     uint32   `json:"code"`
			Text     string   `json:"text"`
			Upstream *string  `json:"upstream"`
			Is       []string `json:"is"`
		} `json:"statuses"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	consts := map[string]Code{
		"WK_STATUS_OK": OK, "WK_STATUS_NULL_ARGUMENT": NullArgument, "WK_STATUS_INVALID_ARGUMENT": InvalidArgument,
		"WK_STATUS_PANIC": Panic, "WK_STATUS_INVALID_HANDLE": InvalidHandle, "WK_STATUS_BUFFER_TOO_SMALL": BufferTooSmall,
		"WK_STATUS_NOT_FOUND": NotFound, "WK_STATUS_ALREADY_EXISTS": AlreadyExists, "WK_STATUS_TIMEOUT": Timeout,
		"WK_STATUS_FULL": Full,
	}
	if f.System != "generic" || f.Range != [2]uint32{0, 99} || len(f.Statuses) != len(consts) {
		t.Fatalf("system %q, range %v, %d statuses; want generic, [0 99], %d", f.System, f.Range, len(f.Statuses), len(consts))
	}
	for _, e := range f.Statuses {
		c, ok := consts[e.Name]
		if !ok || uint32(c) != e.Code {
			t.Errorf("%s = %d in testdata, Go constant %d (%v)", e.Name, e.Code, c, ok)
			continue
		}
		if len(e.Is) != 0 {
			t.Errorf("%s: a generic status wraps %v", e.Name, e.Is)
		}
		err := Lookup(c)
		if c == OK {
			if err != nil {
				t.Errorf("Lookup(OK) = %v", err)
			}
			continue
		}
		var se *Error
		if !errors.As(err, &se) || se.Code() != c || err.Error() != e.Text || len(se.Unwrap()) != 0 {
			t.Errorf("Lookup(%s) = %#v, want text %q", e.Name, err, e.Text)
		}
		for _, other := range consts {
			if got := errors.Is(err, Lookup(other)); other != OK && got != (other == c) {
				t.Errorf("errors.Is(%s, %d) = %v", e.Name, other, got)
			}
		}
	}
}

// A code of a newer library maps to an error that says so and matches no
// known status.
func TestUnknownCode(t *testing.T) {
	for _, c := range []Code{10, 99, 199, 250, 1000, 1<<32 - 1} {
		err := Lookup(c)
		var u UnknownError
		if !errors.As(err, &u) || Code(u) != c || !strings.Contains(err.Error(), "unknown to this Go package") {
			t.Errorf("Lookup(%d) = %v", c, err)
		}
		for _, known := range Known() {
			if errors.Is(err, known) {
				t.Errorf("Lookup(%d) matches %v", c, known)
			}
		}
	}
}

// Register refuses a code already registered, before adding anything.
func TestRegisterTwicePanics(t *testing.T) {
	before := len(Known())
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.Contains(s, "status 2 registered twice") {
			t.Errorf("recovered %v", r)
		}
		if got := len(Known()); got != before {
			t.Errorf("%d statuses registered after the refusal, %d before", got, before)
		}
		if Lookup(InvalidArgument) != ErrInvalidArgument {
			t.Error("the refusal replaced ErrInvalidArgument")
		}
	}()
	Register(New(InvalidArgument, "again"))
}

// An Error matches the identities it wraps, transitively, and not the other
// way round.
func TestErrorWraps(t *testing.T) {
	a := New(900, "a")
	b := New(901, "b")
	ab := New(902, "ab", a, b)
	top := New(903, "top", ab)
	if !errors.Is(ab, a) || !errors.Is(ab, b) || !errors.Is(top, a) || errors.Is(a, ab) || errors.Is(a, b) {
		t.Error("wrapping")
	}
	if top.Error() != "top" || top.Code() != 903 || len(top.Unwrap()) != 1 {
		t.Errorf("%v %d %v", top, top.Code(), top.Unwrap())
	}
	if ErrHandleClosed.Error() != "wkcore: handle closed" || errors.Is(ErrHandleClosed, ErrInvalidHandle) {
		t.Error("ErrHandleClosed must be the Go layer's own")
	}
	var se *Error
	if errors.As(ErrHandleClosed, &se) {
		t.Error("ErrHandleClosed has a status code")
	}
}
