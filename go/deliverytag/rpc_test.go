package deliverytag

// Upstream's internal/access/node/delivery_tag_rpc_test.go, one test each,
// against RPCHandler, Client and the codec; then the spec's golden vectors
// and truncation table.

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

// recordingAuthority is upstream's recordingDeliveryTagAuthority.
type recordingAuthority struct {
	getRequests    []DeliveryTagRequest
	updateRequests []DeliveryTagRequest
	getResponse    DeliveryTagResponse
	updateResponse DeliveryTagResponse
}

func (r *recordingAuthority) GetDeliveryTag(_ context.Context, req DeliveryTagRequest) (DeliveryTagResponse, error) {
	r.getRequests = append(r.getRequests, req)
	return r.getResponse, nil
}

func (r *recordingAuthority) UpdateDeliveryTag(_ context.Context, req DeliveryTagRequest) (DeliveryTagResponse, error) {
	r.updateRequests = append(r.updateRequests, req)
	return r.updateResponse, nil
}

// handler is the node's RPC handler with the channel log's leader fixed.
func handler(local, leader uint64, a Authority) RPCHandler {
	return RPCHandler{LocalNodeID: local, Authority: a,
		LeaderOf: func(string, uint8) (uint64, error) { return leader, nil }}
}

func handle(t *testing.T, h RPCHandler, req DeliveryTagRequest) DeliveryTagResponse {
	t.Helper()
	body, err := h.Handle(context.Background(), EncodeRequest(req))
	must(t, err)
	resp, err := DecodeResponse(body)
	must(t, err)
	return resp
}

const channelTypeGroup = 2

func TestDeliveryTagRPCRejectsNonLeaderUpdate(t *testing.T) {
	provider := &recordingAuthority{}
	resp := handle(t, handler(1, 2, provider), DeliveryTagRequest{Op: OpUpdate, ChannelID: "group-1",
		ChannelType: channelTypeGroup, Tag: DeliveryTag{Key: "tag-1", TagVersion: 1, SubscriberMutationVersion: 1}})
	eq(t, resp.Status, StatusNotLeader, "status")
	eq(t, resp.LeaderID, uint64(2), "leader")
	eq(t, len(provider.updateRequests), 0, "provider not called")
}

func TestDeliveryTagRPCReturnsOnlyLocalPartitionForFetch(t *testing.T) {
	provider := &recordingAuthority{getResponse: DeliveryTagResponse{Status: StatusOK, Tag: DeliveryTag{
		Key: "tag-1", ChannelKey: "group-1", TagVersion: 7, SubscriberMutationVersion: 9,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1", "u3"}}, {NodeID: 2, UIDs: []string{"u2"}},
			{NodeID: 3, UIDs: []string{"u4"}}}}}}
	resp := handle(t, handler(1, 1, provider), DeliveryTagRequest{Op: OpGet, ChannelID: "group-1",
		ChannelType: channelTypeGroup, TagKey: "tag-1", TagVersion: 7, TargetNodeID: 2})
	eq(t, resp.Status, StatusOK, "status")
	eq(t, resp.Tag.Key, "tag-1", "key")
	eq(t, resp.Tag.TagVersion, uint64(7), "version")
	eq(t, resp.Tag.Partitions, []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}, "partitions")
	eq(t, len(provider.getRequests), 1, "get called")
	eq(t, provider.getRequests[0].TargetNodeID, uint64(2), "target")
}

func TestDeliveryTagRPCReturnsEmptyLocalPartitionWhenTargetHasNoSubscribers(t *testing.T) {
	provider := &recordingAuthority{getResponse: DeliveryTagResponse{Status: StatusOK, Tag: DeliveryTag{
		Key: "tag-1", ChannelKey: "group-1", TagVersion: 7, SubscriberMutationVersion: 9,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}}}}
	resp := handle(t, handler(1, 1, provider), DeliveryTagRequest{Op: OpGet, ChannelID: "group-1",
		ChannelType: channelTypeGroup, TagKey: "tag-1", TagVersion: 7, TargetNodeID: 2})
	eq(t, resp.Status, StatusOK, "status")
	eq(t, resp.Tag.Partitions[0].NodeID, uint64(2), "synthetic partition")
	eq(t, len(resp.Tag.Partitions[0].UIDs), 0, "empty")
}

