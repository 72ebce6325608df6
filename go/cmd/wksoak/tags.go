package main

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongim/wkcore/go/deliverytag"
)

const (
	tagWriters = 2
	tagReaders = 2
	// The tag clock moves one step per tagStepEvery steps of writer 0; cache
	// B reclaims a body idle for tagTTL (so a channel not touched for a few
	// thousand writer steps).
	tagStep      = time.Second
	tagStepEvery = 4096
	tagTTL       = 8 * tagStep
	leaderNode   = 1
	followerNode = 2
)

// tagCounts is the host's tally of one cache's or leader's calls.
type tagCounts struct {
	lookups [7]atomic.Uint64 // by reason, in the LookupReason order
	stored  atomic.Uint64
	stale   atomic.Uint64
}

func (c *tagCounts) lookup(r deliverytag.LookupReason) { c.lookups[reasonIdx(r)].Add(1) }

var reasons = [7]deliverytag.LookupReason{deliverytag.LookupHit, deliverytag.LookupMissingRef,
	deliverytag.LookupMissingTag, deliverytag.LookupTagKeyMismatch, deliverytag.LookupStaleRequest,
	deliverytag.LookupNewerRequest, deliverytag.LookupTopologyMismatch}

func reasonIdx(r deliverytag.LookupReason) int {
	for i, x := range reasons {
		if x == r {
			return i
		}
	}
	return 6
}

// chanState is a channel's writer-side state (each channel has one writer).
type chanState struct {
	key   string // the tag key of the leader's current tag ("" before the first build)
	ver   uint64 // its tag version
	smv   uint64 // its subscriber mutation version (strictly rising per channel)
	dirty bool   // a mutation was abandoned: rebuild before the next use
}

// tagSoak drives a leader and two follower caches over -channels channels:
// A never reclaims (the strict checks), B has a TTL and a cleaner (churn).
// Writers own disjoint channels: each build or committed mutation raises the
// channel's subscriber version and is stored into both caches; readers look
// up any channel. What must hold: the leader's version bump rule, a delayed
// older tag refused by A, a mutation applied with one bump, Usable's dirty
// and lagging refusals, a writer's own look-up on A a hit of what it
// stored, and a reader never seeing a channel's subscriber version go back
// in either cache (no stale snapshot older than one it saw).
type tagSoak struct {
	cfg    config
	chk    *checker
	clock  *fakeClock
	leader *deliverytag.Leader
	a, b   *deliverytag.Cache
	chans  []chanState
	names  []string
	topo   deliverytag.PartitionTopologyVersion

	host                                [3]tagCounts // leader, A, B
	builds, mutations, applied, noTag   atomic.Uint64
	abandons, usable, lagging, dirtyErr atomic.Uint64
	cleanups, reclaimed, unlinked       atomic.Uint64
	steps                               atomic.Uint64
}

func newTagSoak(cfg config, chk *checker) (*tagSoak, error) {
	t := &tagSoak{cfg: cfg, chk: chk, clock: newFakeClock(), chans: make([]chanState, cfg.channels),
		names: make([]string, cfg.channels)}
	t.topo = deliverytag.PartitionTopologyVersion{HashSlotTableVersion: 1, SlotAuthorityRefs: []deliverytag.SlotAuthorityRef{
		{SlotID: 1, LeaderNodeID: leaderNode, ConfigEpoch: 1, BalanceVersion: 1}}}
	for i := range t.names {
		t.names[i] = "group:soak" + strconv.Itoa(i)
	}
	var err error
	if t.leader, err = deliverytag.NewLeader(deliverytag.LeaderOptions{LocalNodeID: leaderNode, KeyPrefix: "soak", Now: t.clock.Now}); err != nil {
		return nil, err
	}
	if t.a, err = deliverytag.NewCache(deliverytag.CacheOptions{LocalNodeID: followerNode, Now: t.clock.Now}); err != nil {
		return nil, err
	}
	if t.b, err = deliverytag.NewCache(deliverytag.CacheOptions{LocalNodeID: followerNode, TTL: tagTTL, Now: t.clock.Now}); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *tagSoak) name() string { return "tags" }

func (t *tagSoak) libBytes() uint64 { return 0 }

