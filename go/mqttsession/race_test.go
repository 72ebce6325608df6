//go:build race

package mqttsession

// raceEnabled is true under -race, which slows every synchronizing operation:
// the stress tests run fewer operations.
const raceEnabled = true
