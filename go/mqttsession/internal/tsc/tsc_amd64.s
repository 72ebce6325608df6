#include "textflag.h"

// func Read() uint64
//
// The time-stamp counter (RDTSC): the registry clock of kind
// WK_OWNER_CLOCK_TSC is this reading, scaled as the library publishes.
TEXT ·Read(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET
