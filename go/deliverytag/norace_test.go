//go:build !race

package deliverytag

// raceEnabled is false without -race.
const raceEnabled = false
