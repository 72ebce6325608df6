//go:build race

package deliverytag

// raceEnabled is true under -race, which slows every synchronizing operation
// (the stress tests run fewer operations) and makes sync.Pool drop some
// values (the allocation tests tolerate it).
const raceEnabled = true
