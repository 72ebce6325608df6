package deliverytag

// The delivery-tag node RPC (service 44): upstream's request and response
// (internal/access/node/delivery_tag_codec.go), their binary codec, byte
// for byte, the handler's routing, filter and normalization rules
// (delivery_tag_rpc.go) and the client's one redirect. Pure Go in both
// builds: a frame arrives as Go bytes and leaves as Go values, so a trip
// through the library would only add two copies (the Rust core's codec is
// the same format, and the cgo build's tests check the two agree).

import (
	"context"
	"encoding/binary"
	"errors"
)

// DeliveryTagRPCServiceID is the node RPC service id of the delivery-tag
// RPC.
const DeliveryTagRPCServiceID = 44

// The ops, statuses and results of the RPC (upstream's strings).
const (
	OpGet    = "get"
	OpUpdate = "update"

	StatusOK        = "ok"
	StatusNotLeader = "not_leader"
	StatusRetryable = "retryable"

	ResultTagNotCurrent      = "tag_not_current"
	ResultTagVersionMismatch = "tag_version_mismatch"
)

var (
	requestMagic  = [...]byte{'W', 'K', 'D', 'T', 1}
	responseMagic = [...]byte{'W', 'K', 'D', 'G', 1}
)

// DeliveryTagRequest carries a leader-only delivery tag look-up or update.
type DeliveryTagRequest struct {
	// Op selects the behaviour: get (or empty) or update.
	Op string `json:"op"`
	// ChannelID identifies the delivery channel.
	ChannelID string `json:"channel_id"`
	// ChannelType identifies the delivery channel type.
	ChannelType uint8 `json:"channel_type"`
	// TagKey is the tag incarnation fence.
	TagKey string `json:"tag_key,omitempty"`
	// TagVersion is the tag version fence.
	TagVersion uint64 `json:"tag_version,omitempty"`
	// TargetNodeID asks for only that node's partition.
	TargetNodeID uint64 `json:"target_node_id,omitempty"`
	// Tag carries the full tag body of an update.
	Tag DeliveryTag `json:"tag,omitempty"`
}

// DeliveryTagResponse returns the leader's tag state or a retry status.
type DeliveryTagResponse struct {
	// Status is ok, not_leader, retryable, or a tag-specific status the
	// handler rewrites to retryable.
	Status string `json:"status"`
	// LeaderID names the current leader when the request reached another
	// node.
	LeaderID uint64 `json:"leader_id,omitempty"`
	// Result details a retryable status.
	Result string `json:"result,omitempty"`
	// Tag is the leader's tag.
	Tag DeliveryTag `json:"tag,omitempty"`
}

// IsRequest reports whether body starts with the request magic.
func IsRequest(body []byte) bool { return hasMagic(body, requestMagic[:]) }

// IsResponse reports whether body starts with the response magic.
func IsResponse(body []byte) bool { return hasMagic(body, responseMagic[:]) }

func hasMagic(body, magic []byte) bool {
	return len(body) >= len(magic) && string(body[:len(magic)]) == string(magic)
}

// AppendRequest appends req's binary encoding to dst.
func AppendRequest(dst []byte, req DeliveryTagRequest) []byte {
	dst = append(dst, requestMagic[:]...)
	dst = appendString(dst, req.Op)
	dst = appendString(dst, req.ChannelID)
	dst = append(dst, req.ChannelType)
	dst = appendString(dst, req.TagKey)
	dst = binary.AppendUvarint(dst, req.TagVersion)
	dst = binary.AppendUvarint(dst, req.TargetNodeID)
	return appendTag(dst, &req.Tag)
}

// EncodeRequest returns req's binary encoding.
func EncodeRequest(req DeliveryTagRequest) []byte {
	return AppendRequest(make([]byte, 0, len(requestMagic)+len(req.ChannelID)+len(req.TagKey)+len(req.Op)+128), req)
}

// EncodeRequestBinary is EncodeRequest in the shape of upstream's
// encodeDeliveryTagRequestBinary, ([]byte, error); the error is always nil
// (every request encodes). See docs/GO.md for the node-package shim.
func EncodeRequestBinary(req DeliveryTagRequest) ([]byte, error) { return EncodeRequest(req), nil }

