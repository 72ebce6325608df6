package main

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongim/wkcore/go/mqttsession"
)

// fakeClock is a monotonic clock that moves only when the soak moves it
// (by whole steps): leases and pending timeouts run out by progress, not
// by how fast the machine is.
type fakeClock struct {
	base time.Time // has a monotonic reading, which Add keeps
	off  atomic.Int64
}

func newFakeClock() *fakeClock { return &fakeClock{base: time.Now()} }

func (c *fakeClock) Now() time.Time              { return c.base.Add(time.Duration(c.off.Load())) }
func (c *fakeClock) nanos() int64                { return c.off.Load() }
func (c *fakeClock) advance(d time.Duration)     { c.off.Add(int64(d)) }
func (c *fakeClock) since(n int64) time.Duration { return time.Duration(c.off.Load() - n) }

// The owner soak's clock step: one per pass of worker 0 over its owners.
const ownerStep = 100 * time.Millisecond

const (
	ownerWorkers = 4
	ownerMaxOps  = 2
)

// The states of an owner slot (worker-local).
const (
	slotEmpty = iota
	slotPending
	slotActive
	slotClosing // fenced (by us, a sweep or an expiry): quiesce it
)

// closeRec is one owner's transport, as the close callback sees it.
type closeRec struct {
	calls     atomic.Int32
	inFlight  atomic.Bool
	closed    atomic.Bool
	failFirst bool
}

type ownerSlot struct {
	owner mqttsession.Owner
	rec   *closeRec
	state uint8
	rev   uint64
	gen   uint64
}

// ownerSoak drives one registry of -owners owner slots: each slot holds at
// most one owner at a time, through reserve, activate, begin/done (one and
// two at once, and a third refused at MaxOperations), renew, fence, quiesce,
// lease and pending expiry, sweeps; a slot whose owner retired reserves the
// next generation. Workers own disjoint slots, so every operation on an
// owner but the sweeper's comes from one goroutine.
type ownerSoak struct {
	cfg    config
	chk    *checker
	clock  *fakeClock
	owners *mqttsession.Owners
	slots  []ownerSlot

	reserves, activates, activateFenced, late atomic.Uint64
	renews, renewFenced                       atomic.Uint64
	begins, beginFenced, beginLimit, dones    atomic.Uint64
	fences, quiesces, quiesceRetries          atomic.Uint64
	closeCalls, closeFails, retired           atomic.Uint64
	sweeps, swept, sweepFails                 atomic.Uint64
	failFirst                                 atomic.Uint64
}

var errSoakClose = errors.New("wksoak: transport close failed (on purpose)")

func newOwnerSoak(cfg config, chk *checker) (*ownerSoak, error) {
	o := &ownerSoak{cfg: cfg, chk: chk, clock: newFakeClock(), slots: make([]ownerSlot, cfg.owners)}
	var err error
	o.owners, err = mqttsession.NewOwners(mqttsession.OwnerOptions{
		NodeID: 7, BootID: "wksoak-boot", Capacity: cfg.owners, MaxOperations: ownerMaxOps,
		PendingTimeout: 3 * ownerStep, MaxLease: time.Minute, CloseRetry: ownerStep, Now: o.clock.Now,
	})
	return o, err
}

func (o *ownerSoak) name() string     { return "owners" }
func (o *ownerSoak) libBytes() uint64 { return 0 }

func (o *ownerSoak) ops() uint64 {
	return o.reserves.Load() + o.activates.Load() + o.activateFenced.Load() + o.renews.Load() + o.renewFenced.Load() +
		o.begins.Load() + o.beginFenced.Load() + o.beginLimit.Load() + o.dones.Load() + o.fences.Load() +
		o.quiesces.Load() + o.sweeps.Load()
}

func (o *ownerSoak) relations() []relation {
	return []relation{
		{famKey("wukongim_mqtt_owner_sweep_total", "event", "turns"), o.sweeps.Load()},
		{famKey("wukongim_mqtt_owner_sweep_total", "event", "visited"), o.swept.Load()},
		{famKey("wukongim_mqtt_owner_sweep_total", "event", "failures"), o.sweepFails.Load()},
	}
}

