package tsc

// Read returns the time-stamp counter (RDTSC).
func Read() uint64