// AppendResponse appends resp's binary encoding to dst.
func AppendResponse(dst []byte, resp DeliveryTagResponse) []byte {
	dst = append(dst, responseMagic[:]...)
	dst = appendString(dst, resp.Status)
	dst = binary.AppendUvarint(dst, resp.LeaderID)
	dst = appendString(dst, resp.Result)
	return appendTag(dst, &resp.Tag)
}

// EncodeResponse returns resp's binary encoding.
func EncodeResponse(resp DeliveryTagResponse) []byte {
	return AppendResponse(make([]byte, 0, len(responseMagic)+len(resp.Status)+len(resp.Result)+128), resp)
}

// EncodeResponseBinary is EncodeResponse in the shape of upstream's
// encodeDeliveryTagResponseBinary, ([]byte, error); the error is always nil.
func EncodeResponseBinary(resp DeliveryTagResponse) ([]byte, error) { return EncodeResponse(resp), nil }

// DecodeRequest decodes a request: an error with upstream's text (matching
// ErrInvalidFrame) if body is not one.
func DecodeRequest(body []byte) (DeliveryTagRequest, error) {
	if !IsRequest(body) {
		return DeliveryTagRequest{}, ErrInvalidRequestCodec
	}
	d := decoder{b: body[len(requestMagic):]}
	var req DeliveryTagRequest
	req.Op = d.string()
	req.ChannelID = d.string()
	if d.err == nil {
		if len(d.b) == 0 {
			d.err = ErrShortChannelType
		} else {
			req.ChannelType = d.b[0]
			d.b = d.b[1:]
		}
	}
	req.TagKey = d.string()
	req.TagVersion = d.uvarint()
	req.TargetNodeID = d.uvarint()
	d.tag(&req.Tag)
	if d.err == nil && len(d.b) != 0 {
		d.err = ErrTrailingRequestBytes
	}
	if d.err != nil {
		return DeliveryTagRequest{}, d.err
	}
	return req, nil
}

// DecodeResponse decodes a response: an error with upstream's text
// (matching ErrInvalidFrame) if body is not one.
func DecodeResponse(body []byte) (DeliveryTagResponse, error) {
	if !IsResponse(body) {
		return DeliveryTagResponse{}, ErrInvalidResponseCodec
	}
	d := decoder{b: body[len(responseMagic):]}
	var resp DeliveryTagResponse
	resp.Status = d.string()
	resp.LeaderID = d.uvarint()
	resp.Result = d.string()
	d.tag(&resp.Tag)
	if d.err == nil && len(d.b) != 0 {
		d.err = ErrTrailingResponseBytes
	}
	if d.err != nil {
		return DeliveryTagResponse{}, d.err
	}
	return resp, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendTag(dst []byte, t *DeliveryTag) []byte {
	dst = appendString(dst, t.Key)
	dst = appendString(dst, t.ChannelKey)
	dst = binary.AppendUvarint(dst, t.TagVersion)
	dst = binary.AppendUvarint(dst, t.SubscriberMutationVersion)
	dst = appendString(dst, t.SourceChannelKey)
	dst = binary.AppendUvarint(dst, t.SourceSubscriberMutationVersion)
	dst = binary.AppendUvarint(dst, t.Topology.HashSlotTableVersion)
	dst = binary.AppendUvarint(dst, uint64(len(t.Topology.SlotAuthorityRefs)))
	for _, r := range t.Topology.SlotAuthorityRefs {
		dst = binary.AppendUvarint(dst, uint64(r.SlotID))
		dst = binary.AppendUvarint(dst, r.LeaderNodeID)
		dst = binary.AppendUvarint(dst, r.ConfigEpoch)
		dst = binary.AppendUvarint(dst, r.BalanceVersion)
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Partitions)))
	for _, p := range t.Partitions {
		dst = binary.AppendUvarint(dst, p.NodeID)
		dst = binary.AppendUvarint(dst, uint64(len(p.UIDs)))
		for _, u := range p.UIDs {
			dst = appendString(dst, u)
		}
	}
	dst = binary.AppendVarint(dst, unixNanos(t.CreatedAt))
	return binary.AppendVarint(dst, unixNanos(t.LastAccess))
}

// decoder reads upstream's fields in order; the first error sticks and
// every later read returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = ErrShortUvarint
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = ErrInvalidUvarint
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = ErrShortVarint
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = ErrInvalidVarint
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = ErrShortBytes
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// count reads a collection count, bounded by the bytes that remain.
func (d *decoder) count(overflows, exceeds error) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(^uint(0)>>1) {
		d.err = overflows
		return 0
	}
	if n > uint64(len(d.b)) {
		d.err = exceeds
		return 0
	}
	return int(n)
}

