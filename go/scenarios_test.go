package wkcore

// Replays testdata/admission/scenarios.json (format: testdata/README.md)
// through the Go API. The file is checked strictly before anything runs: an
// unknown, missing or duplicate field, an unknown op, kind or outcome, or a
// value of the wrong type is an error of the file, and the test fails.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

const (
	scenarioPath = "../testdata/admission/scenarios.json"
	// minScenarios is how many scenarios the file held when this replay was
	// written: fewer means a truncated file.
	minScenarios = 31
	// maxToken: tokens are below 2^53, so every JSON parser reads them exactly.
	maxToken = 1<<53 - 1
)

type scenario struct {
	name   string
	limits Limits
	steps  []scenarioStep
}

type scenarioStep struct {
	raw            json.RawMessage
	op             string
	kind           ControlKind
	class          ProposalClass
	token          uint64
	tokens         []uint64
	code           uint32
	expect         string // outcome of admit, admit_batch and fail
	expectAdmitted int
	max            int
	items          []Item
	state          SlotState
	counters       AdmissionCounters
}

// Outcome names of admit and admit_batch.
var outcomeNames = map[string]bool{
	"ok": true, "closed": true, "fatal": true, "not_leader": true,
	"config_change_pending": true, "busy": true, "throttled": true,
}

var (
	scenarioClasses = []ProposalClass{ProposalClassForeground, ProposalClassBackground}
	scenarioResults = []AdmissionResult{AdmissionOK, AdmissionBusy, AdmissionThrottled, AdmissionNotLeader}
	snakeCase       = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)
)

// controlKindByName maps the kinds' names (ControlKind.String) to kinds.
var controlKindByName = func() map[string]ControlKind {
	m := map[string]ControlKind{}
	for k := 0; k < 256; k++ {
		if name := ControlKind(k).String(); !strings.HasPrefix(name, "control_kind(") {
			m[name] = ControlKind(k)
		}
	}
	return m
}()

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

