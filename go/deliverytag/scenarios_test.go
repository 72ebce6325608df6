package deliverytag

// The replay of testdata/tag/scenarios.json (format: testdata/tag/README.md;
// the Rust suite's core/tests/tag_scenarios.rs is the reference replay),
// against the build's Leader and Cache, the RPC handler, the client's
// redirect rule, the codec and PartitionByNode. The file is parsed strictly
// before anything runs: an unknown, missing or duplicate field, an unknown
// op or name is an error of the file. A mismatch names the scenario, the
// step's index and the step's JSON.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"
)

const (
	scenarioFile = "../../testdata/tag/scenarios.json"
	minScenarios = 37
)

// upstreamScenarios are upstream's tests the file must reproduce (README:
// "What the file covers").
var upstreamScenarios = []string{
	"tag_version_increments_without_changing_key", "follower_caches_only_local_partition_tag",
	"stale_request_does_not_evict_newer_local_tag", "stale_different_tag_key_does_not_evict_newer_local_tag",
	"lookup_local_partition_rejects_subscriber_and_source_fence_mismatch",
	"lookup_local_partition_ref_returns_shared_tag_without_allocating", "partition_topology_mismatch_forces_refetch",
	"ttl_cleanup_removes_cold_tags_and_stale_channel_refs",
	"derived_tag_stale_when_source_subscriber_mutation_version_advances", "leader_incarnation_can_mint_fresh_tag_key",
	"build_ephemeral_tag_does_not_replace_current_ref", "delivery_tag_rpc_rejects_non_leader_update",
	"delivery_tag_rpc_returns_only_local_partition_for_fetch",
	"delivery_tag_rpc_returns_empty_local_partition_when_target_has_no_subscribers",
	"delivery_tag_rpc_converts_mismatched_ok_fence_to_retryable",
	"delivery_tag_rpc_converts_version_mismatch_ok_fence_to_retryable", "delivery_tag_binary_codec_round_trip",
	"delivery_tag_client_preserves_retryable_statuses",
}

// stepFields are each op's fields besides "op".
var stepFields = map[string][]string{
	"build":                  {"node", "request", "expect"},
	"build_ephemeral":        {"node", "request", "expect"},
	"leader_lookup":          {"node", "channel_key", "request", "expect", "tag"},
	"leader_lookup_tag":      {"node", "tag_key", "expect"},
	"leader_current":         {"node", "channel_key", "expect"},
	"leader_is_source_stale": {"node", "channel_key", "source_channel_key", "source_version", "expect"},
	"leader_cleanup":         {"node", "now", "limit", "expect"},
	"leader_bodies":          {"node", "expect"},
	"leader_counts":          {"node", "expect"},
	"begin_mutation":         {"node", "channel_key", "as"},
	"mutation_add":           {"mutation", "node_id", "uids"},
	"mutation_remove":        {"mutation", "uids"},
	"mutation_reset":         {"mutation"},
	"mutation_commit":        {"mutation", "store_version", "expect", "tag"},
	"mutation_abandon":       {"mutation"},
	"is_dirty":               {"node", "channel_key", "expect"},
	"usable":                 {"node", "channel_key", "authoritative_version", "expect"},
	"handle":                 {"node", "channel_key", "as"},
	"store":                  {"node", "handle", "tag", "expect", "body"},
	"cache_lookup":           {"node", "channel_key", "handle", "request", "expect", "tag"},
	"cache_lookup_tag":       {"node", "channel_key", "tag_key", "expect"},
	"cache_current":          {"node", "channel_key", "expect"},
	"cache_is_source_stale":  {"node", "channel_key", "source_channel_key", "source_version", "expect"},
	"cache_cleanup":          {"node", "now", "limit", "expect"},
	"cache_channels":         {"node", "expect"},
	"cache_counts":           {"node", "expect"},
	"advance":                {"node", "by"},
	"partition_by_node":      {"uids", "slots", "slot_nodes", "expect", "slot_id", "partitions"},
	"rpc_handle":             {"channel_leader", "local_node_id", "request", "provider", "expect", "called", "response"},
	"rpc_redirect":           {"called_node_id", "status", "leader_id", "expect"},
	"codec_request":          {"request", "hex"},
	"codec_response":         {"response", "hex"},
}

