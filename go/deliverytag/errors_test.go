package deliverytag

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/wukongim/wkcore/go/internal/status"
)

// statusEntry is one status of testdata/tag/statuses.json.
type statusEntry struct {
	Name     string   `json:"name"`
	Code     uint32   `json:"code"`
	Text     string   `json:"text"`
	Upstream *string  `json:"upstream"`
	Is       []string `json:"is"`
}

func tagStatuses(t *testing.T) []statusEntry {
	t.Helper()
	data, err := os.ReadFile("../../testdata/tag/statuses.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		System   string        `json:"system"`
		Range    [2]uint32     `json:"range"`
		Statuses []statusEntry `json:"statuses"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	if f.System != "tag" || f.Range != [2]uint32{300, 399} {
		t.Fatalf("system %q, range %v", f.System, f.Range)
	}
	return f.Statuses
}

// The exported errors, by C name.
var tagSentinels = map[string]error{
	"WK_STATUS_TAG_INVALID_UTF8": ErrInvalidUTF8, "WK_STATUS_TAG_TOO_LARGE": ErrTooLarge,
	"WK_STATUS_TAG_UNASSIGNED_SLOT": ErrUnassignedSlot, "WK_STATUS_TAG_LENGTH_MISMATCH": ErrLengthMismatch,
	"WK_STATUS_TAG_INVALID_CONFIG": ErrInvalidConfig, "WK_STATUS_TAG_UNKNOWN_OP": ErrUnknownOp,
	"WK_STATUS_TAG_DIRTY": ErrDirty, "WK_STATUS_TAG_LAGGING": ErrLagging,
	"WK_STATUS_TAG_INVALID_FRAME": ErrInvalidFrame, "WK_STATUS_TAG_INVALID_REQUEST_CODEC": ErrInvalidRequestCodec,
	"WK_STATUS_TAG_INVALID_RESPONSE_CODEC": ErrInvalidResponseCodec, "WK_STATUS_TAG_SHORT_UVARINT": ErrShortUvarint,
	"WK_STATUS_TAG_INVALID_UVARINT": ErrInvalidUvarint, "WK_STATUS_TAG_SHORT_BYTES": ErrShortBytes,
	"WK_STATUS_TAG_SHORT_CHANNEL_TYPE": ErrShortChannelType, "WK_STATUS_TAG_SHORT_VARINT": ErrShortVarint,
	"WK_STATUS_TAG_INVALID_VARINT": ErrInvalidVarint, "WK_STATUS_TAG_TRAILING_REQUEST_BYTES": ErrTrailingRequestBytes,
	"WK_STATUS_TAG_TRAILING_RESPONSE_BYTES":            ErrTrailingResponseBytes,
	"WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT":           ErrRefsCountOverflowsInt,
	"WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT":     ErrPartitionsCountOverflowsInt,
	"WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT":           ErrUIDsCountOverflowsInt,
	"WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING":       ErrRefsCountExceeds,
	"WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING": ErrPartitionsCountExceeds,
	"WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING":       ErrUIDsCountExceeds,
}

// Every status of the tag range is a registered error of this package with
// the file's code and text, matching itself and what the file says it is,
// and nothing else.
func TestStatusesMatchTestdata(t *testing.T) {
	entries := tagStatuses(t)
	if len(entries) != len(tagSentinels) || len(registeredTagErrors) != len(entries) {
		t.Fatalf("%d statuses in testdata, %d sentinels, %d registered", len(entries), len(tagSentinels), len(registeredTagErrors))
	}
	byName := map[string]statusEntry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	for _, e := range entries {
		err, ok := tagSentinels[e.Name]
		if !ok {
			t.Errorf("%s has no Go error", e.Name)
			continue
		}
		var se *status.Error
		if !errors.As(err, &se) || uint32(se.Code()) != e.Code || err.Error() != e.Text {
			t.Errorf("%s: %#v, want code %d text %q", e.Name, err, e.Code, e.Text)
		}
		if got := status.Lookup(status.Code(e.Code)); got != err {
			t.Errorf("status %d is %v", e.Code, got)
		}
		is := map[string]bool{e.Name: true}
		for _, n := range e.Is {
			is[n] = true
		}
		for name, other := range tagSentinels {
			if errors.Is(err, other) != is[name] {
				t.Errorf("errors.Is(%s, %s) = %v", e.Name, name, !is[name])
			}
		}
	}
	// The unknown-op error names the op, as upstream's.
	err := unknownOpError("x")
	if !errors.Is(err, ErrUnknownOp) || err.Error() != `access/node: unknown delivery tag op "x"` {
		t.Errorf("unknown op: %v", err)
	}
	var slot *UnassignedSlotError
	_, err = PartitionByNode([]string{"a"}, []uint32{7}, []uint64{1})
	if !errors.As(err, &slot) || slot.SlotID != 7 || !errors.Is(err, ErrUnassignedSlot) || err.Error() != ErrUnassignedSlot.Error() {
		t.Errorf("unassigned slot: %v", err)
	}
	// The generic ones are the shared ones.
	if ErrHandleClosed != status.ErrHandleClosed || ErrInvalidArgument != status.ErrInvalidArgument ||
		ErrNotFound != status.ErrNotFound {
		t.Error("generic errors")
	}
}
