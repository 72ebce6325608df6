//go:build cgo && !wkcore_purego

package deliverytag

import (
	"errors"
	"testing"

	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// The linked library agrees with the table and the Go errors: its text of
// every tag status (wk_status_str) and every identity relation
// (wk_status_is), listed ones and the absence of any other.
func TestStatusesMatchLibrary(t *testing.T) {
	entries := tagStatuses(t)
	code := map[string]uint32{}
	for _, e := range entries {
		code[e.Name] = e.Code
	}
	for _, e := range entries {
		if got := wkabi.StatusText(e.Code); got != e.Text {
			t.Errorf("wk_status_str(%s) = %q, testdata %q", e.Name, got, e.Text)
		}
		is := map[uint32]bool{e.Code: true}
		for _, n := range e.Is {
			is[code[n]] = true
		}
		for _, other := range entries {
			if got := wkabi.StatusIs(e.Code, other.Code); got != is[other.Code] {
				t.Errorf("wk_status_is(%s, %s) = %v", e.Name, other.Name, got)
			}
			if got := errors.Is(tagSentinels[e.Name], tagSentinels[other.Name]); got != is[other.Code] {
				t.Errorf("errors.Is(%s, %s) = %v", e.Name, other.Name, got)
			}
		}
	}
}
