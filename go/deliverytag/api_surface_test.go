package deliverytag_test

// The upstream-visible surface of the package, name by name: upstream's
// Manager (internal/runtime/deliverytag) and its node RPC types and codec
// (internal/access/node). A change to any fails here. WK_API_DUMP=1 prints
// what is.

import (
	"testing"

	. "github.com/wukongim/wkcore/go/deliverytag"
	"github.com/wukongim/wkcore/go/internal/apisurface"
)

// surfaceCase is apisurface.Case, declared here so the table's literals can
// stay unkeyed.
type surfaceCase struct {
	Kind, Name string
	V          any
	Member     string
	Want       string
}

func TestAPISurface(t *testing.T) {
	m := (*Manager)(nil)
	apisurface.Check(t, []surfaceCase{
		{"func", "NewManager", NewManager, "", "func(deliverytag.Options) *deliverytag.Manager"},
		{"fields", "Options", Options{}, "", "LocalNodeID,TTL,Now,NewTagKey,KeyPrefix"},
		{"field", "Options.LocalNodeID", Options{}, "LocalNodeID", "uint64"},
		{"field", "Options.TTL", Options{}, "TTL", "time.Duration"},
		{"field", "Options.Now", Options{}, "Now", "func() time.Time"},
		{"field", "Options.NewTagKey", Options{}, "NewTagKey", "func() string"},
		{"method", "Manager.BuildLeaderTag", m, "BuildLeaderTag", "func(deliverytag.BuildRequest) (deliverytag.DeliveryTag, bool)"},
		{"method", "Manager.BuildEphemeralTag", m, "BuildEphemeralTag", "func(deliverytag.BuildRequest) (deliverytag.DeliveryTag, bool)"},
		{"method", "Manager.StoreFollowerPartition", m, "StoreFollowerPartition", "func(deliverytag.DeliveryTag) (deliverytag.DeliveryTag, bool)"},
		{"method", "Manager.LookupLocalPartitionRef", m, "LookupLocalPartitionRef", "func(deliverytag.TagRef) (deliverytag.DeliveryTag, bool, deliverytag.LookupReason)"},
		{"method", "Manager.LookupLocalPartition", m, "LookupLocalPartition", "func(deliverytag.TagRef) (deliverytag.DeliveryTag, bool, deliverytag.LookupReason)"},
		{"method", "Manager.LookupTag", m, "LookupTag", "func(string) (deliverytag.DeliveryTag, bool)"},
		{"method", "Manager.CurrentRef", m, "CurrentRef", "func(string) (deliverytag.TagRef, bool)"},
		{"method", "Manager.IsSourceStale", m, "IsSourceStale", "func(string, deliverytag.SourceVersion) bool"},
		{"method", "Manager.CleanupExpired", m, "CleanupExpired", "func() int"},
		{"fields", "DeliveryTag", DeliveryTag{}, "", "Key,ChannelKey,TagVersion,SubscriberMutationVersion,SourceChannelKey,SourceSubscriberMutationVersion,Topology,Partitions,CreatedAt,LastAccess"},
		{"field", "DeliveryTag.Key", DeliveryTag{}, "Key", "string"},
		{"field", "DeliveryTag.TagVersion", DeliveryTag{}, "TagVersion", "uint64"},
		{"field", "DeliveryTag.Topology", DeliveryTag{}, "Topology", "deliverytag.PartitionTopologyVersion"},
		{"field", "DeliveryTag.Partitions", DeliveryTag{}, "Partitions", "[]deliverytag.NodePartition"},
		{"field", "DeliveryTag.CreatedAt", DeliveryTag{}, "CreatedAt", "time.Time"},
		{"field", "DeliveryTag.LastAccess", DeliveryTag{}, "LastAccess", "time.Time"},
		{"method", "DeliveryTag.PartitionForNode", DeliveryTag{}, "PartitionForNode", "func(uint64) deliverytag.NodePartition"},
		{"fields", "NodePartition", NodePartition{}, "", "NodeID,UIDs"},
		{"field", "NodePartition.UIDs", NodePartition{}, "UIDs", "[]string"},
		{"method", "NodePartition.Clone", NodePartition{}, "Clone", "func() deliverytag.NodePartition"},
		{"fields", "TagRef", TagRef{}, "", "ChannelKey,TagKey,TagVersion,SubscriberMutationVersion,SourceChannelKey,SourceSubscriberMutationVersion,Topology"},
		{"fields", "SourceVersion", SourceVersion{}, "", "ChannelKey,SubscriberMutationVersion"},
		{"fields", "BuildRequest", BuildRequest{}, "", "ChannelKey,SubscriberMutationVersion,SourceChannelKey,SourceSubscriberMutationVersion,Topology,Partitions,MintFreshKey"},
		{"field", "BuildRequest.MintFreshKey", BuildRequest{}, "MintFreshKey", "bool"},
		{"fields", "PartitionTopologyVersion", PartitionTopologyVersion{}, "", "HashSlotTableVersion,SlotAuthorityRefs"},
		{"field", "PartitionTopologyVersion.SlotAuthorityRefs", PartitionTopologyVersion{}, "SlotAuthorityRefs", "[]deliverytag.SlotAuthorityRef"},
		{"method", "PartitionTopologyVersion.Equal", PartitionTopologyVersion{}, "Equal", "func(deliverytag.PartitionTopologyVersion) bool"},
		{"method", "PartitionTopologyVersion.Clone", PartitionTopologyVersion{}, "Clone", "func() deliverytag.PartitionTopologyVersion"},
		{"fields", "SlotAuthorityRef", SlotAuthorityRef{}, "", "SlotID,LeaderNodeID,ConfigEpoch,BalanceVersion"},
		{"field", "SlotAuthorityRef.SlotID", SlotAuthorityRef{}, "SlotID", "uint32"},
		{"type", "LookupReason", (*LookupReason)(nil), "", "string deliverytag.LookupReason"},
		{"value", "LookupHit", LookupHit, "", "hit"},
		{"value", "LookupMissingRef", LookupMissingRef, "", "missing_ref"},
		{"value", "LookupMissingTag", LookupMissingTag, "", "missing_tag"},
		{"value", "LookupTagKeyMismatch", LookupTagKeyMismatch, "", "tag_key_mismatch"},
		{"value", "LookupStaleRequest", LookupStaleRequest, "", "stale_request"},
		{"value", "LookupNewerRequest", LookupNewerRequest, "", "newer_request"},
		{"value", "LookupTopologyMismatch", LookupTopologyMismatch, "", "topology_mismatch"},
		// The node RPC (service 44).
		{"value", "DeliveryTagRPCServiceID", DeliveryTagRPCServiceID, "", "44"},
		{"fields", "DeliveryTagRequest", DeliveryTagRequest{}, "", "Op,ChannelID,ChannelType,TagKey,TagVersion,TargetNodeID,Tag"},
		{"field", "DeliveryTagRequest.Op", DeliveryTagRequest{}, "Op", "string `json:\"op\"`"},
		{"field", "DeliveryTagRequest.ChannelID", DeliveryTagRequest{}, "ChannelID", "string `json:\"channel_id\"`"},
		{"field", "DeliveryTagRequest.ChannelType", DeliveryTagRequest{}, "ChannelType", "uint8 `json:\"channel_type\"`"},
		{"field", "DeliveryTagRequest.TagKey", DeliveryTagRequest{}, "TagKey", "string `json:\"tag_key,omitempty\"`"},
		{"field", "DeliveryTagRequest.TagVersion", DeliveryTagRequest{}, "TagVersion", "uint64 `json:\"tag_version,omitempty\"`"},
		{"field", "DeliveryTagRequest.TargetNodeID", DeliveryTagRequest{}, "TargetNodeID", "uint64 `json:\"target_node_id,omitempty\"`"},
		{"field", "DeliveryTagRequest.Tag", DeliveryTagRequest{}, "Tag", "deliverytag.DeliveryTag `json:\"tag,omitempty\"`"},
		{"fields", "DeliveryTagResponse", DeliveryTagResponse{}, "", "Status,LeaderID,Result,Tag"},
		{"field", "DeliveryTagResponse.Status", DeliveryTagResponse{}, "Status", "string `json:\"status\"`"},
		{"field", "DeliveryTagResponse.LeaderID", DeliveryTagResponse{}, "LeaderID", "uint64 `json:\"leader_id,omitempty\"`"},
		{"field", "DeliveryTagResponse.Result", DeliveryTagResponse{}, "Result", "string `json:\"result,omitempty\"`"},
		{"field", "DeliveryTagResponse.Tag", DeliveryTagResponse{}, "Tag", "deliverytag.DeliveryTag `json:\"tag,omitempty\"`"},
		{"func", "EncodeRequestBinary", EncodeRequestBinary, "", "func(deliverytag.DeliveryTagRequest) ([]uint8, error)"},
		{"func", "EncodeResponseBinary", EncodeResponseBinary, "", "func(deliverytag.DeliveryTagResponse) ([]uint8, error)"},
		{"func", "DecodeRequest", DecodeRequest, "", "func([]uint8) (deliverytag.DeliveryTagRequest, error)"},
		{"func", "DecodeResponse", DecodeResponse, "", "func([]uint8) (deliverytag.DeliveryTagResponse, error)"},
		{"func", "IsRequest", IsRequest, "", "func([]uint8) bool"},
		{"func", "IsResponse", IsResponse, "", "func([]uint8) bool"},
		{"error", "ErrClusterNotConfigured", ErrClusterNotConfigured, "", "access/node: cluster not configured"},
	})
	// The decoder's texts are upstream's, byte for byte.
	for _, c := range []struct {
		body []byte
		want string
	}{
		{nil, "access/node: invalid delivery tag request codec"},
		{[]byte("WKDT\x01"), "access/node: short uvarint"},
		{[]byte("WKDT\x01\x05ab"), "access/node: short bytes"},
		{[]byte("WKDT\x01\x00\x00"), "access/node: short delivery tag channel type"},
		{[]byte("WKDT\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "access/node: trailing delivery tag request bytes"},
	} {
		_, err := DecodeRequest(c.body)
		if err == nil || err.Error() != c.want {
			t.Errorf("DecodeRequest(%x): %v, want %q", c.body, err, c.want)
		}
	}
	if _, err := DecodeResponse([]byte("WKDT\x01")); err == nil || err.Error() != "access/node: invalid delivery tag response codec" {
		t.Errorf("DecodeResponse of a request: %v", err)
	}
}
