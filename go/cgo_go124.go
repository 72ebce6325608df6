//go:build go1.24

package wkcore

// The hot calls neither keep Go pointers past the call nor call back into Go,
// so their arguments may stay on the Go stack. These directives are honoured
// from Go 1.24 on; Go 1.22 and 1.23 reject them in cmd/cgo, so they live in
// this file, built only for go1.24 and later (cgo merges them package-wide).

/*
#cgo noescape wk_slot_admit
#cgo nocallback wk_slot_admit
#cgo noescape wk_slot_admit_batch
#cgo nocallback wk_slot_admit_batch
#cgo noescape wk_slot_drain
#cgo nocallback wk_slot_drain
#include "wkcore.h"
*/
import "C"
