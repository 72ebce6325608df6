//go:build !cgo || wkcore_purego

package multiraft

import "unsafe"

// Implementation names the build: "go" here (CGO_ENABLED=0, or the
// wkcore_purego tag), "rust" where the queue runs on the Rust core's words.
const Implementation = "go"

// hostedSlot is what a queue runs on: the words and what keeps them alive.
type hostedSlot struct {
	words      slotWords
	holder     any
	bytes      int
	unregister func()
}

// newHostedSlot allocates the words in Go memory and counts them in the
// registry (nil: the process-wide one).
func newHostedSlot(slotID uint64, limits Limits, metrics *MetricsRegistry) (hostedSlot, error) {
	reg := globalGoRegistry()
	if metrics != nil {
		if metrics.closed() {
			return hostedSlot{}, ErrHandleClosed
		}
		reg = metrics.g
	}
	g := new(goWords)
	w := g.words()
	reg.register(g)
	return hostedSlot{words: w, holder: g, bytes: int(unsafe.Sizeof(*g)),
		unregister: func() { reg.unregister(g) }}, nil
}