func TestDeliveryTagRPCConvertsMismatchedOKFenceToRetryable(t *testing.T) {
	provider := &recordingAuthority{getResponse: DeliveryTagResponse{Status: StatusOK, Tag: DeliveryTag{
		Key: "leader-b-1", ChannelKey: "group-1", TagVersion: 1, SubscriberMutationVersion: 9,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}}}}
	resp := handle(t, handler(1, 1, provider), DeliveryTagRequest{Op: OpGet, ChannelID: "group-1",
		ChannelType: channelTypeGroup, TagKey: "leader-a-8", TagVersion: 8})
	eq(t, resp.Status, StatusRetryable, "status")
	eq(t, resp.Result, ResultTagNotCurrent, "result")
	eq(t, resp.Tag.Key, "leader-b-1", "current tag returned")
}

func TestDeliveryTagRPCConvertsVersionMismatchOKFenceToRetryable(t *testing.T) {
	provider := &recordingAuthority{getResponse: DeliveryTagResponse{Status: StatusOK, Tag: DeliveryTag{
		Key: "tag-1", ChannelKey: "group-1", TagVersion: 8, SubscriberMutationVersion: 9,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}}}}
	resp := handle(t, handler(1, 1, provider), DeliveryTagRequest{Op: OpGet, ChannelID: "group-1",
		ChannelType: channelTypeGroup, TagKey: "tag-1", TagVersion: 7})
	eq(t, resp.Status, StatusRetryable, "status")
	eq(t, resp.Result, ResultTagVersionMismatch, "result")
	eq(t, resp.Tag.TagVersion, uint64(8), "current version returned")
}

// roundTripRequest is upstream's TestDeliveryTagBinaryCodecRoundTrip
// request (the spec's 79-byte vector).
func roundTripRequest() DeliveryTagRequest {
	now := time.Unix(200, 0)
	return DeliveryTagRequest{Op: OpGet, ChannelID: "group-1", ChannelType: channelTypeGroup, TagKey: "tag-1",
		TagVersion: 7, TargetNodeID: 2, Tag: DeliveryTag{Key: "tag-1", ChannelKey: "group-1", TagVersion: 7,
			SubscriberMutationVersion: 9, SourceChannelKey: "group-0", SourceSubscriberMutationVersion: 8,
			Topology: PartitionTopologyVersion{HashSlotTableVersion: 4, SlotAuthorityRefs: []SlotAuthorityRef{
				{SlotID: 1, LeaderNodeID: 2, ConfigEpoch: 7, BalanceVersion: 9},
				{SlotID: 2, LeaderNodeID: 3, ConfigEpoch: 8, BalanceVersion: 10}}},
			Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}},
			CreatedAt:  now, LastAccess: now.Add(time.Second)}}
}

func TestDeliveryTagBinaryCodecRoundTrip(t *testing.T) {
	req := roundTripRequest()
	reqBody := EncodeRequest(req)
	eq(t, IsRequest(reqBody), true, "request magic")
	gotReq, err := DecodeRequest(reqBody)
	must(t, err)
	eq(t, gotReq, req, "request")

	resp := DeliveryTagResponse{Status: StatusOK, Tag: req.Tag}
	respBody := EncodeResponse(resp)
	eq(t, IsResponse(respBody), true, "response magic")
	gotResp, err := DecodeResponse(respBody)
	must(t, err)
	eq(t, gotResp, resp, "response")
}

func TestDeliveryTagClientPreservesRetryableStatuses(t *testing.T) {
	provider := &recordingAuthority{getResponse: DeliveryTagResponse{Status: ResultTagVersionMismatch,
		Result: ResultTagVersionMismatch, Tag: DeliveryTag{Key: "tag-1", TagVersion: 8, SubscriberMutationVersion: 9}}}
	h := handler(1, 1, provider)
	var calls []uint64
	client := Client{Call: func(ctx context.Context, node uint64, body []byte) ([]byte, error) {
		calls = append(calls, node)
		return h.Handle(ctx, body)
	}}
	resp, err := client.GetDeliveryTag(context.Background(), 1, DeliveryTagRequest{Op: OpUpdate, ChannelID: "group-1",
		ChannelType: channelTypeGroup, TagKey: "tag-1", TagVersion: 7})
	must(t, err)
	eq(t, resp.Status, StatusRetryable, "status")
	eq(t, resp.Result, ResultTagVersionMismatch, "result")
	eq(t, resp.Tag.TagVersion, uint64(8), "version")
	eq(t, provider.getRequests[0].Op, OpGet, "the client forces the op")
	eq(t, calls, []uint64{1}, "no redirect")
}

