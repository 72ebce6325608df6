package deliverytag

import "sort"

// UnassignedSlotError is PartitionByNode's refusal of a UID whose hash slot
// has no known node: the build is retryable once the slot table knows it.
// It matches ErrUnassignedSlot (errors.Is) and has its text.
type UnassignedSlotError struct {
	// SlotID is the first such UID's slot.
	SlotID uint32
}

// Error returns ErrUnassignedSlot's text.
func (e *UnassignedSlotError) Error() string { return ErrUnassignedSlot.Error() }

// Unwrap returns ErrUnassignedSlot.
func (e *UnassignedSlotError) Unwrap() error { return ErrUnassignedSlot }

// PartitionByNode splits uids by the node that owns each one's slot:
// slots[i] is uids[i]'s hash slot and slotNodes[s] slot s's node (0, or s
// past the table: unknown). Partitions come ordered by node, each node's
// UIDs in input order. A UID whose slot has no known node refuses the
// split (*UnassignedSlotError, never a guess); uids and slots of different
// lengths give ErrLengthMismatch.
func PartitionByNode(uids []string, slots []uint32, slotNodes []uint64) ([]NodePartition, error) {
	if len(uids) != len(slots) {
		return nil, ErrLengthMismatch
	}
	byNode := map[uint64][]string{}
	for i, u := range uids {
		var node uint64
		if s := slots[i]; uint64(s) < uint64(len(slotNodes)) {
			node = slotNodes[s]
		}
		if node == 0 {
			return nil, &UnassignedSlotError{SlotID: slots[i]}
		}
		byNode[node] = append(byNode[node], u)
	}
	out := make([]NodePartition, 0, len(byNode))
	for n, list := range byNode {
		if !uidsFit(list) {
			return nil, ErrTooLarge
		}
		out = append(out, NodePartition{NodeID: n, UIDs: list})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out, nil
}
