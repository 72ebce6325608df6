package wkcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// statusFiles are the shared status tables: every language checks its
// constants, texts and identities against them.
var statusFiles = []string{"../testdata/abi/statuses.json", "../testdata/admission/statuses.json"}

type statusFile struct {
	System   string        `json:"system"`
	Range    [2]uint32     `json:"range"`
	Statuses []statusEntry `json:"statuses"`
}

type statusEntry struct {
	Name     string   `json:"name"`
	Code     uint32   `json:"code"`
	Text     string   `json:"text"`
	Upstream *string  `json:"upstream"`
	Is       []string `json:"is"`
}

// statusNames maps each C name to this package's constant (defined as the cgo
// constant of that name) and exported sentinel, if it has one.
var statusNames = map[string]struct {
	status   Status
	sentinel error
}{
	"WK_STATUS_OK":                            {StatusOK, nil},
	"WK_STATUS_NULL_ARGUMENT":                 {StatusNullArgument, ErrNullArgument},
	"WK_STATUS_INVALID_ARGUMENT":              {StatusInvalidArgument, ErrInvalidArgument},
	"WK_STATUS_PANIC":                         {StatusPanic, ErrPanic},
	"WK_STATUS_INVALID_HANDLE":                {StatusInvalidHandle, ErrInvalidHandle},
	"WK_STATUS_BUFFER_TOO_SMALL":              {StatusBufferTooSmall, ErrBufferTooSmall},
	"WK_STATUS_NOT_FOUND":                     {StatusNotFound, ErrNotFound},
	"WK_STATUS_ALREADY_EXISTS":                {StatusAlreadyExists, ErrAlreadyExists},
	"WK_STATUS_TIMEOUT":                       {StatusTimeout, nil},
	"WK_STATUS_FULL":                          {StatusFull, nil},
	"WK_STATUS_SLOT_CLOSED":                   {StatusSlotClosed, ErrSlotClosed},
	"WK_STATUS_SLOT_FAILED":                   {StatusSlotFailed, ErrSlotFailed},
	"WK_STATUS_NOT_LEADER":                    {StatusNotLeader, ErrNotLeader},
	"WK_STATUS_CONFIG_CHANGE_PENDING":         {StatusConfigChangePending, ErrConfigChangePending},
	"WK_STATUS_SLOT_BUSY":                     {StatusSlotBusy, ErrSlotBusy},
	"WK_STATUS_PROPOSAL_BACKPRESSURE":         {StatusProposalBackpressure, ErrProposalBackpressure},
	"WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED": {StatusBackgroundProposalThrottled, ErrBackgroundProposalThrottled},
	"WK_STATUS_PROPOSAL_BUSY":                 {StatusProposalBusy, nil},
	"WK_STATUS_PROPOSAL_THROTTLED":            {StatusProposalThrottled, nil},
	"WK_STATUS_SLOT_NOT_FOUND":                {StatusSlotNotFound, ErrSlotNotFound},
}

func readStatusFile(t *testing.T, path string) statusFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f statusFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Statuses) == 0 {
		t.Fatalf("%s: no statuses", path)
	}
	return f
}