// The client follows one not_leader redirect, to a node other than 0 and
// the one just called.
func TestDeliveryTagClientFollowsOneRedirect(t *testing.T) {
	nodes := map[uint64]RPCHandler{
		1: handler(1, 2, nil),
		2: handler(2, 2, &recordingAuthority{updateResponse: DeliveryTagResponse{Tag: DeliveryTag{Key: "k"}}}),
		3: handler(3, 3, nil),
	}
	var calls []uint64
	client := Client{Call: func(ctx context.Context, node uint64, body []byte) ([]byte, error) {
		calls = append(calls, node)
		return nodes[node].Handle(ctx, body)
	}}
	resp, err := client.UpdateDeliveryTag(context.Background(), 1, DeliveryTagRequest{ChannelID: "c"})
	must(t, err)
	eq(t, [3]any{resp.Status, resp.LeaderID, resp.Tag.Key}, [3]any{StatusOK, uint64(2), "k"}, "redirected")
	eq(t, calls, []uint64{1, 2}, "calls")
	for _, c := range []struct {
		called uint64
		resp   DeliveryTagResponse
		next   uint64
		ok     bool
	}{
		{1, DeliveryTagResponse{Status: StatusNotLeader, LeaderID: 3}, 3, true},
		{3, DeliveryTagResponse{Status: StatusNotLeader, LeaderID: 3}, 0, false},
		{1, DeliveryTagResponse{Status: StatusNotLeader}, 0, false},
		{1, DeliveryTagResponse{Status: StatusRetryable, LeaderID: 3}, 0, false},
	} {
		next, ok := Redirect(c.called, c.resp)
		eq(t, [2]any{next, ok}, [2]any{c.next, c.ok}, c.called, c.resp)
	}
	if _, err := (Client{}).GetDeliveryTag(context.Background(), 1, DeliveryTagRequest{}); err != ErrClusterNotConfigured {
		t.Fatalf("a client without Call: %v", err)
	}
}

// No leader: retryable + tag_not_current without calling the provider; an
// unknown op is an error with upstream's text; routing comes first.
func TestDeliveryTagRPCRoutingAndUnknownOp(t *testing.T) {
	provider := &recordingAuthority{}
	resp := handle(t, handler(1, 0, provider), DeliveryTagRequest{Op: OpGet})
	eq(t, [2]string{resp.Status, resp.Result}, [2]string{StatusRetryable, ResultTagNotCurrent}, "no leader")
	_, err := handler(1, 1, provider).Handle(context.Background(), EncodeRequest(DeliveryTagRequest{Op: "drop"}))
	if !errors.Is(err, ErrUnknownOp) || err.Error() != `access/node: unknown delivery tag op "drop"` {
		t.Fatalf("unknown op: %v", err)
	}
	resp = handle(t, handler(1, 2, provider), DeliveryTagRequest{Op: "drop"})
	eq(t, resp.Status, StatusNotLeader, "routing before the op check")
	eq(t, len(provider.getRequests)+len(provider.updateRequests), 0, "provider never called")
	if _, err := (RPCHandler{LocalNodeID: 1}).Handle(context.Background(), EncodeRequest(DeliveryTagRequest{})); err != ErrChannelLogRequired {
		t.Fatalf("no channel log: %v", err)
	}
	if _, err := handler(1, 1, nil).Handle(context.Background(), EncodeRequest(DeliveryTagRequest{})); err != ErrAuthorityRequired {
		t.Fatalf("no authority: %v", err)
	}
	// An empty status is ok, a zero leader the channel's; an empty op is a get.
	resp = handle(t, handler(1, 1, &recordingAuthority{}), DeliveryTagRequest{})
	eq(t, [2]any{resp.Status, resp.LeaderID}, [2]any{StatusOK, uint64(1)}, "filled")
}

