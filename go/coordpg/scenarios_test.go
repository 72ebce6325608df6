package coordpg

// Replays testdata/coord/scenarios.json (format: testdata/coord/README.md)
// against the PostgreSQL backend through go/coord's contract. go/coord's own
// replay checks the file strictly and runs every scenario in memory; this one
// runs every scenario whose memory_only is null (the rest depend on the
// in-memory slab: its slot order, its capacity) and expects the same
// decisions. Pages are compared on "changed" (the records a scan changed);
// "scanned" and "wrapped" describe the in-memory slot walk.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/wukongim/wkcore/go/coord"
)

type scenarioFile struct {
	Scenarios []struct {
		Name       string            `json:"name"`
		Subject    string            `json:"subject"`
		MemoryOnly *string           `json:"memory_only"`
		Config     map[string]any    `json:"config"`
		Steps      []json.RawMessage `json:"steps"`
	} `json:"scenarios"`
}

func loadScenarios(t *testing.T) scenarioFile {
	t.Helper()
	data, err := os.ReadFile("../../testdata/coord/scenarios.json")
	if err != nil {
		t.Fatal(err)
	}
	var f scenarioFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Scenarios) < 17 {
		t.Fatalf("only %d scenarios", len(f.Scenarios))
	}
	return f
}

var resultNames = []string{"won", "lost", "duplicate", "not_found", "full", "mismatch"}
var stateNames = []string{"none", "placed", "claimed", "finalized"}

func outcomeJSON(o coord.Outcome) any {
	switch o {
	case coord.OutcomeSucceeded:
		return "succeeded"
	case coord.OutcomeFailed:
		return "failed"
	case coord.OutcomeTimedOut:
		return "timed_out"
	case coord.OutcomeOrphaned:
		return "orphaned"
	}
	return float64(o)
}

func parseOutcome(v any) coord.Outcome {
	switch v {
	case "succeeded":
		return coord.OutcomeSucceeded
	case "failed":
		return coord.OutcomeFailed
	case "timed_out":
		return coord.OutcomeTimedOut
	case "orphaned":
		return coord.OutcomeOrphaned
	}
	return coord.Outcome(v.(float64))
}

func decisionJSON(d coord.Decision) any {
	m := map[string]any{"result": resultNames[d.Result], "state": stateNames[d.State], "outcome": nil}
	if d.State == coord.StateFinalized {
		m["outcome"] = outcomeJSON(d.Outcome)
	}
	return m
}

func decisionsJSON(ds []coord.Decision) any {
	out := make([]any, len(ds))
	for i, d := range ds {
		out[i] = decisionJSON(d)
	}
	return out
}

func timeJSON(t uint64) any {
	if t == coord.TimeUnset {
		return nil
	}
	return float64(t)
}

func recordJSON(r coord.Record, ok bool) any {
	if !ok {
		return nil
	}
	m := map[string]any{"state": stateNames[r.State], "outcome": nil, "id": float64(r.ID), "runner": float64(r.Runner),
		"deadline": timeJSON(r.Deadline), "refreshed_at": float64(r.RefreshedAt), "finalized_at": timeJSON(r.FinalizedAt),
		"payload": float64(r.Payload), "duplicates": float64(r.Duplicates), "last_duplicate_payload": float64(r.LastDuplicatePayload)}
	if r.State == coord.StateFinalized {
		m["outcome"] = outcomeJSON(r.Outcome)
	}
	return m
}

func countsJSON(c coord.Counts) any {
	return map[string]any{"claims_won": float64(c.ClaimsWon), "claims_lost": float64(c.ClaimsLost),
		"finalizations_won": float64(c.FinalizationsWon), "finalizations_duplicate": float64(c.FinalizationsDuplicate),
		"reconciled_timeouts": float64(c.ReconciledTimeouts), "rejected_full": float64(c.RejectedFull),
		"reclaimed": float64(c.Reclaimed)}
}

func errJSON(err error) any {
	switch {
	case err == nil:
		return "ok"
	case err == coord.ErrNotFound:
		return "not_found"
	case err == coord.ErrAlreadyExists:
		return "already_exists"
	case err == coord.ErrFull:
		return "full"
	}
	return "error: " + err.Error()
}

func u(v any) uint64 {
	if v == nil {
		return coord.TimeUnset
	}
	return uint64(v.(float64))
}

func keyOf(v any) []byte { return []byte(v.(string)) }

func keysOf(v any) [][]byte {
	var out [][]byte
	for _, k := range v.([]any) {
		out = append(out, keyOf(k))
	}
	return out
}

func handoffOf(v any) coord.HandoffKey {
	m := v.(map[string]any)
	return coord.HandoffKey{ChannelID: m["channel_id"].(string), ChannelType: uint8(u(m["channel_type"])),
		MessageID: u(m["message_id"]), TargetNodeID: u(m["target_node_id"]), TagKey: m["tag_key"].(string),
		TagVersion: u(m["tag_version"])}
}

