package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wukongim/wkcore/go/coord"
	"github.com/wukongim/wkcore/go/deliverytag"
	wkmetrics "github.com/wukongim/wkcore/go/metrics"
	"github.com/wukongim/wkcore/go/mqttsession"
	"github.com/wukongim/wkcore/go/multiraft"
)

// system is one of the four systems the soak drives.
type system interface {
	// name is the system's short name (the CSV's and the summary's).
	name() string
	// populate fills the system's structures before the timed run.
	populate()
	// run drives the system until ctx ends, then stops its workers and
	// returns once none is running.
	run(ctx context.Context)
	// ops returns the operations done so far (host count).
	ops() uint64
	// relations returns the host tallies the families must cover.
	relations() []relation
	// final runs the end checks, with every worker stopped (quiescent).
	final(fams famSample)
	// libBytes returns what the system's library handles report holding
	// (bytes; 0 where the system reports none).
	libBytes() uint64
}

type config struct {
	duration  time.Duration
	sample    time.Duration
	csvPath   string
	svgPath   string
	owners    int
	channels  int
	slots     int
	producers int
	keys      int
	seed      uint64
	memPct    float64
	memMiB    float64
	// warmup is the shortest warm-up window, up to half the samples (the
	// first quarter of the run when that is longer).
	warmup   time.Duration
	memCheck bool
	// memMustCheck fails a run whose memory bound could not be checked (too
	// few samples, or a warm-up that reached into the half checked).
	memMustCheck bool
	systems      string
	memprof      string
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 10*time.Minute, "how long the soak runs (after populating)")
	flag.DurationVar(&cfg.sample, "sample", time.Second, "sampling interval")
	flag.StringVar(&cfg.csvPath, "csv", "", "write the samples as CSV to this path")
	flag.StringVar(&cfg.svgPath, "svg", "", "write the memory and throughput chart as SVG to this path")
	flag.IntVar(&cfg.owners, "owners", 100_000, "owner slots of the owner registry (each holds at most one owner)")
	flag.IntVar(&cfg.channels, "channels", 100_000, "delivery-tag channels")
	flag.IntVar(&cfg.slots, "slots", 8, "admission slots (control queues)")
	flag.IntVar(&cfg.producers, "producers", 4, "admission producer goroutines")
	flag.IntVar(&cfg.keys, "keys", 512, "coordination keys per ledger round (a multiple of 8)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the workers' operation choices")
	flag.Float64Var(&cfg.memPct, "mem-pct", 10, "memory bound: the last half's max may exceed the warm-up max by this percentage ...")
	flag.Float64Var(&cfg.memMiB, "mem-mib", 32, "... plus this many MiB")
	flag.DurationVar(&cfg.warmup, "warmup", 30*time.Second, "the shortest warm-up window of the memory bound, up to half the run (the first quarter when longer)")
	flag.BoolVar(&cfg.memCheck, "mem-check", true, "fail on memory growth (off: report only; use under -race)")
	flag.BoolVar(&cfg.memMustCheck, "mem-must-check", false, "fail when the run was too short for the memory bound to be checked (scripts/soak sets it)")
	flag.StringVar(&cfg.systems, "systems", "admission,owners,tags,coord", "the systems to drive (comma-separated; for triage)")
	flag.StringVar(&cfg.memprof, "memprofile", "", "write a heap profile at the end of the timed run to this path (triage of Go heap growth)")
	flag.BoolVar(&forceGC, "gc-each-sample", false, "run a garbage collection before each sample (triage: tells memory that waits for finalizers from memory that leaks)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "wksoak: unexpected argument %q (see -h)\n", flag.Arg(0))
		os.Exit(2)
	}
	if cfg.owners < 16 || cfg.owners > mqttsession.CapacityMax || cfg.channels < 16 || cfg.slots < 1 ||
		cfg.producers < 1 || cfg.keys < 8 || cfg.keys%8 != 0 || cfg.keys > coord.BatchMax ||
		cfg.duration <= 0 || cfg.sample <= 0 {
		fmt.Fprintln(os.Stderr, "wksoak: a flag is out of range: -owners 16..1e6, -channels >= 16, -slots >= 1, "+
			"-producers >= 1, -keys a multiple of 8 in 8..4096, -duration and -sample > 0")
		os.Exit(2)
	}
	os.Exit(soak(cfg))
}

func soak(cfg config) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chk := &checker{cancel: cancel}

	fmt.Printf("wksoak: builds multiraft=%s mqttsession=%s deliverytag=%s coord=%s, %s, GOMAXPROCS %d\n",
		multiraft.Implementation, mqttsession.Implementation, deliverytag.Implementation, coord.Implementation,
		runtime.Version(), runtime.GOMAXPROCS(0))
	systems, err := newSystems(cfg, chk)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wksoak:", err)
		return 1
	}
	start := time.Now()
	for _, s := range systems {
		s.populate()
	}
	fmt.Printf("wksoak: populated in %v (owners %d, channels %d, slots %d, keys %d); running %v\n",
		time.Since(start).Round(time.Millisecond), cfg.owners, cfg.channels, cfg.slots, cfg.keys, cfg.duration)

	runCtx, stop := context.WithTimeout(ctx, cfg.duration)
	defer stop()
	var wg sync.WaitGroup
	for _, s := range systems {
		wg.Add(1)
		go func(s system) { defer wg.Done(); s.run(runCtx) }(s)
	}

	smp := newSampler(systems, chk)
	runStart := time.Now()
	smp.take(0)
	tick := time.NewTicker(cfg.sample)
