package multiraft

// Replays testdata/admission/scenarios.json (format: testdata/README.md)
// against ControlQueue[uint64] and mutexQueue[uint64], the value of each item
// being its token. The file is checked strictly before anything runs: an
// unknown, missing or duplicate field, an unknown op, kind or outcome, or a
// value of the wrong type is an error of the file, and the test fails.
//
// Where Go's API differs from the core's:
//   - fail records fatal code c as the host error fatalCode(c); the "fatal"
//     outcome is a refusal with exactly that error (the first code recorded).
//   - resolve_config_change resolves the ConfigChange of the config change
//     admitted with that token: the one AdmitConfigChange returned (used for
//     a config change whose class is foreground) or, for one admitted with
//     Admit and a background class or in a batch (which return no ticket),
//     the one its drained Control carried. config_change_stale is
//     ErrConfigChangeResolved, exactly.
//   - Go has no positions (the cgo build keeps them inside ControlQueue): the
//     replay checks position and first_position against their definition,
//     the count of items admitted, or taken, before (modulo 2^27), and FIFO
//     order is checked item by item.
//   - take is a drain whose values are dropped (the count is checked).

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
	scenarioPath = "../../testdata/admission/scenarios.json"
	// minScenarios is how many scenarios the file held when this replay was
	// written: fewer means a truncated file.
	minScenarios = 35
	// maxToken: tokens are below 2^53, so every JSON parser reads them exactly.
	maxToken = 1<<53 - 1
	// scenarioPositionModulus: positions count modulo 2^27 (the core's
	// WK_SLOT_POSITION_MODULUS).
	scenarioPositionModulus = 1 << 27
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
	expect         string // outcome of admit, admit_batch, fail and resolve_config_change
	expectAdmitted int
	position       uint64 // position of admit, first_position of admit_batch, drain and take
	hasPosition    bool   // false where it is null
	max            int
	expectCount    int
	items          []scenarioItem
	state          scenarioState
	counters       AdmissionCounters
}

type scenarioItem struct {
	token uint64
	kind  ControlKind
	class ProposalClass
}

type scenarioState struct {
	queued, queuedBackground, queuedProposals int
	leader, closed, configChangePending       bool
	fatal                                     bool
	fatalCode                                 uint32
}

// fatalCode is the host error a fail step records.
type fatalCode uint32