func (d *decoder) tag(t *DeliveryTag) {
	t.Key = d.string()
	t.ChannelKey = d.string()
	t.TagVersion = d.uvarint()
	t.SubscriberMutationVersion = d.uvarint()
	t.SourceChannelKey = d.string()
	t.SourceSubscriberMutationVersion = d.uvarint()
	t.Topology.HashSlotTableVersion = d.uvarint()
	refs := d.count(ErrRefsCountOverflowsInt, ErrRefsCountExceeds)
	if d.err != nil {
		return
	}
	t.Topology.SlotAuthorityRefs = make([]SlotAuthorityRef, refs)
	for i := range t.Topology.SlotAuthorityRefs {
		r := &t.Topology.SlotAuthorityRefs[i]
		// Upstream truncates the slot id to 32 bits.
		r.SlotID = uint32(d.uvarint())
		r.LeaderNodeID = d.uvarint()
		r.ConfigEpoch = d.uvarint()
		r.BalanceVersion = d.uvarint()
	}
	parts := d.count(ErrPartitionsCountOverflowsInt, ErrPartitionsCountExceeds)
	if d.err != nil {
		return
	}
	t.Partitions = make([]NodePartition, parts)
	for i := range t.Partitions {
		p := &t.Partitions[i]
		p.NodeID = d.uvarint()
		uids := d.count(ErrUIDsCountOverflowsInt, ErrUIDsCountExceeds)
		if d.err != nil {
			return
		}
		p.UIDs = make([]string, uids)
		for j := range p.UIDs {
			p.UIDs[j] = d.string()
		}
	}
	t.CreatedAt = timeOf(d.varint())
	t.LastAccess = timeOf(d.varint())
}

// Authority answers the RPC's ops on the channel's leader (upstream's
// delivery tag authority).
type Authority interface {
	GetDeliveryTag(ctx context.Context, req DeliveryTagRequest) (DeliveryTagResponse, error)
	UpdateDeliveryTag(ctx context.Context, req DeliveryTagRequest) (DeliveryTagResponse, error)
}

// The handler's own errors (upstream's texts; Go errors, not statuses).
var (
	// ErrChannelLogRequired: an RPCHandler without LeaderOf.
	ErrChannelLogRequired = errors.New("access/node: delivery tag channel log required")
	// ErrAuthorityRequired: an RPCHandler without an Authority.
	ErrAuthorityRequired = errors.New("access/node: delivery tag authority required")
)

// RPCHandler is upstream's service-44 handler: decode, route to the
// channel's leader, run the op, filter and normalize the response.
type RPCHandler struct {
	// LocalNodeID is this node.
	LocalNodeID uint64
	// LeaderOf returns the channel's leader (0: none known), as upstream's
	// channel log status.
	LeaderOf func(channelID string, channelType uint8) (uint64, error)
	// Authority runs the ops.
	Authority Authority
}

// Handle answers one request frame: a response frame, or an error (a
// decode error, an unknown op wrapping ErrUnknownOp with upstream's text,
// the LeaderOf or Authority error).
func (h RPCHandler) Handle(ctx context.Context, body []byte) ([]byte, error) {
	req, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	if h.LeaderOf == nil {
		return nil, ErrChannelLogRequired
	}
	leader, err := h.LeaderOf(req.ChannelID, req.ChannelType)
	if err != nil {
		return nil, err
	}
	if leader == 0 {
		return EncodeResponse(DeliveryTagResponse{Status: StatusRetryable, Result: ResultTagNotCurrent}), nil
	}
	if leader != h.LocalNodeID {
		return EncodeResponse(DeliveryTagResponse{Status: StatusNotLeader, LeaderID: leader}), nil
	}
	if h.Authority == nil {
		return nil, ErrAuthorityRequired
	}
	var resp DeliveryTagResponse
	switch req.Op {
	case OpGet, "":
		resp, err = h.Authority.GetDeliveryTag(ctx, req)
	case OpUpdate:
		resp, err = h.Authority.UpdateDeliveryTag(ctx, req)
	default:
		return nil, unknownOpError(req.Op)
	}
	if err != nil {
		return nil, err
	}
	return EncodeResponse(NormalizeResponse(req, FilterResponse(resp, req.TargetNodeID), leader)), nil
}