// pageChanged keeps the part of a page both backends share.
func pageChanged(v any) any { return map[string]any{"changed": v.(map[string]any)["changed"]} }

func pageJSON(p coord.Page) any { return map[string]any{"changed": float64(p.Changed)} }

// stepResult runs one step and returns what it gave and what the file
// expects, in the same JSON shapes.
func stepResult(ctx context.Context, subject string, l coord.LedgerStore, h coord.HandoffStore, a coord.AnchorStore, s map[string]any) (got, want any) {
	want = s["expect"]
	op := s["op"].(string)
	fail := func(err error) any { return "error: " + err.Error() }
	switch subject {
	case "ledger", "handoff":
		switch op {
		case "insert":
			d, err := l.Insert(ctx, keyOf(s["key"]), u(s["id"]), u(s["runner"]), u(s["deadline"]), u(s["now"]))
			if err != nil {
				return fail(err), want
			}
			return decisionJSON(d), want
		case "place":
			keys := keysOf(s["keys"])
			out := make([]coord.Decision, len(keys))
			n, err := l.Place(ctx, keys, u(s["placeholder"]), u(s["deadline"]), u(s["now"]), out)
			if err != nil {
				return fail(err), want
			}
			return []any{decisionsJSON(out), float64(n)}, []any{want, s["placed"]}
		case "claim":
			if subject == "handoff" {
				d, err := h.Claim(ctx, handoffOf(s["key"]), u(s["deadline"]), u(s["now"]))
				if err != nil {
					return fail(err), want
				}
				return decisionJSON(d), want
			}
			d, err := l.Claim(ctx, keyOf(s["key"]), u(s["placeholder"]), u(s["request_id"]), u(s["runner"]), u(s["now"]))
			if err != nil {
				return fail(err), want
			}
			return decisionJSON(d), want
		case "claim_batch":
			var keys []coord.HandoffKey
			for _, k := range s["keys"].([]any) {
				keys = append(keys, handoffOf(k))
			}
			out := make([]coord.Decision, len(keys))
			n, err := h.ClaimBatch(ctx, keys, u(s["deadline"]), u(s["now"]), out)
			if err != nil {
				return fail(err), want
			}
			return []any{decisionsJSON(out), float64(n)}, []any{want, s["won"]}
		case "complete":
			d, err := h.Complete(ctx, handoffOf(s["key"]), parseOutcome(s["outcome"]), u(s["now"]))
			if err != nil {
				return fail(err), want
			}
			return decisionJSON(d), want
		case "finalize":
			d, err := l.Finalize(ctx, keyOf(s["key"]), parseOutcome(s["outcome"]), u(s["payload"]), u(s["now"]))
			if err != nil {
				return fail(err), want
			}
			return decisionJSON(d), want
		case "finalize_batch":
			keys := keysOf(s["keys"])
			var payloads []uint64
			for _, p := range s["payloads"].([]any) {
				payloads = append(payloads, u(p))
			}
			out := make([]coord.Decision, len(keys))
			n, err := l.FinalizeBatch(ctx, keys, payloads, parseOutcome(s["outcome"]), u(s["now"]), out)
			if err != nil {
				return fail(err), want
			}
			return []any{decisionsJSON(out), float64(n)}, []any{want, s["won"]}
		case "take":
			d, err := l.Take(ctx, keyOf(s["key"]), u(s["id"]))
			if err != nil {
				return fail(err), want
			}
			return decisionJSON(d), want
		case "touch":
			d, err := l.Touch(ctx, keyOf(s["key"]), u(s["runner"]), u(s["now"]))
			if err != nil {
				return fail(err), want
			}
			return decisionJSON(d), want
		case "reconcile", "reclaim", "finalize_own", "sweep_orphans":
			var p coord.Page
			var err error
			limit := int(u(s["limit"]))
			switch {
			case op == "reconcile" && subject == "handoff":
				p, err = h.Reconcile(ctx, u(s["now"]), limit)
			case op == "reclaim" && subject == "handoff":
				p, err = h.Reclaim(ctx, u(s["now"]), limit)
			case op == "reconcile":
				p, err = l.Reconcile(ctx, u(s["now"]), limit)
			case op == "reclaim":
				p, err = l.Reclaim(ctx, u(s["now"]), limit)
			case op == "finalize_own":
				p, err = l.FinalizeOwn(ctx, u(s["runner"]), parseOutcome(s["outcome"]), u(s["now"]), limit)
			default:
				p, err = l.SweepOrphans(ctx, u(s["now"]), u(s["quiet"]), limit)
			}
			if err != nil {
				return fail(err), want
			}
			return pageJSON(p), pageChanged(want)
		case "get":
			var r coord.Record
			var ok bool
			var err error
			if subject == "handoff" {
				r, ok, err = h.Get(ctx, handoffOf(s["key"]))
			} else {
				r, ok, err = l.Get(ctx, keyOf(s["key"]))
			}
			if err != nil {
				return fail(err), want
			}
			return recordJSON(r, ok), want
		case "len":
			var n int
			var err error
			if subject == "handoff" {
				n, err = h.Len(ctx)
			} else {
				n, err = l.Len(ctx)
			}
			if err != nil {
				return fail(err), want
			}
			return float64(n), want
		case "counts":
			var c coord.Counts
			if subject == "handoff" {
				c, _ = h.Counts()
			} else {
				c, _ = l.Counts()
			}
			return countsJSON(c), want
		}
	case "anchors":
		switch op {
		case "insert":
			return errJSON(a.Insert(ctx, u(s["id"]), u(s["value"]))), want
		case "remove":
			return errJSON(a.Remove(ctx, u(s["id"]))), want
		case "try_fire":
			f, err := a.TryFire(ctx, u(s["id"]), u(s["now"]), u(s["period"]))
			if err != nil {
				return errJSON(err), want
			}
			return map[string]any{"kind": []string{"fired", "not_due", "lost", "anchored_first_seen"}[f.Kind], "value": float64(f.Value)}, want
		case "advance":
			ok, err := a.Advance(ctx, u(s["id"]), u(s["expected"]), u(s["next"]))
			if err != nil {
				return errJSON(err), want
			}
			return ok, want
		case "anchor_unset":
			ok, err := a.AnchorUnset(ctx, u(s["id"]), u(s["now"]))
			if err != nil {
				return errJSON(err), want
			}
			return ok, want
		case "get":
			v, err := a.Get(ctx, u(s["id"]))
			if err != nil {
				return errJSON(err), want
			}
			return timeJSON(v), want
		}
	}
	return "unknown op " + op, want
}