func (t *tagSoak) ops() uint64 {
	n := t.builds.Load() + t.mutations.Load() + t.abandons.Load() + t.usable.Load() + t.cleanups.Load()
	for i := range t.host {
		for j := range t.host[i].lookups {
			n += t.host[i].lookups[j].Load()
		}
		n += t.host[i].stored.Load() + t.host[i].stale.Load()
	}
	return n
}

func (t *tagSoak) relations() []relation {
	var out []relation
	for j, r := range reasons {
		var n uint64
		for i := range t.host {
			n += t.host[i].lookups[j].Load()
		}
		out = append(out, relation{famKey("wukongim_delivery_tag_lookups_total", "result", string(r)), n})
	}
	var stored, stale uint64
	for i := range t.host {
		stored += t.host[i].stored.Load()
		stale += t.host[i].stale.Load()
	}
	out = append(out,
		relation{famKey("wukongim_delivery_tag_stores_total", "result", "stored"), stored},
		relation{famKey("wukongim_delivery_tag_stores_total", "result", "stale"), stale})
	return out
}

func (t *tagSoak) parts(i int, smv uint64) []deliverytag.NodePartition {
	s := strconv.Itoa(i)
	return []deliverytag.NodePartition{
		{NodeID: leaderNode, UIDs: []string{"a" + s, "b" + s}},
		{NodeID: followerNode, UIDs: []string{"u" + s, "v" + strconv.FormatUint(smv%4, 10)}},
	}
}

func (t *tagSoak) populate() {
	for i := range t.chans {
		t.build(i, false)
	}
}

func (t *tagSoak) run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := 0; w < tagWriters; w++ {
		wg.Add(1)
		go func(w int) { defer wg.Done(); t.write(ctx, w) }(w)
	}
	for rd := 0; rd < tagReaders; rd++ {
		wg.Add(1)
		go func(rd int) { defer wg.Done(); t.read(ctx, rd) }(rd)
	}
	wg.Add(1)
	go func() { defer wg.Done(); t.clean(ctx) }()
	wg.Wait()
}

func (t *tagSoak) write(ctx context.Context, w int) {
	r := newRNG(t.cfg.seed, 400+w)
	n := len(t.chans) / tagWriters
	for step := 1; ; step++ {
		if step&255 == 0 && ctx.Err() != nil {
			return
		}
		i := r.intn(n)*tagWriters + w
		if i >= len(t.chans) {
			continue
		}
		t.steps.Add(1)
		if t.chans[i].dirty {
			t.build(i, false)
		} else {
			switch x := r.intn(8); {
			case x < 4:
				t.build(i, x == 0)
			case x == 5:
				t.mutate(i)
			case x == 6:
				t.abandon(i)
			default:
				t.own(i)
			}
		}
		if w == 0 && step%tagStepEvery == 0 {
			t.clock.advance(tagStep)
		}
	}
}

// build builds channel i's next tag on the leader and stores it into both
// caches; with delayed, it builds two and then stores the older one into A
// again, which A must refuse.
func (t *tagSoak) build(i int, delayed bool) {
	first := t.build1(i)
	if !t.chans[i].dirty {
		t.store(i, first)
	}
	if delayed {
		second := t.build1(i)
		t.store(i, second)
		got, ok, err := t.a.Store(first)
		if err != nil {
			t.chk.failf("tags: A.Store (delayed): %v", err)
			return
		}
		t.count(1, ok)
		if ok || got.SubscriberMutationVersion != second.SubscriberMutationVersion {
			t.chk.failf("tags: A took a delayed older tag (smv %d over %d): stored %v, current smv %d",
				first.SubscriberMutationVersion, second.SubscriberMutationVersion, ok, got.SubscriberMutationVersion)
		}
		t.chk.pass(groupInvariant, 1)
	}
}

