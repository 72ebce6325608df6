//go:build go1.24 && cgo && !wkcore_purego

package deliverytag

// No delivery-tag call of the C ABI runs a callback (the tag ABI takes no
// function pointer anywhere: freeing a view, a channel handle or a mutation
// drops Rust reference counts and nothing else), and none keeps a pointer
// it is given past the call (the header says of every input "read during
// the call only"; every output is written before the call returns). So
// every call the package makes is nocallback, and noescape: the strings a
// look-up points at need not escape, and the out-parameters of the cold
// calls stay on the Go stack. These directives are honoured from Go 1.24 on;
// Go 1.22 and 1.23 reject them in cmd/cgo, so they live in this file, built
// only for go1.24 and later (cgo applies them package-wide). Older
// toolchains lose nothing on the look-up path: it writes into the pooled
// View (already on the heap) and returns the reason by value.
//
// Per call:
//
//   - wkgo_lookup_hot: one wk_tag_cache_lookup_hot and wk_tag_view_info,
//     writing the caller's wkgo_hot_out; its strings and refs are read during
//     the call, the known word only compared.
//   - wkgo_lookup: frees a released view (a reference count), then one
//     wk_tag_{cache,channel,leader}_lookup and wk_tag_view_partition; its
//     strings and refs are read during the call.
//   - wk_tag_cache_store, wk_tag_channel_store, wk_tag_leader_build,
//     wk_tag_leader_build_ephemeral, wk_tag_mutation_add and _remove read a
//     C allocation (cblock) only, and write a view handle or flag.
//   - the wkgo_* wrappers of tag_cgo.h: a key's bytes read during the call,
//     a view, bool or handle written.
//   - wk_tag_view_info, wk_tag_view_partition, wk_tag_*_counts,
//     wk_tag_*_cleanup, wk_tag_mutation_commit, wk_tag_channel_current:
//     write their out-parameters only.
//   - wk_tag_view_free, wk_tag_channel_free, wk_tag_mutation_free,
//     wk_tag_mutation_reset, wk_tag_*_advance_clock: take no Go pointer.

/*
#cgo noescape wkgo_lookup
#cgo nocallback wkgo_lookup
#cgo noescape wkgo_lookup_hot
#cgo nocallback wkgo_lookup_hot
#cgo nocallback wk_tag_hot_layout_version
#cgo noescape wk_tag_cache_store
#cgo nocallback wk_tag_cache_store
#cgo noescape wk_tag_channel_store
#cgo nocallback wk_tag_channel_store
#cgo noescape wk_tag_leader_build
#cgo nocallback wk_tag_leader_build
#cgo noescape wk_tag_leader_build_ephemeral
#cgo nocallback wk_tag_leader_build_ephemeral
#cgo noescape wk_tag_mutation_add
#cgo nocallback wk_tag_mutation_add
#cgo noescape wk_tag_mutation_remove
#cgo nocallback wk_tag_mutation_remove
#cgo noescape wk_tag_mutation_commit
#cgo nocallback wk_tag_mutation_commit
#cgo noescape wk_tag_view_info
#cgo nocallback wk_tag_view_info
#cgo noescape wk_tag_view_partition
#cgo nocallback wk_tag_view_partition
#cgo noescape wk_tag_cache_counts
#cgo nocallback wk_tag_cache_counts
#cgo noescape wk_tag_leader_counts
#cgo nocallback wk_tag_leader_counts
#cgo noescape wk_tag_cache_cleanup
#cgo nocallback wk_tag_cache_cleanup
#cgo noescape wk_tag_leader_cleanup
#cgo nocallback wk_tag_leader_cleanup
#cgo noescape wk_tag_channel_current
#cgo nocallback wk_tag_channel_current
#cgo noescape wkgo_cache_current
#cgo nocallback wkgo_cache_current
#cgo noescape wkgo_cache_lookup_tag
#cgo nocallback wkgo_cache_lookup_tag
#cgo noescape wkgo_cache_is_source_stale
#cgo nocallback wkgo_cache_is_source_stale
#cgo noescape wkgo_cache_channel
#cgo nocallback wkgo_cache_channel
#cgo noescape wkgo_leader_lookup_tag
#cgo nocallback wkgo_leader_lookup_tag
#cgo noescape wkgo_leader_current
#cgo nocallback wkgo_leader_current
#cgo noescape wkgo_leader_usable
#cgo nocallback wkgo_leader_usable
#cgo noescape wkgo_leader_is_dirty
#cgo nocallback wkgo_leader_is_dirty
#cgo noescape wkgo_leader_is_source_stale
#cgo nocallback wkgo_leader_is_source_stale
#cgo noescape wkgo_leader_begin_mutation
#cgo nocallback wkgo_leader_begin_mutation
#cgo nocallback wk_tag_view_free
#cgo nocallback wk_tag_channel_free
#cgo nocallback wk_tag_mutation_free
#cgo nocallback wk_tag_mutation_reset
#cgo nocallback wk_tag_cache_advance_clock
#cgo nocallback wk_tag_leader_advance_clock
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "tag_cgo.h"
*/
import "C"
