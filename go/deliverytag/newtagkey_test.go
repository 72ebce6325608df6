package deliverytag

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// A Manager made with NewTagKey mints every fresh key with it (KeyPrefix is
// ignored), on the goroutine that builds; a key no follower could store is
// replaced by a random one; its leader side is the Go leader (Leader() nil).
func TestManagerNewTagKey(t *testing.T) {
	var minted []string
	next := []string{"host-1", "", "bad\xff", strings.Repeat("k", KeyMax+1), "host-5"}
	gen := func() string {
		k := next[len(minted)]
		minted = append(minted, k)
		return k
	}
	m := NewManager(Options{LocalNodeID: 1, TTL: time.Minute, NewTagKey: gen, KeyPrefix: "ignored"})
	if m == nil || m.Leader() != nil || m.Cache() == nil {
		t.Fatalf("manager %v, leader %v", m, m.Leader())
	}
	defer m.Close()
	random := regexp.MustCompile(`^[0-9a-f]{32}$`)
	req := BuildRequest{ChannelKey: "group:k", SubscriberMutationVersion: 1,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u"}}}}
	for i, want := range []string{"host-1", "", "", "", "host-5"} {
		req.MintFreshKey = i > 0
		tag, ok := m.BuildLeaderTag(req)
		if !ok {
			t.Fatalf("build %d refused", i)
		}
		if want != "" && tag.Key != want || want == "" && !random.MatchString(tag.Key) {
			t.Fatalf("build %d: key %q", i, tag.Key)
		}
		if got, ok := m.LookupTag(tag.Key); !ok || got.Key != tag.Key {
			t.Fatalf("build %d: LookupTag %q %v", i, got.Key, ok)
		}
	}
	if len(minted) != 5 {
		t.Fatalf("generator called %d times", len(minted))
	}
	// A reused key calls nothing.
	req.MintFreshKey = false
	if tag, _ := m.BuildLeaderTag(req); tag.Key != "host-5" || len(minted) != 5 {
		t.Fatalf("reuse: %q after %d calls", tag.Key, len(minted))
	}
	if NewManager(Options{NewTagKey: gen}) != nil {
		t.Fatal("LocalNodeID 0 accepted")
	}
	// Without NewTagKey, the core's keys: KeyPrefix in sequence.
	p := NewManager(Options{LocalNodeID: 1, KeyPrefix: "p"})
	defer p.Close()
	if tag, _ := p.BuildLeaderTag(req); tag.Key != "p-1" || p.Leader() == nil {
		t.Fatalf("prefix key %q", tag.Key)
	}
}
