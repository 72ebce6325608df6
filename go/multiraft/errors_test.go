package multiraft

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/wukongim/wkcore/go/internal/status"
)

// statusFiles are the shared status tables: every language checks its codes,
// texts and identities against them.
var statusFiles = []string{"../../testdata/abi/statuses.json", "../../testdata/admission/statuses.json"}

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
	"WK_STATUS_NULL_ARGUMENT":                 status.ErrNullArgument,
	"WK_STATUS_INVALID_ARGUMENT":              ErrInvalidArgument,
	"WK_STATUS_PANIC":                         ErrPanic,
	"WK_STATUS_INVALID_HANDLE":                status.ErrInvalidHandle,
	"WK_STATUS_BUFFER_TOO_SMALL":              status.ErrBufferTooSmall,
	"WK_STATUS_NOT_FOUND":                     status.ErrNotFound,
	"WK_STATUS_ALREADY_EXISTS":                status.ErrAlreadyExists,
	"WK_STATUS_TIMEOUT":                       status.ErrTimeout,
	"WK_STATUS_FULL":                          status.ErrFull,
	"WK_STATUS_SLOT_CLOSED":                   ErrSlotClosed,
	"WK_STATUS_SLOT_FAILED":                   errSlotFailed,
	"WK_STATUS_NOT_LEADER":                    ErrNotLeader,
	"WK_STATUS_CONFIG_CHANGE_PENDING":         ErrConfigChangePending,
	"WK_STATUS_SLOT_BUSY":                     ErrSlotBusy,
	"WK_STATUS_PROPOSAL_BACKPRESSURE":         ErrProposalBackpressure,
	"WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED": ErrBackgroundProposalThrottled,
	"WK_STATUS_PROPOSAL_BUSY":                 errProposalBusy,
	"WK_STATUS_PROPOSAL_THROTTLED":            errProposalThrottled,
	"WK_STATUS_SLOT_NOT_FOUND":                ErrSlotNotFound,
	"WK_STATUS_CONFIG_CHANGE_STALE":           ErrConfigChangeResolved,
}

