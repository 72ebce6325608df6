package mqttsession

// Begin+Done, side by side: the package's Owners ("wkcore": the Rust core in
// the cgo build, the mutex implementation in the pure-Go build), the mutex
// implementation ("purego") and the faithful port of upstream ("upstream",
// a child context per Begin). One op is one Begin and its Done on one
// active owner, the caller's context cancellable (as a request's is).
// Results go to docs, never into assertions.
//
//	go test -run '^$' -bench BeginDone -benchtime 200ms ./mqttsession/

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// benchOwners is the Begin/Done pair of one implementation.
type benchOwners struct {
	name  string
	owner func(b *testing.B, n int) []Owner
	begin func(ctx context.Context, o Owner) (func(), error)
}

const benchOwnerCount = 64

func benchImpls(b *testing.B) []benchOwners {
	opts := OwnerOptions{NodeID: 3, BootID: "boot", Capacity: benchOwnerCount, MaxOperations: MaxOperationsMax,
		PendingTimeout: time.Minute, MaxLease: time.Minute, CloseRetry: time.Minute}
	activate := func(b *testing.B, r interface {
		Reserve(Claim, CloseTransport) (Owner, error)
		Activate(Owner, uint64, time.Time) error
	}, n int) []Owner {
		owners := make([]Owner, n)
		for i := range owners {
			o, err := r.Reserve(ownerClaim("client-"+string(rune('a'+i%26))+string(rune('a'+i/26))), okClose)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Activate(o, 1, time.Now().Add(time.Minute)); err != nil {
				b.Fatal(err)
			}
			owners[i] = o
		}
		return owners
	}
	var out []benchOwners
	{
		var r *Owners
		out = append(out, benchOwners{name: "wkcore",
			owner: func(b *testing.B, n int) []Owner {
				var err error
				if r, err = NewOwners(opts); err != nil {
					b.Fatal(err)
				}
				return activate(b, r, n)
			},
			begin: func(ctx context.Context, o Owner) (func(), error) {
				op, err := r.Begin(ctx, o)
				if err != nil {
					return nil, err
				}
				op.Done()
				return nil, nil
			}})
	}
	{
		var m mutexAPI
		out = append(out, benchOwners{name: "purego",
			owner: func(b *testing.B, n int) []Owner {
				mo, err := newMutexOwners(opts)
				if err != nil {
					b.Fatal(err)
				}
				m = mutexAPI{mo}
				return activate(b, m, n)
			},
			begin: func(ctx context.Context, o Owner) (func(), error) {
				op, err := m.Begin(ctx, o)
				if err != nil {
					return nil, err
				}
				op.Done()
				return nil, nil
			}})
	}
	{
		var u *upOwners
		out = append(out, benchOwners{name: "upstream",
			owner: func(b *testing.B, n int) []Owner {
				var err error
				if u, err = newUpOwners(opts); err != nil {
					b.Fatal(err)
				}
				return activate(b, u, n)
			},
			begin: func(ctx context.Context, o Owner) (func(), error) {
				op, err := u.Begin(ctx, o)
				if err != nil {
					return nil, err
				}
				op.Done()
				return nil, nil
			}})
	}
	return out
}

// One op: Begin and Done on one owner, one goroutine.
func BenchmarkBeginDone(b *testing.B) {
	for _, impl := range benchImpls(b) {
		b.Run(impl.name, func(b *testing.B) {
			owners := impl.owner(b, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := impl.begin(ctx, owners[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// One op: Begin and Done, GOMAXPROCS goroutines, each on its own owner of
// 64 (connections are independent; contention is the registry's).
func BenchmarkBeginDoneParallel(b *testing.B) {
	for _, impl := range benchImpls(b) {
		b.Run(impl.name, func(b *testing.B) {
			owners := impl.owner(b, benchOwnerCount)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var next atomic.Uint32
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				o := owners[int(next.Add(1)-1)%len(owners)]
				for pb.Next() {
					if _, err := impl.begin(ctx, o); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// The floors of one inline Begin+Done (results go to docs): the two CASes
// on the owner's word; the inline path's five read-modify-writes (the two
// CASes, the two gauge-row adds and the operation's once-only flag); and, in
// the cgo build (bench_cgo_test.go), two cgo crossings and the registry
// clock's read.
func BenchmarkBeginDoneFloor(b *testing.B) {
	var word, flag, begun, ended uint64
	b.Run("cas2", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := atomic.LoadUint64(&word)
			atomic.CompareAndSwapUint64(&word, w, w+1)
			w = atomic.LoadUint64(&word)
			atomic.CompareAndSwapUint64(&word, w, w-1)
		}
	})
	b.Run("rmw5", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := atomic.LoadUint64(&word)
			atomic.CompareAndSwapUint64(&word, w, w+1)
			atomic.AddUint64(&begun, 1)
			atomic.CompareAndSwapUint64(&flag, 0, 1)
			w = atomic.LoadUint64(&word)
			atomic.CompareAndSwapUint64(&word, w, w-1)
			atomic.AddUint64(&ended, 1)
			flag = 0
		}
	})
	benchFloorExtra(b)
}