func (t *tagSoak) build1(i int) deliverytag.DeliveryTag {
	c := &t.chans[i]
	smv := c.smv + 1
	tag, err := t.leader.BuildLeaderTag(deliverytag.BuildRequest{ChannelKey: t.names[i], SubscriberMutationVersion: smv,
		Topology: t.topo, Partitions: t.parts(i, smv)})
	if err != nil {
		t.chk.failf("tags: BuildLeaderTag: %v", err)
		return tag
	}
	t.builds.Add(1)
	t.host[0].stored.Add(1)
	if c.key == "" {
		if tag.TagVersion != 1 {
			t.chk.failf("tags: first build of %s has version %d", t.names[i], tag.TagVersion)
		}
	} else if tag.Key != c.key || tag.TagVersion != c.ver+1 {
		t.chk.failf("tags: build of %s after a subscriber change: %s v%d, want %s v%d", t.names[i], tag.Key, tag.TagVersion, c.key, c.ver+1)
	}
	t.chk.pass(groupInvariant, 1)
	c.key, c.ver, c.smv, c.dirty = tag.Key, tag.TagVersion, smv, false
	return tag
}

func (t *tagSoak) count(side int, stored bool) {
	if stored {
		t.host[side].stored.Add(1)
	} else {
		t.host[side].stale.Add(1)
	}
}

// store stores tag (channel i's newest) into A, which must take it, and B,
// which must take it too (B may have reclaimed the channel's body, never
// holds a newer one).
func (t *tagSoak) store(i int, tag deliverytag.DeliveryTag) {
	for side, c := range []*deliverytag.Cache{t.a, t.b} {
		got, ok, err := c.Store(tag)
		if err != nil {
			t.chk.failf("tags: Store: %v", err)
			continue
		}
		t.count(side+1, ok)
		if !ok {
			t.chk.failf("tags: cache %c refused the newest tag of %s (smv %d; current smv %d)", 'A'+side, t.names[i],
				tag.SubscriberMutationVersion, got.SubscriberMutationVersion)
		}
		if got.TagVersion != tag.TagVersion || len(got.Partitions) != 1 || got.Partitions[0].NodeID != followerNode {
			t.chk.failf("tags: cache %c stored %s v%d with %d partitions", 'A'+side, t.names[i], got.TagVersion, len(got.Partitions))
		}
		t.chk.pass(groupInvariant, 2)
	}
}

// mutate commits a membership change (reset and re-add, so the UIDs stay
// bounded) with the store's next version: one bump, same key; Usable then
// takes the new version and refuses a later one as lagging.
func (t *tagSoak) mutate(i int) {
	c := &t.chans[i]
	m, err := t.leader.BeginMutation(t.names[i])
	if err != nil {
		t.chk.failf("tags: BeginMutation: %v", err)
		return
	}
	s := strconv.Itoa(i)
	smv := c.smv + 1
	if err := m.Reset(); err != nil {
		t.chk.failf("tags: Mutation.Reset: %v", err)
	}
	if err := m.Add(leaderNode, "a"+s, "b"+s); err != nil {
		t.chk.failf("tags: Mutation.Add: %v", err)
	}
	if err := m.Add(followerNode, "u"+s, "m"+strconv.FormatUint(smv%4, 10)); err != nil {
		t.chk.failf("tags: Mutation.Add: %v", err)
	}
	res, tag, err := m.Commit(smv)
	t.mutations.Add(1)
	if err != nil {
		t.chk.failf("tags: Commit: %v", err)
		return
	}
	if res != deliverytag.MutationApplied || tag.Key != c.key || tag.TagVersion != c.ver+1 || tag.SubscriberMutationVersion != smv {
		t.chk.failf("tags: commit of %s: %v %s v%d smv %d, want applied %s v%d smv %d", t.names[i], res, tag.Key,
			tag.TagVersion, tag.SubscriberMutationVersion, c.key, c.ver+1, smv)
		return
	}
	t.applied.Add(1)
	t.host[0].stored.Add(1)
	c.ver, c.smv = tag.TagVersion, smv
	v, err := t.leader.Usable(t.names[i], smv)
	t.usable.Add(1)
	if err != nil || v.SubscriberMutationVersion() != smv {
		t.chk.failf("tags: Usable after a commit: %v", err)
	}
	if v != nil {
		v.Release()
	}
	if v, err := t.leader.Usable(t.names[i], smv+1); !errors.Is(err, deliverytag.ErrLagging) {
		t.chk.failf("tags: Usable with a newer store version returned %v, want ErrLagging", err)
		if v != nil {
			v.Release()
		}
	} else {
		t.lagging.Add(1)
	}
	t.usable.Add(1)
	t.chk.pass(groupInvariant, 3)
	t.store(i, tag)
}