// The spec's golden vectors, both ways.
func TestDeliveryTagCodecGoldenVectors(t *testing.T) {
	rt := roundTripRequest()
	for _, c := range []struct {
		name string
		req  *DeliveryTagRequest
		resp *DeliveryTagResponse
		hex  string
	}{
		{"get", &DeliveryTagRequest{Op: "get", ChannelID: "g", ChannelType: 2, TagKey: "t", TagVersion: 7, TargetNodeID: 2},
			nil, "574b44540103676574016702017407020000000000000000000000"},
		{"empty get", &DeliveryTagRequest{Op: "get"}, nil, "574b4454010367657400000000000000000000000000000000"},
		{"round trip", &rt, nil, "574b445401036765740767726f75702d3102057461672d310702057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b"},
		{"ok", nil, &DeliveryTagResponse{Status: "ok", Tag: rt.Tag}, "574b444701026f6b0000057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b"},
		{"not leader", nil, &DeliveryTagResponse{Status: "not_leader", LeaderID: 2}, "574b4447010a6e6f745f6c656164657202000000000000000000000000"},
		{"retryable", nil, &DeliveryTagResponse{Status: "retryable", Result: "tag_version_mismatch",
			Tag: DeliveryTag{Key: "tag-1", TagVersion: 8, SubscriberMutationVersion: 9}},
			"574b44470109726574727961626c6500147461675f76657273696f6e5f6d69736d61746368057461672d3100080900000000000000"},
	} {
		want, _ := hex.DecodeString(c.hex)
		if c.req != nil {
			eq(t, hex.EncodeToString(EncodeRequest(*c.req)), c.hex, c.name)
			got, err := DecodeRequest(want)
			must(t, err)
			// Decoded collections are non-nil.
			wantReq := *c.req
			if wantReq.Tag.Topology.SlotAuthorityRefs == nil {
				wantReq.Tag.Topology.SlotAuthorityRefs = []SlotAuthorityRef{}
			}
			if wantReq.Tag.Partitions == nil {
				wantReq.Tag.Partitions = []NodePartition{}
			}
			eq(t, got, wantReq, c.name)
		} else {
			eq(t, hex.EncodeToString(EncodeResponse(*c.resp)), c.hex, c.name)
			got, err := DecodeResponse(want)
			must(t, err)
			eq(t, got.Status, c.resp.Status, c.name)
			eq(t, got.Tag.Key, c.resp.Tag.Key, c.name)
		}
	}
}

// Truncating the 27-byte request at every length gives upstream's error
// for that length; an extra byte and a bad magic are refused too.
func TestDeliveryTagCodecTruncations(t *testing.T) {
	full, _ := hex.DecodeString("574b44540103676574016702017407020000000000000000000000")
	want := func(n int) error {
		switch {
		case n <= 4:
			return ErrInvalidRequestCodec
		case n == 5 || n == 9 || n == 12 || (n >= 14 && n <= 24):
			return ErrShortUvarint
		case n >= 6 && n <= 8, n == 10, n == 13:
			return ErrShortBytes
		case n == 11:
			return ErrShortChannelType
		}
		return ErrShortVarint
	}
	for n := 0; n < len(full); n++ {
		_, err := DecodeRequest(full[:n])
		if err != want(n) || !errors.Is(err, ErrInvalidFrame) {
			t.Errorf("length %d: %v, want %v", n, err, want(n))
		}
	}
	if _, err := DecodeRequest(append(append([]byte(nil), full...), 0)); err != ErrTrailingRequestBytes {
		t.Errorf("trailing byte: %v", err)
	}
	bad := append([]byte(nil), full...)
	bad[4] = 2
	if _, err := DecodeRequest(bad); err != ErrInvalidRequestCodec {
		t.Errorf("bad magic: %v", err)
	}
	if _, err := DecodeResponse(full); err != ErrInvalidResponseCodec {
		t.Errorf("a request as a response: %v", err)
	}
	resp := EncodeResponse(DeliveryTagResponse{Status: "ok"})
	if _, err := DecodeResponse(append(resp, 0)); err != ErrTrailingResponseBytes {
		t.Errorf("trailing response byte: %v", err)
	}
	// Counts are bounded by the bytes that remain; a malformed varint is
	// refused.
	inflated := append(append([]byte(nil), full[:23]...), 0x7f)
	if _, err := DecodeRequest(inflated); err != ErrRefsCountExceeds {
		t.Errorf("inflated refs count: %v", err)
	}
	overflow := append(append([]byte(nil), full[:23]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
	if _, err := DecodeRequest(overflow); err != ErrRefsCountOverflowsInt {
		t.Errorf("overflowing refs count: %v", err)
	}
	malformed := append(append([]byte(nil), full[:5]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
	if _, err := DecodeRequest(malformed); err != ErrInvalidUvarint {
		t.Errorf("malformed uvarint: %v", err)
	}
}