// upstreamSentinels maps the "upstream" names of the tables to this
// package's exported sentinels, which hosts alias.
var upstreamSentinels = map[string]error{
	"multiraft.ErrSlotClosed":                  ErrSlotClosed,
	"multiraft.ErrNotLeader":                   ErrNotLeader,
	"multiraft.ErrConfigChangePending":         ErrConfigChangePending,
	"multiraft.ErrSlotBusy":                    ErrSlotBusy,
	"multiraft.ErrProposalBackpressure":        ErrProposalBackpressure,
	"multiraft.ErrBackgroundProposalThrottled": ErrBackgroundProposalThrottled,
	"multiraft.ErrSlotNotFound":                ErrSlotNotFound,
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
	dec := json.NewDecoder(strings.NewReader(string(data)))
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

// statusEntries returns every entry of the tables, checked for ranges and
// duplicates.
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
		sentinel, ok := statusSentinels[e.Name]
		if !ok {
			t.Errorf("%s (%d) has no Go sentinel in this test: add it", e.Name, e.Code)
		} else if sentinel != err {
			t.Errorf("%s: sentinel %v is not the error the code maps to (%v)", e.Name, sentinel, err)
		}
		if e.Upstream != nil && strings.HasPrefix(*e.Upstream, "multiraft.") {
			if s, ok := upstreamSentinels[*e.Upstream]; !ok || s != err {
				t.Errorf("%s: upstream %s is not the package's sentinel for it", e.Name, *e.Upstream)
			}
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

// The refusals are the sentinels with upstream's identities: a busy proposal
// matches ErrProposalBackpressure and ErrSlotBusy, a busy action of another
// kind is exactly ErrSlotBusy, a throttled proposal matches
// ErrBackgroundProposalThrottled and ErrProposalBackpressure.
func TestRefusalIdentities(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		q := newLeader[int](t, impl, Limits{MaxQueuedControls: 2, MaxQueuedBackgroundControls: 1})
		must(t, q.Admit(ControlPropose, ProposalClassBackground, 1))
		throttled := q.Admit(ControlPropose, ProposalClassBackground, 2)
		if throttled != errProposalThrottled || !errors.Is(throttled, ErrBackgroundProposalThrottled) ||
			!errors.Is(throttled, ErrProposalBackpressure) || errors.Is(throttled, ErrSlotBusy) ||
			throttled.Error() != "multiraft: background proposal throttled: multiraft: proposal backpressure" {
			t.Errorf("throttled proposal: %v", throttled)
		}
		must(t, q.Admit(ControlCompactLog, ProposalClassForeground, 3))
		busy := q.Admit(ControlPropose, ProposalClassForeground, 4)
		if busy != errProposalBusy || !errors.Is(busy, ErrProposalBackpressure) || !errors.Is(busy, ErrSlotBusy) ||
			errors.Is(busy, ErrBackgroundProposalThrottled) ||
			busy.Error() != "multiraft: proposal backpressure: multiraft: slot busy" {
			t.Errorf("busy proposal: %v", busy)
		}
		for _, kind := range []ControlKind{ControlCampaign, ControlConfigChange, ControlTransferLeader,
			ControlCompactLog, ControlCaptureHashSlotSnapshot, ControlFreshStatus} {
			if err := q.Admit(kind, ProposalClassBackground, 5); err != ErrSlotBusy {
				t.Errorf("busy %v: %v, want exactly ErrSlotBusy", kind, err)
			}
			if n, err := q.AdmitBatch(kind, ProposalClassForeground, []int{5, 6}); n != 0 || err != ErrSlotBusy {
				t.Errorf("busy %v batch: %d, %v, want 0, exactly ErrSlotBusy", kind, n, err)
			}
		}
		if errors.Is(ErrSlotBusy, ErrProposalBackpressure) || errors.Is(ErrProposalBackpressure, ErrSlotBusy) ||
			errors.Is(ErrBackgroundProposalThrottled, ErrProposalBackpressure) {
			t.Error("a plain sentinel matches another")
		}
		must(t, q.Demote())
		if err := q.Admit(ControlPropose, ProposalClassForeground, 7); err != ErrNotLeader {
			t.Errorf("follower proposal: %v, want exactly ErrNotLeader", err)
		}
		if _, err := q.AdmitConfigChange(7); err != ErrNotLeader {
			t.Errorf("follower config change: %v, want exactly ErrNotLeader", err)
		}
		must(t, q.CloseSlot())
		if err := q.Admit(ControlFreshStatus, ProposalClassForeground, 8); err != ErrSlotClosed {
			t.Errorf("closed slot: %v, want exactly ErrSlotClosed", err)
		}
	})
}

func TestSentinelTexts(t *testing.T) {
	for err, text := range map[error]string{
		ErrSlotClosed:                  "multiraft: slot closed",
		ErrNotLeader:                   "multiraft: not leader",
		ErrConfigChangePending:         "multiraft: config change pending",
		ErrSlotBusy:                    "multiraft: slot busy",
		ErrProposalBackpressure:        "multiraft: proposal backpressure",
		ErrBackgroundProposalThrottled: "multiraft: background proposal throttled",
		ErrSlotNotFound:                "multiraft: slot not found",
		ErrInvalidOptions:              "multiraft: invalid options",
		ErrHandleClosed:                "wkcore: handle closed",
		ErrInvalidArgument:             "wkcore: invalid argument",
		ErrPanic:                       "wkcore: panic",
	} {
		if err.Error() != text {
			t.Errorf("%q, want %q", err.Error(), text)
		}
	}
	if ErrHandleClosed == error(status.ErrInvalidHandle) || errors.Is(ErrHandleClosed, status.ErrInvalidHandle) {
		t.Error("ErrHandleClosed must be the Go layer's own")
	}
	if errors.Is(ErrConfigChangeResolved, ErrConfigChangePending) || errors.Is(ErrInvalidOptions, ErrInvalidArgument) {
		t.Error("a sentinel matches another")
	}
}