func (c fatalCode) Error() string { return fmt.Sprintf("scenario: fatal code %d", uint32(c)) }

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
		if ControlKind(k).Valid() {
			m[ControlKind(k).String()] = ControlKind(k)
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

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeValue decodes a non-null raw into v (a string, bool, uint64 or array
// pointer): encoding/json refuses negative, fractional and mistyped values.
func decodeValue(raw json.RawMessage, field string, v any) error {
	if raw == nil || isNull(raw) {
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
	"set_leader":            {},
	"demote":                {},
	"close":                 {},
	"resolve_config_change": {"token", "expect"},
	"fail":                  {"code", "expect"},
	"admit":                 {"kind", "class", "token", "expect", "position"},
	"admit_batch":           {"kind", "class", "tokens", "expect_admitted", "expect", "first_position"},
	"drain":                 {"max", "first_position", "expect_items"},
	"take":                  {"max", "expect_count", "first_position"},
	"state":                 {"expect"},
	"counters":              {"expect"},
}

// decodePosition decodes a position: a number below 2^27, or null where
// nullable.
func decodePosition(raw json.RawMessage, field string, nullable bool) (uint64, bool, error) {
	if nullable && isNull(raw) {
		return 0, false, nil
	}
	p, err := decodeUint(raw, field, scenarioPositionModulus-1)
	return p, true, err
}

// decodeMax decodes the max of a drain or take: at least 1.
func decodeMax(raw json.RawMessage) (int, error) {
	n, err := decodeUint(raw, "max", MaxLimit)
	if err == nil && n == 0 {
		err = errors.New("max: 0")
	}
	return int(n), err
}

func parseStep(raw json.RawMessage) (scenarioStep, error) {
	st := scenarioStep{raw: raw}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(raw, &head); err != nil {
		return st, err
	}
	if head == nil {
		return st, errors.New("null step")
	}
	if _, ok := head["op"]; !ok {
		return st, errors.New(`missing field "op"`)
	}
	if err := decodeValue(head["op"], "op", &st.op); err != nil {
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
	case "resolve_config_change":
		if st.token, err = decodeUint(m["token"], "token", maxToken); err != nil {
			return st, err
		}
		st.expect, err = decodeOutcome(m["expect"], map[string]bool{"ok": true, "config_change_stale": true})
		return st, err
	case "admit":
		if st.token, err = decodeUint(m["token"], "token", maxToken); err != nil {
			return st, err
		}
		if st.expect, err = decodeOutcome(m["expect"], outcomeNames); err != nil {
			return st, err
		}
		if st.position, st.hasPosition, err = decodePosition(m["position"], "position", true); err != nil {
			return st, err
		}
		if st.hasPosition != (st.expect == "ok") {
			return st, fmt.Errorf("position must be a number exactly when expect is ok")
		}
		return st, nil
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
		if st.position, st.hasPosition, err = decodePosition(m["first_position"], "first_position", true); err != nil {
			return st, err
		}
		if st.hasPosition != (st.expectAdmitted > 0) {
			return st, fmt.Errorf("first_position must be a number exactly when expect_admitted > 0")
		}
		return st, nil
	case "take":
		if st.max, err = decodeMax(m["max"]); err != nil {
			return st, err
		}
		n, err := decodeUint(m["expect_count"], "expect_count", uint64(st.max))
		if err != nil {
			return st, err
		}
		st.expectCount = int(n)
		st.position, st.hasPosition, err = decodePosition(m["first_position"], "first_position", false)
		return st, err
	case "drain":
		if st.max, err = decodeMax(m["max"]); err != nil {
			return st, err
		}
		if st.position, st.hasPosition, err = decodePosition(m["first_position"], "first_position", false); err != nil {
			return st, err
		}
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

func parseItem(raw json.RawMessage) (scenarioItem, error) {
	m, err := jsonObject(raw, "token", "kind", "class")
	if err != nil {
		return scenarioItem{}, err
	}
	var it scenarioItem
	if it.token, err = decodeUint(m["token"], "token", maxToken); err != nil {
		return it, err
	}
	if it.kind, err = decodeKind(m["kind"]); err != nil {
		return it, err
	}
	var class string
	if err := decodeValue(m["class"], "class", &class); err != nil {
		return it, err
	}
	it.class = ProposalClass(class)
	if it.class != ProposalClassForeground && it.class != ProposalClassBackground {
		return it, fmt.Errorf("class %q of a drained item", class)
	}
	return it, nil
}

func parseState(raw json.RawMessage) (scenarioState, error) {
	m, err := jsonObject(raw, "queued", "queued_background", "queued_proposals", "leader", "closed", "fatal_code",
		"config_change_pending")
	if err != nil {
		return scenarioState{}, err
	}
	var s scenarioState
	queued, err := decodeUint(m["queued"], "queued", MaxLimit)
	if err != nil {
		return s, err
	}
	background, err := decodeUint(m["queued_background"], "queued_background", MaxLimit)
	if err != nil {
		return s, err
	}
	proposals, err := decodeUint(m["queued_proposals"], "queued_proposals", MaxLimit)
	if err != nil {
		return s, err
	}
	s.queued, s.queuedBackground, s.queuedProposals = int(queued), int(background), int(proposals)
	for _, f := range []struct {
		name string
		p    *bool
	}{{"leader", &s.leader}, {"closed", &s.closed}, {"config_change_pending", &s.configChangePending}} {
		if err := decodeValue(m[f.name], f.name, f.p); err != nil {
			return s, err
		}
	}
	if !isNull(m["fatal_code"]) {
		code, err := decodeUint(m["fatal_code"], "fatal_code", 1<<32-1)
		if err != nil {
			return s, err
		}
		s.fatal, s.fatalCode = true, uint32(code)
	}
	return s, nil
}

// counterField returns the field of c for class and result.
func counterField(c *AdmissionCounters, class ProposalClass, result AdmissionResult) *uint64 {
	fg := class == ProposalClassForeground
	pick := func(a, b *uint64) *uint64 {
		if fg {
			return a
		}
		return b
	}
	switch result {
	case AdmissionOK:
		return pick(&c.ForegroundOK, &c.BackgroundOK)
	case AdmissionBusy:
		return pick(&c.ForegroundBusy, &c.BackgroundBusy)
	case AdmissionThrottled:
		return pick(&c.ForegroundThrottled, &c.BackgroundThrottled)
	case AdmissionNotLeader:
		return pick(&c.ForegroundNotLeader, &c.BackgroundNotLeader)
	}
	return nil
}

func parseCounters(raw json.RawMessage) (AdmissionCounters, error) {
	var c AdmissionCounters
	fields := map[string]*uint64{}
	for _, class := range scenarioClasses {
		for _, result := range scenarioResults {
			fields[string(class)+"/"+string(result)] = counterField(&c, class, result)
		}
	}
	var m map[string]json.RawMessage
	if err := decodeValue(raw, "counters", &m); err != nil {
		return c, err
	}
	for key, v := range m {
		p, ok := fields[key]
		if !ok {
			return c, fmt.Errorf("unknown counter %q", key)
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
	total, err := decodeUint(limits["max_queued_controls"], "max_queued_controls", MaxLimit)
	if err != nil {
		return sc, err
	}
	background, err := decodeUint(limits["max_queued_background_controls"], "max_queued_background_controls", MaxLimit)
	if err != nil {
		return sc, err
	}
	sc.limits = Limits{MaxQueuedControls: int(total), MaxQueuedBackgroundControls: int(background)}
	var steps []json.RawMessage
	if err := decodeValue(m["steps"], "steps", &steps); err != nil {
		return sc, err
	}
	if len(steps) == 0 {
		return sc, errors.New("steps: empty")
	}
	configChanges := map[uint64]bool{} // tokens of the config changes admitted so far
	for i, raw := range steps {
		st, err := parseStep(raw)
		if err == nil && st.op == "resolve_config_change" && !configChanges[st.token] {
			err = errors.New("resolve_config_change names no config change admitted before")
		}
		if err != nil {
			return sc, fmt.Errorf("step %d %s: %w", i, raw, err)
		}
		switch {
		case st.op == "admit" && st.kind == ControlConfigChange && st.expect == "ok":
			configChanges[st.token] = true
		case st.op == "admit_batch" && st.kind == ControlConfigChange && st.expectAdmitted > 0:
			configChanges[st.tokens[0]] = true
		}
		sc.steps = append(sc.steps, st)
	}
	return sc, nil
}

// outcomeOf names the outcome err stands for and checks the identities that
// go with it: a busy proposal is also ErrProposalBackpressure, a busy action
// of another kind is exactly ErrSlotBusy; a throttled proposal is
// ErrProposalBackpressure and not busy; a fatal refusal is exactly the error
// recorded.
func outcomeOf(err error, kind ControlKind, fatal error) (string, error) {
	backpressure := errors.Is(err, ErrProposalBackpressure)
	var code fatalCode
	switch {
	case err == nil:
		return "ok", nil
	case errors.As(err, &code):
		if err != fatal {
			return "", fmt.Errorf("fatal refusal %v, want exactly the recorded %v", err, fatal)
		}
		return "fatal", nil
	case errors.Is(err, ErrSlotClosed):
		return "closed", nil
	case errors.Is(err, ErrNotLeader):
		return "not_leader", nil
	case errors.Is(err, ErrConfigChangePending):
		return "config_change_pending", nil
	case errors.Is(err, ErrSlotBusy):
		if backpressure != (kind == ControlPropose) || errors.Is(err, ErrBackgroundProposalThrottled) {
			return "", fmt.Errorf("busy %v: %q, errors.Is(ErrProposalBackpressure) = %v", kind, err, backpressure)
		}
		if kind != ControlPropose && err != ErrSlotBusy {
			return "", fmt.Errorf("busy %v: %q, want exactly ErrSlotBusy", kind, err)
		}
		return "busy", nil
	case errors.Is(err, ErrBackgroundProposalThrottled):
		if !backpressure || kind != ControlPropose {
			return "", fmt.Errorf("throttled %v: %q, errors.Is(ErrProposalBackpressure) = %v", kind, err, backpressure)
		}
		return "throttled", nil
	}
	return "", fmt.Errorf("%q is not an admission outcome", err)
}

// replay is the state of one scenario's run on one queue.
type replay struct {
	q         queue[uint64]
	drainInto bool  // drain and take steps use DrainInto (else Drain)
	fatal     error // the first error recorded by fail

	// admitted and taken count the items admitted and taken so far: the
	// next admission's position and the next drain's first position.
	admitted, taken uint64
	// tickets holds, by token, the ConfigChange of each config change
	// admitted with one (AdmitConfigChange) or drained; ticketless the
	// tokens of config changes admitted without one and not drained yet.
	tickets    map[uint64]ConfigChange
	ticketless map[uint64]bool
}

func newReplay(q queue[uint64], drainInto bool) *replay {
	return &replay{q: q, drainInto: drainInto, tickets: map[uint64]ConfigChange{}, ticketless: map[uint64]bool{}}
}

// admit1 admits one item; a config change of the foreground class goes
// through AdmitConfigChange, for its ticket.
func (r *replay) admit1(kind ControlKind, class ProposalClass, token uint64) error {
	if kind != ControlConfigChange || class.Normalize() != ProposalClassForeground {
		err := r.q.Admit(kind, class, token)
		if err == nil && kind == ControlConfigChange {
			r.ticketless[token] = true
		}
		return err
	}
	cc, err := r.q.AdmitConfigChange(token)
	if err != nil {
		if cc != (ConfigChange{}) {
			return fmt.Errorf("refused config change (%v) returned a ticket", err)
		}
		return err
	}
	if !cc.Pending() {
		return errors.New("admitted config change returned the zero ConfigChange")
	}
	r.tickets[token] = cc
	delete(r.ticketless, token)
	return nil
}

// checkPosition checks a position of the file against its definition.
func checkPosition(what string, want, count uint64) error {
	if got := count % scenarioPositionModulus; got != want {
		return fmt.Errorf("%s %d in the file, but %d items before it", what, want, got)
	}
	return nil
}

// run replays one step.
func (r *replay) run(st *scenarioStep) error {
	q := r.q
	switch st.op {
	case "set_leader":
		return q.SetLeader()
	case "demote":
		return q.Demote()
	case "close":
		return q.CloseSlot()
	case "resolve_config_change":
		cc, ok := r.tickets[st.token]
		if !ok {
			return fmt.Errorf("the ticket of config change %d is unknown in Go (admitted without one, not drained)", st.token)
		}
		got := "ok"
		switch err := cc.Resolve(); err {
		case nil:
		case ErrConfigChangeResolved:
			got = "config_change_stale"
		default:
			return fmt.Errorf("Resolve: %v", err)
		}
		if got != st.expect {
			return fmt.Errorf("resolve %s, want %s", got, st.expect)
		}
	case "fail":
		e := fatalCode(st.code)
		recorded, err := q.Fail(e)
		if err != nil {
			return err
		}
		if recorded == (r.fatal != nil) {
			return fmt.Errorf("Fail(%v) = %v with %v recorded before", e, recorded, r.fatal)
		}
		if recorded {
			r.fatal = e
		}
		if got := map[bool]string{true: "ok", false: "fatal"}[recorded]; got != st.expect {
			return fmt.Errorf("Fail(%d) gave %s, want %s", st.code, got, st.expect)
		}
	case "admit":
		got, err := outcomeOf(r.admit1(st.kind, st.class, st.token), st.kind, r.fatal)
		if err != nil {
			return err
		}
		if got != st.expect {
			return fmt.Errorf("outcome %s, want %s", got, st.expect)
		}
		if got == "ok" {
			if err := checkPosition("position", st.position, r.admitted); err != nil {
				return err
			}
			r.admitted++
		}
	case "admit_batch":
		n, err := q.AdmitBatch(st.kind, st.class, st.tokens)
		got, oerr := outcomeOf(err, st.kind, r.fatal)
		if oerr != nil {
			return oerr
		}
		if n != st.expectAdmitted || got != st.expect {
			return fmt.Errorf("admitted %d, %s; want %d, %s", n, got, st.expectAdmitted, st.expect)
		}
		if n > 0 {
			if err := checkPosition("first_position", st.position, r.admitted); err != nil {
				return err
			}
			r.admitted += uint64(n)
		}
		if st.kind == ControlConfigChange && n > 0 {
			if n != 1 {
				return fmt.Errorf("a batch admitted %d config changes", n)
			}
			r.ticketless[st.tokens[0]] = true
		}
	case "drain", "take":
		if err := checkPosition("first_position", st.position, r.taken); err != nil {
			return err
		}
		got, err := r.drain(st.max)
		if err != nil {
			return err
		}
		r.taken += uint64(len(got))
		for i, c := range got {
			if err := r.checkTicket(c); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		if st.op == "take" {
			if len(got) != st.expectCount {
				return fmt.Errorf("took %d items, want %d", len(got), st.expectCount)
			}
			return nil
		}
		if len(got) != len(st.items) {
			return fmt.Errorf("drained %d items %v, want %d %v", len(got), got, len(st.items), st.items)
		}
		for i, c := range got {
			want := st.items[i]
			if c.Value != want.token || c.Kind != want.kind || c.Class != want.class {
				return fmt.Errorf("item %d: token %d %v %q, want token %d %v %q",
					i, c.Value, c.Kind, c.Class, want.token, want.kind, want.class)
			}
		}
	case "state":
		got, err := q.State()
		if err != nil {
			return err
		}
		s := scenarioState{queued: got.Queued, queuedBackground: got.QueuedBackground,
			queuedProposals: got.QueuedProposals, leader: got.Leader, closed: got.Closed,
			configChangePending: got.ConfigChangePending, fatal: got.Failed}
		if got.Failed {
			code, ok := got.FailErr.(fatalCode)
			if !ok || got.FailErr != r.fatal {
				return fmt.Errorf("State().FailErr = %v, want exactly the recorded %v", got.FailErr, r.fatal)
			}
			s.fatalCode = uint32(code)
		} else if got.FailErr != nil {
			return fmt.Errorf("State().FailErr = %v while not Failed", got.FailErr)
		}
		if s != st.state {
			return fmt.Errorf("state %+v, want %+v", s, st.state)
		}
	case "counters":
		got, err := q.Counters()
		if err != nil {
			return err
		}
		if got != st.counters {
			return fmt.Errorf("counters %+v, want %+v", got, st.counters)
		}
		for _, class := range scenarioClasses {
			for _, result := range scenarioResults {
				if g, w := got.Get(class, result), *counterField(&got, class, result); g != w {
					return fmt.Errorf("Get(%s, %s) = %d, field %d", class, result, g, w)
				}
			}
		}
	default:
		return fmt.Errorf("op %q", st.op)
	}
	return nil
}

// drain takes up to max items with Drain or DrainInto.
func (r *replay) drain(max int) ([]Control[uint64], error) {
	if r.drainInto {
		out := make([]Control[uint64], max)
		n, err := r.q.DrainInto(out)
		return out[:n], err
	}
	var out []Control[uint64]
	n, err := r.q.Drain(max, func(c Control[uint64]) { out = append(out, c) })
	if err == nil && n != len(out) {
		err = fmt.Errorf("Drain returned %d, handed %d", n, len(out))
	}
	return out, err
}

// checkTicket checks a drained item's ConfigChange: for a config change, a
// ticket, the one its admission returned if any (else it is recorded); for
// other kinds, none.
func (r *replay) checkTicket(c Control[uint64]) error {
	if c.Kind != ControlConfigChange {
		if c.ConfigChange != (ConfigChange{}) {
			return fmt.Errorf("a %v carries a ConfigChange", c.Kind)
		}
		return nil
	}
	if !c.ConfigChange.Pending() {
		return errors.New("a drained config change carries the zero ConfigChange")
	}
	if r.ticketless[c.Value] {
		delete(r.ticketless, c.Value)
		r.tickets[c.Value] = c.ConfigChange
		return nil
	}
	if want, ok := r.tickets[c.Value]; !ok || c.ConfigChange != want {
		return errors.New("the drained config change carries another ticket than its admission returned")
	}
	return nil
}

func loadScenarios(t *testing.T) []scenario {
	t.Helper()
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
	return scenarios
}

// runScenario replays sc on a fresh queue of impl.
func runScenario(t *testing.T, impl string, sc scenario, drainInto bool) error {
	q := newQueue[uint64](t, impl, Options{Limits: sc.limits})
	r := newReplay(q, drainInto)
	for i := range sc.steps {
		if err := r.run(&sc.steps[i]); err != nil {
			return fmt.Errorf("scenario %s, step %d %s: %w", sc.name, i, sc.steps[i].raw, err)
		}
	}
	return nil
}

// A replay fails on a wrong expectation of any kind, so a passing replay
// means the data was checked.
func TestWrongExpectationFailsTheReplay(t *testing.T) {
	const (
		file   = `{"system": "admission", "scenarios": [{"name": "a", "upstream": "none: harness check", "limits": {"max_queued_controls": 2, "max_queued_background_controls": 1}, "steps": [%s]}]}`
		leader = `{"op": "set_leader"}, {"op": "admit", "kind": "propose", "class": "background", "token": 7, "expect": "ok", "position": 0}, `
		state  = `"queued": 1, "queued_background": 1, "queued_proposals": 1, "leader": true, "closed": false, "config_change_pending": false`
		cc     = `{"op": "admit", "kind": "config_change", "class": "", "token": 9, "expect": "ok", "position": 1}, `
	)
	parse := func(steps string) scenario {
		t.Helper()
		scs, err := parseScenarios([]byte(fmt.Sprintf(file, steps)))
		if err != nil {
			t.Fatalf("%s: %v", steps, err)
		}
		return scs[0]
	}
	right := []string{
		leader + `{"op": "state", "expect": {` + state + `, "fatal_code": null}}`,
		leader + cc + `{"op": "resolve_config_change", "token": 9, "expect": "ok"}, {"op": "resolve_config_change", "token": 9, "expect": "config_change_stale"}`,
		leader + `{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 7, "kind": "propose", "class": "background"}]}, {"op": "take", "max": 1, "expect_count": 0, "first_position": 1}`,
		leader + `{"op": "counters", "expect": {"background/ok": 1}}, {"op": "fail", "code": 3, "expect": "ok"}, {"op": "fail", "code": 4, "expect": "fatal"}, {"op": "state", "expect": {` + state + `, "fatal_code": 3}}`,
	}
	wrong := []string{
		`{"op": "admit", "kind": "propose", "class": "background", "token": 8, "expect": "ok", "position": 1}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "busy", "position": null}`,
		`{"op": "admit", "kind": "config_change", "class": "", "token": 8, "expect": "not_leader", "position": null}`,
		`{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 2, "expect": "ok", "first_position": 1}`,
		`{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 1, "expect": "throttled", "first_position": 1}`,
		`{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 1, "expect": "busy", "first_position": 0}`,
		`{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 8, "kind": "propose", "class": "background"}]}`,
		`{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "compact_log", "class": "background"}]}`,
		`{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "propose", "class": "foreground"}]}`,
		`{"op": "drain", "max": 10, "first_position": 0, "expect_items": []}`,
		`{"op": "drain", "max": 10, "first_position": 1, "expect_items": [{"token": 7, "kind": "propose", "class": "background"}]}`,
		`{"op": "take", "max": 10, "expect_count": 0, "first_position": 0}`,
		`{"op": "take", "max": 10, "expect_count": 1, "first_position": 1}`,
		`{"op": "state", "expect": {` + strings.Replace(state, `"queued_proposals": 1`, `"queued_proposals": 0`, 1) + `, "fatal_code": null}}`,
		`{"op": "state", "expect": {` + strings.Replace(state, `"leader": true`, `"leader": false`, 1) + `, "fatal_code": null}}`,
		`{"op": "state", "expect": {` + state + `, "fatal_code": 0}}`,
		`{"op": "counters", "expect": {}}`,
		`{"op": "counters", "expect": {"foreground/ok": 1}}`,
		`{"op": "fail", "code": 3, "expect": "fatal"}`,
		cc + `{"op": "resolve_config_change", "token": 9, "expect": "config_change_stale"}`,
		cc + `{"op": "resolve_config_change", "token": 9, "expect": "ok"}, {"op": "resolve_config_change", "token": 9, "expect": "ok"}`,
		`{"op": "set_leader"}, {"op": "close"}, {"op": "admit", "kind": "fresh_status", "class": "", "token": 8, "expect": "ok", "position": 1}`,
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, drainInto := range []bool{false, true} {
			for _, steps := range right {
				if err := runScenario(t, impl, parse(steps), drainInto); err != nil {
					t.Errorf("right steps failed: %v", err)
				}
			}
			for _, step := range wrong {
				if err := runScenario(t, impl, parse(leader+step), drainInto); err == nil {
					t.Errorf("%s passed", step)
				}
			}
		}
	})
}

func TestAdmissionScenarios(t *testing.T) {
	scenarios := loadScenarios(t)
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, mode := range []string{"Drain", "DrainInto"} {
			t.Run(mode, func(t *testing.T) {
				for _, sc := range scenarios {
					t.Run(sc.name, func(t *testing.T) {
						if err := runScenario(t, impl, sc, mode == "DrainInto"); err != nil {
							t.Fatal(err)
						}
					})
				}
			})
		}
	})
}

// The checker refuses what the format does not allow.
func TestScenarioFileIsCheckedStrictly(t *testing.T) {
	const good = `{"system": "admission", "scenarios": [{"name": "a", "upstream": "none: test",
		"limits": {"max_queued_controls": 1, "max_queued_background_controls": 0},
		"steps": [%s]}]}`
	const cc = `{"op": "admit", "kind": "config_change", "class": "", "token": 5, "expect": "ok", "position": 0}, `
	valid := []string{
		`{"op": "set_leader"}`,
		cc + `{"op": "resolve_config_change", "token": 5, "expect": "ok"}`,
		`{"op": "admit_batch", "kind": "config_change", "class": "", "tokens": [5, 6], "expect_admitted": 1, "expect": "config_change_pending", "first_position": 0}, {"op": "resolve_config_change", "token": 5, "expect": "config_change_stale"}`,
		`{"op": "admit", "kind": "propose", "class": "bogus", "token": 1, "expect": "ok", "position": 134217727}`,
		`{"op": "admit", "kind": "fresh_status", "class": "", "token": 9007199254740991, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "", "token": 1, "expect": "busy", "position": null}`,
		`{"op": "admit_batch", "kind": "campaign", "class": "", "tokens": [1, 2], "expect_admitted": 1, "expect": "busy", "first_position": 3}`,
		`{"op": "admit_batch", "kind": "campaign", "class": "", "tokens": [1, 2], "expect_admitted": 0, "expect": "busy", "first_position": null}`,
		`{"op": "drain", "max": 2, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "background"}]}`,
		`{"op": "drain", "max": 2, "first_position": 7, "expect_items": []}`,
		`{"op": "take", "max": 2, "expect_count": 2, "first_position": 0}`,
		`{"op": "take", "max": 2, "expect_count": 0, "first_position": 9}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": true, "closed": false, "fatal_code": 0, "config_change_pending": false}}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": true, "closed": false, "fatal_code": null, "config_change_pending": false}}`,
		`{"op": "counters", "expect": {"foreground/ok": 1}}`,
		`{"op": "counters", "expect": {}}`,
		`{"op": "fail", "code": 4294967295, "expect": "fatal"}`,
	}
	for _, step := range valid {
		if _, err := parseScenarios([]byte(fmt.Sprintf(good, step))); err != nil {
			t.Errorf("%s refused: %v", step, err)
		}
	}
	invalid := []string{
		`{"op": "jump"}`,
		`{"op": "config_change_resolved"}`,
		`{"op": "set_leader", "extra": 1}`,
		`{"op": "set_leader", "op": "demote"}`,
		`{"op": null}`,
		`{"op": 1}`,
		`{"kind": "propose"}`,
		`null`,
		`{"op": "resolve_config_change", "token": 5, "expect": "ok"}`,
		cc + `{"op": "resolve_config_change", "token": 6, "expect": "ok"}`,
		cc + `{"op": "resolve_config_change", "token": 5, "expect": "stale"}`,
		cc + `{"op": "resolve_config_change", "token": 5}`,
		`{"op": "admit", "kind": "config_change", "class": "", "token": 5, "expect": "busy", "position": null}, {"op": "resolve_config_change", "token": 5, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok"}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": null}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "busy", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 134217728}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": -1}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "refused", "position": null}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "stopped", "position": null}`,
		`{"op": "admit", "kind": "vote", "class": "foreground", "token": 1, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "control_kind(8)", "class": "foreground", "token": 1, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": null, "token": 1, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": -1, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1.5, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 9007199254740992, "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": "1", "expect": "ok", "position": 0}`,
		`{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 0, "expect_admitted": 1}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [], "expect_admitted": 0, "expect": "busy", "first_position": null}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1], "expect_admitted": 1, "expect": "busy", "first_position": 0}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1], "expect_admitted": 2, "expect": "ok", "first_position": 0}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1, 2], "expect_admitted": 1, "expect": "ok", "first_position": 0}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1, 2], "expect_admitted": 2, "expect": "ok"}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1, 2], "expect_admitted": 2, "expect": "ok", "first_position": null}`,
		`{"op": "admit_batch", "kind": "propose", "class": "", "tokens": [1, 2], "expect_admitted": 0, "expect": "busy", "first_position": 0}`,
		`{"op": "drain", "max": 0, "first_position": 0, "expect_items": []}`,
		`{"op": "drain", "max": 1, "expect_items": []}`,
		`{"op": "drain", "max": 1, "first_position": null, "expect_items": []}`,
		`{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "background"}, {"token": 2, "kind": "propose", "class": "background"}]}`,
		`{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "bogus"}]}`,
		`{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose"}]}`,
		`{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "", "extra": 0}]}`,
		`{"op": "take", "max": 0, "expect_count": 0, "first_position": 0}`,
		`{"op": "take", "max": 1, "expect_count": 2, "first_position": 0}`,
		`{"op": "take", "max": 1, "expect_count": 1}`,
		`{"op": "take", "max": 1, "expect_count": 1, "first_position": null}`,
		`{"op": "take", "max": 1, "expect_count": 1, "first_position": 0, "expect_items": []}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "leader": true, "closed": false, "fatal_code": null, "config_change_pending": false}}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": true, "closed": false, "config_change_pending": false}}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": 1, "closed": false, "fatal_code": null, "config_change_pending": false}}`,
		`{"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "memory_bytes": 0, "leader": true, "closed": false, "fatal_code": null, "config_change_pending": false}}`,
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
		`{"system": "admission", "scenarios": [{"name": "a", "upstream": "", "limits": {"max_queued_controls": 1, "max_queued_background_controls": 0}, "steps": [{"op": "demote"}]}]}`,
		`{"system": "admission", "scenarios": [{"name": "a", "upstream": "x", "limits": {"max_queued_controls": 1}, "steps": [{"op": "demote"}]}]}`,
		`{"system": "admission", "scenarios": [{"name": "a", "upstream": "x", "limits": {"max_queued_controls": 33554433, "max_queued_background_controls": 0}, "steps": [{"op": "demote"}]}]}`,
		`{"system": "admission", "scenarios": [{"name": "a", "upstream": "x", "limits": {"max_queued_controls": 1, "max_queued_background_controls": 0}, "steps": []}]}`,
		strings.Replace(fmt.Sprintf(good, `{"op": "demote"}`), `"scenarios": [`, `"scenarios": [{"name": "a", "upstream": "x", "limits": {"max_queued_controls": 1, "max_queued_background_controls": 0}, "steps": [{"op": "demote"}]}, `, 1),
	} {
		if _, err := parseScenarios([]byte(doc)); err == nil {
			t.Errorf("%s accepted", doc)
		}
	}
}
