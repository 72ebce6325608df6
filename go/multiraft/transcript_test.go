package multiraft

// One script of the public API, written as a transcript and compared with
// testdata/go/multiraft.txt: both builds must write the same bytes
// (WK_UPDATE_TRANSCRIPT=1 rewrites the file).

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func transcriptOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func TestTranscript(t *testing.T) {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	obs := &recorder{}
	q, err := NewControlQueue[int](5, Options{Limits: Limits{MaxQueuedControls: 4, MaxQueuedBackgroundControls: 2},
		Observer: obs, DiscardMetrics: true})
	line("NewControlQueue: %s", transcriptOutcome(err))
	_, err = NewControlQueue[int](5, Options{Limits: Limits{MaxQueuedControls: -1}})
	line("NewControlQueue(-1): %s", transcriptOutcome(err))
	l, _ := q.Limits()
	line("Limits: %+v", l)
	state := func() {
		s, err := q.State()
		s.MemoryBytes = 0
		line("  state %+v %s", s, transcriptOutcome(err))
	}
	line("Admit follower: %s", transcriptOutcome(q.Admit(ControlPropose, "", 1)))
	line("Admit transfer on follower: %s", transcriptOutcome(q.Admit(ControlTransferLeader, "", 2)))
	_, err = q.AdmitConfigChange(3)
	line("AdmitConfigChange follower: %s", transcriptOutcome(err))
	line("SetLeader: %s", transcriptOutcome(q.SetLeader()))
	for i, class := range []ProposalClass{ProposalClassBackground, ProposalClassBackground, ProposalClassBackground, "", ""} {
		line("Admit %q %d: %s", class, 10+i, transcriptOutcome(q.Admit(ControlPropose, class, 10+i)))
	}
	state()
	out := make([]Control[int], 8)
	n, err := q.DrainInto(out)
	line("DrainInto: %d %s", n, transcriptOutcome(err))
	for _, c := range out[:n] {
		line("  %s %s %d pending=%v", c.Kind, c.Class, c.Value, c.ConfigChange.Pending())
	}
	cc, err := q.AdmitConfigChange(20)
	line("AdmitConfigChange: %s", transcriptOutcome(err))
	_, err = q.AdmitConfigChange(21)
	line("AdmitConfigChange again: %s", transcriptOutcome(err))
	nb, err := q.AdmitBatch(ControlPropose, "", []int{30, 31, 32, 33})
	line("AdmitBatch 4: %d %s", nb, transcriptOutcome(err))
	line("Len: %d", q.Len())
	visited, _ := q.Visit(func(c Control[int]) bool { line("  visit %s %d", c.Kind, c.Value); return true })
	line("Visit: %d", visited)
	line("Resolve: %s; again: %s", transcriptOutcome(cc.Resolve()), transcriptOutcome(cc.Resolve()))
	n, _ = q.Drain(10, func(c Control[int]) { line("  drain %s %d", c.Kind, c.Value) })
	line("Drain: %d", n)
	line("Demote: %s; Admit: %s", transcriptOutcome(q.Demote()), transcriptOutcome(q.Admit(ControlPropose, "", 40)))
	_ = q.SetLeader()
	fatal := errors.New("fatal: disk")
	first, err := q.Fail(fatal)
	line("Fail: %v %s; FailErr %v; Admit: %s", first, transcriptOutcome(err), q.FailErr(),
		transcriptOutcome(q.Admit(ControlPropose, "", 41)))
	line("CloseSlot: %s; Closed %v; Admit: %s", transcriptOutcome(q.CloseSlot()), q.Closed(),
		transcriptOutcome(q.Admit(ControlPropose, "", 42)))
	state()
	c, err := q.Counters()
	line("Counters: %+v %s", c, transcriptOutcome(err))
	line("Observer: %q", obs.results)
	line("Close: %s; again: %s", transcriptOutcome(q.Close()), transcriptOutcome(q.Close()))
	line("Admit after Close: %s", transcriptOutcome(q.Admit(ControlPropose, "", 43)))
	var zero ControlQueue[int]
	zl, err := zero.Limits()
	line("zero queue: %+v %s", zl, transcriptOutcome(err))
	_ = zero.Close()

	got := b.String()
	path := "../../testdata/go/multiraft.txt"
	if os.Getenv("WK_UPDATE_TRANSCRIPT") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s build: transcript line %d:\n got  %q\n want %q", Implementation, i+1, g, w)
		}
	}
}
