package coord

// A heartbeat's and a compare-and-delete's Decision.State, in both builds and
// in the mutex ledger: the record's state after a win, or as the call found
// it (a refused Touch or Take names the PENDING state it found, never
// StateNone); a won Take leaves no record.

import "testing"

// stateLedger is the subset of a ledger these checks call.
type stateLedger interface {
	Insert(key []byte, id, runner, deadline, now uint64) (Decision, error)
	Claim(key []byte, placeholder, requestID, runner, now uint64) (Decision, error)
	Finalize(key []byte, outcome Outcome, payload, now uint64) (Decision, error)
	Take(key []byte, expectedID uint64) (Decision, error)
	Touch(key []byte, runner, now uint64) (Decision, error)
}

func checkDecisionStates(t *testing.T, name string, l stateLedger) {
	t.Helper()
	step := func(what string, got Decision, err error, want Decision) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %s: %v", name, what, err)
		}
		if got != want {
			t.Errorf("%s: %s = %v, want %v", name, what, got, want)
		}
	}
	placed := func(r Result) Decision { return Decision{Result: r, State: StatePlaced} }
	claimed := func(r Result) Decision { return Decision{Result: r, State: StateClaimed} }
	failed := Decision{Result: ResultDuplicate, State: StateFinalized, Outcome: OutcomeFailed}
	none := func(r Result) Decision { return Decision{Result: r, State: StateNone} }

	d, err := l.Insert([]byte("job"), 5, 7, DeadlineNever, 0)
	step("insert job", d, err, placed(ResultWon))
	d, err = l.Touch([]byte("job"), 7, 1)
	step("touch job by its runner", d, err, placed(ResultWon))
	d, err = l.Touch([]byte("job"), 8, 2)
	step("touch job by another runner", d, err, placed(ResultMismatch))
	d, err = l.Take([]byte("job"), 6)
	step("take job with another id", d, err, placed(ResultMismatch))

	d, err = l.Insert([]byte("batch"), 900, 0, DeadlineNever, 0)
	step("insert batch", d, err, placed(ResultWon))
	d, err = l.Claim([]byte("batch"), 900, 42, 9, 1)
	step("claim batch", d, err, claimed(ResultWon))
	d, err = l.Touch([]byte("batch"), 9, 2)
	step("touch batch by the claimer", d, err, claimed(ResultWon))
	d, err = l.Touch([]byte("batch"), 7, 2)
	step("touch batch by another runner", d, err, claimed(ResultMismatch))
	d, err = l.Take([]byte("batch"), 900)
	step("take batch with the placeholder", d, err, claimed(ResultMismatch))
	d, err = l.Take([]byte("batch"), 42)
	step("take batch", d, err, none(ResultWon))
	d, err = l.Take([]byte("batch"), 42)
	step("take batch again", d, err, none(ResultNotFound))

	if d, err = l.Finalize([]byte("job"), OutcomeFailed, 0, 3); err != nil || !d.Won() {
		t.Fatalf("%s: finalize job = %v, %v", name, d, err)
	}
	d, err = l.Touch([]byte("job"), 7, 4)
	step("touch a finalized job", d, err, failed)
	d, err = l.Take([]byte("job"), 5)
	step("take a finalized job", d, err, failed)
	d, err = l.Touch([]byte("nope"), 7, 4)
	step("touch no record", d, err, none(ResultNotFound))
}

func TestLedgerDecisionStates(t *testing.T) {
	l, err := NewLedger(LedgerConfig{Kind: KindPending, Capacity: 8, Retention: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkDecisionStates(t, "Ledger", l)

	m, err := newMutexLedger(LedgerConfig{Kind: KindPending, Capacity: 8, Retention: 100}, new(goRegistry))
	if err != nil {
		t.Fatal(err)
	}
	checkDecisionStates(t, "mutexLedger", m)
}
