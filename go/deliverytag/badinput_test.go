package deliverytag

// Bad input and misuse, the same in both builds: keys that are not UTF-8
// (the C ABI's WK_STATUS_TAG_INVALID_UTF8), keys, UIDs and lists past the
// ABI's limits, bad options, closed, nil and zero handles, ended mutations.

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wukongim/wkcore/go/internal/status"
)

const badUTF8 = "group:\xff\xfe"

func isErr(t *testing.T, err, want error, what ...any) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%v: %v, want %v", what, err, want)
	}
}

func TestInvalidUTF8KeysAreRefused(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	l := newLeader(t, 2, time.Minute, nil, "l")
	good := versionTag("group:ok", 1)
	store(t, c, good)
	build(t, l, BuildRequest{ChannelKey: "group:ok", SubscriberMutationVersion: 1})
	ch, err := c.Channel("group:ok")
	must(t, err)

	for _, change := range []func(*DeliveryTag){
		func(t *DeliveryTag) { t.ChannelKey = badUTF8 },
		func(t *DeliveryTag) { t.Key = badUTF8 },
		func(t *DeliveryTag) { t.SourceChannelKey = badUTF8 },
	} {
		tag := good
		change(&tag)
		_, _, err := c.Store(tag)
		isErr(t, err, ErrInvalidUTF8, "Store", tag)
		_, _, err = ch.Store(tag)
		isErr(t, err, ErrInvalidUTF8, "Channel.Store", tag)
	}
	// UIDs are any bytes.
	binary := good
	binary.TagVersion = 2
	binary.Partitions = []NodePartition{{NodeID: 2, UIDs: []string{"\xff", ""}}}
	stored, ok := store(t, c, binary)
	eq(t, [2]any{ok, stored.Partitions[0].UIDs}, [2]any{true, []string{"\xff", ""}}, "binary UIDs")

	before, err := c.Counts()
	must(t, err)
	for _, change := range []func(*TagRef){
		func(r *TagRef) { r.ChannelKey = badUTF8 },
		func(r *TagRef) { r.TagKey = badUTF8 },
		func(r *TagRef) { r.SourceChannelKey = badUTF8 },
	} {
		ref := binary.Ref()
		change(&ref)
		v, reason, err := c.Lookup(ref)
		isErr(t, err, ErrInvalidUTF8, "Lookup", ref)
		if v != nil || reason != "" {
			t.Errorf("Lookup refused but returned %v %q", v, reason)
		}
		_, err = c.Check(ref)
		isErr(t, err, ErrInvalidUTF8, "Check", ref)
		_, _, err = l.Lookup(ref)
		isErr(t, err, ErrInvalidUTF8, "Leader.Lookup", ref)
		_, err = l.Check(ref)
		isErr(t, err, ErrInvalidUTF8, "Leader.Check", ref)
		if ref.ChannelKey != badUTF8 {
			_, _, err = ch.Lookup(ref)
			isErr(t, err, ErrInvalidUTF8, "Channel.Lookup", ref)
			_, err = ch.Check(ref)
			isErr(t, err, ErrInvalidUTF8, "Channel.Check", ref)
		}
	}
	// A refused look-up is not counted: it never ran.
	after, err := c.Counts()
	must(t, err)
	eq(t, after.Lookups, before.Lookups, "refused look-ups counted")
	// A handle's look-up does not read the request's channel key.
	ref := binary.Ref()
	ref.ChannelKey = badUTF8
	reason, err := ch.Check(ref)
	must(t, err)
	eq(t, reason, LookupHit, "Channel.Check ignores the channel key")

	_, err = c.Channel(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "Channel")
	_, _, err = c.LookupTag(badUTF8, "k")
	isErr(t, err, ErrInvalidUTF8, "LookupTag channel")
	_, _, err = c.LookupTag("group:ok", badUTF8)
	isErr(t, err, ErrInvalidUTF8, "LookupTag key")
	_, _, err = c.Current(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "Current")
	_, _, err = c.CurrentRef(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "CurrentRef")
	_, err = c.IsSourceStale(badUTF8, SourceVersion{})
	isErr(t, err, ErrInvalidUTF8, "IsSourceStale channel")
	_, err = c.IsSourceStale("group:ok", SourceVersion{ChannelKey: badUTF8})
	isErr(t, err, ErrInvalidUTF8, "IsSourceStale source")

	_, err = l.BuildLeaderTag(BuildRequest{ChannelKey: badUTF8})
	isErr(t, err, ErrInvalidUTF8, "BuildLeaderTag")
	_, err = l.BuildEphemeralTag(BuildRequest{ChannelKey: "c", SourceChannelKey: badUTF8})
	isErr(t, err, ErrInvalidUTF8, "BuildEphemeralTag")
	_, _, err = l.LookupTag(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "Leader.LookupTag")
	_, _, err = l.Current(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "Leader.Current")
	_, _, err = l.CurrentRef(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "Leader.CurrentRef")
	_, err = l.Usable(badUTF8, 0)
	isErr(t, err, ErrInvalidUTF8, "Usable")
	_, err = l.IsDirty(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "IsDirty")
	_, err = l.IsSourceStale("c", SourceVersion{ChannelKey: badUTF8})
	isErr(t, err, ErrInvalidUTF8, "Leader.IsSourceStale")
	_, err = l.BeginMutation(badUTF8)
	isErr(t, err, ErrInvalidUTF8, "BeginMutation")

	// The error is the registered status 300, with the library's text.
	var se *status.Error
	if !errors.As(ErrInvalidUTF8, &se) || se.Code() != 300 || status.Lookup(300) != ErrInvalidUTF8 {
		t.Fatalf("ErrInvalidUTF8 is not status 300: %v", ErrInvalidUTF8)
	}
	// Nothing changed.
	cur, _, err := c.Current("group:ok")
	must(t, err)
	eq(t, cur.TagVersion, uint64(2), "the refused stores changed nothing")
}

