package multiraft

import (
	"sync"
	"sync/atomic"

	"github.com/wukongim/wkcore/go/metrics"
)

// The admission family, as the Rust core declares it.
const (
	familyName = "wukongim_slot_proposal_admission_total"
	familyHelp = "Slot proposal admission decisions, by proposal class and result."
)

var (
	familyClasses = [2]ProposalClass{ProposalClassForeground, ProposalClassBackground}
	familyResults = [4]AdmissionResult{AdmissionOK, AdmissionBusy, AdmissionThrottled, AdmissionNotLeader}
)

// outcomeIndex is the (class, result) cell of a decision.
func outcomeIndex(class ProposalClass, result AdmissionResult) (int, int) {
	c := 0
	if class.background() {
		c = 1
	}
	switch result {
	case AdmissionBusy:
		return c, 1
	case AdmissionThrottled:
		return c, 2
	case AdmissionNotLeader:
		return c, 3
	}
	return c, 0
}

// goRegistry is the pure-Go metrics registry: the admission family summed
// over every queue counted in it. It appears in Families once a queue was
// created in it, as the Rust registry's families do.
//
// Queues count in their own words (no shared line per decision); the
// registry keeps the words of its live queues and sums them when read, and a
// queue's Close folds its final counts into the registry's totals. The totals
// also take what mutexQueue, the reference model, adds per decision.
type goRegistry struct {
	used   atomic.Bool
	totals [2][4]atomic.Uint64

	mu   sync.Mutex // cold: registration, Close and reads only
	live map[*goWords]struct{}
}

func (r *goRegistry) register(g *goWords) {
	r.used.Store(true)
	r.mu.Lock()
	if r.live == nil {
		r.live = make(map[*goWords]struct{})
	}
	r.live[g] = struct{}{}
	r.mu.Unlock()
}

// unregister folds g's final counts into the totals.
func (r *goRegistry) unregister(g *goWords) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.live[g]; !ok {
		return
	}
	delete(r.live, g)
	t := countsTable(g.words().counters())
	for c := range t {
		for i := range t[c] {
			r.totals[c][i].Add(t[c][i])
		}
	}
}

// countsTable is AdmissionCounters as a [class][result] table.
func countsTable(c AdmissionCounters) [2][4]uint64 {
	return [2][4]uint64{
		{c.ForegroundOK, c.ForegroundBusy, c.ForegroundThrottled, c.ForegroundNotLeader},
		{c.BackgroundOK, c.BackgroundBusy, c.BackgroundThrottled, c.BackgroundNotLeader},
	}
}

// sums are the totals plus every live queue's counts.
func (r *goRegistry) sums() [2][4]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s [2][4]uint64
	for c := range s {
		for i := range s[c] {
			s[c][i] = r.totals[c][i].Load()
		}
	}
	for g := range r.live {
		t := countsTable(g.words().counters())
		for c := range t {
			for i := range t[c] {
				s[c][i] += t[c][i]
			}
		}
	}
	return s
}

func (r *goRegistry) add(class ProposalClass, result AdmissionResult, n uint64) {
	c, i := outcomeIndex(class, result)
	r.totals[c][i].Add(n)
}

func (r *goRegistry) families() []metrics.Family {
	if !r.used.Load() {
		return nil
	}
	sums := r.sums()
	f := metrics.Family{Name: familyName, Help: familyHelp, Type: metrics.Counter,
		Labels: []string{"class", "result"}}
	for c, class := range familyClasses {
		for i, result := range familyResults {
			f.Series = append(f.Series, metrics.Series{
				LabelValues: []string{string(class), string(result)},
				Value:       sums[c][i],
			})
		}
	}
	return []metrics.Family{f}
}

var globalGoRegistry = sync.OnceValue(func() *goRegistry { return new(goRegistry) })

// countersOf builds AdmissionCounters from a [class][result] table.
func countersOf(t *[2][4]uint64) AdmissionCounters {
	return AdmissionCounters{
		ForegroundOK: t[0][0], ForegroundBusy: t[0][1], ForegroundThrottled: t[0][2], ForegroundNotLeader: t[0][3],
		BackgroundOK: t[1][0], BackgroundBusy: t[1][1], BackgroundThrottled: t[1][2], BackgroundNotLeader: t[1][3],
	}
}