// jsonObject decodes raw as an object with exactly the fields want.
func jsonObject(raw json.RawMessage, want ...string) (map[string]json.RawMessage, error) {
	if isNull(raw) {
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
	if len(m) != len(want) {
		for f := range m {
			known := false
			for _, w := range want {
				known = known || f == w
			}
			if !known {
				return nil, fmt.Errorf("unknown field %q", f)
			}
		}
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeValue decodes a non-null raw into v (a string, bool, uint64 or array
// pointer): encoding/json refuses negative, fractional and mistyped values.
func decodeValue(raw json.RawMessage, field string, v any) error {
	if isNull(raw) {
		return fmt.Errorf("%s: null", field)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func decodeUint(raw json.RawMessage, field string, limit uint64) (uint64, error) {
	var n uint64
	if err := decodeValue(raw, field, &n); err != nil {
		return 0, err
	}
	if n > limit {
		return 0, fmt.Errorf("%s: %d above %d", field, n, limit)
	}
	return n, nil
}

func decodeKind(raw json.RawMessage) (ControlKind, error) {
	var name string
	if err := decodeValue(raw, "kind", &name); err != nil {
		return 0, err
	}
	k, ok := controlKindByName[name]
	if !ok {
		return 0, fmt.Errorf("unknown kind %q", name)
	}
	return k, nil
}

func decodeOutcome(raw json.RawMessage, names map[string]bool) (string, error) {
	var name string
	if err := decodeValue(raw, "expect", &name); err != nil {
		return "", err
	}
	if !names[name] {
		return "", fmt.Errorf("unknown outcome %q", name)
	}
	return name, nil
}

// stepFields lists each op's fields (besides "op").
var stepFields = map[string][]string{
	"set_leader":             {},
	"demote":                 {},
	"close":                  {},
	"config_change_resolved": {},
	"fail":                   {"code", "expect"},
	"admit":                  {"kind", "class", "token", "expect"},
	"admit_batch":            {"kind", "class", "tokens", "expect_admitted", "expect"},
	"drain":                  {"max", "expect_items"},
	"state":                  {"expect"},
	"counters":               {"expect"},
}

func parseStep(raw json.RawMessage) (scenarioStep, error) {
	st := scenarioStep{raw: raw}
	var head struct {
		Op json.RawMessage `json:"op"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return st, err
	}
	if head.Op == nil {
		return st, errors.New(`missing field "op"`)
	}
	if err := decodeValue(head.Op, "op", &st.op); err != nil {
		return st, err
	}
	fields, ok := stepFields[st.op]
	if !ok {
		return st, fmt.Errorf("unknown op %q", st.op)
	}
	m, err := jsonObject(raw, append([]string{"op"}, fields...)...)
	if err != nil {
		return st, err
	}
	if k, ok := m["kind"]; ok {
		if st.kind, err = decodeKind(k); err != nil {
			return st, err
		}
		var class string
		if err := decodeValue(m["class"], "class", &class); err != nil {
			return st, err
		}
		st.class = ProposalClass(class)
	}
	switch st.op {
	case "fail":
		code, err := decodeUint(m["code"], "code", 1<<32-1)
		if err != nil {
			return st, err
		}
		st.code = uint32(code)
		st.expect, err = decodeOutcome(m["expect"], map[string]bool{"ok": true, "fatal": true})
		return st, err
	case "admit":
		if st.token, err = decodeUint(m["token"], "token", maxToken); err != nil {
			return st, err
		}
		st.expect, err = decodeOutcome(m["expect"], outcomeNames)
		return st, err
	case "admit_batch":
		var tokens []json.RawMessage
		if err := decodeValue(m["tokens"], "tokens", &tokens); err != nil {
			return st, err
		}
		if len(tokens) == 0 {
			return st, errors.New("tokens: empty")
		}
		for i, t := range tokens {
			token, err := decodeUint(t, fmt.Sprintf("tokens[%d]", i), maxToken)
			if err != nil {
				return st, err
			}
			st.tokens = append(st.tokens, token)
		}
		n, err := decodeUint(m["expect_admitted"], "expect_admitted", uint64(len(tokens)))
		if err != nil {
			return st, err
		}
		st.expectAdmitted = int(n)
		if st.expect, err = decodeOutcome(m["expect"], outcomeNames); err != nil {
			return st, err
		}
		if (st.expect == "ok") != (st.expectAdmitted == len(st.tokens)) {
			return st, fmt.Errorf("expect %q with %d of %d admitted", st.expect, st.expectAdmitted, len(st.tokens))
		}
		return st, nil
	case "drain":
		n, err := decodeUint(m["max"], "max", MaxLimit)
		if err != nil {
			return st, err
		}
		if n == 0 {
			return st, errors.New("max: 0")
		}
		st.max = int(n)
		var items []json.RawMessage
		if err := decodeValue(m["expect_items"], "expect_items", &items); err != nil {
			return st, err
		}
		if len(items) > st.max {
			return st, fmt.Errorf("expect_items: %d items above max %d", len(items), st.max)
		}
		for i, raw := range items {
			it, err := parseItem(raw)
			if err != nil {
				return st, fmt.Errorf("expect_items[%d]: %w", i, err)
			}
			st.items = append(st.items, it)
		}
		return st, nil
	case "state":
		st.state, err = parseState(m["expect"])
		return st, err
	case "counters":
		st.counters, err = parseCounters(m["expect"])
		return st, err
	}
	return st, nil
}

func parseItem(raw json.RawMessage) (Item, error) {
	m, err := jsonObject(raw, "token", "kind", "class")
	if err != nil {
		return Item{}, err
	}
	var it Item
	if it.Token, err = decodeUint(m["token"], "token", maxToken); err != nil {
		return it, err
	}
	if it.Kind, err = decodeKind(m["kind"]); err != nil {
		return it, err
	}
	var class string
	if err := decodeValue(m["class"], "class", &class); err != nil {
		return it, err
	}
	switch ProposalClass(class) {
	case ProposalClassForeground:
	case ProposalClassBackground:
		it.class = 1
	default:
		return it, fmt.Errorf("class %q of a drained item", class)
	}
	if it.Class() != ProposalClass(class) {
		return it, fmt.Errorf("class %q does not round-trip", class)
	}
	return it, nil
}

func parseState(raw json.RawMessage) (SlotState, error) {
	m, err := jsonObject(raw, "queued", "queued_background", "leader", "closed", "fatal_code", "config_change_pending")
	if err != nil {
		return SlotState{}, err
	}
	var s SlotState
	queued, err := decodeUint(m["queued"], "queued", MaxLimit)
	if err != nil {
		return s, err
	}
	background, err := decodeUint(m["queued_background"], "queued_background", MaxLimit)
	if err != nil {
		return s, err
	}
	s.Queued, s.QueuedBackground = uint32(queued), uint32(background)
	for field, p := range map[string]*bool{"leader": &s.Leader, "closed": &s.Closed, "config_change_pending": &s.ConfigChangePending} {
		if err := decodeValue(m[field], field, p); err != nil {
			return s, err
		}
	}
	if !isNull(m["fatal_code"]) {
		code, err := decodeUint(m["fatal_code"], "fatal_code", 1<<32-1)
		if err != nil {
			return s, err
		}
		s.Fatal, s.FatalCode = true, uint32(code)
	}
	return s, nil
}

// counterField returns the field of c for class and result.
func counterField(c *AdmissionCounters, class ProposalClass, result AdmissionResult) *uint64 {
	fg := class == ProposalClassForeground
	switch result {
	case AdmissionOK:
		return pickField(fg, &c.ForegroundOK, &c.BackgroundOK)
	case AdmissionBusy:
		return pickField(fg, &c.ForegroundBusy, &c.BackgroundBusy)
	case AdmissionThrottled:
		return pickField(fg, &c.ForegroundThrottled, &c.BackgroundThrottled)
	case AdmissionNotLeader:
		return pickField(fg, &c.ForegroundNotLeader, &c.BackgroundNotLeader)
	}
	return nil
}

func pickField(first bool, a, b *uint64) *uint64 {
	if first {
		return a
	}
	return b
}

func parseCounters(raw json.RawMessage) (AdmissionCounters, error) {
	var c AdmissionCounters
	var names []string
	fields := map[string]*uint64{}
	for _, class := range scenarioClasses {
		for _, result := range scenarioResults {
			name := string(class) + "/" + string(result)
			names = append(names, name)
			fields[name] = counterField(&c, class, result)
		}
	}
	var m map[string]json.RawMessage
	if err := decodeValue(raw, "counters", &m); err != nil {
		return c, err
	}
	for key, v := range m {
		p, ok := fields[key]
		if !ok {
			return c, fmt.Errorf("unknown counter %q (want one of %v)", key, names)
		}
		n, err := decodeUint(v, key, 1<<63)
		if err != nil {
			return c, err
		}
		if n == 0 {
			return c, fmt.Errorf("%s: 0 (list non-zero counts only)", key)
		}
		*p = n
	}
	return c, nil
}

func parseScenarios(data []byte) ([]scenario, error) {
	if err := checkNoDuplicateKeys(data); err != nil {
		return nil, err
	}
	top, err := jsonObject(data, "system", "scenarios")
	if err != nil {
		return nil, err
	}
	var system string
	if err := decodeValue(top["system"], "system", &system); err != nil {
		return nil, err
	}
	if system != "admission" {
		return nil, fmt.Errorf("system %q, want admission", system)
	}
	var raws []json.RawMessage
	if err := decodeValue(top["scenarios"], "scenarios", &raws); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	var out []scenario
	for i, raw := range raws {
		sc, err := parseScenario(raw)
		if err != nil {
			return nil, fmt.Errorf("scenario %d (%s): %w", i, sc.name, err)
		}
		if names[sc.name] {
			return nil, fmt.Errorf("scenario %d: duplicate name %q", i, sc.name)
		}
		names[sc.name] = true
		out = append(out, sc)
	}
	return out, nil
}

func parseScenario(raw json.RawMessage) (scenario, error) {
	var sc scenario
	m, err := jsonObject(raw, "name", "upstream", "limits", "steps")
	if err != nil {
		return sc, err
	}
	if err := decodeValue(m["name"], "name", &sc.name); err != nil {
		return sc, err
	}
	if !snakeCase.MatchString(sc.name) {
		return sc, fmt.Errorf("name %q is not snake_case", sc.name)
	}
	var upstream string
	if err := decodeValue(m["upstream"], "upstream", &upstream); err != nil {
		return sc, err
	}
	if upstream == "" {
		return sc, errors.New("upstream: empty")
	}
	limits, err := jsonObject(m["limits"], "max_queued_controls", "max_queued_background_controls")
	if err != nil {
		return sc, fmt.Errorf("limits: %w", err)
	}
	total, err := decodeUint(limits["max_queued_controls"], "max_queued_controls", 1<<32-1)
	if err != nil {
		return sc, err
	}
	background, err := decodeUint(limits["max_queued_background_controls"], "max_queued_background_controls", 1<<32-1)
	if err != nil {
		return sc, err
	}
	sc.limits = Limits{MaxQueuedControls: uint32(total), MaxQueuedBackgroundControls: uint32(background)}
	var steps []json.RawMessage
	if err := decodeValue(m["steps"], "steps", &steps); err != nil {
		return sc, err
	}
	if len(steps) == 0 {
		return sc, errors.New("steps: empty")
	}
	for i, raw := range steps {
		st, err := parseStep(raw)
		if err != nil {
			return sc, fmt.Errorf("step %d %s: %w", i, raw, err)
		}
		sc.steps = append(sc.steps, st)
	}
	return sc, nil
}

// outcomeOf names the outcome err stands for, matching with errors.Is (and
// errors.As for FatalError), and checks the identities that go with it: a
// busy proposal is also ErrProposalBackpressure, a busy action of another
// kind is not; a throttled proposal is ErrProposalBackpressure and not busy.
func outcomeOf(err error, kind ControlKind) (string, error) {
	var fatal FatalError
	backpressure := errors.Is(err, ErrProposalBackpressure)
	switch {
	case err == nil:
		return "ok", nil
	case errors.As(err, &fatal):
		return "fatal", nil
	case errors.Is(err, ErrSlotClosed):
		return "closed", nil
	case errors.Is(err, ErrNotLeader):
		return "not_leader", nil
	case errors.Is(err, ErrConfigChangePending):
		return "config_change_pending", nil
	case errors.Is(err, ErrSlotBusy):
		if backpressure != (kind == ControlPropose) {
			return "", fmt.Errorf("busy %v: errors.Is(%q, ErrProposalBackpressure) = %v", kind, err, backpressure)
		}
		return "busy", nil
	case errors.Is(err, ErrBackgroundProposalThrottled):
		if !backpressure || kind != ControlPropose {
			return "", fmt.Errorf("throttled %v: errors.Is(%q, ErrProposalBackpressure) = %v", kind, err, backpressure)
		}
		return "throttled", nil
	}
	return "", fmt.Errorf("%q is not an admission outcome", err)
}

// run replays one step on s.
func (st *scenarioStep) run(s *Slot) error {
	switch st.op {
	case "set_leader":
		return s.SetLeader()
	case "demote":
		return s.Demote()
	case "close":
		return s.CloseSlot()
	case "config_change_resolved":
		return s.ConfigChangeResolved()
	case "fail":
		recorded, err := s.Fail(st.code)
		if err != nil {
			return err
		}
		if got := map[bool]string{true: "ok", false: "fatal"}[recorded]; got != st.expect {
			return fmt.Errorf("Fail(%d) gave %s, want %s", st.code, got, st.expect)
		}
	case "admit":
		got, err := outcomeOf(s.Admit(st.kind, st.class, st.token), st.kind)
		if err != nil {
			return err
		}
		if got != st.expect {
			return fmt.Errorf("outcome %s, want %s", got, st.expect)
		}
	case "admit_batch":
		n, err := s.AdmitBatch(st.kind, st.class, st.tokens)
		got, oerr := outcomeOf(err, st.kind)
		if oerr != nil {
			return oerr
		}
		if n != st.expectAdmitted || got != st.expect {
			return fmt.Errorf("admitted %d, %s; want %d, %s", n, got, st.expectAdmitted, st.expect)
		}
	case "drain":
		out := make([]Item, st.max)
		n, err := s.Drain(out)
		if err != nil {
			return err
		}
		if n != len(st.items) {
			return fmt.Errorf("drained %d items %+v, want %d %+v", n, out[:n], len(st.items), st.items)
		}
		for i, it := range out[:n] {
			want := st.items[i]
			if it.Token != want.Token || it.Kind != want.Kind || it.Class() != want.Class() {
				return fmt.Errorf("item %d: token %d %v %s, want token %d %v %s",
					i, it.Token, it.Kind, it.Class(), want.Token, want.Kind, want.Class())
			}
		}
	case "state":
		got, err := s.State()
		if err != nil {
			return err
		}
		if got != st.state {
			return fmt.Errorf("state %+v, want %+v", got, st.state)
		}
	case "counters":
		got, err := s.Counters()
		if err != nil {
			return err
		}
		for _, class := range scenarioClasses {
			for _, result := range scenarioResults {
				if g, w := got.Get(class, result), st.counters.Get(class, result); g != w {
					return fmt.Errorf("counter %s/%s = %d, want %d (all: %+v)", class, result, g, w, got)
				}
			}
		}
	default:
		return fmt.Errorf("op %q", st.op)
	}
	return nil
}

func TestAdmissionScenarios(t *testing.T) {
	data, err := os.ReadFile(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := parseScenarios(data)
	if err != nil {
		t.Fatalf("%s: %v", scenarioPath, err)
	}
	if len(scenarios) < minScenarios {
		t.Fatalf("%s: %d scenarios, want at least %d (truncated?)", scenarioPath, len(scenarios), minScenarios)
	}
	metrics := newTestRegistry(t) // keep the replay's counts out of the global registry
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			s, err := NewSlotIn(metrics, nextSlotID.Add(1), sc.limits)
			if err != nil {
				t.Fatalf("scenario %s: NewSlotIn(%+v): %v", sc.name, sc.limits, err)
			}
			defer s.Close()
			for i := range sc.steps {
				if err := sc.steps[i].run(s); err != nil {
					t.Fatalf("scenario %s, step %d %s: %v", sc.name, i, sc.steps[i].raw, err)
				}
			}
		})
	}
}

// The checker refuses what the format does not allow.
func TestScenarioFileIsCheckedStrictly(t *testing.T) {
	const good = `{"system": "admission", "scenarios": [{"name": "a", "upstream": "none: test",
		"limits": {"max_queued_controls": 1, "max_queued_background_controls": 0},
		"steps": [%s]}]}`
	valid := []string{
		`{"op": "set_leader"}`,
		`{"op": "admit", "kind": "propose", "class": "bogus", "token": 1, "expect": "ok"}`,
		`{"op": "admit_batch", "kind": "campaign", "class": "", "tokens": [1, 2], "expect_admitted": 1, "expect": "busy"}`,
		`{"op": "drain", "max": 2, "expect_items": [{"token": 1, "kind": "propose", "class": "background"}]}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "leader": true, "closed": false, "fatal_code": 0, "config_change_pending": false}}`,
		`{"op": "counters", "expect": {"foreground/ok": 1}}`,
		`{"op": "fail", "code": 4294967295, "expect": "fatal"}`,
	}
	for _, step := range valid {
		if _, err := parseScenarios([]byte(fmt.Sprintf(good, step))); err != nil {
			t.Errorf("%s refused: %v", step, err)
		}
	}
	invalid := []string{
		`{"op": "jump"}`,
		`{"op": "set_leader", "extra": 1}`,
		`{"op": "set_leader", "op": "demote"}`,
		`{"kind": "propose"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "refused"}`,
		`{"op": "admit", "kind": "vote", "class": "foreground", "token": 1, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": null, "token": 1, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": -1, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1.5, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 9007199254740992, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": "1", "expect": "ok"}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [], "expect_admitted": 0, "expect": "busy"}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1], "expect_admitted": 1, "expect": "busy"}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1], "expect_admitted": 2, "expect": "ok"}`,
		`{"op": "drain", "max": 0, "expect_items": []}`,
		`{"op": "drain", "max": 1, "expect_items": [{"token": 1, "kind": "propose", "class": "bogus"}]}`,
		`{"op": "drain", "max": 1, "expect_items": [{"token": 1, "kind": "propose"}]}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "leader": true, "closed": false, "config_change_pending": false}}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "leader": 1, "closed": false, "fatal_code": null, "config_change_pending": false}}`,
		`{"op": "counters", "expect": {"foreground/stopped": 1}}`,
		`{"op": "counters", "expect": {"foreground/ok": 0}}`,
		`{"op": "counters", "expect": null}`,
		`{"op": "fail", "code": 4294967296, "expect": "fatal"}`,
		`{"op": "fail", "code": 1, "expect": "busy"}`,
	}
	for _, step := range invalid {
		if _, err := parseScenarios([]byte(fmt.Sprintf(good, step))); err == nil {
			t.Errorf("%s accepted", step)
		}
	}
	for _, doc := range []string{
		`{"system": "admission", "scenarios": []} {}`,
		`{"system": "other", "scenarios": []}`,
		`{"system": "admission"}`,
		`{"system": "admission", "scenarios": [], "version": 1}`,
		`{"system": "admission", "scenarios": [{"name": "Bad Name", "upstream": "x", "limits": {"max_queued_controls": 1, "max_queued_background_controls": 0}, "steps": [{"op": "demote"}]}]}`,
		`{"system": "admission", "scenarios": [{"name": "a", "upstream": "x", "limits": {"max_queued_controls": 1}, "steps": [{"op": "demote"}]}]}`,
		strings.Replace(fmt.Sprintf(good, `{"op": "demote"}`), `"scenarios": [`, `"scenarios": [{"name": "a", "upstream": "x", "limits": {"max_queued_controls": 1, "max_queued_background_controls": 0}, "steps": [{"op": "demote"}]}, `, 1),
	} {
		if _, err := parseScenarios([]byte(doc)); err == nil {
			t.Errorf("%s accepted", doc)
		}
	}
}
