//go:build race

package multiraft

// raceEnabled is true under -race. The race detector does not see atomic
// operations on memory outside Go's heap (the cgo build's words), so the
// engine adds, under -race only, an edge in Go memory beside the one the
// words give (engine.raceSeen); and it slows every synchronizing operation,
// so the stress tests run fewer operations.
const raceEnabled = true