// checkNoDuplicateKeys walks the whole text: encoding/json keeps the last
// of two equal keys silently.
func checkNoDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				key := k.(string)
				if seen[key] {
					return fmt.Errorf("%s: duplicate field %q", path, key)
				}
				seen[key] = true
				if err := walk(path + "." + key); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	if err := walk("$"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the top-level object")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// object decodes raw as an object with exactly the fields want.
func object(raw json.RawMessage, want ...string) (map[string]json.RawMessage, error) {
	if raw == nil || isNull(raw) {
		return nil, errors.New("null where an object is required")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, f := range want {
		if _, ok := m[f]; !ok {
			return nil, fmt.Errorf("missing field %q", f)
		}
	}
	if len(m) != len(want) {
		for k := range m {
			found := false
			for _, f := range want {
				found = found || f == k
			}
			if !found {
				return nil, fmt.Errorf("unknown field %q", k)
			}
		}
	}
	return m, nil
}

// strict decodes raw into v (a string, bool, number or slice of them).
func strict(raw json.RawMessage, field string, v any) error {
	if raw == nil {
		return fmt.Errorf("missing %q", field)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%q: %w", field, err)
	}
	return nil
}

// scenario is one parsed scenario.
type scenario struct {
	name       string
	topologies map[string]PartitionTopologyVersion
	nodes      []nodeJ
	steps      []json.RawMessage
}

type nodeJ struct {
	Name        string `json:"name"`
	LocalNodeID uint64 `json:"local_node_id"`
	TTL         int64  `json:"ttl"`
	Start       int64  `json:"start"`
	KeyPrefix   string `json:"key_prefix"`
}

func parseTopology(raw json.RawMessage) (string, PartitionTopologyVersion, error) {
	m, err := object(raw, "name", "hash_slot_table_version", "refs")
	if err != nil {
		return "", PartitionTopologyVersion{}, err
	}
	var name string
	var v PartitionTopologyVersion
	if err := strict(m["name"], "name", &name); err != nil {
		return "", v, err
	}
	if err := strict(m["hash_slot_table_version"], "hash_slot_table_version", &v.HashSlotTableVersion); err != nil {
		return "", v, err
	}
	var refs []json.RawMessage
	if err := strict(m["refs"], "refs", &refs); err != nil {
		return "", v, err
	}
	for _, r := range refs {
		if _, err := object(r, "slot_id", "leader_node_id", "config_epoch", "balance_version"); err != nil {
			return "", v, err
		}
		var ref struct {
			SlotID         uint32 `json:"slot_id"`
			LeaderNodeID   uint64 `json:"leader_node_id"`
			ConfigEpoch    uint64 `json:"config_epoch"`
			BalanceVersion uint64 `json:"balance_version"`
		}
		if err := strict(r, "ref", &ref); err != nil {
			return "", v, err
		}
		v.SlotAuthorityRefs = append(v.SlotAuthorityRefs, SlotAuthorityRef(ref))
	}
	return name, v, nil
}

func parseScenario(raw json.RawMessage) (scenario, error) {
	m, err := object(raw, "name", "upstream", "topologies", "nodes", "steps")
	if err != nil {
		return scenario{}, err
	}
	s := scenario{topologies: map[string]PartitionTopologyVersion{}}
	var upstream string
	if err := strict(m["name"], "name", &s.name); err != nil {
		return s, err
	}
	if err := strict(m["upstream"], "upstream", &upstream); err != nil {
		return s, err
	}
	var topologies, nodes []json.RawMessage
	if err := strict(m["topologies"], "topologies", &topologies); err != nil {
		return s, err
	}
	for _, t := range topologies {
		name, v, err := parseTopology(t)
		if err != nil {
			return s, fmt.Errorf("%s: topology: %w", s.name, err)
		}
		if _, dup := s.topologies[name]; dup {
			return s, fmt.Errorf("%s: topology %q defined twice", s.name, name)
		}
		s.topologies[name] = v
	}
	if err := strict(m["nodes"], "nodes", &nodes); err != nil {
		return s, err
	}
	for _, n := range nodes {
		if _, err := object(n, "name", "local_node_id", "ttl", "start", "key_prefix"); err != nil {
			return s, fmt.Errorf("%s: node: %w", s.name, err)
		}
		var node nodeJ
		if err := strict(n, "node", &node); err != nil {
			return s, err
		}
		s.nodes = append(s.nodes, node)
	}
	if err := strict(m["steps"], "steps", &s.steps); err != nil {
		return s, err
	}
	// Every step's fields, before anything runs (the values are checked
	// when the step runs, against the scenario's names).
	for i, st := range s.steps {
		var head struct {
			Op string `json:"op"`
		}
		if err := json.Unmarshal(st, &head); err != nil {
			return s, fmt.Errorf("%s step %d: %w", s.name, i, err)
		}
		fields, ok := stepFields[head.Op]
		if !ok {
			return s, fmt.Errorf("%s step %d: unknown op %q", s.name, i, head.Op)
		}
		if _, err := object(st, append([]string{"op"}, fields...)...); err != nil {
			return s, fmt.Errorf("%s step %d (%s): %w", s.name, i, head.Op, err)
		}
	}
	return s, nil
}

func loadScenarios(t *testing.T) []scenario {
	t.Helper()
	data, err := os.ReadFile(scenarioFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkNoDuplicateKeys(data); err != nil {
		t.Fatal(err)
	}
	top, err := object(data, "system", "scenarios")
	if err != nil {
		t.Fatal(err)
	}
	var system string
	var raws []json.RawMessage
	if err := strict(top["system"], "system", &system); err != nil || system != "tag" {
		t.Fatalf("system %q: %v", system, err)
	}
	if err := strict(top["scenarios"], "scenarios", &raws); err != nil {
		t.Fatal(err)
	}
	var out []scenario
	names := map[string]bool{}
	for _, r := range raws {
		s, err := parseScenario(r)
		if err != nil {
			t.Fatal(err)
		}
		if names[s.name] {
			t.Fatalf("scenario %q twice", s.name)
		}
		names[s.name] = true
		out = append(out, s)
	}
	if len(out) < minScenarios {
		t.Fatalf("%d scenarios, want at least %d", len(out), minScenarios)
	}
	for _, n := range upstreamScenarios {
		if !names[n] {
			t.Errorf("upstream's %s has no scenario", n)
		}
	}
	return out
}

// The canonical forms compared: a tag with times in nanoseconds and every
// list non-nil.
type partJ struct {
	NodeID uint64   `json:"node_id"`
	UIDs   []string `json:"uids"`
}

type tagJ struct {
	Key                             string                   `json:"key"`
	ChannelKey                      string                   `json:"channel_key"`
	TagVersion                      uint64                   `json:"tag_version"`
	SubscriberMutationVersion       uint64                   `json:"subscriber_mutation_version"`
	SourceChannelKey                string                   `json:"source_channel_key"`
	SourceSubscriberMutationVersion uint64                   `json:"source_subscriber_mutation_version"`
	Topology                        PartitionTopologyVersion `json:"-"`
	Partitions                      []partJ                  `json:"partitions"`
	CreatedAt                       int64                    `json:"created_at"`
	LastAccess                      int64                    `json:"last_access"`
}

var tagFields = []string{"key", "channel_key", "tag_version", "subscriber_mutation_version", "source_channel_key",
	"source_subscriber_mutation_version", "topology", "partitions", "created_at", "last_access"}

func canonTopology(v PartitionTopologyVersion) PartitionTopologyVersion {
	if v.SlotAuthorityRefs == nil {
		v.SlotAuthorityRefs = []SlotAuthorityRef{}
	}
	return v
}

func canonParts(parts []NodePartition) []partJ {
	out := []partJ{}
	for _, p := range parts {
		uids := p.UIDs
		if uids == nil {
			uids = []string{}
		}
		out = append(out, partJ{p.NodeID, uids})
	}
	return out
}

func canon(t DeliveryTag) tagJ {
	return tagJ{Key: t.Key, ChannelKey: t.ChannelKey, TagVersion: t.TagVersion,
		SubscriberMutationVersion: t.SubscriberMutationVersion, SourceChannelKey: t.SourceChannelKey,
		SourceSubscriberMutationVersion: t.SourceSubscriberMutationVersion, Topology: canonTopology(t.Topology),
		Partitions: canonParts(t.Partitions), CreatedAt: unixNanos(t.CreatedAt), LastAccess: unixNanos(t.LastAccess)}
}

func (j tagJ) tag() DeliveryTag {
	t := DeliveryTag{Key: j.Key, ChannelKey: j.ChannelKey, TagVersion: j.TagVersion,
		SubscriberMutationVersion: j.SubscriberMutationVersion, SourceChannelKey: j.SourceChannelKey,
		SourceSubscriberMutationVersion: j.SourceSubscriberMutationVersion, Topology: j.Topology,
		CreatedAt: timeOf(j.CreatedAt), LastAccess: timeOf(j.LastAccess)}
	for _, p := range j.Partitions {
		t.Partitions = append(t.Partitions, NodePartition{NodeID: p.NodeID, UIDs: p.UIDs})
	}
	return t
}

func parsePartitions(raw json.RawMessage, field string) ([]partJ, error) {
	var list []json.RawMessage
	if err := strict(raw, field, &list); err != nil {
		return nil, err
	}
	out := []partJ{}
	for _, p := range list {
		if _, err := object(p, "node_id", "uids"); err != nil {
			return nil, err
		}
		var part partJ
		if err := strict(p, field, &part); err != nil {
			return nil, err
		}
		if part.UIDs == nil {
			return nil, fmt.Errorf("%s: null uids", field)
		}
		out = append(out, part)
	}
	return out, nil
}

// replay is one scenario's run: its nodes and names.
type replay struct {
	s         *scenario
	nodes     map[string]*replayNode
	handles   map[string]handleJ
	mutations map[string]*mutationJ
}

type replayNode struct {
	clock  *manualClock
	cache  *Cache
	leader *Leader
}

type handleJ struct {
	node string
	ch   *Channel
}

type mutationJ struct {
	m     *Mutation
	ended bool
}

// manualClock is a node's clock, shared by its leader and cache.
type manualClock struct {
	mu  sync.Mutex
	now int64
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Unix(0, c.now)
}

func (r *replay) topology(raw json.RawMessage) (PartitionTopologyVersion, error) {
	var name string
	if err := strict(raw, "topology", &name); err != nil {
		return PartitionTopologyVersion{}, err
	}
	v, ok := r.s.topologies[name]
	if !ok {
		return v, fmt.Errorf("undefined topology %q", name)
	}
	return v, nil
}

func (r *replay) tag(raw json.RawMessage) (tagJ, error) {
	m, err := object(raw, tagFields...)
	if err != nil {
		return tagJ{}, err
	}
	var j tagJ
	for _, f := range []struct {
		name string
		v    any
	}{{"key", &j.Key}, {"channel_key", &j.ChannelKey}, {"tag_version", &j.TagVersion},
		{"subscriber_mutation_version", &j.SubscriberMutationVersion}, {"source_channel_key", &j.SourceChannelKey},
		{"source_subscriber_mutation_version", &j.SourceSubscriberMutationVersion}, {"created_at", &j.CreatedAt},
		{"last_access", &j.LastAccess}} {
		if err := strict(m[f.name], f.name, f.v); err != nil {
			return j, err
		}
	}
	if j.Topology, err = r.topology(m["topology"]); err != nil {
		return j, err
	}
	j.Topology = canonTopology(j.Topology)
	j.Partitions, err = parsePartitions(m["partitions"], "partitions")
	return j, err
}

// optTag is a tag or null.
func (r *replay) optTag(raw json.RawMessage) (*tagJ, error) {
	if isNull(raw) {
		return nil, nil
	}
	j, err := r.tag(raw)
	return &j, err
}

func (r *replay) build(raw json.RawMessage) (BuildRequest, error) {
	m, err := object(raw, "channel_key", "subscriber_mutation_version", "source_channel_key",
		"source_subscriber_mutation_version", "topology", "partitions", "mint_fresh_key")
	if err != nil {
		return BuildRequest{}, err
	}
	var b BuildRequest
	for _, f := range []struct {
		name string
		v    any
	}{{"channel_key", &b.ChannelKey}, {"subscriber_mutation_version", &b.SubscriberMutationVersion},
		{"source_channel_key", &b.SourceChannelKey},
		{"source_subscriber_mutation_version", &b.SourceSubscriberMutationVersion},
		{"mint_fresh_key", &b.MintFreshKey}} {
		if err := strict(m[f.name], f.name, f.v); err != nil {
			return b, err
		}
	}
	if b.Topology, err = r.topology(m["topology"]); err != nil {
		return b, err
	}
	parts, err := parsePartitions(m["partitions"], "partitions")
	for _, p := range parts {
		b.Partitions = append(b.Partitions, NodePartition{NodeID: p.NodeID, UIDs: p.UIDs})
	}
	return b, err
}

func (r *replay) lookupRequest(channel string, raw json.RawMessage) (TagRef, error) {
	m, err := object(raw, "tag_key", "tag_version", "subscriber_mutation_version", "source_channel_key",
		"source_subscriber_mutation_version", "topology")
	if err != nil {
		return TagRef{}, err
	}
	ref := TagRef{ChannelKey: channel}
	for _, f := range []struct {
		name string
		v    any
	}{{"tag_key", &ref.TagKey}, {"tag_version", &ref.TagVersion},
		{"subscriber_mutation_version", &ref.SubscriberMutationVersion}, {"source_channel_key", &ref.SourceChannelKey},
		{"source_subscriber_mutation_version", &ref.SourceSubscriberMutationVersion}} {
		if err := strict(m[f.name], f.name, f.v); err != nil {
			return ref, err
		}
	}
	ref.Topology, err = r.topology(m["topology"])
	return ref, err
}

func (r *replay) wireRequest(raw json.RawMessage) (DeliveryTagRequest, error) {
	m, err := object(raw, "op", "channel_id", "channel_type", "tag_key", "tag_version", "target_node_id", "tag")
	if err != nil {
		return DeliveryTagRequest{}, err
	}
	var req DeliveryTagRequest
	for _, f := range []struct {
		name string
		v    any
	}{{"op", &req.Op}, {"channel_id", &req.ChannelID}, {"channel_type", &req.ChannelType},
		{"tag_key", &req.TagKey}, {"tag_version", &req.TagVersion}, {"target_node_id", &req.TargetNodeID}} {
		if err := strict(m[f.name], f.name, f.v); err != nil {
			return req, err
		}
	}
	tag, err := r.tag(m["tag"])
	req.Tag = tag.tag()
	return req, err
}

func (r *replay) wireResponse(raw json.RawMessage) (DeliveryTagResponse, error) {
	m, err := object(raw, "status", "leader_id", "result", "tag")
	if err != nil {
		return DeliveryTagResponse{}, err
	}
	var resp DeliveryTagResponse
	for _, f := range []struct {
		name string
		v    any
	}{{"status", &resp.Status}, {"leader_id", &resp.LeaderID}, {"result", &resp.Result}} {
		if err := strict(m[f.name], f.name, f.v); err != nil {
			return resp, err
		}
	}
	tag, err := r.tag(m["tag"])
	resp.Tag = tag.tag()
	return resp, err
}

func canonRequest(q DeliveryTagRequest) any {
	return struct {
		Op, ChannelID        string
		ChannelType          uint8
		TagKey               string
		TagVersion, TargetID uint64
		Tag                  tagJ
	}{q.Op, q.ChannelID, q.ChannelType, q.TagKey, q.TagVersion, q.TargetNodeID, canon(q.Tag)}
}

func canonResponse(p DeliveryTagResponse) any {
	return struct {
		Status   string
		LeaderID uint64
		Result   string
		Tag      tagJ
	}{p.Status, p.LeaderID, p.Result, canon(p.Tag)}
}

func (r *replay) node(raw json.RawMessage) (*replayNode, string, error) {
	var name string
	if err := strict(raw, "node", &name); err != nil {
		return nil, "", err
	}
	n, ok := r.nodes[name]
	if !ok {
		return nil, "", fmt.Errorf("unknown node %q", name)
	}
	return n, name, nil
}

func (r *replay) mutation(raw json.RawMessage) (*mutationJ, error) {
	var name string
	if err := strict(raw, "mutation", &name); err != nil {
		return nil, err
	}
	m, ok := r.mutations[name]
	if !ok || m.ended {
		return nil, fmt.Errorf("mutation %q was not begun or has ended", name)
	}
	return m, nil
}

func parseCounts(raw json.RawMessage) (Counts, error) {
	m, err := object(raw, "tags", "uids", "lookups", "stored", "stale", "reclaimed_bodies", "reclaimed_refs")
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	for _, f := range []struct {
		name string
		v    any
	}{{"tags", &c.Tags}, {"uids", &c.UIDs}, {"stored", &c.Stored}, {"stale", &c.Stale},
		{"reclaimed_bodies", &c.ReclaimedBodies}, {"reclaimed_refs", &c.ReclaimedRefs}} {
		if err := strict(m[f.name], f.name, f.v); err != nil {
			return c, err
		}
	}
	var lookups map[string]uint64
	if err := strict(m["lookups"], "lookups", &lookups); err != nil {
		return c, err
	}
	for name, n := range lookups {
		i := -1
		for j, reason := range lookupReasons {
			if string(reason) == name {
				i = j
			}
		}
		if i < 0 || n == 0 {
			return c, fmt.Errorf("lookups: %q: %d", name, n)
		}
		c.Lookups[i] = n
	}
	return c, nil
}

func parsePage(raw json.RawMessage) (CleanupPage, error) {
	if _, err := object(raw, "visited", "reclaimed", "unlinked", "wrapped"); err != nil {
		return CleanupPage{}, err
	}
	var p struct {
		Visited   int  `json:"visited"`
		Reclaimed int  `json:"reclaimed"`
		Unlinked  int  `json:"unlinked"`
		Wrapped   bool `json:"wrapped"`
	}
	err := strict(raw, "page", &p)
	return CleanupPage(p), err
}

func parseReason(raw json.RawMessage) (LookupReason, error) {
	var s string
	if err := strict(raw, "expect", &s); err != nil {
		return "", err
	}
	for _, r := range lookupReasons {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("unknown reason %q", s)
}

// scriptedAuthority answers one response to whichever op it gets and
// records which.
type scriptedAuthority struct {
	resp   DeliveryTagResponse
	called string
}

func (a *scriptedAuthority) GetDeliveryTag(context.Context, DeliveryTagRequest) (DeliveryTagResponse, error) {
	a.called = OpGet
	return a.resp, nil
}

func (a *scriptedAuthority) UpdateDeliveryTag(context.Context, DeliveryTagRequest) (DeliveryTagResponse, error) {
	a.called = OpUpdate
	return a.resp, nil
}

// viewTagOf copies v's body (nil for no view) and releases v.
func viewTagOf(v *View) *tagJ {
	if v == nil {
		return nil
	}
	j := canon(v.Tag())
	v.Release()
	return &j
}

func optCanon(t DeliveryTag, ok bool) *tagJ {
	if !ok {
		return nil
	}
	j := canon(t)
	return &j
}

// run runs one step: got and want differ on a mismatch; err is an error of
// the file or of the binding.
func (r *replay) run(raw json.RawMessage) (got, want any, err error) {
	var head struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, nil, err
	}
	m, _ := object(raw, append([]string{"op"}, stepFields[head.Op]...)...)
	str := func(field string) (s string) {
		if err == nil {
			err = strict(m[field], field, &s)
		}
		return
	}
	num := func(field string) (n uint64) {
		if err == nil {
			err = strict(m[field], field, &n)
		}
		return
	}
	var n *replayNode
	if _, ok := m["node"]; ok {
		if n, _, err = r.node(m["node"]); err != nil {
			return nil, nil, err
		}
	}
	switch head.Op {
	case "build", "build_ephemeral":
		req, e := r.build(m["request"])
		if e != nil {
			return nil, nil, e
		}
		w, e := r.tag(m["expect"])
		if e != nil {
			return nil, nil, e
		}
		var tag DeliveryTag
		if head.Op == "build" {
			tag, err = n.leader.BuildLeaderTag(req)
		} else {
			if req.MintFreshKey {
				return nil, nil, errors.New("build_ephemeral with mint_fresh_key")
			}
			tag, err = n.leader.BuildEphemeralTag(req)
		}
		return canon(tag), w, err
	case "leader_lookup", "cache_lookup":
		var channel string
		var h *handleJ
		if head.Op == "leader_lookup" {
			channel = str("channel_key")
		} else {
			chNull, hNull := isNull(m["channel_key"]), isNull(m["handle"])
			if chNull == hNull {
				return nil, nil, errors.New("exactly one of channel_key and handle")
			}
			if !chNull {
				channel = str("channel_key")
			} else {
				name := str("handle")
				hj, ok := r.handles[name]
				if !ok {
					return nil, nil, fmt.Errorf("unknown handle %q", name)
				}
				h = &hj
			}
		}
		if err != nil {
			return nil, nil, err
		}
		req, e := r.lookupRequest(channel, m["request"])
		if e != nil {
			return nil, nil, e
		}
		reason, e := parseReason(m["expect"])
		if e != nil {
			return nil, nil, e
		}
		wantTag, e := r.optTag(m["tag"])
		if e != nil {
			return nil, nil, e
		}
		if h != nil && r.nodes[h.node] != n {
			return nil, nil, errors.New("a handle of another node")
		}
		var v *View
		var gotReason LookupReason
		switch {
		case head.Op == "leader_lookup":
			v, gotReason, err = n.leader.Lookup(req)
		case h != nil:
			v, gotReason, err = h.ch.Lookup(req)
		default:
			v, gotReason, err = n.cache.Lookup(req)
		}
		return [2]any{gotReason, viewTagOf(v)}, [2]any{reason, wantTag}, err
	case "leader_lookup_tag", "cache_lookup_tag":
		w, e := r.optTag(m["expect"])
		if e != nil {
			return nil, nil, e
		}
		var tag DeliveryTag
		var ok bool
		if head.Op == "leader_lookup_tag" {
			key := str("tag_key")
			if err != nil {
				return nil, nil, err
			}
			tag, ok, err = n.leader.LookupTag(key)
		} else {
			channel, key := str("channel_key"), str("tag_key")
			if err != nil {
				return nil, nil, err
			}
			tag, ok, err = n.cache.LookupTag(channel, key)
		}
		return optCanon(tag, ok), w, err
	case "leader_current", "cache_current":
		channel := str("channel_key")
		w, e := r.optTag(m["expect"])
		if err != nil || e != nil {
			return nil, nil, errors.Join(err, e)
		}
		var tag DeliveryTag
		var ok bool
		if head.Op == "leader_current" {
			tag, ok, err = n.leader.Current(channel)
		} else {
			tag, ok, err = n.cache.Current(channel)
		}
		return optCanon(tag, ok), w, err
	case "leader_is_source_stale", "cache_is_source_stale":
		channel, source, version := str("channel_key"), str("source_channel_key"), num("source_version")
		var w bool
		if err == nil {
			err = strict(m["expect"], "expect", &w)
		}
		if err != nil {
			return nil, nil, err
		}
		var stale bool
		if head.Op == "leader_is_source_stale" {
			stale, err = n.leader.IsSourceStale(channel, SourceVersion{source, version})
		} else {
			stale, err = n.cache.IsSourceStale(channel, SourceVersion{source, version})
		}
		return stale, w, err
	case "leader_cleanup", "cache_cleanup":
		now, limit := num("now"), num("limit")
		w, e := parsePage(m["expect"])
		if err != nil || e != nil {
			return nil, nil, errors.Join(err, e)
		}
		var page CleanupPage
		if head.Op == "leader_cleanup" {
			page, err = n.leader.CleanupExpired(time.Unix(0, int64(now)), int(limit))
		} else {
			page, err = n.cache.CleanupExpired(time.Unix(0, int64(now)), int(limit))
		}
		return page, w, err
	case "leader_bodies", "cache_channels":
		w := int(num("expect"))
		if err != nil {
			return nil, nil, err
		}
		var got int
		if head.Op == "leader_bodies" {
			got, err = n.leader.Bodies()
		} else {
			got, err = n.cache.Len()
		}
		return got, w, err
	case "leader_counts", "cache_counts":
		w, e := parseCounts(m["expect"])
		if e != nil {
			return nil, nil, e
		}
		var c Counts
		if head.Op == "leader_counts" {
			c, err = n.leader.Counts()
		} else {
			c, err = n.cache.Counts()
		}
		return c, w, err
	case "begin_mutation":
		channel, as := str("channel_key"), str("as")
		if err != nil {
			return nil, nil, err
		}
		if _, dup := r.mutations[as]; dup {
			return nil, nil, fmt.Errorf("mutation %q named twice", as)
		}
		mut, e := n.leader.BeginMutation(channel)
		r.mutations[as] = &mutationJ{m: mut}
		return nil, nil, e
	case "mutation_add", "mutation_remove", "mutation_reset", "mutation_abandon":
		mj, e := r.mutation(m["mutation"])
		if e != nil {
			return nil, nil, e
		}
		var uids []string
		if head.Op == "mutation_add" || head.Op == "mutation_remove" {
			if err := strict(m["uids"], "uids", &uids); err != nil {
				return nil, nil, err
			}
		}
		switch head.Op {
		case "mutation_add":
			node := num("node_id")
			if err != nil {
				return nil, nil, err
			}
			return nil, nil, mj.m.Add(node, uids...)
		case "mutation_remove":
			return nil, nil, mj.m.Remove(uids...)
		case "mutation_reset":
			return nil, nil, mj.m.Reset()
		}
		mj.ended = true
		return nil, nil, mj.m.Abandon()
	case "mutation_commit":
		mj, e := r.mutation(m["mutation"])
		if e != nil {
			return nil, nil, e
		}
		version, outcome := num("store_version"), str("expect")
		w, e := r.optTag(m["tag"])
		if err != nil || e != nil {
			return nil, nil, errors.Join(err, e)
		}
		switch outcome {
		case "applied", "no_tag", "already_current":
		default:
			return nil, nil, fmt.Errorf("unknown outcome %q", outcome)
		}
		mj.ended = true
		res, tag, err := mj.m.Commit(version)
		return [2]any{res.String(), optCanon(tag, res != MutationNoTag)}, [2]any{outcome, w}, err
	case "is_dirty":
		channel := str("channel_key")
		var w bool
		if err == nil {
			err = strict(m["expect"], "expect", &w)
		}
		if err != nil {
			return nil, nil, err
		}
		dirty, err := n.leader.IsDirty(channel)
		return dirty, w, err
	case "usable":
		channel, version := str("channel_key"), num("authoritative_version")
		w, e := r.optTag(m["expect"])
		if err != nil || e != nil {
			return nil, nil, errors.Join(err, e)
		}
		v, err := n.leader.Usable(channel, version)
		switch {
		case err == nil:
			return viewTagOf(v), w, nil
		case errors.Is(err, ErrDirty), errors.Is(err, ErrLagging), errors.Is(err, ErrNotFound):
			return (*tagJ)(nil), w, nil
		}
		return nil, nil, err
	case "handle":
		channel, as := str("channel_key"), str("as")
		if err != nil {
			return nil, nil, err
		}
		if _, dup := r.handles[as]; dup {
			return nil, nil, fmt.Errorf("handle %q named twice", as)
		}
		ch, e := n.cache.Channel(channel)
		var nodeName string
		_ = strict(m["node"], "node", &nodeName)
		r.handles[as] = handleJ{node: nodeName, ch: ch}
		return nil, nil, e
	case "store":
		in, e := r.tag(m["tag"])
		if e != nil {
			return nil, nil, e
		}
		w, e := r.tag(m["body"])
		if e != nil {
			return nil, nil, e
		}
		outcome := str("expect")
		if err != nil || (outcome != "stored" && outcome != "stale") {
			return nil, nil, fmt.Errorf("expect %q: %v", outcome, err)
		}
		var body DeliveryTag
		var stored bool
		if isNull(m["handle"]) {
			body, stored, err = n.cache.Store(in.tag())
		} else {
			name := str("handle")
			hj, ok := r.handles[name]
			if !ok || r.nodes[hj.node] != n {
				return nil, nil, fmt.Errorf("handle %q: unknown or of another node", name)
			}
			body, stored, err = hj.ch.Store(in.tag())
		}
		result := "stale"
		if stored {
			result = "stored"
		}
		return [2]any{result, canon(body)}, [2]any{outcome, w}, err
	case "advance":
		by := num("by")
		if err != nil {
			return nil, nil, err
		}
		n.clock.mu.Lock()
		n.clock.now += int64(by)
		n.clock.mu.Unlock()
		return nil, nil, nil
	case "partition_by_node":
		var uids []string
		var slots []uint32
		var slotNodes []uint64
		var outcome string
		var slotID *uint32
		for _, f := range []struct {
			name string
			v    any
		}{{"uids", &uids}, {"slots", &slots}, {"slot_nodes", &slotNodes}, {"expect", &outcome}, {"slot_id", &slotID}} {
			if err := strict(m[f.name], f.name, f.v); err != nil {
				return nil, nil, err
			}
		}
		var wantParts []partJ
		if !isNull(m["partitions"]) {
			if wantParts, err = parsePartitions(m["partitions"], "partitions"); err != nil {
				return nil, nil, err
			}
		}
		parts, perr := PartitionByNode(uids, slots, slotNodes)
		var slot *UnassignedSlotError
		gotOutcome, gotSlot := "ok", (*uint32)(nil)
		var gotParts []partJ
		switch {
		case perr == nil:
			gotParts = canonParts(parts)
		case errors.As(perr, &slot):
			gotOutcome, gotSlot = "unassigned_slot", &slot.SlotID
		case errors.Is(perr, ErrLengthMismatch):
			gotOutcome = "length_mismatch"
		default:
			return nil, nil, perr
		}
		switch outcome {
		case "ok", "unassigned_slot", "length_mismatch":
		default:
			return nil, nil, fmt.Errorf("unknown outcome %q", outcome)
		}
		return [3]any{gotOutcome, fmt.Sprint(gotSlot != nil && *gotSlot == derefSlot(slotID), gotSlot == nil), gotParts},
			[3]any{outcome, fmt.Sprint(slotID != nil, slotID == nil), wantParts}, nil
	case "rpc_handle":
		leader, local := num("channel_leader"), num("local_node_id")
		outcome := str("expect")
		if err != nil {
			return nil, nil, err
		}
		req, e := r.wireRequest(m["request"])
		if e != nil {
			return nil, nil, e
		}
		provider, e := r.wireResponse(m["provider"])
		if e != nil {
			return nil, nil, e
		}
		var called *string
		if err := strict(m["called"], "called", &called); err != nil {
			return nil, nil, err
		}
		var want any
		if !isNull(m["response"]) {
			resp, e := r.wireResponse(m["response"])
			if e != nil {
				return nil, nil, e
			}
			want = canonResponse(resp)
		}
		a := &scriptedAuthority{resp: provider}
		h := RPCHandler{LocalNodeID: local, Authority: a, LeaderOf: func(string, uint8) (uint64, error) { return leader, nil }}
		body, herr := h.Handle(context.Background(), EncodeRequest(req))
		gotOutcome := "ok"
		var got any
		switch {
		case herr == nil:
			resp, e := DecodeResponse(body)
			if e != nil {
				return nil, nil, e
			}
			got = canonResponse(resp)
		case errors.Is(herr, ErrUnknownOp):
			gotOutcome = "unknown_op"
		default:
			return nil, nil, herr
		}
		gotCalled := (*string)(nil)
		if a.called != "" {
			gotCalled = &a.called
		}
		return [3]any{gotOutcome, fmt.Sprint(derefStr(gotCalled)), got}, [3]any{outcome, fmt.Sprint(derefStr(called)), want}, nil
	case "rpc_redirect":
		called, st, leader := num("called_node_id"), str("status"), num("leader_id")
		var w *uint64
		if err == nil {
			err = strict(m["expect"], "expect", &w)
		}
		if err != nil {
			return nil, nil, err
		}
		next, ok := Redirect(called, DeliveryTagResponse{Status: st, LeaderID: leader})
		var got *uint64
		if ok {
			got = &next
		}
		return fmt.Sprint(derefU64(got)), fmt.Sprint(derefU64(w)), nil
	case "codec_request":
		req, e := r.wireRequest(m["request"])
		h := str("hex")
		if e != nil || err != nil {
			return nil, nil, errors.Join(e, err)
		}
		raw, e := hex.DecodeString(h)
		if e != nil {
			return nil, nil, e
		}
		dec, derr := DecodeRequest(raw)
		return [2]any{hex.EncodeToString(EncodeRequest(req)), canonRequest(dec)}, [2]any{h, canonRequest(req)}, derr
	case "codec_response":
		resp, e := r.wireResponse(m["response"])
		h := str("hex")
		if e != nil || err != nil {
			return nil, nil, errors.Join(e, err)
		}
		raw, e := hex.DecodeString(h)
		if e != nil {
			return nil, nil, e
		}
		dec, derr := DecodeResponse(raw)
		return [2]any{hex.EncodeToString(EncodeResponse(resp)), canonResponse(dec)}, [2]any{h, canonResponse(resp)}, derr
	}
	return nil, nil, fmt.Errorf("unknown op %q", head.Op)
}

func derefSlot(p *uint32) uint32 {
	if p == nil {
		return 0
	}
	return *p
}

func derefStr(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func derefU64(p *uint64) string {
	if p == nil {
		return "<null>"
	}
	return fmt.Sprint(*p)
}

func TestScenarios(t *testing.T) {
	for _, s := range loadScenarios(t) {
		s := s
		t.Run(s.name, func(t *testing.T) {
			r := &replay{s: &s, nodes: map[string]*replayNode{}, handles: map[string]handleJ{},
				mutations: map[string]*mutationJ{}}
			for _, nj := range s.nodes {
				if _, dup := r.nodes[nj.Name]; dup {
					t.Fatalf("node %q twice", nj.Name)
				}
				clock := &manualClock{now: nj.Start}
				cache, err := NewCache(CacheOptions{LocalNodeID: nj.LocalNodeID, TTL: time.Duration(nj.TTL), Now: clock.Now})
				must(t, err)
				leader, err := NewLeader(LeaderOptions{LocalNodeID: nj.LocalNodeID, TTL: time.Duration(nj.TTL),
					Now: clock.Now, KeyPrefix: nj.KeyPrefix})
				must(t, err)
				t.Cleanup(func() { _ = cache.Close(); _ = leader.Close() })
				r.nodes[nj.Name] = &replayNode{clock: clock, cache: cache, leader: leader}
			}
			for i, st := range s.steps {
				got, want, err := r.run(st)
				if err != nil {
					t.Fatalf("%s step %d: %v\n%s", s.name, i, err, st)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s step %d:\n got  %+v\n want %+v\n%s", s.name, i, got, want, st)
				}
			}
		})
	}
}

// The parser refuses what the format forbids.
func TestScenarioParserIsStrict(t *testing.T) {
	base := `{"name": "x", "upstream": "none", "topologies": [], "nodes": [], "steps": [%s]}`
	ok := `{"op": "rpc_redirect", "called_node_id": 1, "status": "ok", "leader_id": 0, "expect": null}`
	if _, err := parseScenario(json.RawMessage(fmt.Sprintf(base, ok))); err != nil {
		t.Fatalf("a valid scenario: %v", err)
	}
	for _, bad := range []string{
		`{"op": "nope"}`,
		`{"op": "rpc_redirect", "called_node_id": 1, "status": "ok", "leader_id": 0}`,
		`{"op": "rpc_redirect", "called_node_id": 1, "status": "ok", "leader_id": 0, "expect": null, "extra": 1}`,
	} {
		if _, err := parseScenario(json.RawMessage(fmt.Sprintf(base, bad))); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if err := checkNoDuplicateKeys([]byte(`{"a": 1, "a": 2}`)); err == nil {
		t.Error("a duplicate field was accepted")
	}
	if _, err := parseScenario(json.RawMessage(`{"name": "x", "upstream": "none", "topologies": [], "steps": []}`)); err == nil {
		t.Error("a scenario without nodes was accepted")
	}
}
