package node

// The shim a WuKongIM maintainer writes in internal/access/node to keep the
// node package's unexported codec names over this package (docs/GO.md,
// "Swapping the import"): each name with upstream's exact signature, checked
// here by the compiler and run on the wire's golden bytes.

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"

	wkdt "github.com/wukongim/wkcore/go/deliverytag"
)

type (
	DeliveryTagRequest  = wkdt.DeliveryTagRequest
	DeliveryTagResponse = wkdt.DeliveryTagResponse
	deliveryTagRequest  = DeliveryTagRequest
	deliveryTagResponse = DeliveryTagResponse
)

func encodeDeliveryTagRequestBinary(req DeliveryTagRequest) ([]byte, error) {
	return wkdt.EncodeRequestBinary(req)
}
func decodeDeliveryTagRequest(body []byte) (deliveryTagRequest, error) {
	return wkdt.DecodeRequest(body)
}
func encodeDeliveryTagResponseBinary(resp DeliveryTagResponse) ([]byte, error) {
	return wkdt.EncodeResponseBinary(resp)
}
func decodeDeliveryTagResponseBinary(body []byte) (deliveryTagResponse, error) {
	return wkdt.DecodeResponse(body)
}
func isDeliveryTagRequestBinary(body []byte) bool  { return wkdt.IsRequest(body) }
func isDeliveryTagResponseBinary(body []byte) bool { return wkdt.IsResponse(body) }

// Upstream's signatures, as the node package's callers use them.
var (
	_ func(DeliveryTagRequest) ([]byte, error)       = encodeDeliveryTagRequestBinary
	_ func([]byte) (deliveryTagRequest, error)       = decodeDeliveryTagRequest
	_ func(DeliveryTagResponse) ([]byte, error)      = encodeDeliveryTagResponseBinary
	_ func([]byte) (deliveryTagResponse, error)      = decodeDeliveryTagResponseBinary
	_ func([]byte) bool                              = isDeliveryTagRequestBinary
	_ func([]byte) bool                              = isDeliveryTagResponseBinary
	_ func(wkdt.DeliveryTagRequest) ([]byte, error)  = wkdt.EncodeRequestBinary
	_ func(wkdt.DeliveryTagResponse) ([]byte, error) = wkdt.EncodeResponseBinary
)

func TestNodeCodecShim(t *testing.T) {
	tag := wkdt.DeliveryTag{Key: "tag-1", ChannelKey: "group-1", TagVersion: 7, SubscriberMutationVersion: 9,
		SourceChannelKey: "group-0", SourceSubscriberMutationVersion: 8,
		Topology: wkdt.PartitionTopologyVersion{HashSlotTableVersion: 4, SlotAuthorityRefs: []wkdt.SlotAuthorityRef{
			{SlotID: 1, LeaderNodeID: 2, ConfigEpoch: 7, BalanceVersion: 9},
			{SlotID: 2, LeaderNodeID: 3, ConfigEpoch: 8, BalanceVersion: 10}}},
		Partitions: []wkdt.NodePartition{{NodeID: 2, UIDs: []string{"u2"}}},
		CreatedAt:  time.Unix(200, 0), LastAccess: time.Unix(201, 0)}
	req := DeliveryTagRequest{Op: "get", ChannelID: "group-1", ChannelType: 2, TagKey: "tag-1", TagVersion: 7,
		TargetNodeID: 2, Tag: tag}
	body, err := encodeDeliveryTagRequestBinary(req)
	if err != nil {
		t.Fatal(err)
	}
	const golden = "574b445401036765740767726f75702d3102057461672d310702057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b"
	if hex.EncodeToString(body) != golden || !isDeliveryTagRequestBinary(body) || isDeliveryTagResponseBinary(body) {
		t.Fatalf("request %x", body)
	}
	back, err := decodeDeliveryTagRequest(body)
	if err != nil || back.Op != "get" || back.Tag.Key != "tag-1" || !back.Tag.CreatedAt.Equal(tag.CreatedAt) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	resp := DeliveryTagResponse{Status: "ok", Tag: tag}
	body, err = encodeDeliveryTagResponseBinary(resp)
	if err != nil {
		t.Fatal(err)
	}
	const goldenResp = "574b444701026f6b0000057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b"
	if hex.EncodeToString(body) != goldenResp || !isDeliveryTagResponseBinary(body) {
		t.Fatalf("response %x", body)
	}
	if r, err := decodeDeliveryTagResponseBinary(body); err != nil || r.Status != "ok" {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	_, err = decodeDeliveryTagRequest(body)
	if err == nil || err.Error() != "access/node: invalid delivery tag request codec" || !errors.Is(err, wkdt.ErrInvalidFrame) {
		t.Fatalf("a response as a request: %v", err)
	}
	_, err = decodeDeliveryTagResponseBinary(append(body, 0))
	if err == nil || err.Error() != "access/node: trailing delivery tag response bytes" {
		t.Fatalf("trailing byte: %v", err)
	}
}
