package coordpg

// The plans the pooled connection runs the statements with. A replica that
// starts first meets an empty table; a statement run there often enough
// must not keep a plan made for that empty table once the ledger is large
// (a point decision scanning a partial index, or the primary key, with only
// the ledger's name, and filtering every record of the ledger). Checked on
// the plans themselves, never by timing.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/wukongim/wkcore/go/coord"
)

// planRounds is how many times each point decision runs while the table is
// (nearly) empty: PostgreSQL considers its generic plan from the sixth run.
const planRounds = 8

// planRecords is how many records are placed in the ledger afterwards.
const planRecords = 20000

// freshDatabase returns a pool configuration of a database of its own (an
// empty wkcoord_record, as a replica that starts first finds it), dropped
// at the end; where the server refuses CREATE DATABASE, the shared one.
func freshDatabase(t *testing.T) *pgxpool.Config {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testDSN)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, testDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := strings.ReplaceAll(unique("wkcoord_plans"), "-", "_")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Logf("no database of its own (%v): the shared one", err)
		return cfg
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, testDSN)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	cfg.ConnConfig.Database = name
	return cfg
}

func planKey(kind string, i int) []byte { return []byte(fmt.Sprintf("%s-%06d", kind, i)) }

// planNode is one node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Cond     string     `json:"Index Cond"`
	Plans    []planNode `json:"Plans"`
}

// recordAccess lists how each node of p reads wkcoord_record: "Seq Scan",
// or the index it scans.
func recordAccess(p planNode, out *[]string) {
	switch {
	case p.Relation == "wkcoord_record" && p.NodeType == "Seq Scan":
		*out = append(*out, "Seq Scan")
	case strings.HasPrefix(p.Index, "wkcoord_record"):
		*out = append(*out, p.Index+" ("+p.Cond+")")
	}
	for _, c := range p.Plans {
		recordAccess(c, out)
	}
}