// Limits: negative values are refused with an error matching
// ErrInvalidOptions (upstream's text); values above MaxLimit are clamped to
// it (upstream accepts any positive limit; the queue cannot hold more than
// MaxLimit), MaxLimit itself and Unlimited are accepted, and zero means the
// defaults.
func TestLimitsValidation(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, l := range []Limits{
			{MaxQueuedControls: -1}, {MaxQueuedBackgroundControls: -1}, {MaxQueuedControls: -1 << 40},
			{MaxQueuedControls: 1 << 40, MaxQueuedBackgroundControls: -1},
		} {
			q, err := makeQueue[int](t, impl, 1, Options{Limits: l})
			if !errors.Is(err, ErrInvalidOptions) || q != nil {
				t.Errorf("%+v: %v, %v; want ErrInvalidOptions", l, q, err)
				if q != nil {
					_ = q.Close()
				}
				continue
			}
			if !strings.HasPrefix(err.Error(), "multiraft: invalid options: max queued controls must be ") {
				t.Errorf("%+v: text %q", l, err)
			}
		}
		for _, l := range []Limits{{MaxQueuedControls: MaxLimit, MaxQueuedBackgroundControls: MaxLimit},
			{MaxQueuedControls: 16, MaxQueuedBackgroundControls: MaxLimit}, {MaxQueuedControls: MaxLimit},
			{MaxQueuedControls: MaxLimit + 1}, {MaxQueuedBackgroundControls: MaxLimit + 1},
			{MaxQueuedControls: 1 << 40, MaxQueuedBackgroundControls: 1}, {MaxQueuedControls: Unlimited,
				MaxQueuedBackgroundControls: Unlimited}} {
			q := newLeader[int](t, impl, l)
			must(t, q.Admit(ControlPropose, ProposalClassBackground, 1))
			if got := drainAll(t, q); len(got) != 1 || got[0].Value != 1 {
				t.Errorf("%+v: drained %v", l, got)
			}
			if cq, ok := q.(*ControlQueue[int]); ok {
				want, _ := l.normalize()
				if got, err := cq.Limits(); err != nil || got != want || got.MaxQueuedControls > MaxLimit {
					t.Errorf("%+v: Limits() = %+v, %v; want %+v", l, got, err, want)
				}
			}
			must(t, q.Close())
		}
	})
}

func TestLimitsNormalize(t *testing.T) {
	for _, c := range []struct{ in, want Limits }{
		{Limits{}, Limits{8192, 4096}},
		{Limits{MaxQueuedControls: 1}, Limits{1, 1}},
		{Limits{MaxQueuedControls: 5}, Limits{5, 2}},
		{Limits{MaxQueuedBackgroundControls: 7}, Limits{8192, 7}},
		{Limits{MaxQueuedControls: MaxLimit}, Limits{MaxLimit, MaxLimit / 2}},
		{Limits{MaxQueuedControls: MaxLimit + 1}, Limits{MaxLimit, MaxLimit / 2}},
		{Limits{MaxQueuedControls: 1 << 40, MaxQueuedBackgroundControls: 1 << 41}, Limits{MaxLimit, MaxLimit}},
		{Limits{MaxQueuedControls: Unlimited, MaxQueuedBackgroundControls: Unlimited}, Limits{MaxLimit, MaxLimit}},
	} {
		got, err := c.in.normalize()
		if err != nil || got != c.want {
			t.Errorf("%+v.normalize() = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	if DefaultLimits() != (Limits{DefaultMaxQueuedControls, DefaultMaxQueuedBackgroundControls}) ||
		DefaultMaxQueuedControls != 8192 || DefaultMaxQueuedBackgroundControls != 4096 || MaxLimit != 1<<25 {
		t.Errorf("defaults %+v, MaxLimit %d", DefaultLimits(), MaxLimit)
	}
}
