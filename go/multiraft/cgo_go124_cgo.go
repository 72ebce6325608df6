//go:build go1.24 && cgo && !wkcore_purego

package multiraft

// The calls below neither keep Go pointers past the call nor call back into
// Go, so their out-parameters may stay on the Go stack (no allocation per
// call). These directives are honoured from Go 1.24 on; Go 1.22 and 1.23
// reject them in cmd/cgo, so they live in this file, built only for go1.24
// and later (cgo applies them package-wide).

/*
#cgo noescape wk_slot_admit
#cgo nocallback wk_slot_admit
#cgo noescape wk_slot_admit_batch
#cgo nocallback wk_slot_admit_batch
#cgo noescape wk_slot_take
#cgo nocallback wk_slot_take
#cgo noescape wk_slot_state_get
#cgo nocallback wk_slot_state_get
#cgo noescape wk_slot_counters_get
#cgo nocallback wk_slot_counters_get
#cgo nocallback wk_slot_config_change_resolve
#cgo nocallback wk_slot_set_leader
#cgo nocallback wk_slot_demote
#cgo nocallback wk_slot_close
#cgo nocallback wk_slot_fail
#include "wkcore.h"
*/
import "C"