// Keys, UIDs and lists past the ABI's limits are ErrInvalidArgument; when
// several arguments are bad, both builds report the one the ABI checks
// first.
func TestLimitsAreTheABIs(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	l := newLeader(t, 2, time.Minute, nil, "l")
	long := strings.Repeat("k", KeyMax+1)
	edge := strings.Repeat("k", KeyMax)
	_, ok, err := c.Store(DeliveryTag{Key: edge, ChannelKey: edge, Partitions: []NodePartition{{NodeID: 2, UIDs: []string{edge}}}})
	must(t, err)
	eq(t, ok, true, "keys and UIDs at the limit")
	for i, tag := range []DeliveryTag{
		{Key: long, ChannelKey: "c"},
		{Key: "k", ChannelKey: long},
		{Key: "k", ChannelKey: "c", SourceChannelKey: long},
		{Key: "k", ChannelKey: "c", Partitions: []NodePartition{{NodeID: 9, UIDs: []string{long}}}},
		{Key: "k", ChannelKey: "c", Topology: PartitionTopologyVersion{SlotAuthorityRefs: make([]SlotAuthorityRef, RefsMax+1)}},
	} {
		_, _, err := c.Store(tag)
		isErr(t, err, ErrInvalidArgument, "Store", i)
	}
	// The channel key comes before the tag key, a key before a partition.
	_, _, err = c.Store(DeliveryTag{Key: badUTF8, ChannelKey: long})
	isErr(t, err, ErrInvalidUTF8, "key first")
	_, _, err = c.Store(DeliveryTag{Key: "k", ChannelKey: badUTF8, Partitions: []NodePartition{{NodeID: 2, UIDs: []string{long}}}})
	isErr(t, err, ErrInvalidUTF8, "keys before partitions")
	// A build checks its partitions first.
	_, err = l.BuildLeaderTag(BuildRequest{ChannelKey: badUTF8, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{long}}}})
	isErr(t, err, ErrInvalidArgument, "partitions before keys")
	_, err = l.BuildLeaderTag(BuildRequest{ChannelKey: long})
	isErr(t, err, ErrInvalidArgument, "long channel")
	_, _, err = c.Lookup(TagRef{ChannelKey: long})
	isErr(t, err, ErrInvalidArgument, "long look-up channel")
	_, _, err = c.Lookup(TagRef{ChannelKey: badUTF8, TagKey: long})
	isErr(t, err, ErrInvalidUTF8, "look-up channel first")
	_, err = c.Check(TagRef{ChannelKey: "c", Topology: PartitionTopologyVersion{SlotAuthorityRefs: make([]SlotAuthorityRef, RefsMax+1)}})
	isErr(t, err, ErrInvalidArgument, "look-up refs")

	m, err := l.BeginMutation("c")
	must(t, err)
	isErr(t, m.Add(1, long), ErrInvalidArgument, "mutation UID")
	isErr(t, m.Remove("ok", long), ErrInvalidArgument, "mutation remove")
	must(t, m.Abandon())

	// Cleanup limits: negative is refused, 0 visits nothing, above the
	// maximum is clipped.
	_, err = c.CleanupExpired(time.Now(), -1)
	isErr(t, err, ErrInvalidArgument, "negative limit")
	_, err = l.CleanupExpired(time.Now(), -1)
	isErr(t, err, ErrInvalidArgument, "negative leader limit")
	page, err := c.CleanupExpired(time.Now().Add(time.Hour), 0)
	must(t, err)
	eq(t, page, CleanupPage{}, "limit 0")
	page, err = c.CleanupExpired(time.Now().Add(time.Hour), CleanupLimitMax+1)
	must(t, err)
	eq(t, page.Visited, 1, "clipped, not refused")
}