sampling:
	for {
		select {
		case <-runCtx.Done():
			break sampling
		case <-tick.C:
			smp.take(time.Since(runStart).Seconds())
		}
	}
	tick.Stop()
	wg.Wait()
	if cfg.memprof != "" {
		if err := writeHeapProfile(cfg.memprof); err != nil {
			chk.failf("writing %s: %v", cfg.memprof, err)
		}
	}
	elapsed := time.Since(runStart)
	smp.take(elapsed.Seconds())

	// The end: every worker has stopped, so every relation is an equality.
	fams, err := readFamilies()
	if err != nil {
		chk.failf("reading the metric families: %v", err)
	}
	for _, s := range systems {
		for _, r := range s.relations() {
			chk.eq("end: "+s.name()+": "+r.series, fams.values[r.series], r.host)
		}
		s.final(fams)
	}
	mem := checkMemory(cfg, smp.rows, chk)

	if cfg.csvPath != "" {
		if err := writeCSV(cfg.csvPath, smp); err != nil {
			chk.failf("writing %s: %v", cfg.csvPath, err)
		}
	}
	if cfg.svgPath != "" {
		if err := writeSVG(cfg.svgPath, smp, systems); err != nil {
			chk.failf("writing %s: %v", cfg.svgPath, err)
		}
	}
	summary(cfg, systems, smp, mem, elapsed, chk)
	if chk.failed() {
		return 1
	}
	return 0
}

func newSystems(cfg config, chk *checker) ([]system, error) {
	a, err := newAdmission(cfg, chk)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	o, err := newOwnerSoak(cfg, chk)
	if err != nil {
		return nil, fmt.Errorf("owners: %w", err)
	}
	t, err := newTagSoak(cfg, chk)
	if err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	c, err := newCoordSoak(cfg, chk)
	if err != nil {
		return nil, fmt.Errorf("coord: %w", err)
	}
	var out []system
	for _, s := range []system{a, o, t, c} {
		for _, want := range strings.Split(cfg.systems, ",") {
			if strings.TrimSpace(want) == s.name() {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-systems %q names none of admission, owners, tags, coord", cfg.systems)
	}
	return out, nil
}

// readFamilies reads every family of the four packages' process-wide
// sources.
func readFamilies() (famSample, error) {
	out := newFamSample()
	mr, err := multiraft.GlobalMetrics()
	if err != nil {
		return out, err
	}
	defer mr.Close()
	cr, err := coord.GlobalMetrics()
	if err != nil {
		return out, err
	}
	defer cr.Close()
	for _, src := range []wkmetrics.Source{mr, cr, mqttsession.Metrics, deliverytag.Metrics} {
		f, err := src.Families()
		if err != nil {
			return out, err
		}
		out.add(f)
	}
	return out, nil
}

// memSample is one reading of the process's memory.
type memSample struct {
	rss, goHeap, goTotal uint64
	goroutines           uint64
	// finBacklog and cleanupBacklog are the finalizers and cleanups queued
	// but not yet run (0 where the runtime does not report them, before Go
	// 1.25): memory a handle frees from a finalizer waits on them.
	finBacklog, cleanupBacklog uint64
	// liveHeap is the heap the last collection marked live; gcCycles the
	// collections completed so far.
	liveHeap, gcCycles uint64
	// libHeap is the C library's own heap (metrics.ReadLibraryMemory:
	// what every system of the library holds, without the allocator's own
	// overhead); hasLib is false in the pure-Go build.
	libHeap uint64
	hasLib  bool
}

var pageSize = uint64(os.Getpagesize())

func readMemory() memSample {
	var m memSample
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				m.rss = pages * pageSize
			}
		}
	}
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/sched/goroutines:goroutines"},
		{Name: "/gc/finalizers/queued:finalizers"},
		{Name: "/gc/finalizers/executed:finalizers"},
		{Name: "/gc/cleanups/queued:cleanups"},
		{Name: "/gc/cleanups/executed:cleanups"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(s)
	val := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	m.goHeap, m.goTotal, m.goroutines = val(0), val(1), val(2)
	m.liveHeap, m.gcCycles = val(7), val(8)
	if lib, ok := wkmetrics.ReadLibraryMemory(); ok {
		m.libHeap, m.hasLib = lib.LiveBytes, true
	}
	if q, e := val(3), val(4); q > e {
		m.finBacklog = q - e
	}
	if q, e := val(5), val(6); q > e {
		m.cleanupBacklog = q - e
	}
	return m
}

// writeHeapProfile writes the live heap's profile (after a collection).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
