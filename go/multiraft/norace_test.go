//go:build !race

package multiraft

// raceEnabled is false without -race.
const raceEnabled = false
