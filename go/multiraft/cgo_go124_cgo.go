//go:build go1.24 && cgo && !wkcore_purego

package multiraft

// The calls below neither keep Go pointers past the call nor call back into
// Go, so their out-parameters may stay on the Go stack. These directives are
// honoured from Go 1.24 on; Go 1.22 and 1.23 reject them in cmd/cgo, so they
// live in this file, built only for go1.24 and later (cgo applies them
// package-wide). Only queue creation and the tests cross: admission and take
// run inline on the slot's words.

/*
#cgo noescape wk_slot_new_hosted
#cgo nocallback wk_slot_new_hosted
#cgo noescape wk_slot_state_get
#cgo nocallback wk_slot_state_get
#include "wkcore.h"
*/
import "C"
