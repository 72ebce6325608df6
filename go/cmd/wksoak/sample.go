package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
)

// forceGC makes every sample run a garbage collection first (-gc-each-sample).
var forceGC bool

// row is one sample.
type row struct {
	t     float64 // seconds since the timed run started
	mem   memSample
	lib   []uint64 // per system: what its library handles report holding
	ops   []uint64 // per system: operations so far (host count)
	fams  famSample
	famOK bool
}

type sampler struct {
	systems []system
	chk     *checker
	rows    []row
	prev    *famSample
}

func newSampler(systems []system, chk *checker) *sampler {
	return &sampler{systems: systems, chk: chk}
}

// take records one sample and checks the relations that must hold at any
// moment: every family counter is monotonic, and covers the host's tally
// of the same outcomes (read first).
func (s *sampler) take(t float64) {
	r := row{t: t, lib: make([]uint64, len(s.systems)), ops: make([]uint64, len(s.systems))}
	rels := make([][]relation, len(s.systems))
	for i, sys := range s.systems {
		rels[i] = sys.relations()
		r.ops[i] = sys.ops()
	}
	fams, err := readFamilies()
	if err != nil {
		s.chk.failf("sample at %.1fs: reading the families: %v", t, err)
	} else {
		r.fams, r.famOK = fams, true
		for i, sys := range s.systems {
			for _, rel := range rels[i] {
				got, ok := fams.values[rel.series]
				switch {
				case !ok && rel.host != 0:
					s.chk.failf("sample at %.1fs: %s: series %s missing (host tally %d)", t, sys.name(), rel.series, rel.host)
				case got < rel.host:
					s.chk.failf("sample at %.1fs: %s: %s is %d, below the host's tally %d", t, sys.name(), rel.series, got, rel.host)
				default:
					s.chk.pass(groupSample, 1)
				}
			}
		}
		if s.prev != nil {
			for k, was := range s.prev.values {
				now, ok := fams.values[k]
				switch {
				case !ok:
					s.chk.failf("sample at %.1fs: series %s disappeared", t, k)
				case s.prev.counter[k] && now < was:
					s.chk.failf("sample at %.1fs: counter %s went down from %d to %d", t, k, was, now)
				default:
					s.chk.pass(groupSample, 1)
				}
			}
		}
		s.prev = &r.fams
	}
	if forceGC {
		runtime.GC()
	}
	r.mem = readMemory()
	for i, sys := range s.systems {
		r.lib[i] = sys.libBytes()
	}
	s.rows = append(s.rows, r)
}

