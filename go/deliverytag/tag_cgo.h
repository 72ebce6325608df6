// The C side of the cgo build (cgo.go, cgo_go124.go): wrappers that build
// the ABI's request structs on the C stack from Go's strings and numbers, so
// that no Go memory holding a Go pointer is ever passed to C. Strings arrive
// as (pointer, length) pairs pointing into Go strings, read during the call
// only; handles arrive as integers. Nothing here keeps a pointer past the
// call, and no delivery-tag call runs a callback.

#ifndef WKGO_TAG_CGO_H
#define WKGO_TAG_CGO_H

#include <stdint.h>
#include <stdlib.h>
#include "wkcore.h"

static inline wk_str wkgo_str(const uint8_t *p, size_t n) {
	wk_str s;
	s.ptr = n ? p : NULL;
	s.len = n;
	return s;
}

// The handle a look-up runs on.
enum { WKGO_CACHE = 0, WKGO_CHANNEL = 1, WKGO_LEADER = 2 };

// What a look-up with a view writes: the view handle, its first partition
// (zero-copy; has_part 0 when the body has none) and the reason.
typedef struct {
	wk_tag_view *view;
	wk_tag_partition_view part;
	uint8_t reason;
	uint8_t has_part;
} wkgo_lookup_out;

// One look-up, the hot path: frees `stale` (a view the host released; NULL
// is a no-op), runs the fence on the cache, channel or leader `handle`, and,
// when `out` is not NULL (a wkgo_lookup_out, passed as words so that cgo
// checks nothing), writes the view and its first partition. Returns the
// status shifted left by 8, or'd with the reason: one C call per look-up.
static inline uint32_t wkgo_lookup(int kind, uintptr_t handle, uintptr_t stale, uint64_t *out,
                                   const uint8_t *ch, size_t ch_len, const uint8_t *key, size_t key_len,
                                   uint64_t version, uint64_t smv, const uint8_t *src, size_t src_len,
                                   uint64_t src_smv, uint64_t table, const wk_tag_slot_ref *refs,
                                   size_t ref_count) {
	wk_tag_view_free((wk_tag_view *)stale);
	wk_tag_lookup_request r;
	r.tag_key = wkgo_str(key, key_len);
	r.tag_version = version;
	r.subscriber_mutation_version = smv;
	r.source_channel_key = wkgo_str(src, src_len);
	r.source_subscriber_mutation_version = src_smv;
	r.hash_slot_table_version = table;
	r.refs = ref_count ? refs : NULL;
	r.ref_count = ref_count;
	wkgo_lookup_out *o = (wkgo_lookup_out *)out;
	wk_tag_view **view = o ? &o->view : NULL;
	uint8_t reason = 0;
	wk_status st;
	switch (kind) {
	case WKGO_CHANNEL:
		st = wk_tag_channel_lookup((const wk_tag_channel *)handle, &r, &reason, view);
		break;
	case WKGO_LEADER:
		st = wk_tag_leader_lookup((const wk_tag_leader *)handle, wkgo_str(ch, ch_len), &r, &reason, view);
		break;
	default:
		st = wk_tag_cache_lookup((const wk_tag_cache *)handle, wkgo_str(ch, ch_len), &r, &reason, view);
	}
	if (st != WK_STATUS_OK) return st << 8;
	if (o) {
		o->reason = reason;
		o->has_part = o->view != NULL && wk_tag_view_partition(o->view, 0, &o->part) == WK_STATUS_OK;
	}
	return reason;
}

// What the inline hit's crossing writes (hot_cgo.go): the library's wk_tag_hot
// and, when it holds a view, that body's fields.
typedef struct {
	wk_tag_hot hot;
	wk_tag_info info;
} wkgo_hot_out;

// The inline hit's crossing: wk_tag_cache_lookup_hot with the request built
// here, then wk_tag_view_info of the view it returned (if any). `known` is the
// generation word of the cell the host holds (0: none), only compared.
static inline wk_status wkgo_lookup_hot(uintptr_t cache, wkgo_hot_out *out, const uint8_t *ch, size_t ch_len,
                                        const uint8_t *key, size_t key_len, uint64_t version, uint64_t smv,
                                        const uint8_t *src, size_t src_len, uint64_t src_smv, uint64_t table,
                                        const wk_tag_slot_ref *refs, size_t ref_count, uintptr_t known) {
	wk_tag_lookup_request r;
	r.tag_key = wkgo_str(key, key_len);
	r.tag_version = version;
	r.subscriber_mutation_version = smv;
	r.source_channel_key = wkgo_str(src, src_len);
	r.source_subscriber_mutation_version = src_smv;
	r.hash_slot_table_version = table;
	r.refs = ref_count ? refs : NULL;
	r.ref_count = ref_count;
	wk_status st = wk_tag_cache_lookup_hot((const wk_tag_cache *)cache, wkgo_str(ch, ch_len), &r,
	                                       (const uint64_t *)known, &out->hot);
	if (st != WK_STATUS_OK || out->hot.view == NULL) return st;
	return wk_tag_view_info(out->hot.view, &out->info, sizeof out->info);
}

