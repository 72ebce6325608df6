//go:build cgo && !wkcore_purego

package coord

import (
	"errors"
	"testing"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// The linked library agrees with the tables and with the Go errors: its text
// of every status (wk_status_str) and every identity relation (wk_status_is),
// listed ones and the absence of any other; and every Go error registered
// has the library's text.
func TestStatusesMatchLibrary(t *testing.T) {
	entries := statusEntries(t)
	code := map[string]uint32{}
	for _, e := range entries {
		code[e.Name] = e.Code
	}
	for _, e := range entries {
		if got := wkabi.StatusText(e.Code); got != e.Text {
			t.Errorf("wk_status_str(%s) = %q, testdata %q", e.Name, got, e.Text)
		}
		if e.Code == 0 {
			continue
		}
		is := map[uint32]bool{e.Code: true}
		for _, name := range e.Is {
			is[code[name]] = true
		}
		for _, other := range entries {
			if other.Code == 0 {
				continue
			}
			if got := wkabi.StatusIs(e.Code, other.Code); got != is[other.Code] {
				t.Errorf("wk_status_is(%s, %s) = %v, want %v", e.Name, other.Name, got, is[other.Code])
			}
		}
	}
	for _, e := range status.Known() {
		if got := wkabi.StatusText(uint32(e.Code())); got != e.Error() {
			t.Errorf("status %d: Go text %q, library %q", e.Code(), e.Error(), got)
		}
		for _, other := range status.Known() {
			if got, want := errors.Is(e, other), wkabi.StatusIs(uint32(e.Code()), uint32(other.Code())); got != want {
				t.Errorf("errors.Is(%d, %d) = %v, wk_status_is %v", e.Code(), other.Code(), got, want)
			}
		}
	}
}