func TestOptionsAreChecked(t *testing.T) {
	if _, err := NewCache(CacheOptions{}); err != ErrInvalidConfig {
		t.Errorf("local node 0: %v", err)
	}
	if _, err := NewLeader(LeaderOptions{}); err != ErrInvalidConfig {
		t.Errorf("leader node 0: %v", err)
	}
	if _, err := NewLeader(LeaderOptions{LocalNodeID: 1, KeyPrefix: badUTF8}); err != ErrInvalidConfig {
		t.Errorf("prefix not UTF-8: %v", err)
	}
	if _, err := NewLeader(LeaderOptions{LocalNodeID: 1, KeyPrefix: strings.Repeat("p", KeyMax+1)}); err != ErrInvalidConfig {
		t.Errorf("long prefix: %v", err)
	}
	// A negative TTL is upstream's ttl <= 0: never reclaimed.
	c := newCache(t, 1, -time.Second, nil)
	store(t, c, DeliveryTag{Key: "k", ChannelKey: "c"})
	page, err := c.CleanupExpired(time.Now().Add(time.Hour), CleanupLimitMax)
	must(t, err)
	eq(t, page, CleanupPage{}, "never reclaimed")
	// Random keys: 32 lowercase hex characters, distinct.
	l := newLeader(t, 1, time.Minute, nil, "")
	a := build(t, l, BuildRequest{ChannelKey: "a"})
	b := build(t, l, BuildRequest{ChannelKey: "b"})
	for _, k := range []string{a.Key, b.Key} {
		if len(k) != 32 || strings.Trim(k, "0123456789abcdef") != "" {
			t.Errorf("random key %q", k)
		}
	}
	if a.Key == b.Key {
		t.Error("random keys repeat")
	}
}

