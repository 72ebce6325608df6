package deliverytag

// One script of the public API on a logical clock, written as a transcript
// and compared with testdata/go/deliverytag.txt: both builds must write the
// same bytes (WK_UPDATE_TRANSCRIPT=1 rewrites the file).

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

type transcript struct {
	b    strings.Builder
	base time.Time
}

func (w *transcript) line(format string, args ...any) { fmt.Fprintf(&w.b, format+"\n", args...) }

// tag prints a tag without its wall-clock fields' absolute values.
func (w *transcript) tag(t DeliveryTag) string {
	at := func(x time.Time) string {
		if x.IsZero() {
			return "-"
		}
		return x.Sub(w.base).String()
	}
	return fmt.Sprintf("%s/%s v%d smv%d src%q/%d topo%d%v parts%v created %s access %s", t.Key, t.ChannelKey,
		t.TagVersion, t.SubscriberMutationVersion, t.SourceChannelKey, t.SourceSubscriberMutationVersion,
		t.Topology.HashSlotTableVersion, t.Topology.SlotAuthorityRefs, t.Partitions, at(t.CreatedAt), at(t.LastAccess))
}

func compareTranscript(t *testing.T, name, got string) {
	t.Helper()
	path := "../../testdata/go/" + name
	if os.Getenv("WK_UPDATE_TRANSCRIPT") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s build: transcript line %d:\n got  %q\n want %q", Implementation, i+1, g, w)
		}
	}
}

func TestTranscript(t *testing.T) {
	base := time.Unix(1000, 0)
	now := base
	clock := func() time.Time { return now }
	w := &transcript{base: base}
	topo := func(v uint64) PartitionTopologyVersion {
		return PartitionTopologyVersion{HashSlotTableVersion: v, SlotAuthorityRefs: []SlotAuthorityRef{
			{SlotID: 1, LeaderNodeID: 1, ConfigEpoch: v, BalanceVersion: 100}}}
	}
	seq := 0
	for _, mode := range []string{"prefix", "NewTagKey"} {
		w.line("== Manager, keys by %s", mode)
		opts := Options{LocalNodeID: 1, TTL: time.Second, Now: clock, KeyPrefix: "lead"}
		if mode == "NewTagKey" {
			opts.NewTagKey = func() string { seq++; return fmt.Sprintf("host-%d", seq) }
		}
		l := NewManager(opts)
		f := NewManager(Options{LocalNodeID: 2, TTL: time.Second, Now: clock})
		w.line("NewManager(node 0) nil: %v", NewManager(Options{Now: clock}) == nil)
		req := BuildRequest{ChannelKey: "group:a", SubscriberMutationVersion: 1, Topology: topo(1),
			Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}, {NodeID: 2, UIDs: []string{"u2", "u3"}}}}
		t1, ok := l.BuildLeaderTag(req)
		w.line("Build: %v %s", ok, w.tag(t1))
		now = now.Add(100 * time.Millisecond)
		t2, _ := l.BuildLeaderTag(req)
		w.line("Build same: %s", w.tag(t2))
		req.SubscriberMutationVersion = 2
		t3, _ := l.BuildLeaderTag(req)
		w.line("Build smv 2: %s", w.tag(t3))
		req.MintFreshKey = true
		t4, _ := l.BuildLeaderTag(req)
		w.line("Build fresh key: %s", w.tag(t4))
		req.MintFreshKey = false
		e, _ := l.BuildEphemeralTag(req)
		w.line("Ephemeral: %s", w.tag(e))
		ref, ok := l.CurrentRef("group:a")
		w.line("CurrentRef: %v %s v%d", ok, ref.TagKey, ref.TagVersion)
		for _, r := range []TagRef{ref, {ChannelKey: "group:a", TagKey: ref.TagKey, TagVersion: ref.TagVersion - 1,
			Topology: ref.Topology}, {ChannelKey: "group:a", TagKey: ref.TagKey, TagVersion: ref.TagVersion + 1,
			Topology: ref.Topology}, {ChannelKey: "group:a", TagKey: "other", TagVersion: 1},
			{ChannelKey: "group:a", TagKey: ref.TagKey, TagVersion: ref.TagVersion, Topology: topo(9)},
			{ChannelKey: "group:none"}} {
			tag, hit, reason := l.LookupLocalPartitionRef(r)
			w.line("Lookup leader %s v%d: %v %s key %q", r.TagKey, r.TagVersion, hit, reason, tag.Key)
		}
		lt, ok := l.LookupTag(e.Key)
		w.line("LookupTag ephemeral: %v %s", ok, w.tag(lt))
		w.line("IsSourceStale: %v", l.IsSourceStale("group:a", SourceVersion{ChannelKey: "x", SubscriberMutationVersion: 1}))

		stored, ok := f.StoreFollowerPartition(t4)
		w.line("Store follower: %v %s", ok, w.tag(stored))
		older := t4
		older.SubscriberMutationVersion = 1
		back, ok := f.StoreFollowerPartition(older)
		w.line("Store stale: %v %s", ok, w.tag(back))
		fref, _ := f.CurrentRef("group:a")
		tag, hit, reason := f.LookupLocalPartition(fref)
		w.line("Lookup follower: %v %s %s", hit, reason, w.tag(tag))
		ft, ok := f.LookupTag(t4.Key)
		w.line("LookupTag follower: %v %s", ok, w.tag(ft))
		der := BuildRequest{ChannelKey: "cmd:group:a", SubscriberMutationVersion: 1, SourceChannelKey: "group:a",
			SourceSubscriberMutationVersion: 5, Topology: topo(1)}
		dt, _ := l.BuildLeaderTag(der)
		w.line("Derived: %s", w.tag(dt))
		w.line("IsSourceStale 5: %v, 6: %v", l.IsSourceStale("cmd:group:a", SourceVersion{ChannelKey: "group:a", SubscriberMutationVersion: 5}),
			l.IsSourceStale("cmd:group:a", SourceVersion{ChannelKey: "group:a", SubscriberMutationVersion: 6}))
		now = now.Add(3 * time.Second)
		w.line("CleanupExpired leader: %d follower: %d", l.CleanupExpired(), f.CleanupExpired())
		_, ok = l.CurrentRef("group:a")
		w.line("CurrentRef after cleanup: %v", ok)
		var nilM *Manager
		_, hit, reason = nilM.LookupLocalPartitionRef(ref)
		w.line("nil Manager: %v %s %v %d", hit, reason, nilM.IsSourceStale("a", SourceVersion{}), nilM.CleanupExpired())
		_ = l.Close()
		_ = f.Close()
	}

	w.line("== Codec")
	body, _ := EncodeRequestBinary(DeliveryTagRequest{Op: "get", ChannelID: "g", ChannelType: 2, TagKey: "t", TagVersion: 7, TargetNodeID: 2})
	w.line("request %x", body)
	resp, _ := EncodeResponseBinary(DeliveryTagResponse{Status: "not_leader", LeaderID: 2})
	w.line("response %x", resp)
	_, err := DecodeRequest(append(body, 0))
	w.line("trailing: %v", err)
	compareTranscript(t, "deliverytag.txt", w.b.String())
}
