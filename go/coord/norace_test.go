//go:build !race

package coord

// raceEnabled is false without -race.
const raceEnabled = false
