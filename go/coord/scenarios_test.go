package coord

// Replays testdata/coord/scenarios.json (format: testdata/coord/README.md)
// against the build's types and the mutex implementation. The file is
// checked strictly before anything runs: an unknown, missing or duplicate
// field, an unknown op, subject, result, state, outcome or fire kind, a
// number that is not a non-negative integer below 2^53, or a value of the
// wrong type is an error of the file, and the test fails. Each scenario runs
// on a fresh ledger, hand-off ledger or anchor table; a mismatch names the
// implementation, the scenario, the step's index and the step's JSON.
//
// Where Go's API differs from the C ABI: a ledger's get of no record is
// (Record{}, false, nil), the anchor table's statuses are errors
// (ErrAlreadyExists, ErrFull, ErrNotFound), and a null deadline is
// DeadlineNever.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
)

const (
	scenarioPath = "../../testdata/coord/scenarios.json"
	// minScenarios is how many scenarios the file held when this replay was
	// written: fewer means a truncated file.
	minScenarios = 17
	// maxNumber: numbers are below 2^53, so every JSON parser reads them
	// exactly.
	maxNumber = 1<<53 - 1
)

type scenario struct {
	name    string
	subject string
	// config
	kind      Kind
	capacity  int
	retention uint64
	steps     []step
}

// step is one parsed step; which fields are set depends on the op.
type step struct {
	raw json.RawMessage
	op  string

	key   []byte
	keys  [][]byte
	hkey  HandoffKey
	hkeys []HandoffKey

	id, runner, deadline, now       uint64
	placeholder, requestID, payload uint64
	quiet, period, expected, next   uint64
	value                           uint64
	payloads                        []uint64
	outcome                         Outcome
	limit                           int
	decision                        Decision
	decisions                       []Decision
	count                           int // placed, won, len
	page                            Page
	record                          *Record // nil: no record
	counts                          Counts
	anchorExpect                    string // the anchors' expectation, canonical (see anchorResult)
}