// The one test that compares every status with the shared tables: the
// constant's value, the library's text, the Go error's text, and every
// identity relation (both the ones listed and the absence of any other).
func TestStatusesMatchTestdata(t *testing.T) {
	var entries []statusEntry
	for _, path := range statusFiles {
		f := readStatusFile(t, path)
		for _, e := range f.Statuses {
			if e.Code < f.Range[0] || e.Code > f.Range[1] {
				t.Errorf("%s: %s = %d outside %s's range %v", path, e.Name, e.Code, f.System, f.Range)
			}
			entries = append(entries, e)
		}
	}
	seen := map[Status]bool{}
	for _, e := range entries {
		n, ok := statusNames[e.Name]
		if !ok {
			t.Errorf("%s (%d) has no Go constant: add it to Status, knownStatuses and this test", e.Name, e.Code)
			continue
		}
		s := n.status
		seen[s] = true
		if uint32(s) != e.Code {
			t.Errorf("%s = %d in C, %d in testdata", e.Name, uint32(s), e.Code)
		}
		if got := s.String(); got != e.Text {
			t.Errorf("wk_status_str(%s) = %q, testdata %q", e.Name, got, e.Text)
		}
		err := errorForStatus(s)
		if s == StatusOK {
			if err != nil {
				t.Errorf("StatusOK maps to %v", err)
			}
			continue
		}
		if err == nil || err.Error() != e.Text {
			t.Errorf("%s: Go error %v, want text %q", e.Name, err, e.Text)
			continue
		}
		if n.sentinel != nil && n.sentinel != err {
			t.Errorf("%s: sentinel %v is not the error the status maps to", e.Name, n.sentinel)
		}
		is := map[Status]bool{s: true}
		for _, name := range e.Is {
			id, ok := statusNames[name]
			if !ok {
				t.Errorf("%s: unknown identity %s", e.Name, name)
				continue
			}
			is[id.status] = true
		}
		for _, other := range knownStatuses {
			if other == StatusOK {
				continue
			}
			target := errorForStatus(other)
			if got := errors.Is(err, target); got != is[other] {
				t.Errorf("errors.Is(%s, %v) = %v, want %v", e.Name, other, got, is[other])
			}
			if got := statusIs(s, other); got != is[other] {
				t.Errorf("wk_status_is(%s, %v) = %v, want %v", e.Name, other, got, is[other])
			}
		}
		if s == StatusSlotFailed {
			fe := FatalError{Code: 7}
			if want := e.Text + " (fatal code 7)"; fe.Error() != want {
				t.Errorf("FatalError text %q, want %q", fe.Error(), want)
			}
			for other := range is {
				if !errors.Is(fe, errorForStatus(other)) {
					t.Errorf("FatalError does not match %v", other)
				}
			}
		}
	}
	for _, s := range knownStatuses {
		if !seen[s] {
			t.Errorf("status %d (%v) of this package is missing from testdata", uint32(s), s)
		}
	}
	if len(seen) != len(knownStatuses) || len(entries) != len(knownStatuses) {
		t.Errorf("testdata has %d statuses (%d distinct), the package %d", len(entries), len(seen), len(knownStatuses))
	}
}

// A status of a newer library maps to an error that says so, with the
// library's text, and still matches the identities the library says it wraps.
func TestUnknownStatus(t *testing.T) {
	for _, raw := range []Status{10, 99, 150, 199, 250, 1000} {
		err := errorForStatus(raw)
		if err == nil || !strings.Contains(err.Error(), "unknown to this Go package") ||
			!strings.HasSuffix(err.Error(), ": unknown status") {
			t.Errorf("Status(%d): %v", raw, err)
		}
		for _, s := range knownStatuses[1:] {
			if errors.Is(err, errorForStatus(s)) {
				t.Errorf("Status(%d) matches %v", raw, s)
			}
		}
		if got := raw.String(); got != "unknown status" {
			t.Errorf("Status(%d).String() = %q", raw, got)
		}
	}
}

func TestFatalErrorMatchesErrSlotFailed(t *testing.T) {
	var err error = FatalError{Code: 9}
	var fe FatalError
	if !errors.Is(err, ErrSlotFailed) || !errors.As(err, &fe) || fe.Code != 9 {
		t.Fatalf("%v", err)
	}
	if errors.Is(err, ErrSlotClosed) || errors.Is(ErrSlotFailed, FatalError{}) {
		t.Fatal("FatalError matches too much")
	}
	if errors.Is(ErrHandleClosed, ErrInvalidHandle) || ErrHandleClosed.Error() == ErrInvalidHandle.Error() {
		t.Fatal("ErrHandleClosed must be the Go layer's own")
	}
}