// abandon begins a mutation and abandons it: the channel is dirty (Usable
// refuses it) until the next build.
func (t *tagSoak) abandon(i int) {
	m, err := t.leader.BeginMutation(t.names[i])
	if err != nil {
		t.chk.failf("tags: BeginMutation: %v", err)
		return
	}
	if err := m.Abandon(); err != nil {
		t.chk.failf("tags: Abandon: %v", err)
	}
	t.abandons.Add(1)
	v, err := t.leader.Usable(t.names[i], t.chans[i].smv)
	t.usable.Add(1)
	if !errors.Is(err, deliverytag.ErrDirty) {
		t.chk.failf("tags: Usable after an abandoned mutation returned %v, want ErrDirty", err)
		if v != nil {
			v.Release()
		}
	} else {
		t.dirtyErr.Add(1)
	}
	t.chk.pass(groupInvariant, 1)
	t.chans[i].dirty = true
}

func (t *tagSoak) ref(i int) deliverytag.TagRef {
	c := &t.chans[i]
	return deliverytag.TagRef{ChannelKey: t.names[i], TagKey: c.key, TagVersion: c.ver, SubscriberMutationVersion: c.smv, Topology: t.topo}
}

// own looks up what the writer stored last: a hit on the leader and on A
// (which never reclaims and has no other writer for the channel), a hit or
// a reclaimed body on B.
func (t *tagSoak) own(i int) {
	ref := t.ref(i)
	r, err := t.leader.Check(ref)
	if err != nil || r != deliverytag.LookupHit {
		t.chk.failf("tags: leader Check of its current tag: %s, %v", r, err)
	}
	t.host[0].lookup(r)
	for side, c := range []*deliverytag.Cache{t.a, t.b} {
		v, r, err := c.Lookup(ref)
		if err != nil {
			t.chk.failf("tags: Lookup: %v", err)
			continue
		}
		t.host[side+1].lookup(r)
		switch {
		case r == deliverytag.LookupHit && v.SubscriberMutationVersion() == ref.SubscriberMutationVersion && v.TagVersion() == ref.TagVersion:
		case side == 1 && r == deliverytag.LookupMissingRef:
		default:
			t.chk.failf("tags: cache %c: the writer's own look-up of %s v%d: %s", 'A'+side, t.names[i], ref.TagVersion, r)
		}
		if v != nil {
			if v.Len() != 2 {
				t.chk.failf("tags: cache %c: a view of %d UIDs, stored 2", 'A'+side, v.Len())
			}
			v.Release()
		}
		t.chk.pass(groupInvariant, 1)
	}
}

// read looks up random channels, through the current reference (a hit, or
// stale_request when a newer store came in between) or one version older
// (stale_request), and checks the subscriber version it sees per channel and
// cache never goes back.
func (t *tagSoak) read(ctx context.Context, rd int) {
	r := newRNG(t.cfg.seed, 500+rd)
	seen := [2][]uint64{make([]uint64, len(t.chans)), make([]uint64, len(t.chans))}
	var checks uint64
	for step := 0; ; step++ {
		if step&255 == 0 && ctx.Err() != nil {
			break
		}
		i := r.intn(len(t.chans))
		side := r.intn(2)
		c := []*deliverytag.Cache{t.a, t.b}[side]
		ref, ok, err := c.CurrentRef(t.names[i])
		if err != nil {
			t.chk.failf("tags: CurrentRef: %v", err)
			continue
		}
		if !ok {
			if side == 0 {
				t.chk.failf("tags: cache A lost channel %s", t.names[i])
			}
			continue
		}
		if ref.SubscriberMutationVersion < seen[side][i] {
			t.chk.failf("tags: cache %c: CurrentRef of %s has smv %d after %d was seen", 'A'+side, t.names[i], ref.SubscriberMutationVersion, seen[side][i])
		}
		seen[side][i] = ref.SubscriberMutationVersion
		older := ref.TagVersion > 1 && r.intn(4) == 0
		if older {
			ref.TagVersion--
			ref.SubscriberMutationVersion--
		}
		if r.intn(8) == 0 {
			reason, err := c.Check(ref)
			if err != nil {
				t.chk.failf("tags: Check: %v", err)
				continue
			}
			t.host[side+1].lookup(reason)
			continue
		}
		v, reason, err := c.Lookup(ref)
		if err != nil {
			t.chk.failf("tags: Lookup: %v", err)
			continue
		}
		t.host[side+1].lookup(reason)
		switch reason {
		case deliverytag.LookupHit, deliverytag.LookupStaleRequest:
			if older && reason == deliverytag.LookupHit {
				t.chk.failf("tags: cache %c: a look-up one version older than the current was a hit", 'A'+side)
			}
		case deliverytag.LookupMissingRef:
			if side == 0 {
				t.chk.failf("tags: cache A lost channel %s", t.names[i])
			}
		default:
			t.chk.failf("tags: cache %c: look-up of %s: %s", 'A'+side, t.names[i], reason)
		}
		if v != nil {
			if s := v.SubscriberMutationVersion(); s < seen[side][i] {
				t.chk.failf("tags: cache %c: a stale snapshot of %s: smv %d after %d was seen", 'A'+side, t.names[i], s, seen[side][i])
			} else {
				seen[side][i] = s
			}
			v.Release()
		}
		checks += 2
	}
	t.chk.pass(groupInvariant, checks)
}

