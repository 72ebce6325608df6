//go:build go1.24 && cgo && !wkcore_purego

package coord

// The word calls keep no Go pointer past the call and never call back into
// Go, so their out-parameters stay on the Go stack: no allocation per call
// (as cgo_go124_cgo.go for the ledgers; cgo applies these package-wide).

/*
#cgo noescape wk_flip_flip
#cgo nocallback wk_flip_flip
#cgo nocallback wk_flip_get
#cgo noescape wk_counter_increment
#cgo nocallback wk_counter_increment
#cgo nocallback wk_counter_get
#cgo noescape wk_exclusive_trigger_trigger
#cgo nocallback wk_exclusive_trigger_trigger
#cgo noescape wk_exclusive_trigger_finish
#cgo nocallback wk_exclusive_trigger_finish
#cgo nocallback wk_exclusive_trigger_active_get
#cgo nocallback wk_exclusive_trigger_last_run_get
#cgo noescape wk_windowed_counter_increment
#cgo nocallback wk_windowed_counter_increment
#cgo nocallback wk_windowed_counter_count_get
#include "wkcore.h"
*/
import "C"
