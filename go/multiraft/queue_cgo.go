//go:build cgo && !wkcore_purego

package multiraft

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "wkcore.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// Implementation names the build: "rust" here, where the queue runs on the
// Rust core's words (a hosted wk_slot); "go" in the pure-Go build
// (CGO_ENABLED=0, or the wkcore_purego tag).
const Implementation = "rust"

// The words' layout is the header's: the array lengths are negative (a
// compile error) when a constant differs, and newHostedSlot refuses a library
// that reports another layout version.
var (
	_ [C.WK_SLOT_WORDS_LAYOUT_VERSION - wordsLayoutVersion]struct{}
	_ [wordsLayoutVersion - C.WK_SLOT_WORDS_LAYOUT_VERSION]struct{}
	_ [C.WK_SLOT_WORD_COUNT_BITS - countBits]struct{}
	_ [countBits - C.WK_SLOT_WORD_COUNT_BITS]struct{}
	_ [C.WK_SLOT_WORD_HOST_SHIFT - hostShift]struct{}
	_ [hostShift - C.WK_SLOT_WORD_HOST_SHIFT]struct{}
	_ [C.WK_SLOT_WORD_BACKGROUND_SHIFT - bgShift]struct{}
	_ [bgShift - C.WK_SLOT_WORD_BACKGROUND_SHIFT]struct{}
)

func init() {
	for _, c := range [...]struct{ c, g uint64 }{
		{uint64(C.WK_SLOT_WORD_LEADER), leaderBit}, {uint64(C.WK_SLOT_WORD_CLOSED), closedBit},
		{uint64(C.WK_SLOT_WORD_FATAL), fatalBit}, {uint64(C.WK_SLOT_WORD_CONFIG_CHANGE_PENDING), ccPending},
		{uint64(C.WK_SLOT_WORD_FATAL_PRESENT), fatalFound}, {uint64(C.WK_SLOT_WORD_COUNT_MASK), countMask},
	} {
		if c.c != c.g {
			panic(fmt.Sprintf("wkcore: the header's slot word bit %#x differs from this package's %#x", c.c, c.g))
		}
	}
}

// hostedSlot is what a queue runs on: the words and what keeps them alive.
type hostedSlot struct {
	words      slotWords
	holder     any
	bytes      int
	unregister func()
}

// slotHandle owns the C slot; its finalizer frees it once no queue can reach
// the words any more.
type slotHandle struct{ p *C.wk_slot }

func word(p *C.uint64_t) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(p)) }

// newHostedSlot creates the library's hosted slot, counted in reg's
// registry (nil: the process-wide one).
func newHostedSlot(slotID uint64, limits Limits, metrics *MetricsRegistry) (hostedSlot, error) {
	reg, err := metrics.registry()
	if err != nil {
		return hostedSlot{}, err
	}
	cl := C.wk_slot_limits{
		max_queued_controls:            C.uint32_t(limits.MaxQueuedControls),
		max_queued_background_controls: C.uint32_t(limits.MaxQueuedBackgroundControls),
	}
	var (
		p  *C.wk_slot
		cw C.wk_slot_words
	)
	err = reg.With(func(m wkabi.Ptr) error {
		return status.Lookup(status.Code(C.wk_slot_new_hosted((*C.wk_metrics_registry)(m),
			C.uint64_t(slotID), &cl, &cw, &p)))
	})
	if err != nil {
		return hostedSlot{}, err
	}
	h := &slotHandle{p: p}
	runtime.SetFinalizer(h, func(h *slotHandle) { C.wk_slot_free(h.p) })
	if cw.layout_version != wordsLayoutVersion {
		panic(fmt.Sprintf("wkcore: libwkcore.a has slot words layout %d, these Go packages need %d: rebuild it with scripts/go-lib",
			cw.layout_version, wordsLayoutVersion))
	}
	var st C.wk_slot_state
	if code := C.wk_slot_state_get(p, &st, C.sizeof_wk_slot_state); code != C.WK_STATUS_OK {
		return hostedSlot{}, status.Lookup(status.Code(code))
	}
	w := slotWords{
		state: word(cw.state), releasedView: word(cw.released_view), releasedBgView: word(cw.released_background_view),
		released: word(cw.released), releasedBg: word(cw.released_background), releasedOther: word(cw.released_other),
		admittedOther: word(cw.admitted_other), committedOther: word(cw.committed_other),
		configSerial: word(cw.config_serial), fatalCode: word(cw.fatal_code),
		outcomes: (*[2][4]atomic.Uint64)(unsafe.Pointer(cw.outcomes)),
	}
	return hostedSlot{words: w, holder: h, bytes: int(st.memory_bytes)}, nil
}

// cSlot is the library handle of the queue's hosted slot, for the
// differential tests (the queue must stay alive while it is used).
func (q *ControlQueue[T]) cSlot() unsafe.Pointer {
	return unsafe.Pointer(q.load().holder.(*slotHandle).p)
}