static inline wk_status wkgo_leader_new(uint64_t node, uint64_t ttl_ns, uint32_t clock, uint64_t start_ns,
                                        const uint8_t *prefix, size_t prefix_len, wk_tag_leader **out) {
	wk_tag_leader_options o;
	o.struct_size = sizeof o;
	o.local_node_id = node;
	o.ttl_ns = ttl_ns;
	o.clock = clock;
	o.manual_start_ns = start_ns;
	o.key_prefix = wkgo_str(prefix, prefix_len);
	return wk_tag_leader_new(&o, NULL, out);
}

static inline wk_status wkgo_cache_channel(const wk_tag_cache *c, const uint8_t *ch, size_t n,
                                           wk_tag_channel **out) {
	return wk_tag_cache_channel(c, wkgo_str(ch, n), out);
}

static inline wk_status wkgo_cache_current(const wk_tag_cache *c, const uint8_t *ch, size_t n,
                                           wk_tag_view **out) {
	return wk_tag_cache_current(c, wkgo_str(ch, n), out);
}

static inline wk_status wkgo_cache_lookup_tag(const wk_tag_cache *c, const uint8_t *ch, size_t n,
                                              const uint8_t *key, size_t key_len, wk_tag_view **out) {
	return wk_tag_cache_lookup_tag(c, wkgo_str(ch, n), wkgo_str(key, key_len), out);
}

static inline wk_status wkgo_cache_is_source_stale(const wk_tag_cache *c, const uint8_t *ch, size_t n,
                                                   const uint8_t *src, size_t src_len, uint64_t version,
                                                   bool *out) {
	return wk_tag_cache_is_source_stale(c, wkgo_str(ch, n), wkgo_str(src, src_len), version, out);
}

static inline wk_status wkgo_leader_lookup_tag(const wk_tag_leader *l, const uint8_t *key, size_t n,
                                               wk_tag_view **out) {
	return wk_tag_leader_lookup_tag(l, wkgo_str(key, n), out);
}

static inline wk_status wkgo_leader_current(const wk_tag_leader *l, const uint8_t *ch, size_t n,
                                            wk_tag_view **out) {
	return wk_tag_leader_current(l, wkgo_str(ch, n), out);
}

// As wkgo_lookup, for wk_tag_leader_usable: frees `stale`, writes the view
// and its first partition into `out` (a wkgo_lookup_out) on success.
static inline wk_status wkgo_leader_usable(const wk_tag_leader *l, uintptr_t stale, uint64_t *out,
                                           const uint8_t *ch, size_t n, uint64_t version) {
	wk_tag_view_free((wk_tag_view *)stale);
	wkgo_lookup_out *o = (wkgo_lookup_out *)out;
	wk_status st = wk_tag_leader_usable(l, wkgo_str(ch, n), version, &o->view);
	if (st == WK_STATUS_OK) {
		o->has_part = wk_tag_view_partition(o->view, 0, &o->part) == WK_STATUS_OK;
	}
	return st;
}

static inline wk_status wkgo_leader_is_dirty(const wk_tag_leader *l, const uint8_t *ch, size_t n, bool *out) {
	return wk_tag_leader_is_dirty(l, wkgo_str(ch, n), out);
}

static inline wk_status wkgo_leader_is_source_stale(const wk_tag_leader *l, const uint8_t *ch, size_t n,
                                                    const uint8_t *src, size_t src_len, uint64_t version,
                                                    bool *out) {
	return wk_tag_leader_is_source_stale(l, wkgo_str(ch, n), wkgo_str(src, src_len), version, out);
}

static inline wk_status wkgo_leader_begin_mutation(const wk_tag_leader *l, const uint8_t *ch, size_t n,
                                                   wk_tag_mutation **out) {
	return wk_tag_leader_begin_mutation(l, wkgo_str(ch, n), out);
}

#endif
