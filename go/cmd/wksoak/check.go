package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wukongim/wkcore/go/metrics"
)

// checker collects the violations of a run. The first one cancels the run
// (the systems stop, the end checks still run, the report says what broke);
// a run with any violation exits non-zero.
type checker struct {
	mu     sync.Mutex
	fails  []string
	total  atomic.Int64
	cancel context.CancelFunc

	// passed counts the checks that held, by group (invariant, tally, sample,
	// memory), for the summary.
	passed [checkGroups]atomic.Uint64
}

// The check groups of the summary.
const (
	groupInvariant = iota
	groupTally
	groupSample
	groupMemory
	checkGroups
)

var groupNames = [checkGroups]string{"invariants", "tallies", "sample relations", "memory bounds"}

// maxFails bounds the violations kept for the report (the count is exact).
const maxFails = 40

func (c *checker) failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.total.Add(1)
	c.mu.Lock()
	if len(c.fails) < maxFails {
		c.fails = append(c.fails, msg)
	}
	c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// pass records n checks of group that held.
func (c *checker) pass(group int, n uint64) { c.passed[group].Add(n) }

// eq checks got == want as one tally check.
func (c *checker) eq(what string, got, want uint64) {
	if got != want {
		c.failf("%s: library %d, host %d", what, got, want)
		return
	}
	c.pass(groupTally, 1)
}

func (c *checker) failed() bool { return c.total.Load() != 0 }

// famKey names one series: name{label="value",…}, the label names in the
// family's order.
func famKey(name string, labels ...string) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", labels[i], labels[i+1])
	}
	b.WriteByte('}')
	return b.String()
}

// famSample is one moment's value of every series of every family read,
// by famKey, with the type of each.
type famSample struct {
	values  map[string]uint64
	counter map[string]bool
}

func newFamSample() famSample {
	return famSample{values: make(map[string]uint64), counter: make(map[string]bool)}
}

// add adds families to the sample. A family already in it is skipped: in the
// cgo build every package's source reads the library's one process-wide
// registry, so each returns every family of it.
func (s famSample) add(families []metrics.Family) {
	seen := make(map[string]bool)
	for k := range s.values {
		if i := strings.IndexByte(k, '{'); i >= 0 {
			seen[k[:i]] = true
		} else {
			seen[k] = true
		}
	}
	for _, f := range families {
		if seen[f.Name] {
			continue
		}
		for _, series := range f.Series {
			labels := make([]string, 0, 2*len(f.Labels))
			for i, l := range f.Labels {
				v := ""
				if i < len(series.LabelValues) {
					v = series.LabelValues[i]
				}
				labels = append(labels, l, v)
			}
			k := famKey(f.Name, labels...)
			s.values[k] += series.Value
			s.counter[k] = f.Type == metrics.Counter
		}
	}
}

// keys returns the series names in order.
func (s famSample) keys() []string {
	out := make([]string, 0, len(s.values))
	for k := range s.values {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// relation is one host tally a series must cover: at every sample the
// library's value is at least the host's (the host counts an outcome after
// the call returned it, and the tallies are read before the families), and
// at the end, with every worker stopped, they are equal.
type relation struct {
	series string
	host   uint64
}
