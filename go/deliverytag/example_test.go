package deliverytag_test

import (
	"fmt"
	"time"

	"github.com/wukongim/wkcore/go/deliverytag"
)

// The cleanup runs on the host's own timer: nothing in the package starts a
// goroutine. Each tick reclaims one bounded page of cold tags; the next
// tick continues the pass where it stopped. (Upstream configures a TTL but
// never runs its cleanup, so every body, one per ephemeral delivery
// included, stays forever.)
func ExampleCache_CleanupExpired() {
	cache, err := deliverytag.NewCache(deliverytag.CacheOptions{LocalNodeID: 2, TTL: 20 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	defer cache.Close()

	ticker := time.NewTicker(5 * time.Millisecond)
	defer ticker.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case now := <-ticker.C:
				if _, err := cache.CleanupExpired(now, 256); err != nil {
					return // closed
				}
			case <-stop:
				return
			}
		}
	}()

	_, stored, err := cache.Store(deliverytag.DeliveryTag{Key: "leader-a-1", ChannelKey: "group:g1", TagVersion: 1,
		SubscriberMutationVersion: 1, Partitions: []deliverytag.NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}})
	if err != nil {
		panic(err)
	}
	fmt.Println("stored:", stored)

	// Nothing looks the tag up: after its TTL a tick reclaims it.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, ok, _ := cache.CurrentRef("group:g1"); !ok {
			break
		}
	}
	_, ok, _ := cache.CurrentRef("group:g1")
	fmt.Println("reclaimed:", !ok)
	// Output:
	// stored: true
	// reclaimed: true
}

// A follower's delivery path: look the planned reference up, read the
// local partition without a copy, release the view.
func ExampleCache_Lookup() {
	cache, err := deliverytag.NewCache(deliverytag.CacheOptions{LocalNodeID: 2, TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	tag := deliverytag.DeliveryTag{Key: "leader-a-1", ChannelKey: "group:g1", TagVersion: 3,
		SubscriberMutationVersion: 9, Partitions: []deliverytag.NodePartition{
			{NodeID: 1, UIDs: []string{"u1"}}, {NodeID: 2, UIDs: []string{"u2", "u3"}}}}
	if _, _, err := cache.Store(tag); err != nil {
		panic(err)
	}

	view, reason, err := cache.Lookup(tag.Ref())
	if err != nil {
		panic(err)
	}
	fmt.Println(reason)
	for i := 0; i < view.Len(); i++ {
		fmt.Println(view.UID(i)) // valid until Release
	}
	view.Release()
	// Output:
	// hit
	// u2
	// u3
}