// writeCSV writes one line per sample: time, memory, goroutines, each
// system's library bytes and operations, and every family series (the union
// over the samples; a series not read at a sample is empty).
func writeCSV(path string, s *sampler) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var series []string
	for _, r := range s.rows {
		for k := range r.fams.values {
			if !seen[k] {
				seen[k] = true
				series = append(series, k)
			}
		}
	}
	sort.Strings(series)
	w := csv.NewWriter(f)
	head := []string{"t_s", "rss_bytes", "go_heap_bytes", "go_live_heap_bytes", "go_total_bytes", "gc_cycles", "goroutines",
		"finalizer_backlog", "cleanup_backlog", "lib_heap_bytes"}
	for _, sys := range s.systems {
		head = append(head, "lib_bytes_"+sys.name())
	}
	for _, sys := range s.systems {
		head = append(head, "ops_"+sys.name())
	}
	head = append(head, series...)
	if err := w.Write(head); err != nil {
		f.Close()
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, r := range s.rows {
		line := []string{strconv.FormatFloat(r.t, 'f', 3, 64), u(r.mem.rss), u(r.mem.goHeap), u(r.mem.liveHeap),
			u(r.mem.goTotal), u(r.mem.gcCycles), u(r.mem.goroutines), u(r.mem.finBacklog), u(r.mem.cleanupBacklog),
			u(r.mem.libHeap)}
		for _, v := range r.lib {
			line = append(line, u(v))
		}
		for _, v := range r.ops {
			line = append(line, u(v))
		}
		for _, k := range series {
			if v, ok := r.fams.values[k]; ok {
				line = append(line, u(v))
			} else {
				line = append(line, "")
			}
		}
		if err := w.Write(line); err != nil {
			f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// memResult is what the memory check found.
type memResult struct {
	checked                  bool
	why                      string
	warmupN, lastN           int
	warmRSS, lastRSS, bound  uint64
	warmHeap, lastHeap, hcap uint64
	minRSS, maxRSS           uint64
	minHeap, maxHeap         uint64
	// The C library's own heap, where the build links the library (hasLib).
	hasLib                   bool
	warmLib, lastLib, libCap uint64
	minLib, maxLib           uint64
}

// warmupCycles is how many collections the warm-up window spans at least:
// the collector's sawtooth (the heap between its live size and the next
// goal) has peaked in it.
const warmupCycles = 3

// checkMemory applies the memory bound (see the package docs): the warm-up
// window is the first quarter of the samples (at least -warmup long, up to
// half), extended until warmupCycles collections completed; the window
// checked is the last half; RSS, the live Go heap and (cgo build) the
// library's heap each must stay within the warm-up's max plus mem-pct
// percent plus mem-mib MiB.
func checkMemory(cfg config, rows []row, chk *checker) memResult {
	var m memResult
	m.minRSS, m.minHeap, m.minLib = ^uint64(0), ^uint64(0), ^uint64(0)
	for _, r := range rows {
		m.minRSS, m.maxRSS = min(m.minRSS, r.mem.rss), max(m.maxRSS, r.mem.rss)
		m.minHeap, m.maxHeap = min(m.minHeap, r.mem.liveHeap), max(m.maxHeap, r.mem.liveHeap)
		m.minLib, m.maxLib = min(m.minLib, r.mem.libHeap), max(m.maxLib, r.mem.libHeap)
		m.hasLib = m.hasLib || r.mem.hasLib
	}
	n := len(rows)
	m.lastN = n / 2
	if n < 16 {
		m.why = fmt.Sprintf("%d samples: too few (run at least 16 samples)", n)
		mustCheck(cfg, m, chk)
		return m
	}
	m.warmupN = n / 4
	for m.warmupN < n-m.lastN && rows[m.warmupN].t-rows[0].t < cfg.warmup.Seconds() {
		m.warmupN++
	}
	for m.warmupN < n && rows[m.warmupN-1].mem.gcCycles < rows[0].mem.gcCycles+warmupCycles {
		m.warmupN++
	}
	if m.warmupN > n-m.lastN {
		m.why = fmt.Sprintf("the warm-up (%d collections) lasted %d of %d samples, into the half checked: run longer",
			warmupCycles, m.warmupN, n)
		mustCheck(cfg, m, chk)
		return m
	}
	for _, r := range rows[:m.warmupN] {
		m.warmRSS, m.warmHeap = max(m.warmRSS, r.mem.rss), max(m.warmHeap, r.mem.liveHeap)
		m.warmLib = max(m.warmLib, r.mem.libHeap)
	}
	for _, r := range rows[n-m.lastN:] {
		m.lastRSS, m.lastHeap = max(m.lastRSS, r.mem.rss), max(m.lastHeap, r.mem.liveHeap)
		m.lastLib = max(m.lastLib, r.mem.libHeap)
	}
	slack := func(v uint64) uint64 {
		return v + uint64(float64(v)*cfg.memPct/100) + uint64(cfg.memMiB*(1<<20))
	}
	m.bound, m.hcap, m.libCap = slack(m.warmRSS), slack(m.warmHeap), slack(m.warmLib)
	m.checked = true
	if !cfg.memCheck {
		m.why = "reported only (-mem-check=false)"
		return m
	}
	within := func(what string, last, bound, warm uint64) {
		if last > bound {
			chk.failf("memory: %s grew after warm-up: max %.1f MiB in the last half, bound %.1f MiB (warm-up max %.1f MiB + %.0f%% + %.0f MiB)",
				what, mib(last), mib(bound), mib(warm), cfg.memPct, cfg.memMiB)
		} else {
			chk.pass(groupMemory, 1)
		}
	}
	within("RSS", m.lastRSS, m.bound, m.warmRSS)
	within("the live Go heap", m.lastHeap, m.hcap, m.warmHeap)
	if m.hasLib {
		within("the library's heap", m.lastLib, m.libCap, m.warmLib)
	}
	return m
}

// mustCheck fails the run, under -mem-must-check, for a bound it could not
// check.
func mustCheck(cfg config, m memResult, chk *checker) {
	if cfg.memMustCheck {
		chk.failf("memory: the bound could not be checked (-mem-must-check): %s", m.why)
	}
}

func mib(v uint64) float64 { return float64(v) / (1 << 20) }
