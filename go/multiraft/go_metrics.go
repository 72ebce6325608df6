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
type goRegistry struct {
	used   atomic.Bool
	totals [2][4]atomic.Uint64
}

func (r *goRegistry) add(class ProposalClass, result AdmissionResult, n uint64) {
	c, i := outcomeIndex(class, result)
	r.totals[c][i].Add(n)
}

func (r *goRegistry) families() []metrics.Family {
	if !r.used.Load() {
		return nil
	}
	f := metrics.Family{Name: familyName, Help: familyHelp, Type: metrics.Counter,
		Labels: []string{"class", "result"}}
	for c, class := range familyClasses {
		for i, result := range familyResults {
			f.Series = append(f.Series, metrics.Series{
				LabelValues: []string{string(class), string(result)},
				Value:       r.totals[c][i].Load(),
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