func (t *tagSoak) clean(ctx context.Context) {
	for ctx.Err() == nil {
		now := t.clock.Now()
		for side, c := range []*deliverytag.Cache{t.a, t.b} {
			p, err := c.CleanupExpired(now, 256)
			if err != nil {
				t.chk.failf("tags: CleanupExpired: %v", err)
				return
			}
			t.cleanups.Add(1)
			if side == 0 && (p.Reclaimed != 0 || p.Unlinked != 0) {
				t.chk.failf("tags: cache A (no TTL) reclaimed %d bodies", p.Reclaimed)
			}
			t.reclaimed.Add(uint64(p.Reclaimed))
			t.unlinked.Add(uint64(p.Unlinked))
		}
		if p, err := t.leader.CleanupExpired(now, 256); err != nil || p.Reclaimed != 0 {
			t.chk.failf("tags: leader (no TTL) cleanup: %+v, %v", p, err)
		}
		t.cleanups.Add(1)
		time.Sleep(2 * time.Millisecond)
	}
}

func (t *tagSoak) final(fams famSample) {
	var sum deliverytag.Counts
	for side, h := range []interface {
		Counts() (deliverytag.Counts, error)
	}{t.leader, t.a, t.b} {
		c, err := h.Counts()
		if err != nil {
			t.chk.failf("tags: Counts: %v", err)
			continue
		}
		label := [3]string{"leader", "cache A", "cache B"}[side]
		for j, r := range reasons {
			t.chk.eq("tags: "+label+": look-ups "+string(r), c.Lookups[j], t.host[side].lookups[j].Load())
			sum.Lookups[j] += c.Lookups[j]
		}
		t.chk.eq("tags: "+label+": stored", c.Stored, t.host[side].stored.Load())
		t.chk.eq("tags: "+label+": stale", c.Stale, t.host[side].stale.Load())
		sum.Tags += c.Tags
		sum.UIDs += c.UIDs
		sum.ReclaimedBodies += c.ReclaimedBodies
		sum.ReclaimedRefs += c.ReclaimedRefs
		if side == 2 {
			t.chk.eq("tags: cache B: reclaimed bodies", c.ReclaimedBodies, t.reclaimed.Load())
			t.chk.eq("tags: cache B: unlinked references", c.ReclaimedRefs, t.unlinked.Load())
		}
	}
	// Every channel has its current tag on the leader and in A; B holds at
	// most one body per channel.
	if n, err := t.a.Len(); err != nil || n != len(t.chans) {
		t.chk.failf("tags: cache A holds %d channels, want %d (%v)", n, len(t.chans), err)
	}
	for _, kv := range []struct {
		series string
		want   uint64
	}{
		{famKey("wukongim_delivery_tag_reclaimed_total", "kind", "bodies"), sum.ReclaimedBodies},
		{famKey("wukongim_delivery_tag_reclaimed_total", "kind", "refs"), sum.ReclaimedRefs},
		{famKey("wukongim_delivery_tag_cached", "kind", "tags"), sum.Tags},
		{famKey("wukongim_delivery_tag_cached", "kind", "uids"), sum.UIDs},
	} {
		t.chk.eq("tags: end: "+kv.series+" = the handles' Counts", fams.values[kv.series], kv.want)
	}
}
