//go:build !race

package multiraft

// raceEnabled is false without -race: the engine's race-only edge compiles
// away.
const raceEnabled = false
