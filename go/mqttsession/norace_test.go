//go:build !race

package mqttsession

// raceEnabled is false without -race.
const raceEnabled = false
