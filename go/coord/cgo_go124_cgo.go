//go:build go1.24 && cgo && !wkcore_purego

package coord

// The calls below neither keep Go pointers past the call nor call back into
// Go, so their out-parameters (a Decision, a Record, a page) may stay on the
// Go stack and the keys they read need not escape: no allocation per call.
// These directives are honoured from Go 1.24 on; Go 1.22 and 1.23 reject them
// in cmd/cgo, so they live in this file, built only for go1.24 and later (cgo
// applies them package-wide).

/*
#cgo noescape wk_ledger_insert
#cgo nocallback wk_ledger_insert
#cgo noescape wk_ledger_place
#cgo nocallback wk_ledger_place
#cgo noescape wk_ledger_claim
#cgo nocallback wk_ledger_claim
#cgo noescape wk_ledger_finalize
#cgo nocallback wk_ledger_finalize
#cgo noescape wk_ledger_finalize_batch
#cgo nocallback wk_ledger_finalize_batch
#cgo noescape wk_ledger_take
#cgo nocallback wk_ledger_take
#cgo noescape wk_ledger_touch
#cgo nocallback wk_ledger_touch
#cgo noescape wk_ledger_reconcile
#cgo nocallback wk_ledger_reconcile
#cgo noescape wk_ledger_reclaim
#cgo nocallback wk_ledger_reclaim
#cgo noescape wk_ledger_finalize_own
#cgo nocallback wk_ledger_finalize_own
#cgo noescape wk_ledger_sweep_orphans
#cgo nocallback wk_ledger_sweep_orphans
#cgo noescape wk_ledger_get
#cgo nocallback wk_ledger_get
#cgo noescape wk_ledger_counts_get
#cgo nocallback wk_ledger_counts_get
#cgo noescape wk_handoff_ledger_claim
#cgo nocallback wk_handoff_ledger_claim
#cgo noescape wk_handoff_ledger_claim_batch
#cgo nocallback wk_handoff_ledger_claim_batch
#cgo noescape wk_handoff_ledger_complete
#cgo nocallback wk_handoff_ledger_complete
#cgo noescape wk_handoff_ledger_reconcile
#cgo nocallback wk_handoff_ledger_reconcile
#cgo noescape wk_handoff_ledger_reclaim
#cgo nocallback wk_handoff_ledger_reclaim
#cgo noescape wk_handoff_ledger_get
#cgo nocallback wk_handoff_ledger_get
#cgo noescape wk_handoff_ledger_counts_get
#cgo nocallback wk_handoff_ledger_counts_get
#cgo noescape wk_anchor_table_try_fire
#cgo nocallback wk_anchor_table_try_fire
#cgo noescape wk_anchor_table_advance
#cgo nocallback wk_anchor_table_advance
#cgo noescape wk_anchor_table_anchor_unset
#cgo nocallback wk_anchor_table_anchor_unset
#cgo noescape wk_anchor_table_get
#cgo nocallback wk_anchor_table_get
#cgo nocallback wk_ledger_len
#cgo nocallback wk_handoff_ledger_len
#cgo nocallback wk_anchor_table_insert
#cgo nocallback wk_anchor_table_remove
#cgo nocallback wk_anchor_table_len
#include "wkcore.h"
*/
import "C"