// checkNoDuplicateKeys walks the whole document: encoding/json keeps the last
// of duplicate keys silently, the format forbids them.
func checkNoDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				key := k.(string)
				if seen[key] {
					return fmt.Errorf("%s: duplicate field %q", path, key)
				}
				seen[key] = true
				if err := walk(path + "." + key); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	if err := walk("$"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the top-level object")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonObject decodes raw as an object with exactly the fields want.
func jsonObject(raw json.RawMessage, want ...string) (map[string]json.RawMessage, error) {
	if raw == nil || isNull(raw) {
		return nil, errors.New("null where an object is required")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, f := range want {
		if _, ok := m[f]; !ok {
			return nil, fmt.Errorf("missing field %q", f)
		}
	}
	for f := range m {
		known := false
		for _, w := range want {
			known = known || f == w
		}
		if !known {
			return nil, fmt.Errorf("unknown field %q", f)
		}
	}
	return m, nil
}

// decodeValue decodes a non-null raw into v: encoding/json refuses negative,
// fractional and mistyped values.
func decodeValue(raw json.RawMessage, field string, v any) error {
	if raw == nil || isNull(raw) {
		return fmt.Errorf("%s: null", field)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func decodeUint(raw json.RawMessage, field string) (uint64, error) {
	var n uint64
	if err := decodeValue(raw, field, &n); err != nil {
		return 0, err
	}
	if n > maxNumber {
		return 0, fmt.Errorf("%s: %d is not below 2^53", field, n)
	}
	return n, nil
}

// decodeTime decodes a number, or null as the reserved value (DeadlineNever,
// TimeUnset).
func decodeTime(raw json.RawMessage, field string) (uint64, error) {
	if raw != nil && isNull(raw) {
		return TimeUnset, nil
	}
	return decodeUint(raw, field)
}

func decodeInt(raw json.RawMessage, field string) (int, error) {
	n, err := decodeUint(raw, field)
	return int(n), err
}

func decodeString(raw json.RawMessage, field string) (string, error) {
	var s string
	err := decodeValue(raw, field, &s)
	return s, err
}

func decodeName(raw json.RawMessage, field string, names []string) (int, error) {
	s, err := decodeString(raw, field)
	if err != nil {
		return 0, err
	}
	for i, n := range names {
		if n == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s: unknown name %q", field, s)
}

// decodeOutcome decodes an outcome: a name, or a host code 256..65535.
func decodeOutcome(raw json.RawMessage, field string) (Outcome, error) {
	if raw == nil || isNull(raw) {
		return 0, fmt.Errorf("%s: null", field)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "succeeded":
			return OutcomeSucceeded, nil
		case "failed":
			return OutcomeFailed, nil
		case "timed_out":
			return OutcomeTimedOut, nil
		case "orphaned":
			return OutcomeOrphaned, nil
		}
		return 0, fmt.Errorf("%s: unknown outcome %q", field, s)
	}
	n, err := decodeUint(raw, field)
	if err != nil {
		return 0, err
	}
	if n < uint64(HostOutcomeMin) || n > uint64(HostOutcomeMax) {
		return 0, fmt.Errorf("%s: host outcome %d outside 256..65535", field, n)
	}
	return Outcome(n), nil
}

// decodeStateOutcome decodes a state and its outcome: an outcome exactly
// when the state is finalized, else null.
func decodeStateOutcome(m map[string]json.RawMessage) (State, Outcome, error) {
	st, err := decodeName(m["state"], "state", stateNames[:])
	if err != nil {
		return 0, 0, err
	}
	state := State(st)
	if state != StateFinalized {
		if !isNull(m["outcome"]) {
			return 0, 0, fmt.Errorf("outcome of a %s record must be null", state)
		}
		return state, 0, nil
	}
	o, err := decodeOutcome(m["outcome"], "outcome")
	return state, o, err
}

func parseDecision(raw json.RawMessage) (Decision, error) {
	m, err := jsonObject(raw, "result", "state", "outcome")
	if err != nil {
		return Decision{}, err
	}
	r, err := decodeName(m["result"], "result", resultNames[:])
	if err != nil {
		return Decision{}, err
	}
	state, outcome, err := decodeStateOutcome(m)
	return Decision{Result: Result(r), State: state, Outcome: outcome}, err
}

func parseDecisions(raw json.RawMessage, n int) ([]Decision, error) {
	var items []json.RawMessage
	if err := decodeValue(raw, "expect", &items); err != nil {
		return nil, err
	}
	if len(items) != n {
		return nil, fmt.Errorf("expect: %d decisions for %d keys", len(items), n)
	}
	out := make([]Decision, n)
	for i, it := range items {
		d, err := parseDecision(it)
		if err != nil {
			return nil, fmt.Errorf("expect[%d]: %w", i, err)
		}
		out[i] = d
	}
	return out, nil
}

func parsePage(raw json.RawMessage) (Page, error) {
	m, err := jsonObject(raw, "scanned", "changed", "wrapped")
	if err != nil {
		return Page{}, err
	}
	var p Page
	if p.Scanned, err = decodeInt(m["scanned"], "scanned"); err != nil {
		return p, err
	}
	if p.Changed, err = decodeInt(m["changed"], "changed"); err != nil {
		return p, err
	}
	err = decodeValue(m["wrapped"], "wrapped", &p.Wrapped)
	return p, err
}

func parseRecord(raw json.RawMessage) (*Record, error) {
	if isNull(raw) {
		return nil, nil
	}
	m, err := jsonObject(raw, "state", "outcome", "id", "runner", "deadline", "refreshed_at", "finalized_at",
		"payload", "duplicates", "last_duplicate_payload")
	if err != nil {
		return nil, err
	}
	r := &Record{}
	if r.State, r.Outcome, err = decodeStateOutcome(m); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		p    *uint64
		null bool
	}{{"id", &r.ID, false}, {"runner", &r.Runner, false}, {"deadline", &r.Deadline, true},
		{"refreshed_at", &r.RefreshedAt, false}, {"finalized_at", &r.FinalizedAt, true},
		{"payload", &r.Payload, false}, {"duplicates", &r.Duplicates, false},
		{"last_duplicate_payload", &r.LastDuplicatePayload, false}} {
		if f.null {
			*f.p, err = decodeTime(m[f.name], f.name)
		} else {
			*f.p, err = decodeUint(m[f.name], f.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if (r.FinalizedAt == TimeUnset) != r.State.Pending() {
		return nil, fmt.Errorf("finalized_at must be null exactly while PENDING")
	}
	return r, nil
}

func parseCounts(raw json.RawMessage) (Counts, error) {
	m, err := jsonObject(raw, "claims_won", "claims_lost", "finalizations_won", "finalizations_duplicate",
		"reconciled_timeouts", "rejected_full", "reclaimed")
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	for _, f := range []struct {
		name string
		p    *uint64
	}{{"claims_won", &c.ClaimsWon}, {"claims_lost", &c.ClaimsLost}, {"finalizations_won", &c.FinalizationsWon},
		{"finalizations_duplicate", &c.FinalizationsDuplicate}, {"reconciled_timeouts", &c.ReconciledTimeouts},
		{"rejected_full", &c.RejectedFull}, {"reclaimed", &c.Reclaimed}} {
		if *f.p, err = decodeUint(m[f.name], f.name); err != nil {
			return c, err
		}
	}
	return c, nil
}

func parseKey(raw json.RawMessage) ([]byte, error) {
	s, err := decodeString(raw, "key")
	return []byte(s), err
}

func parseKeys(raw json.RawMessage) ([][]byte, error) {
	var ss []string
	if err := decodeValue(raw, "keys", &ss); err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, errors.New("keys: empty")
	}
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out, nil
}

func parseHandoffKey(raw json.RawMessage) (HandoffKey, error) {
	m, err := jsonObject(raw, "channel_id", "channel_type", "message_id", "target_node_id", "tag_key", "tag_version")
	if err != nil {
		return HandoffKey{}, err
	}
	var k HandoffKey
	if k.ChannelID, err = decodeString(m["channel_id"], "channel_id"); err != nil {
		return k, err
	}
	ct, err := decodeUint(m["channel_type"], "channel_type")
	if err != nil {
		return k, err
	}
	if ct > 255 {
		return k, fmt.Errorf("channel_type %d above 255", ct)
	}
	k.ChannelType = uint8(ct)
	if k.MessageID, err = decodeUint(m["message_id"], "message_id"); err != nil {
		return k, err
	}
	if k.TargetNodeID, err = decodeUint(m["target_node_id"], "target_node_id"); err != nil {
		return k, err
	}
	if k.TagKey, err = decodeString(m["tag_key"], "tag_key"); err != nil {
		return k, err
	}
	k.TagVersion, err = decodeUint(m["tag_version"], "tag_version")
	return k, err
}

func parseHandoffKeys(raw json.RawMessage) ([]HandoffKey, error) {
	var items []json.RawMessage
	if err := decodeValue(raw, "keys", &items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("keys: empty")
	}
	out := make([]HandoffKey, len(items))
	for i, it := range items {
		k, err := parseHandoffKey(it)
		if err != nil {
			return nil, fmt.Errorf("keys[%d]: %w", i, err)
		}
		out[i] = k
	}
	return out, nil
}

// stepFields lists each subject's ops and their fields (besides "op").
var stepFields = map[string]map[string][]string{
	"ledger": {
		"insert":         {"key", "id", "runner", "deadline", "now", "expect"},
		"place":          {"keys", "placeholder", "deadline", "now", "expect", "placed"},
		"claim":          {"key", "placeholder", "request_id", "runner", "now", "expect"},
		"finalize":       {"key", "outcome", "payload", "now", "expect"},
		"finalize_batch": {"keys", "payloads", "outcome", "now", "expect", "won"},
		"take":           {"key", "id", "expect"},
		"touch":          {"key", "runner", "now", "expect"},
		"reconcile":      {"now", "limit", "expect"},
		"reclaim":        {"now", "limit", "expect"},
		"finalize_own":   {"runner", "outcome", "now", "limit", "expect"},
		"sweep_orphans":  {"now", "quiet", "limit", "expect"},
		"get":            {"key", "expect"},
		"len":            {"expect"},
		"counts":         {"expect"},
	},
	"handoff": {
		"claim":       {"key", "deadline", "now", "expect"},
		"claim_batch": {"keys", "deadline", "now", "expect", "won"},
		"complete":    {"key", "outcome", "now", "expect"},
		"reconcile":   {"now", "limit", "expect"},
		"reclaim":     {"now", "limit", "expect"},
		"get":         {"key", "expect"},
		"len":         {"expect"},
		"counts":      {"expect"},
	},
	"anchors": {
		"insert":       {"id", "value", "expect"},
		"remove":       {"id", "expect"},
		"try_fire":     {"id", "now", "period", "expect"},
		"advance":      {"id", "expected", "next", "expect"},
		"anchor_unset": {"id", "now", "expect"},
		"get":          {"id", "expect"},
	},
}

// uintFields are the plain-number fields, decoded the same way for every op.
var uintFields = map[string]func(*step) *uint64{
	"id":          func(s *step) *uint64 { return &s.id },
	"runner":      func(s *step) *uint64 { return &s.runner },
	"now":         func(s *step) *uint64 { return &s.now },
	"placeholder": func(s *step) *uint64 { return &s.placeholder },
	"request_id":  func(s *step) *uint64 { return &s.requestID },
	"payload":     func(s *step) *uint64 { return &s.payload },
	"quiet":       func(s *step) *uint64 { return &s.quiet },
	"period":      func(s *step) *uint64 { return &s.period },
	"expected":    func(s *step) *uint64 { return &s.expected },
	"next":        func(s *step) *uint64 { return &s.next },
}

func parseStep(subject string, raw json.RawMessage) (step, error) {
	st := step{raw: raw}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(raw, &head); err != nil {
		return st, err
	}
	if head == nil {
		return st, errors.New("null step")
	}
	var err error
	if st.op, err = decodeString(head["op"], "op"); err != nil {
		return st, err
	}
	fields, ok := stepFields[subject][st.op]
	if !ok {
		return st, fmt.Errorf("unknown op %q of %s", st.op, subject)
	}
	m, err := jsonObject(raw, append([]string{"op"}, fields...)...)
	if err != nil {
		return st, err
	}
	for f, p := range uintFields {
		if raw, ok := m[f]; ok {
			if *p(&st), err = decodeUint(raw, f); err != nil {
				return st, err
			}
		}
	}
	if raw, ok := m["deadline"]; ok {
		if st.deadline, err = decodeTime(raw, "deadline"); err != nil {
			return st, err
		}
	}
	if raw, ok := m["outcome"]; ok {
		if st.outcome, err = decodeOutcome(raw, "outcome"); err != nil {
			return st, err
		}
	}
	if raw, ok := m["limit"]; ok {
		if st.limit, err = decodeInt(raw, "limit"); err != nil {
			return st, err
		}
	}
	if raw, ok := m["key"]; ok {
		if subject == "handoff" {
			st.hkey, err = parseHandoffKey(raw)
		} else {
			st.key, err = parseKey(raw)
		}
		if err != nil {
			return st, err
		}
	}
	nkeys := 0
	if raw, ok := m["keys"]; ok {
		if subject == "handoff" {
			st.hkeys, err = parseHandoffKeys(raw)
			nkeys = len(st.hkeys)
		} else {
			st.keys, err = parseKeys(raw)
			nkeys = len(st.keys)
		}
		if err != nil {
			return st, err
		}
	}
	if raw, ok := m["payloads"]; ok {
		var ps []json.RawMessage
		if err := decodeValue(raw, "payloads", &ps); err != nil {
			return st, err
		}
		if len(ps) != nkeys {
			return st, fmt.Errorf("payloads: %d for %d keys", len(ps), nkeys)
		}
		for i, p := range ps {
			v, err := decodeUint(p, fmt.Sprintf("payloads[%d]", i))
			if err != nil {
				return st, err
			}
			st.payloads = append(st.payloads, v)
		}
	}
	for _, f := range []string{"placed", "won"} {
		if raw, ok := m[f]; ok {
			if st.count, err = decodeInt(raw, f); err != nil {
				return st, err
			}
			if st.count > nkeys {
				return st, fmt.Errorf("%s: %d of %d keys", f, st.count, nkeys)
			}
		}
	}
	expect := m["expect"]
	if subject == "anchors" {
		return st, parseAnchorStep(&st, m)
	}
	switch st.op {
	case "insert", "claim", "finalize", "take", "touch", "complete":
		st.decision, err = parseDecision(expect)
	case "place", "finalize_batch", "claim_batch":
		st.decisions, err = parseDecisions(expect, nkeys)
	case "reconcile", "reclaim", "finalize_own", "sweep_orphans":
		st.page, err = parsePage(expect)
	case "get":
		st.record, err = parseRecord(expect)
	case "len":
		st.count, err = decodeInt(expect, "expect")
	case "counts":
		st.counts, err = parseCounts(expect)
	}
	return st, err
}

// parseAnchorStep decodes an anchors step's value and expectation; the
// expectation is kept in anchorResult's canonical form.
func parseAnchorStep(st *step, m map[string]json.RawMessage) error {
	var err error
	if raw, ok := m["value"]; ok {
		if st.value, err = decodeTime(raw, "value"); err != nil {
			return err
		}
	}
	expect := m["expect"]
	statusNames := map[string][]string{
		"insert": {"ok", "already_exists", "full"},
		"remove": {"ok", "not_found"},
	}
	if names, ok := statusNames[st.op]; ok {
		i, err := decodeName(expect, "expect", names)
		st.anchorExpect = names[i]
		return err
	}
	var s string
	if !isNull(expect) && json.Unmarshal(expect, &s) == nil {
		if s != "not_found" {
			return fmt.Errorf("expect: unknown status %q", s)
		}
		st.anchorExpect = s
		return nil
	}
	switch st.op {
	case "try_fire":
		fm, err := jsonObject(expect, "kind", "value")
		if err != nil {
			return err
		}
		k, err := decodeName(fm["kind"], "kind", fireNames[:])
		if err != nil {
			return err
		}
		v, err := decodeUint(fm["value"], "value")
		if err != nil {
			return err
		}
		st.anchorExpect = anchorResult(Fire{Kind: FireKind(k), Value: v}, nil)
	case "advance", "anchor_unset":
		var b bool
		if err := decodeValue(expect, "expect", &b); err != nil {
			return err
		}
		st.anchorExpect = anchorResult(b, nil)
	case "get":
		v, err := decodeTime(expect, "expect")
		if err != nil {
			return err
		}
		st.anchorExpect = anchorResult(v, nil)
	}
	return nil
}

// anchorResult is the canonical form of an anchor call's result: its
// status name on an error, else the value.
func anchorResult(v any, err error) string {
	switch {
	case err == nil:
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrAlreadyExists):
		return "already_exists"
	case errors.Is(err, ErrFull):
		return "full"
	default:
		return "error: " + err.Error()
	}
	switch v := v.(type) {
	case nil:
		return "ok"
	case Fire:
		return v.Kind.String() + ":" + strconv.FormatUint(v.Value, 10)
	case bool:
		return strconv.FormatBool(v)
	case uint64:
		if v == TimeUnset {
			return "null"
		}
		return strconv.FormatUint(v, 10)
	}
	return fmt.Sprint(v)
}

func parseScenario(raw json.RawMessage) (scenario, error) {
	m, err := jsonObject(raw, "name", "upstream", "subject", "memory_only", "config", "steps")
	if err != nil {
		return scenario{}, err
	}
	// memory_only: null, or why the scenario depends on the in-memory
	// backend (slot order, capacity); go/coordpg's replay skips those. Every
	// scenario runs here.
	if !isNull(m["memory_only"]) {
		why, err := decodeString(m["memory_only"], "memory_only")
		if err != nil {
			return scenario{}, err
		}
		if why == "" {
			return scenario{}, errors.New("memory_only: empty (null, or the reason)")
		}
	}
	var s scenario
	if s.name, err = decodeString(m["name"], "name"); err != nil {
		return s, err
	}
	if _, err := decodeString(m["upstream"], "upstream"); err != nil {
		return s, err
	}
	if s.subject, err = decodeString(m["subject"], "subject"); err != nil {
		return s, err
	}
	var cfg map[string]json.RawMessage
	switch s.subject {
	case "ledger":
		if cfg, err = jsonObject(m["config"], "kind", "capacity", "retention"); err != nil {
			return s, fmt.Errorf("config: %w", err)
		}
		k, err := decodeName(cfg["kind"], "kind", []string{"claim", "pending"})
		if err != nil {
			return s, err
		}
		s.kind = []Kind{KindClaim, KindPending}[k]
	case "handoff":
		if cfg, err = jsonObject(m["config"], "capacity", "retention"); err != nil {
			return s, fmt.Errorf("config: %w", err)
		}
	case "anchors":
		if cfg, err = jsonObject(m["config"], "capacity"); err != nil {
			return s, fmt.Errorf("config: %w", err)
		}
	default:
		return s, fmt.Errorf("unknown subject %q", s.subject)
	}
	if s.capacity, err = decodeInt(cfg["capacity"], "capacity"); err != nil {
		return s, err
	}
	if r, ok := cfg["retention"]; ok {
		if s.retention, err = decodeUint(r, "retention"); err != nil {
			return s, err
		}
	}
	var steps []json.RawMessage
	if err := decodeValue(m["steps"], "steps", &steps); err != nil {
		return s, err
	}
	for i, raw := range steps {
		st, err := parseStep(s.subject, raw)
		if err != nil {
			return s, fmt.Errorf("step %d: %w: %s", i, err, raw)
		}
		s.steps = append(s.steps, st)
	}
	return s, nil
}

// loadScenarios parses the whole file, strictly.
func loadScenarios(t *testing.T) []scenario {
	t.Helper()
	data, err := os.ReadFile(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkNoDuplicateKeys(data); err != nil {
		t.Fatalf("%s: %v", scenarioPath, err)
	}
	top, err := jsonObject(data, "system", "scenarios")
	if err != nil {
		t.Fatalf("%s: %v", scenarioPath, err)
	}
	if sys, err := decodeString(top["system"], "system"); err != nil || sys != "coord" {
		t.Fatalf("%s: system %q, %v", scenarioPath, sys, err)
	}
	var raws []json.RawMessage
	if err := decodeValue(top["scenarios"], "scenarios", &raws); err != nil {
		t.Fatalf("%s: %v", scenarioPath, err)
	}
	if len(raws) < minScenarios {
		t.Fatalf("%s: %d scenarios, expected at least %d", scenarioPath, len(raws), minScenarios)
	}
	names := map[string]bool{}
	var out []scenario
	for i, raw := range raws {
		s, err := parseScenario(raw)
		if err != nil {
			t.Fatalf("%s: scenario %d (%s): %v", scenarioPath, i, s.name, err)
		}
		if names[s.name] {
			t.Fatalf("%s: scenario %q twice", scenarioPath, s.name)
		}
		names[s.name] = true
		out = append(out, s)
	}
	return out
}

func TestScenarios(t *testing.T) {
	scenarios := loadScenarios(t)
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, s := range scenarios {
			t.Run(s.name, func(t *testing.T) {
				fail := func(i int, st step, got any) {
					t.Helper()
					t.Errorf("%s: %s: step %d: %s\n\tgot %+v", impl, s.name, i, st.raw, got)
				}
				switch s.subject {
				case "ledger":
					l := newLedger(t, impl, LedgerConfig{Kind: s.kind, Capacity: s.capacity, Retention: s.retention})
					for i, st := range s.steps {
						if ok, got := runLedgerStep(l, st); !ok {
							fail(i, st, got)
						}
					}
				case "handoff":
					l := newHandoff(t, impl, HandoffConfig{Capacity: s.capacity, Retention: s.retention})
					for i, st := range s.steps {
						if ok, got := runHandoffStep(l, st); !ok {
							fail(i, st, got)
						}
					}
				case "anchors":
					a := newAnchors(t, impl, s.capacity)
					for i, st := range s.steps {
						if got := runAnchorStep(a, st); got != st.anchorExpect {
							fail(i, st, got)
						}
					}
				}
			})
		}
	})
}

type decided struct {
	Decision Decision
	Err      error
}

type decidedBatch struct {
	Decisions []Decision
	N         int
	Err       error
}

type paged struct {
	Page Page
	Err  error
}

func checkDecision(want Decision, d Decision, err error) (bool, any) {
	return err == nil && d == want, decided{d, err}
}

func checkDecisions(want []Decision, wantN int, out []Decision, n int, err error) (bool, any) {
	ok := err == nil && n == wantN && len(out) == len(want)
	for i := range want {
		ok = ok && out[i] == want[i]
	}
	return ok, decidedBatch{out, n, err}
}

func checkPage(want Page, p Page, err error) (bool, any) {
	return err == nil && p == want, paged{p, err}
}

func checkRecord(want *Record, r Record, found bool, err error) (bool, any) {
	if err != nil || found != (want != nil) || (want != nil && r != *want) {
		return false, fmt.Sprintf("record %+v, found %v, err %v", r, found, err)
	}
	return true, nil
}

func checkCount(want int, n int, err error) (bool, any) {
	return err == nil && n == want, fmt.Sprint(n, err)
}

func checkCounts(want Counts, c Counts, err error) (bool, any) {
	return err == nil && c == want, fmt.Sprintf("%+v %v", c, err)
}

// runLedgerStep runs one ledger step and reports whether it did what the
// step expects, and what it got.
func runLedgerStep(l ledgerAPI, st step) (bool, any) {
	switch st.op {
	case "insert":
		d, err := l.Insert(st.key, st.id, st.runner, st.deadline, st.now)
		return checkDecision(st.decision, d, err)
	case "place":
		out := make([]Decision, len(st.keys))
		n, err := l.Place(st.keys, st.placeholder, st.deadline, st.now, out)
		return checkDecisions(st.decisions, st.count, out, n, err)
	case "claim":
		d, err := l.Claim(st.key, st.placeholder, st.requestID, st.runner, st.now)
		return checkDecision(st.decision, d, err)
	case "finalize":
		d, err := l.Finalize(st.key, st.outcome, st.payload, st.now)
		return checkDecision(st.decision, d, err)
	case "finalize_batch":
		out := make([]Decision, len(st.keys))
		n, err := l.FinalizeBatch(st.keys, st.payloads, st.outcome, st.now, out)
		return checkDecisions(st.decisions, st.count, out, n, err)
	case "take":
		d, err := l.Take(st.key, st.id)
		return checkDecision(st.decision, d, err)
	case "touch":
		d, err := l.Touch(st.key, st.runner, st.now)
		return checkDecision(st.decision, d, err)
	case "reconcile":
		p, err := l.Reconcile(st.now, st.limit)
		return checkPage(st.page, p, err)
	case "reclaim":
		p, err := l.Reclaim(st.now, st.limit)
		return checkPage(st.page, p, err)
	case "finalize_own":
		p, err := l.FinalizeOwn(st.runner, st.outcome, st.now, st.limit)
		return checkPage(st.page, p, err)
	case "sweep_orphans":
		p, err := l.SweepOrphans(st.now, st.quiet, st.limit)
		return checkPage(st.page, p, err)
	case "get":
		r, found, err := l.Get(st.key)
		return checkRecord(st.record, r, found, err)
	case "len":
		n, err := l.Len()
		return checkCount(st.count, n, err)
	case "counts":
		c, err := l.Counts()
		return checkCounts(st.counts, c, err)
	}
	return false, "unknown op " + st.op
}

func runHandoffStep(l handoffAPI, st step) (bool, any) {
	switch st.op {
	case "claim":
		d, err := l.Claim(st.hkey, st.deadline, st.now)
		return checkDecision(st.decision, d, err)
	case "claim_batch":
		out := make([]Decision, len(st.hkeys))
		n, err := l.ClaimBatch(st.hkeys, st.deadline, st.now, out)
		return checkDecisions(st.decisions, st.count, out, n, err)
	case "complete":
		d, err := l.Complete(st.hkey, st.outcome, st.now)
		return checkDecision(st.decision, d, err)
	case "reconcile":
		p, err := l.Reconcile(st.now, st.limit)
		return checkPage(st.page, p, err)
	case "reclaim":
		p, err := l.Reclaim(st.now, st.limit)
		return checkPage(st.page, p, err)
	case "get":
		r, found, err := l.Get(st.hkey)
		return checkRecord(st.record, r, found, err)
	case "len":
		n, err := l.Len()
		return checkCount(st.count, n, err)
	case "counts":
		c, err := l.Counts()
		return checkCounts(st.counts, c, err)
	}
	return false, "unknown op " + st.op
}

func runAnchorStep(a anchorsAPI, st step) string {
	switch st.op {
	case "insert":
		return anchorResult(nil, a.Insert(st.id, st.value))
	case "remove":
		return anchorResult(nil, a.Remove(st.id))
	case "try_fire":
		f, err := a.TryFire(st.id, st.now, st.period)
		return anchorResult(f, err)
	case "advance":
		won, err := a.Advance(st.id, st.expected, st.next)
		return anchorResult(won, err)
	case "anchor_unset":
		won, err := a.AnchorUnset(st.id, st.now)
		return anchorResult(won, err)
	case "get":
		v, err := a.Get(st.id)
		return anchorResult(v, err)
	}
	return "unknown op " + st.op
}

// The strict parser refuses what the format forbids.
func TestScenarioParserIsStrict(t *testing.T) {
	bad := map[string]string{
		"unknown op":       `{"op": "frobnicate", "expect": 1}`,
		"unknown field":    `{"op": "len", "expect": 1, "extra": 2}`,
		"missing field":    `{"op": "take", "key": "a"}`,
		"negative number":  `{"op": "take", "key": "a", "id": -1, "expect": {"result": "won", "state": "none", "outcome": null}}`,
		"fraction":         `{"op": "take", "key": "a", "id": 1.5, "expect": {"result": "won", "state": "none", "outcome": null}}`,
		"too big":          `{"op": "take", "key": "a", "id": 9007199254740992, "expect": {"result": "won", "state": "none", "outcome": null}}`,
		"unknown result":   `{"op": "take", "key": "a", "id": 1, "expect": {"result": "meh", "state": "none", "outcome": null}}`,
		"outcome not null": `{"op": "take", "key": "a", "id": 1, "expect": {"result": "won", "state": "none", "outcome": "failed"}}`,
		"outcome missing":  `{"op": "take", "key": "a", "id": 1, "expect": {"result": "duplicate", "state": "finalized", "outcome": null}}`,
		"low host outcome": `{"op": "finalize", "key": "a", "outcome": 255, "payload": 0, "now": 0, "expect": {"result": "won", "state": "none", "outcome": null}}`,
		"unknown outcome":  `{"op": "finalize", "key": "a", "outcome": "meh", "payload": 0, "now": 0, "expect": {"result": "won", "state": "none", "outcome": null}}`,
		"short expect":     `{"op": "place", "keys": ["a", "b"], "placeholder": 1, "deadline": null, "now": 0, "expect": [{"result": "won", "state": "placed", "outcome": null}], "placed": 1}`,
		"empty keys":       `{"op": "place", "keys": [], "placeholder": 1, "deadline": null, "now": 0, "expect": [], "placed": 0}`,
		"null now":         `{"op": "touch", "key": "a", "runner": 1, "now": null, "expect": {"result": "won", "state": "none", "outcome": null}}`,
	}
	for name, raw := range bad {
		if _, err := parseStep("ledger", json.RawMessage(raw)); err == nil {
			t.Errorf("%s: parsed %s", name, raw)
		}
	}
	for name, raw := range map[string]string{
		"ledger op on anchors": `{"op": "len", "expect": 1}`,
		"bad fire kind":        `{"op": "try_fire", "id": 1, "now": 1, "period": 1, "expect": {"kind": "boom", "value": 0}}`,
		"bad status":           `{"op": "insert", "id": 1, "value": null, "expect": "nope"}`,
	} {
		if _, err := parseStep("anchors", json.RawMessage(raw)); err == nil {
			t.Errorf("%s: parsed %s", name, raw)
		}
	}
	if err := checkNoDuplicateKeys([]byte(`{"a": 1, "a": 2}`)); err == nil {
		t.Error("a duplicate field was accepted")
	}
	if _, err := parseScenario(json.RawMessage(`{"name": "x", "upstream": "", "subject": "other", "memory_only": null, "config": {}, "steps": []}`)); err == nil {
		t.Error("an unknown subject was accepted")
	}
	for _, mo := range []string{`""`, `1`, `false`} {
		raw := `{"name": "x", "upstream": "y", "subject": "anchors", "memory_only": ` + mo + `, "config": {"capacity": 1}, "steps": []}`
		if _, err := parseScenario(json.RawMessage(raw)); err == nil {
			t.Errorf("memory_only %s was accepted", mo)
		}
	}
	if _, err := parseScenario(json.RawMessage(`{"name": "x", "upstream": "y", "subject": "anchors", "config": {"capacity": 1}, "steps": []}`)); err == nil {
		t.Error("a scenario without memory_only was accepted")
	}
}