// Every method of a closed, nil or zero handle returns ErrHandleClosed;
// so does a second Close.
func TestClosedHandles(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	store(t, c, versionTag("g", 1))
	ch, err := c.Channel("g")
	must(t, err)
	l := newLeader(t, 2, time.Minute, nil, "l")
	m, err := l.BeginMutation("g")
	must(t, err)
	must(t, c.Close())
	must(t, l.Close())
	ref := versionTag("g", 1).Ref()
	caches := []*Cache{c, nil, {}}
	for i, c := range caches {
		_, _, err := c.Store(versionTag("g", 2))
		isErr(t, err, ErrHandleClosed, "Store", i)
		v, _, err := c.Lookup(ref)
		isErr(t, err, ErrHandleClosed, "Lookup", i)
		if v != nil {
			t.Error("a view from a closed cache")
		}
		_, err = c.Check(ref)
		isErr(t, err, ErrHandleClosed, "Check", i)
		_, _, err = c.LookupTag("g", "k")
		isErr(t, err, ErrHandleClosed, "LookupTag", i)
		_, _, err = c.Current("g")
		isErr(t, err, ErrHandleClosed, "Current", i)
		_, _, err = c.CurrentRef("g")
		isErr(t, err, ErrHandleClosed, "CurrentRef", i)
		_, err = c.IsSourceStale("g", SourceVersion{})
		isErr(t, err, ErrHandleClosed, "IsSourceStale", i)
		_, err = c.Channel("g")
		isErr(t, err, ErrHandleClosed, "Channel", i)
		_, err = c.CleanupExpired(time.Now(), 1)
		isErr(t, err, ErrHandleClosed, "CleanupExpired", i)
		_, err = c.Len()
		isErr(t, err, ErrHandleClosed, "Len", i)
		_, err = c.Counts()
		isErr(t, err, ErrHandleClosed, "Counts", i)
		isErr(t, c.Close(), ErrHandleClosed, "Close", i)
	}
	// A channel handle of a closed cache is closed too.
	for i, h := range []*Channel{ch, nil, {}} {
		_, _, err := h.Lookup(ref)
		isErr(t, err, ErrHandleClosed, "Channel.Lookup", i)
		_, err = h.Check(ref)
		isErr(t, err, ErrHandleClosed, "Channel.Check", i)
		_, _, err = h.Store(versionTag("g", 2))
		isErr(t, err, ErrHandleClosed, "Channel.Store", i)
		_, _, err = h.Current()
		isErr(t, err, ErrHandleClosed, "Channel.Current", i)
	}
	must(t, ch.Close())
	isErr(t, ch.Close(), ErrHandleClosed, "Channel.Close twice")
	for i, l := range []*Leader{l, nil, {}} {
		_, err := l.BuildLeaderTag(BuildRequest{ChannelKey: "g"})
		isErr(t, err, ErrHandleClosed, "BuildLeaderTag", i)
		_, err = l.BuildEphemeralTag(BuildRequest{ChannelKey: "g"})
		isErr(t, err, ErrHandleClosed, "BuildEphemeralTag", i)
		_, _, err = l.Lookup(ref)
		isErr(t, err, ErrHandleClosed, "Leader.Lookup", i)
		_, err = l.Check(ref)
		isErr(t, err, ErrHandleClosed, "Leader.Check", i)
		_, _, err = l.LookupTag("k")
		isErr(t, err, ErrHandleClosed, "Leader.LookupTag", i)
		_, _, err = l.Current("g")
		isErr(t, err, ErrHandleClosed, "Leader.Current", i)
		_, _, err = l.CurrentRef("g")
		isErr(t, err, ErrHandleClosed, "Leader.CurrentRef", i)
		_, err = l.IsSourceStale("g", SourceVersion{})
		isErr(t, err, ErrHandleClosed, "Leader.IsSourceStale", i)
		_, err = l.Usable("g", 0)
		isErr(t, err, ErrHandleClosed, "Usable", i)
		_, err = l.IsDirty("g")
		isErr(t, err, ErrHandleClosed, "IsDirty", i)
		_, err = l.BeginMutation("g")
		isErr(t, err, ErrHandleClosed, "BeginMutation", i)
		_, err = l.CleanupExpired(time.Now(), 1)
		isErr(t, err, ErrHandleClosed, "Leader.CleanupExpired", i)
		_, err = l.Bodies()
		isErr(t, err, ErrHandleClosed, "Bodies", i)
		_, err = l.Counts()
		isErr(t, err, ErrHandleClosed, "Leader.Counts", i)
		isErr(t, l.Close(), ErrHandleClosed, "Leader.Close", i)
	}
	// A mutation opened before its leader closed still ends; an ended one
	// refuses everything.
	_, _, err = m.Commit(5)
	must(t, err)
	for i, m := range []*Mutation{m, nil, {}} {
		isErr(t, m.Reset(), ErrHandleClosed, "Reset", i)
		isErr(t, m.Add(1, "u"), ErrHandleClosed, "Add", i)
		isErr(t, m.Remove("u"), ErrHandleClosed, "Remove", i)
		_, _, err := m.Commit(6)
		isErr(t, err, ErrHandleClosed, "Commit", i)
		isErr(t, m.Abandon(), ErrHandleClosed, "Abandon", i)
	}
	// A nil or released View answers nothing.
	var v *View
	v.Release()
	eq(t, [4]any{v.Len(), v.Partitions(), v.UIDs() == nil, v.Ref().TagKey}, [4]any{0, 0, true, ""}, "nil view")
	eq(t, v.PartitionForNode(3).NodeID(), uint64(3), "nil view partition")
	eq(t, v.PartitionForNode(3).Len(), 0, "nil view partition len")
}
