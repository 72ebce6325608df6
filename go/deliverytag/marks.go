package deliverytag

import "sync/atomic"

// The access marks of a body only grow, as the library's do
// (DeliveryTag::touch_epoch and touch_exact): a writer that read its tick or
// its clock earlier and stores later must not move a newer mark back, or a
// cleanup could reclaim the body before the exact rule allows. A mark already
// at least v is left alone, so a hit in the current tick writes nothing.
//
// Ordering: relaxed would do, as in the library (the marks publish nothing and
// only guide reclamation); sync/atomic's operations are what Go offers.

// raiseInt64 raises *w to v unless it is already at least v.
func raiseInt64(w *atomic.Int64, v int64) {
	for {
		seen := w.Load()
		if seen >= v || w.CompareAndSwap(seen, v) {
			return
		}
	}
}

// raiseUint64 raises *w to v unless it is already at least v.
func raiseUint64(w *uint64, v uint64) {
	for {
		seen := atomic.LoadUint64(w)
		if seen >= v || atomic.CompareAndSwapUint64(w, seen, v) {
			return
		}
	}
}