// replay runs every portable scenario on the stores made by mk.
func replay(t *testing.T, backend string, mk func(subject string, cfg map[string]any) (coord.LedgerStore, coord.HandoffStore, coord.AnchorStore)) {
	f := loadScenarios(t)
	ctx := context.Background()
	ran := 0
	for _, sc := range f.Scenarios {
		if sc.MemoryOnly != nil {
			continue
		}
		ran++
		l, h, a := mk(sc.Subject, sc.Config)
		for i, raw := range sc.Steps {
			var s map[string]any
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			got, want := stepResult(ctx, sc.Subject, l, h, a, s)
			if !reflect.DeepEqual(normal(got), normal(want)) {
				t.Errorf("%s: scenario %s step %d %s: got %v, want %v", backend, sc.Name, i, raw, got, want)
				break
			}
		}
	}
	if ran < 10 {
		t.Fatalf("only %d portable scenarios", ran)
	}
}

// normal round-trips v through JSON, so that both sides have JSON's types.
func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func capacity(cfg map[string]any) int { return int(cfg["capacity"].(float64)) }

func TestScenariosPostgres(t *testing.T) {
	s := openStore(t, Options{})
	replay(t, "postgres", func(subject string, cfg map[string]any) (coord.LedgerStore, coord.HandoffStore, coord.AnchorStore) {
		switch subject {
		case "ledger":
			kind := coord.KindClaim
			if cfg["kind"] == "pending" {
				kind = coord.KindPending
			}
			l, err := s.Ledger(unique("sc"), coord.LedgerConfig{Kind: kind, Capacity: capacity(cfg), Retention: u(cfg["retention"])})
			if err != nil {
				t.Fatal(err)
			}
			return l, nil, nil
		case "handoff":
			h, err := s.Handoffs(unique("sc"), coord.HandoffConfig{Capacity: capacity(cfg), Retention: u(cfg["retention"])})
			if err != nil {
				t.Fatal(err)
			}
			return nil, h, nil
		}
		a, err := s.Anchors(unique("sc"), capacity(cfg))
		if err != nil {
			t.Fatal(err)
		}
		return nil, nil, a
	})
}

// TestScenariosMemoryThroughContract replays the same portable scenarios on
// the in-memory types through the adapters: the harness above is checked
// against the backend the file was written for.
func TestScenariosMemoryThroughContract(t *testing.T) {
	replay(t, "memory", func(subject string, cfg map[string]any) (coord.LedgerStore, coord.HandoffStore, coord.AnchorStore) {
		switch subject {
		case "ledger":
			kind := coord.KindClaim
			if cfg["kind"] == "pending" {
				kind = coord.KindPending
			}
			l, err := coord.NewLedger(coord.LedgerConfig{Kind: kind, Capacity: capacity(cfg), Retention: u(cfg["retention"]), Metrics: registry(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			return coord.MemoryLedger(l), nil, nil
		case "handoff":
			h, err := coord.NewHandoffLedger(coord.HandoffConfig{Capacity: capacity(cfg), Retention: u(cfg["retention"]), Metrics: registry(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = h.Close() })
			return nil, coord.MemoryHandoffs(h), nil
		}
		a, err := coord.NewAnchorTable(capacity(cfg))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		return nil, nil, coord.MemoryAnchors(a)
	})
}

func registry(t *testing.T) *coord.MetricsRegistry {
	r, err := coord.NewMetricsRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
