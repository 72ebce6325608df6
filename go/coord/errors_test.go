package coord

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/wukongim/wkcore/go/internal/status"
)

// statusFiles are the shared status tables this package's binary registers:
// the generic codes and the coordination range.
var statusFiles = []string{"../../testdata/abi/statuses.json", "../../testdata/coord/statuses.json"}

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

// statusSentinels maps each C name to the Go error of that status: the
// exported sentinel where there is one.
var statusSentinels = map[string]error{
	"WK_STATUS_NULL_ARGUMENT":          status.ErrNullArgument,
	"WK_STATUS_INVALID_ARGUMENT":       ErrInvalidArgument,
	"WK_STATUS_PANIC":                  ErrPanic,
	"WK_STATUS_INVALID_HANDLE":         status.ErrInvalidHandle,
	"WK_STATUS_BUFFER_TOO_SMALL":       status.ErrBufferTooSmall,
	"WK_STATUS_NOT_FOUND":              ErrNotFound,
	"WK_STATUS_ALREADY_EXISTS":         ErrAlreadyExists,
	"WK_STATUS_TIMEOUT":                status.ErrTimeout,
	"WK_STATUS_FULL":                   ErrFull,
	"WK_STATUS_COORD_INVALID_KEY":      ErrInvalidKey,
	"WK_STATUS_COORD_INVALID_OUTCOME":  ErrInvalidOutcome,
	"WK_STATUS_COORD_INVALID_CAPACITY": ErrInvalidCapacity,
	"WK_STATUS_COORD_INVALID_TIME":     ErrInvalidTime,
}

func readStatusFile(t *testing.T, path string) statusFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkNoDuplicateKeys(data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	top, err := jsonObject(data, "system", "range", "statuses")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var entries []json.RawMessage
	if err := decodeValue(top["statuses"], "statuses", &entries); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for i, e := range entries {
		if _, err := jsonObject(e, "name", "code", "text", "upstream", "is"); err != nil {
			t.Fatalf("%s: status %d: %v", path, i, err)
		}
	}
	var f statusFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

func statusEntries(t *testing.T) []statusEntry {
	t.Helper()
	var entries []statusEntry
	names, codes := map[string]bool{}, map[uint32]bool{}
	for _, path := range statusFiles {
		f := readStatusFile(t, path)
		for _, e := range f.Statuses {
			if e.Code < f.Range[0] || e.Code > f.Range[1] {
				t.Errorf("%s: %s = %d outside %s's range %v", path, e.Name, e.Code, f.System, f.Range)
			}
			if names[e.Name] || codes[e.Code] {
				t.Errorf("%s: %s = %d listed twice", path, e.Name, e.Code)
			}
			names[e.Name], codes[e.Code] = true, true
			entries = append(entries, e)
		}
	}
	return entries
}

// Every status of the tables is the Go error registered for its code, with
// its text, its sentinel, and exactly the identities listed (and itself);
// every Go error registered is in the tables.
func TestStatusesMatchTestdata(t *testing.T) {
	entries := statusEntries(t)
	code := map[string]uint32{}
	for _, e := range entries {
		code[e.Name] = e.Code
	}
	seen := map[status.Code]bool{}
	for _, e := range entries {
		err := status.Lookup(status.Code(e.Code))
		if e.Code == 0 {
			if e.Name != "WK_STATUS_OK" || err != nil {
				t.Errorf("%s = 0 maps to %v, want nil", e.Name, err)
			}
			continue
		}
		seen[status.Code(e.Code)] = true
		var se *status.Error
		if !errors.As(err, &se) || se.Code() != status.Code(e.Code) {
			t.Errorf("%s (%d): Go error %#v is not the registered status", e.Name, e.Code, err)
			continue
		}
		if err.Error() != e.Text {
			t.Errorf("%s: Go text %q, testdata %q", e.Name, err.Error(), e.Text)
		}
		if sentinel, ok := statusSentinels[e.Name]; !ok {
			t.Errorf("%s (%d) has no Go sentinel in this test: add it", e.Name, e.Code)
		} else if sentinel != err {
			t.Errorf("%s: sentinel %v is not the error the code maps to (%v)", e.Name, sentinel, err)
		}
		if e.Upstream != nil {
			t.Errorf("%s: upstream %q: the coordination statuses have none", e.Name, *e.Upstream)
		}
		is := map[uint32]bool{e.Code: true}
		for _, name := range e.Is {
			c, ok := code[name]
			if !ok || c == 0 {
				t.Errorf("%s: unknown identity %s", e.Name, name)
			}
			is[c] = true
		}
		for _, other := range entries {
			if other.Code == 0 {
				continue
			}
			target := status.Lookup(status.Code(other.Code))
			if got := errors.Is(err, target); got != is[other.Code] {
				t.Errorf("errors.Is(%s, %s) = %v, want %v", e.Name, other.Name, got, is[other.Code])
			}
		}
	}
	for _, e := range status.Known() {
		if !seen[e.Code()] {
			t.Errorf("Go status %d (%q) is missing from testdata", e.Code(), e.Error())
		}
	}
	if len(status.Known()) != len(seen) {
		t.Errorf("%d statuses registered, %d in testdata", len(status.Known()), len(seen))
	}
}

func TestSentinelTexts(t *testing.T) {
	for err, text := range map[error]string{
		ErrInvalidKey:      "coord: invalid key",
		ErrInvalidOutcome:  "coord: invalid outcome",
		ErrInvalidCapacity: "coord: invalid capacity",
		ErrInvalidTime:     "coord: invalid time",
		ErrHandleClosed:    "wkcore: handle closed",
		ErrInvalidArgument: "wkcore: invalid argument",
		ErrNotFound:        "wkcore: not found",
		ErrAlreadyExists:   "wkcore: already exists",
		ErrFull:            "wkcore: full",
		ErrPanic:           "wkcore: panic",
	} {
		if err.Error() != text {
			t.Errorf("%q, want %q", err.Error(), text)
		}
	}
	for _, err := range []error{ErrInvalidKey, ErrInvalidOutcome, ErrInvalidCapacity, ErrInvalidTime} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v does not match ErrInvalidArgument", err)
		}
		for _, other := range []error{ErrInvalidKey, ErrInvalidOutcome, ErrInvalidCapacity, ErrInvalidTime} {
			if err != other && errors.Is(err, other) {
				t.Errorf("%v matches %v", err, other)
			}
		}
	}
	if errors.Is(ErrInvalidArgument, ErrInvalidKey) || errors.Is(ErrHandleClosed, ErrInvalidArgument) {
		t.Error("a generic sentinel matches a coordination one")
	}
}