func TestPlansFollowTheTable(t *testing.T) {
	needPG(t)
	cfg := freshDatabase(t)
	cfg.MaxConns = 1 // the one connection every statement runs on
	cfg.MinConns = 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := OpenConfig(ctx, cfg, Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	l, err := s.Ledger(unique("plans"), coord.LedgerConfig{Kind: coord.KindPending, Capacity: coord.LedgerCapacityMax, Retention: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Anchors(unique("plans"), 64)
	if err != nil {
		t.Fatal(err)
	}
	flips, _ := s.Flips(unique("plans"), 0)
	counters, _ := s.Counters(unique("plans"))
	triggers, _ := s.Triggers(unique("plans"))
	windows, _ := s.Windows(unique("plans"))
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	const runner, placeholder = 77, 5
	// Every point decision, and each batch, planRounds times while the
	// table is (nearly) empty.
	for i := 0; i < planRounds; i++ {
		now := uint64(10 + i)
		_, err := l.Insert(ctx, planKey("ins", i), 9, runner, coord.DeadlineNever, now)
		must("insert", err)
		out := make([]coord.Decision, 3)
		_, err = l.Place(ctx, [][]byte{planKey("a", i), planKey("b", i), planKey("c", i)}, placeholder, coord.DeadlineNever, now, out)
		must("place", err)
		_, err = l.Claim(ctx, planKey("a", i), placeholder, 1000+uint64(i), runner, now)
		must("claim", err)
		_, err = l.Touch(ctx, planKey("a", i), runner, now)
		must("touch", err)
		_, err = l.Take(ctx, planKey("ins", i), 9)
		must("take", err)
		_, err = l.Finalize(ctx, planKey("a", i), coord.OutcomeSucceeded, 1, now)
		must("finalize", err)
		fo := make([]coord.Decision, 2)
		_, err = l.FinalizeBatch(ctx, [][]byte{planKey("b", i), planKey("c", i)}, nil, coord.OutcomeFailed, now, fo)
		must("finalize batch", err)
		_, _, err = l.Get(ctx, planKey("a", i))
		must("get", err)
		_, err = l.Reconcile(ctx, now, 10)
		must("reconcile", err)
		_, err = l.FinalizeOwn(ctx, runner+1, coord.OutcomeFailed, now, 10)
		must("finalize own", err)
		_, err = l.SweepOrphans(ctx, now, 100, 10)
		must("sweep orphans", err)
		_, err = l.Reclaim(ctx, 0, 10)
		must("reclaim", err)
		id := uint64(i)
		must("anchor insert", a.Insert(ctx, id, coord.TimeUnset))
		_, err = a.TryFire(ctx, id, now, 5)
		must("try fire", err)
		_, err = a.Advance(ctx, id, now, now+1)
		must("advance", err)
		_, err = a.AnchorUnset(ctx, id, now)
		must("anchor unset", err)
		_, err = a.Get(ctx, id)
		must("anchor get", err)
		must("anchor remove", a.Remove(ctx, id))
		k := planKey("w", i)
		_, err = flips.Flip(ctx, k, 0, 1)
		must("flip", err)
		_, err = counters.Increment(ctx, k)
		must("increment", err)
		run, err := triggers.Trigger(ctx, k)
		must("trigger", err)
		_, err = triggers.Finish(ctx, k, run)
		must("finish", err)
		_, err = windows.Increment(ctx, k, now, 100)
		must("window", err)
	}
	// The ledger grows: planRecords records placed, a full batch at a time.
	batch := make([][]byte, 0, 1000)
	out := make([]coord.Decision, 1000)
	for i := 0; i < planRecords; i++ {
		batch = append(batch, planKey("big", i))
		if len(batch) == cap(batch) {
			n, err := l.Place(ctx, batch, placeholder, coord.DeadlineNever, 100, out)
			if err != nil || n != len(batch) {
				t.Fatalf("place %d: %d %v", i, n, err)
			}
			batch = batch[:0]
		}
	}

	// No statement with parameters ran with a generic plan: each run was
	// planned with its own values and the table as it is.
	pc, err := s.PlanCache(ctx)
	must("plan cache", err)
	seen := map[string]bool{}
	for _, p := range pc.Statements {
		seen[p.Name] = true
		if p.Params > 0 && p.GenericPlans != 0 {
			t.Errorf("%s ran %d times with a generic plan (%d custom; plan_cache_mode %s)", p.Name, p.GenericPlans, p.CustomPlans, pc.Mode)
		}
	}
	for _, n := range []string{"ledger_insert", "ledger_place", "ledger_claim", "ledger_touch", "ledger_take", "ledger_finalize",
		"ledger_finalize_batch", "ledger_get", "anchor_try_fire", "flip", "trigger_start", "window_increment"} {
		if !seen[n] {
			t.Errorf("%s is not prepared on the pool's connection", n)
		}
	}

	// The point decisions, planned now, read the ledger's records through
	// the primary key with both its columns: no partial index, no scan.
	lit := func(b []byte) string { return "decode('" + hex.EncodeToString(b) + "', 'hex')" }
	name := "'" + l.name + "'"
	big := planKey("big", planRecords/2)
	for _, e := range []struct{ stmt, args string }{
		{"ledger_claim", fmt.Sprintf("%s, %s, %d, 1, %d, 200, 1", name, lit(big), enc(placeholder), enc(runner))},
		{"ledger_take", fmt.Sprintf("%s, %s, %d, 2", name, lit(big), enc(placeholder))},
		{"ledger_insert", fmt.Sprintf("%s, %s, 9, %d, NULL, 200, 3", name, lit(big), enc(runner))},
		{"ledger_finalize", fmt.Sprintf("%s, %s, 1, 1, 200, 4", name, lit(big))},
		{"ledger_get", fmt.Sprintf("%s, %s", name, lit(big))},
	} {
		var js []byte
		err := s.pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
			return c.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE "+e.stmt+"("+e.args+")",
				pgx.QueryExecModeSimpleProtocol).Scan(&js)
		})
		must("explain "+e.stmt, err)
		var plans []struct {
			Plan planNode `json:"Plan"`
		}
		if err := json.Unmarshal(js, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("explain %s: %v %s", e.stmt, err, js)
		}
		var access []string
		recordAccess(plans[0].Plan, &access)
		if len(access) == 0 {
			t.Errorf("%s reads no record: %s", e.stmt, js)
		}
		for _, acc := range access {
			if !strings.HasPrefix(acc, "wkcoord_record_pkey (") || !strings.Contains(acc, "key =") {
				t.Errorf("%s reads the ledger through %s", e.stmt, acc)
			}
		}
	}
}

// The store sets plan_cache_mode on its connections and leaves the host's
// other parameters (its options) as the host set them.
func TestPlanCacheModeKeepsTheHostsOptions(t *testing.T) {
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(testDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["options"] = "-c statement_timeout=123s"
	cfg.ConnConfig.RuntimeParams["lock_timeout"] = "45s"
	cfg.MaxConns = 1
	s, err := OpenConfig(ctx, cfg, Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	var mode, stmt, lock string
	err = s.pool.QueryRow(ctx, "SELECT current_setting('plan_cache_mode'), current_setting('statement_timeout'), "+
		"current_setting('lock_timeout')").Scan(&mode, &stmt, &lock)
	if err != nil {
		t.Fatal(err)
	}
	if mode != "force_custom_plan" || stmt != "123s" || lock != "45s" {
		t.Fatalf("plan_cache_mode %q, statement_timeout %q, lock_timeout %q", mode, stmt, lock)
	}
	pc, err := s.PlanCache(ctx)
	if err != nil || pc.Mode != "force_custom_plan" {
		t.Fatalf("plan cache: %+v %v", pc, err)
	}
}