func (o *ownerSoak) populate() {
	r := newRNG(o.cfg.seed, 200)
	for i := range o.slots {
		o.reserve(i)
		o.activate(i, &r)
	}
}

func (o *ownerSoak) run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := 0; w < ownerWorkers; w++ {
		wg.Add(1)
		go func(w int) { defer wg.Done(); o.work(ctx, w) }(w)
	}
	wg.Add(1)
	go func() { defer wg.Done(); o.sweep(ctx) }()
	wg.Wait()
}

func (o *ownerSoak) sweep(ctx context.Context) {
	bg := context.Background()
	for ctx.Err() == nil {
		n, err := o.owners.Sweep(bg, mqttsession.SweepLimitMax)
		o.sweeps.Add(1)
		o.swept.Add(uint64(n))
		if err != nil {
			o.sweepFails.Add(1)
			if !errors.Is(err, mqttsession.ErrOwnerClose) {
				o.chk.failf("owners: Sweep: %v (only a failed close may fail a sweep here)", err)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (o *ownerSoak) work(ctx context.Context, w int) {
	lo, hi := w*len(o.slots)/ownerWorkers, (w+1)*len(o.slots)/ownerWorkers
	r := newRNG(o.cfg.seed, 300+w)
	for ctx.Err() == nil {
		for i := lo; i < hi; i++ {
			if i&255 == 0 && ctx.Err() != nil {
				return
			}
			o.step(i, &r)
		}
		if w == 0 {
			o.clock.advance(ownerStep)
		}
	}
}

func (o *ownerSoak) step(i int, r *rng) {
	s := &o.slots[i]
	switch s.state {
	case slotEmpty:
		o.reserve(i)
	case slotPending:
		if r.intn(8) != 0 { // else: left to its pending timeout
			o.activate(i, r)
		}
	case slotActive:
		switch x := r.intn(16); {
		case x < 10:
			o.operate(i, x < 3)
		case x < 13:
			o.renew(i, r)
		case x == 13:
			if err := o.owners.Fence(s.owner); err != nil {
				o.chk.failf("owners: Fence: %v", err)
			}
			o.fences.Add(1)
			if _, err := o.owners.Begin(context.Background(), s.owner); !errors.Is(err, mqttsession.ErrOwnerFenced) {
				o.chk.failf("owners: Begin after Fence returned %v, want ErrOwnerFenced", err)
			}
			o.chk.pass(groupInvariant, 1)
			s.state = slotClosing
		case x == 14:
			o.quiesce(i)
		default: // left alone: its lease runs out unless renewed later
		}
	case slotClosing:
		o.quiesce(i)
	}
}

func (o *ownerSoak) reserve(i int) {
	s := &o.slots[i]
	s.gen++
	rec := &closeRec{failFirst: s.gen%16 == 0}
	owner, err := o.owners.Reserve(mqttsession.Claim{
		Key: mqttsession.Key{Namespace: "soak", ClientID: "c" + strconv.Itoa(i)},
		UID: "u" + strconv.Itoa(i), SessionGeneration: 1, OwnerGeneration: s.gen,
	}, func(context.Context) error {
		o.closeCalls.Add(1)
		if rec.inFlight.Swap(true) {
			o.chk.failf("owners: two close attempts of one owner at once")
		}
		defer rec.inFlight.Store(false)
		n := rec.calls.Add(1)
		if rec.closed.Load() {
			o.chk.failf("owners: a transport closed again after a successful close")
		}
		if rec.failFirst && n == 1 {
			o.closeFails.Add(1)
			return errSoakClose
		}
		rec.closed.Store(true)
		return nil
	})
	if err != nil {
		// Each slot holds at most one owner and capacity is the slot count,
		// so the registry can never be full here.
		o.chk.failf("owners: Reserve of slot %d: %v", i, err)
		return
	}
	if rec.failFirst {
		o.failFirst.Add(1)
	}
	o.reserves.Add(1)
	s.owner, s.rec, s.state, s.rev = owner, rec, slotPending, 0
}

// leaseOf is a lease of 2 to 5 clock steps.
func leaseOf(r *rng) time.Duration { return time.Duration(2+r.intn(4)) * ownerStep }

func (o *ownerSoak) activate(i int, r *rng) {
	s := &o.slots[i]
	lease, at := leaseOf(r), o.clock.nanos()
	err := o.owners.Activate(s.owner, 1, o.clock.Now().Add(lease))
	switch {
	case err == nil:
		o.activates.Add(1)
		s.state, s.rev = slotActive, 1
	case errors.Is(err, mqttsession.ErrOwnerFenced): // its pending timeout ran out first
		o.activateFenced.Add(1)
		s.state = slotClosing
	case errors.Is(err, mqttsession.ErrOwnerInvalid) && o.clock.since(at) >= lease:
		o.late.Add(1) // the clock passed the lease while the call was on its way
	default:
		o.chk.failf("owners: Activate: %v", err)
	}
}

func (o *ownerSoak) renew(i int, r *rng) {
	s := &o.slots[i]
	lease, at := leaseOf(r), o.clock.nanos()
	err := o.owners.Renew(s.owner, s.rev+1, o.clock.Now().Add(lease))
	switch {
	case err == nil:
		o.renews.Add(1)
		s.rev++
	case errors.Is(err, mqttsession.ErrOwnerFenced): // the lease ran out (or a sweep fenced it)
		o.renewFenced.Add(1)
		s.state = slotClosing
	case errors.Is(err, mqttsession.ErrOwnerInvalid) && o.clock.since(at) >= lease:
		o.late.Add(1)
	default:
		o.chk.failf("owners: Renew: %v", err)
	}
}

// operate runs one operation, or (two) two at once and a third that
// MaxOperations refuses.
func (o *ownerSoak) operate(i int, two bool) {
	s := &o.slots[i]
	bg := context.Background()
	op, err := o.owners.Begin(bg, s.owner)
	if err != nil {
		o.refused(i, err)
		return
	}
	o.begins.Add(1)
	if op.UID() != "u"+strconv.Itoa(i) {
		o.chk.failf("owners: operation UID %q, reserved u%d", op.UID(), i)
	}
	if err := op.Check(); err != nil && !errors.Is(err, mqttsession.ErrOwnerFenced) && !errors.Is(err, context.Canceled) {
		o.chk.failf("owners: Check: %v", err)
	}
	if two {
		op2, err := o.owners.Begin(bg, s.owner)
		if err == nil {
			o.begins.Add(1)
			op3, err := o.owners.Begin(bg, s.owner)
			if err == nil {
				o.chk.failf("owners: a third operation admitted with MaxOperations %d", ownerMaxOps)
				op3.Done()
			} else if errors.Is(err, mqttsession.ErrOwnerLimit) {
				o.beginLimit.Add(1)
			} else {
				o.refused(i, err)
			}
			o.chk.pass(groupInvariant, 1)
			op2.Done()
			op2.Done() // idempotent
			o.dones.Add(1)
		} else {
			o.refused(i, err)
		}
	}
	op.Done()
	o.dones.Add(1)
	if err := op.Check(); !errors.Is(err, mqttsession.ErrOwnerFenced) {
		o.chk.failf("owners: Check after Done returned %v, want ErrOwnerFenced", err)
	}
	o.chk.pass(groupInvariant, 2)
}

func (o *ownerSoak) refused(i int, err error) {
	switch {
	case errors.Is(err, mqttsession.ErrOwnerFenced): // expired or swept
		o.beginFenced.Add(1)
		o.slots[i].state = slotClosing
	case errors.Is(err, mqttsession.ErrOwnerLimit):
		o.chk.failf("owners: Begin refused by the limit with no other operation of the owner admitted")
	default:
		o.chk.failf("owners: Begin: %v", err)
	}
}

// quiesce retires slot i's owner: a close that fails on purpose fails once,
// so a few attempts always end it.
func (o *ownerSoak) quiesce(i int) {
	s := &o.slots[i]
	for try := 0; ; try++ {
		err := o.owners.Quiesce(context.Background(), s.owner)
		o.quiesces.Add(1)
		if err == nil {
			break
		}
		if !errors.Is(err, mqttsession.ErrOwnerClose) || try == 3 {
			o.chk.failf("owners: Quiesce (attempt %d): %v", try+1, err)
			return
		}
		o.quiesceRetries.Add(1)
	}
	if !s.rec.closed.Load() {
		o.chk.failf("owners: Quiesce returned nil before the transport closed")
	}
	if op, err := o.owners.Begin(context.Background(), s.owner); !errors.Is(err, mqttsession.ErrOwnerFenced) {
		if err == nil {
			op.Done()
		}
		o.chk.failf("owners: Begin after Quiesce returned %v, want ErrOwnerFenced", err)
	}
	o.chk.pass(groupInvariant, 2)
	o.retired.Add(1)
	s.state = slotEmpty
}

func (o *ownerSoak) final(fams famSample) {
	// With every worker and the sweeper stopped, an owner is held unless
	// its transport closed: a sweep that closed it also retired it (no
	// operation is left to wait for), whether or not its worker saw that.
	live, held := 0, 0
	for i := range o.slots {
		if o.slots[i].state != slotEmpty {
			live++
			if !o.slots[i].rec.closed.Load() {
				held++
			}
		}
	}
	snap := o.owners.Snapshot()
	o.chk.eq("owners: end: held (snapshot)", uint64(snap.Held), uint64(held))
	o.chk.eq("owners: end: held (family)", fams.values[famKey("wukongim_mqtt_owner_work", "state", "held")], uint64(held))
	o.chk.eq("owners: end: operations (family)", fams.values[famKey("wukongim_mqtt_owner_work", "state", "operations")], 0)
	o.chk.eq("owners: end: operations (snapshot)", uint64(snap.Operations), 0)
	o.chk.eq("owners: reserves = retired + held", o.reserves.Load(), o.retired.Load()+uint64(live))
	o.chk.eq("owners: begins admitted = dones", o.dones.Load(), o.begins.Load())

	// Retire every owner left, then prove the boot empty.
	for i := range o.slots {
		if o.slots[i].state != slotEmpty {
			o.quiesce(i)
		}
	}
	snap = o.owners.Snapshot()
	if snap.Held != 0 || snap.Operations != 0 || snap.Pending != 0 || snap.Active != 0 || snap.Closing != 0 {
		o.chk.failf("owners: after retiring every owner the snapshot is %+v", snap)
	}
	end, err := readFamilies()
	if err == nil {
		o.chk.eq("owners: after retiring all: held (family)", end.values[famKey("wukongim_mqtt_owner_work", "state", "held")], 0)
	}
	// Every owner was closed once, and those that fail on purpose twice.
	o.chk.eq("owners: close callbacks = owners + failing ones", o.closeCalls.Load(), o.reserves.Load()+o.failFirst.Load())
	o.chk.eq("owners: failed closes", o.closeFails.Load(), o.failFirst.Load())
	o.owners.StopAdmission()
	if _, err := o.owners.Reserve(mqttsession.Claim{Key: mqttsession.Key{Namespace: "soak", ClientID: "late"}, UID: "u",
		SessionGeneration: 1, OwnerGeneration: 1}, func(context.Context) error { return nil }); !errors.Is(err, mqttsession.ErrOwnerStopped) {
		o.chk.failf("owners: Reserve after StopAdmission returned %v, want ErrOwnerStopped", err)
	}
	proof, err := o.owners.Retirement()
	if err != nil {
		o.chk.failf("owners: Retirement with nothing held: %v", err)
	} else {
		_, _, last := proof.Identity()
		o.chk.eq("owners: the retirement's last connection id", last, o.reserves.Load())
	}
	if err := o.owners.Close(context.Background()); err != nil {
		o.chk.failf("owners: Close: %v", err)
	}
}