// The enums' names are the scenario files' (and the C header's order).
func TestNames(t *testing.T) {
	for v, want := range map[string]string{
		ResultWon.String(): "won", ResultMismatch.String(): "mismatch", Result(6).String(): "result(6)",
		StateNone.String(): "none", StateFinalized.String(): "finalized", State(4).String(): "state(4)",
		OutcomeSucceeded.String(): "succeeded", OutcomeOrphaned.String(): "orphaned", Outcome(300).String(): "host(300)",
		Outcome(5).String(): "outcome(5)", Outcome(0).String(): "outcome(0)",
		FireFired.String(): "fired", FireAnchoredFirstSeen.String(): "anchored_first_seen", FireKind(4).String(): "fire_kind(4)",
		KindClaim.String(): "claim", KindPending.String(): "pending", Kind(2).String(): "kind(2)",
		duplicate(OutcomeFailed).String(): "duplicate/finalized/failed", wonPlaced.String(): "won/placed",
	} {
		if v != want {
			t.Errorf("%q, want %q", v, want)
		}
	}
	for _, o := range []Outcome{1, 2, 3, 4, 256, 65535} {
		if !o.Valid() {
			t.Errorf("%d is an outcome", o)
		}
	}
	for _, o := range notOutcomes {
		if o.Valid() {
			t.Errorf("%d is not an outcome", o)
		}
	}
	if !StatePlaced.Pending() || !StateClaimed.Pending() || StateFinalized.Pending() || StateNone.Pending() {
		t.Error("State.Pending")
	}
	if !wonNone.Won() || lostPlaced.Won() {
		t.Error("Decision.Won")
	}
}
