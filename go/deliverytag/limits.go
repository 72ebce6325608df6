package deliverytag

// The C ABI's argument checks, in its order, so that both builds refuse the
// same input with the same error. The cgo build runs them before it copies
// a tag for C (it hands C only what the call keeps), the pure-Go build
// before every write; look-ups run them only on a miss (a hit proves its
// keys valid: they equal the keys of a body that was checked when stored).

import "unicode/utf8"

// The limits of the C ABI (WK_TAG_*_MAX); a longer key or UID, or a longer
// list, is ErrInvalidArgument.
const (
	// KeyMax is the longest channel key, tag key, source key, key prefix or
	// UID, in bytes.
	KeyMax = 1 << 16
	// RefsMax is the most slot refs a topology carries.
	RefsMax = 1 << 16
	// PartitionsMax is the most partitions a tag carries.
	PartitionsMax = 1 << 16
	// UIDsMax is the most UIDs one partition or one mutation call takes.
	UIDsMax = 1 << 25
)

// checkKey is the C ABI's key_arg: length, then UTF-8.
func checkKey(s string) error {
	if len(s) > KeyMax {
		return ErrInvalidArgument
	}
	if !utf8.ValidString(s) {
		return ErrInvalidUTF8
	}
	return nil
}

// checkUIDs is uids_arg: the count, then each UID's length (UIDs are any
// bytes).
func checkUIDs(uids []string) error {
	if len(uids) > UIDsMax {
		return ErrInvalidArgument
	}
	for _, u := range uids {
		if len(u) > KeyMax {
			return ErrInvalidArgument
		}
	}
	return nil
}

// checkPartitions is partitions_arg: every partition's UIDs, then the
// compact-list size of those kept (keep 0: all; else the first of that
// node, as a follower keeps).
func checkPartitions(parts []NodePartition, keep uint64) error {
	if len(parts) > PartitionsMax {
		return ErrInvalidArgument
	}
	for _, p := range parts {
		if err := checkUIDs(p.UIDs); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if keep != 0 && p.NodeID != keep {
			continue
		}
		if !uidsFit(p.UIDs) {
			return ErrTooLarge
		}
		if keep != 0 {
			break
		}
	}
	return nil
}

// checkTagIn is parts_arg: the three keys, the refs, the partitions.
func checkTagIn(t *DeliveryTag, keep uint64) error {
	for _, k := range [...]string{t.Key, t.ChannelKey, t.SourceChannelKey} {
		if err := checkKey(k); err != nil {
			return err
		}
	}
	if len(t.Topology.SlotAuthorityRefs) > RefsMax {
		return ErrInvalidArgument
	}
	return checkPartitions(t.Partitions, keep)
}

// checkLookup is a look-up's checks: the channel key (unless a handle
// carries it), then lookup_arg (tag key, source key, refs).
func checkLookup(withChannel bool, r *TagRef) error {
	if withChannel {
		if err := checkKey(r.ChannelKey); err != nil {
			return err
		}
	}
	if err := checkKey(r.TagKey); err != nil {
		return err
	}
	if err := checkKey(r.SourceChannelKey); err != nil {
		return err
	}
	if len(r.Topology.SlotAuthorityRefs) > RefsMax {
		return ErrInvalidArgument
	}
	return nil
}

// checkBuildIn is build_with: the partitions (all kept), then build_arg
// (channel key, source key, refs).
func checkBuildIn(r *BuildRequest) error {
	if err := checkPartitions(r.Partitions, 0); err != nil {
		return err
	}
	if err := checkKey(r.ChannelKey); err != nil {
		return err
	}
	if err := checkKey(r.SourceChannelKey); err != nil {
		return err
	}
	if len(r.Topology.SlotAuthorityRefs) > RefsMax {
		return ErrInvalidArgument
	}
	return nil
}

// cleanupLimit is the C ABI's limit (1..=CleanupLimitMax) of a Go limit:
// negative is refused, 0 visits nothing (ok false), above the maximum is
// clipped.
func cleanupLimit(limit int) (uint32, bool, error) {
	switch {
	case limit < 0:
		return 0, false, ErrInvalidArgument
	case limit == 0:
		return 0, false, nil
	case limit > CleanupLimitMax:
		return CleanupLimitMax, true, nil
	}
	return uint32(limit), true, nil
}

// checkKeys checks two keys, in order.
func checkKeys(a, b string) error {
	if err := checkKey(a); err != nil {
		return err
	}
	return checkKey(b)
}
