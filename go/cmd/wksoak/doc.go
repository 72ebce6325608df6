// Command wksoak is the soak of wkcore's four systems through the Go
// packages' public APIs: it drives admission (go/multiraft), the MQTT owner
// registry (go/mqttsession), delivery tags (go/deliverytag) and the
// coordination primitives (go/coord) at once for -duration (default 10m),
// samples the process every -sample (default 1s), and exits non-zero with a
// message saying what broke if any check fails. Build it in either build
// (cgo, the default; or -tags wkcore_purego); scripts/soak runs both.
//
//	go run ./cmd/wksoak -duration 1m -csv soak.csv -svg soak.svg
//
// # What it drives
//
//   - admission: -slots control queues (limits 256 / 64 background),
//     -producers goroutines admitting foreground and background proposals
//     and config changes (one in 64), one consumer taking batches of 32,
//     resolving each config change it takes, and demoting one slot for a
//     while every 512 rounds (not_leader refusals); busy and throttled
//     refusals come from the limits.
//   - owners: one registry of -owners slots (default 10^5), each holding at
//     most one owner at a time, on a clock the soak moves by progress (one
//     step per pass of the first worker): reserve, activate, begin/done (one,
//     or two at once and a third refused by MaxOperations), Check, renew,
//     fence, quiesce, pending and lease expiry, a sweeper, transports whose
//     close fails once (one owner in 16), then a new generation reserved in
//     the slot. Four workers own disjoint slots.
//   - tags: a leader and two follower caches over -channels channels
//     (default 10^5): builds, committed and abandoned mutations, stores into
//     both caches, a delayed older tag stored again, look-ups by writers and
//     readers (current and older references, Check, CurrentRef), and
//     cleanups; cache A has no TTL, cache B one that reclaims idle bodies.
//   - coord: rounds of four racing workers with a barrier between phases on
//     a claim, a pending and a hand-off ledger of -keys keys (Place, Claim,
//     Reconcile, Finalize, Insert, Take, Touch, SweepOrphans, FinalizeOwn,
//     ClaimBatch, Complete, Reclaim, a full ledger refusing), an anchor table,
//     a flip, a counter, an exclusive trigger and a windowed counter.
//
// # What it checks
//
// The checks are deterministic: each is a property every interleaving must
// have; the duration and the machine's speed decide only how many times
// they run.
//
//   - Invariants, at every operation. Every admitted proposal is taken
//     exactly once and in FIFO order (a producer's values for a slot carry
//     its count of admitted ones, so the consumer must see 0, 1, 2, …), with
//     the kind and class it was admitted with; a foreground proposal is never
//     throttled; a taken config change resolves once and a second resolve is
//     refused. No owner admits a third operation with MaxOperations 2, or an
//     operation after Fence or after its Quiesce returned; Quiesce returns
//     only after the transport closed; a transport is never closed twice or
//     by two attempts at once. The leader bumps a tag's version exactly when
//     its subscriber version rises, a mutation commits with one bump, Usable
//     refuses a dirty and a lagging tag, cache A refuses a delayed older tag
//     and a writer's look-up of what it stored is a hit; a reader never sees
//     a channel's subscriber version go back in either cache (no snapshot
//     older than one it saw). In the ledgers exactly one claim, insert or
//     finalization per key per round wins and the losers learn the winner's
//     outcome; the reconciler, the orphan sweep, FinalizeOwn and Reclaim
//     change exactly the records they must; each anchor fires once per
//     period; one flip and one trigger per round win; the counter hands out
//     every value once.
//   - Tallies. The soak counts every outcome itself and compares: at every
//     sample each counter series of the families is monotonic and at least
//     the host's count of the same outcomes (read before the families); at
//     the end, with every worker stopped, they are equal, and so are the
//     handles' own counters (ControlQueue.Counters, Ledger.Counts,
//     Cache/Leader.Counts), the owner gauges (held = the owners whose
//     transport did not close), the retirement proof's last connection id
//     (= owners reserved) and the close callbacks (= owners + the ones that
//     fail once).
//   - Memory. Every structure is filled before the timed run starts. The
//     warm-up window is the first quarter of the samples, at least -warmup
//     (30s) long up to half the run (glibc's arenas in the cgo build take a
//     minute or two to settle), extended until three
//     garbage collections have completed in the run; the window checked is
//     the last half (a run whose warm-up reaches into it is too short: the
//     bound is reported, not checked; so is one of under 16 samples). The
//     max RSS of the last half must not exceed the warm-up's max by more
//     than -mem-pct percent (default 10) plus -mem-mib MiB (default 32), and
//     the same bound holds for the live Go heap (what the last collection
//     marked, runtime/metrics /gc/heap/live:bytes), and in the cgo build for
//     the library's own heap (metrics.ReadLibraryMemory: what the library
//     allocated and has not freed, without the C allocator's overhead), so a
//     leak in the library fails the run even where the resident set would
//     hide it, and an RSS creep with a flat library heap is the allocator's.
//     -mem-must-check fails a run too short for the bound to be checked.
//     Why these: after the
//     fill every structure has a fixed size (a bounded owner population, a
//     fixed channel set whose UIDs each mutation resets, ledgers allocated up
//     front, rings grown to their high-water mark), so what is left is the
//     collector's pacing — the heap swings between the live size and the
//     next goal, about twice it, and a later cycle can peak a few percent
//     above the warm-up's as churn moves the live size (4% in a one-minute
//     pure-Go run here); the first collection of the run marks the filled
//     structures, the second the churned steady state, and the cycle before
//     the third peaks at that state's goal, so a warm-up of three
//     collections has seen the swing — the percentage; and noise that does
//     not scale with the sizes:
//     allocator arenas of threads that start later, goroutine stacks, the
//     scavenger's lag — the MiB. A leak of one small object per operation
//     exceeds both within seconds at these rates. -mem-check=false reports
//     the bound without failing (scripts/soak --race uses it: the race
//     detector's shadow memory follows the program's).
//
// # What it samples
//
// Every sample records RSS (/proc/self/statm), the Go heap (objects, and
// the live heap of the last collection), the runtime's total and the
// collections completed (runtime/metrics), goroutines, the finalizers and cleanups queued
// and not yet run, the library's whole heap (cgo build; lib_heap_bytes),
// the bytes each admission slot reports (SlotState.MemoryBytes; the owner
// registry, the tag caches and the ledgers report no bytes of their own, so
// their gauges — owners held, tag bodies and UIDs cached — stand in, as
// series of the families), each
// system's operations so far, and every series of every family of the four
// packages' sources (in the cgo build they are one registry, read once).
// -csv writes them one line per sample, -svg a chart of memory and
// throughput over time. The summary gives the throughput per system, the
// memory's range and the bound, and the checks that passed.
//
// For triage: -systems drives a subset, -memprofile writes a heap profile at
// the end, -gc-each-sample collects before each sample.
package main