// FilterResponse keeps only targetNodeID's partition of resp's tag (a
// synthetic empty one if it has none) when targetNodeID is not 0 and the tag
// has partitions.
func FilterResponse(resp DeliveryTagResponse, targetNodeID uint64) DeliveryTagResponse {
	if targetNodeID == 0 || len(resp.Tag.Partitions) == 0 {
		return resp
	}
	for _, p := range resp.Tag.Partitions {
		if p.NodeID == targetNodeID {
			resp.Tag.Partitions = []NodePartition{p}
			return resp
		}
	}
	resp.Tag.Partitions = []NodePartition{{NodeID: targetNodeID}}
	return resp
}

// NormalizeResponse is upstream's: an empty status is ok; a zero LeaderID
// is the channel's leader; an ok response whose tag names another key or
// version than the request's is retryable (tag_not_current,
// tag_version_mismatch); a tag_not_current or tag_version_mismatch status
// becomes retryable with that result.
func NormalizeResponse(req DeliveryTagRequest, resp DeliveryTagResponse, leaderID uint64) DeliveryTagResponse {
	if resp.Status == "" {
		resp.Status = StatusOK
	}
	if leaderID != 0 && resp.LeaderID == 0 {
		resp.LeaderID = leaderID
	}
	if resp.Status == StatusOK {
		if req.TagKey != "" && resp.Tag.Key != "" && resp.Tag.Key != req.TagKey {
			resp.Status, resp.Result = StatusRetryable, ResultTagNotCurrent
		} else if req.TagVersion != 0 && resp.Tag.TagVersion != 0 && resp.Tag.TagVersion != req.TagVersion {
			resp.Status, resp.Result = StatusRetryable, ResultTagVersionMismatch
		}
	}
	if resp.Status == ResultTagNotCurrent || resp.Status == ResultTagVersionMismatch {
		if resp.Result == "" {
			resp.Result = resp.Status
		}
		resp.Status = StatusRetryable
	}
	return resp
}

// Client calls the RPC on other nodes (upstream's GetDeliveryTag and
// UpdateDeliveryTag).
type Client struct {
	// Call sends one service-44 frame to nodeID and returns its response
	// frame.
	Call func(ctx context.Context, nodeID uint64, body []byte) ([]byte, error)
}

// ErrClusterNotConfigured: a Client without Call (upstream's text).
var ErrClusterNotConfigured = errors.New("access/node: cluster not configured")

// GetDeliveryTag sends req as a get to nodeID, following one not_leader
// redirect.
func (c Client) GetDeliveryTag(ctx context.Context, nodeID uint64, req DeliveryTagRequest) (DeliveryTagResponse, error) {
	req.Op = OpGet
	return c.call(ctx, nodeID, req)
}

// UpdateDeliveryTag sends req as an update to nodeID, following one
// not_leader redirect.
func (c Client) UpdateDeliveryTag(ctx context.Context, nodeID uint64, req DeliveryTagRequest) (DeliveryTagResponse, error) {
	req.Op = OpUpdate
	return c.call(ctx, nodeID, req)
}

func (c Client) call(ctx context.Context, nodeID uint64, req DeliveryTagRequest) (DeliveryTagResponse, error) {
	if c.Call == nil {
		return DeliveryTagResponse{}, ErrClusterNotConfigured
	}
	body := EncodeRequest(req)
	resp, err := c.direct(ctx, nodeID, body)
	if err != nil {
		return DeliveryTagResponse{}, err
	}
	if next, ok := Redirect(nodeID, resp); ok {
		return c.direct(ctx, next, body)
	}
	return resp, nil
}

func (c Client) direct(ctx context.Context, nodeID uint64, body []byte) (DeliveryTagResponse, error) {
	out, err := c.Call(ctx, nodeID, body)
	if err != nil {
		return DeliveryTagResponse{}, err
	}
	return DecodeResponse(out)
}

// Redirect is the client's rule: a not_leader response naming a leader
// other than 0 and the node just called is followed, once.
func Redirect(called uint64, resp DeliveryTagResponse) (uint64, bool) {
	if resp.Status == StatusNotLeader && resp.LeaderID != 0 && resp.LeaderID != called {
		return resp.LeaderID, true
	}
	return 0, false
}
