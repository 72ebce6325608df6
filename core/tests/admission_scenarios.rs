//! Replays `testdata/admission/scenarios.json`, the admission scenarios shared by the Rust, Go
//! and C++ suites (format: `testdata/README.md`).
//!
//! The file is parsed strictly first: an unknown op, field, kind, outcome or counter name, a
//! missing or duplicate field, or an inconsistent step fails the test, so a typo cannot skip a
//! check. Then every scenario runs on a fresh slot, and a mismatch names the scenario, the step's
//! index (from 0) and the step's JSON.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use wkcore::admission::{
    AdmissionError, AdmissionResult, ConfigChangeError, ConfigChangeTicket, ControlKind,
    ProposalClass, SlotAdmission, SlotLimits,
};

const SCENARIOS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/admission/scenarios.json"
);

/// How many scenarios the file holds at least (it may grow, not shrink unnoticed).
const MIN_SCENARIOS: usize = 35;

/// Tokens stay below 2^53 so that every JSON parser reads them exactly.
const MAX_TOKEN: u64 = (1 << 53) - 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    system: String,
    scenarios: Vec<Scenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    upstream: String,
    limits: Limits,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Limits {
    max_queued_controls: u32,
    max_queued_background_controls: u32,
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    // Struct variants, not unit ones: serde lets extra fields through on a unit variant.
    SetLeader {},
    Demote {},
    Close {},
    ResolveConfigChange {
        token: u64,
        expect: ResolveOutcome,
    },
    Fail {
        code: u32,
        expect: FailOutcome,
    },
    Admit {
        kind: Kind,
        class: String,
        token: u64,
        expect: Outcome,
        // `deserialize_with` makes the field required: `null` must be written out.
        #[serde(deserialize_with = "Option::deserialize")]
        position: Option<u64>,
    },
    AdmitBatch {
        kind: Kind,
        class: String,
        tokens: Vec<u64>,
        expect_admitted: usize,
        expect: Outcome,
        #[serde(deserialize_with = "Option::deserialize")]
        first_position: Option<u64>,
    },
    Drain {
        max: usize,
        first_position: u64,
        expect_items: Vec<Item>,
    },
    Take {
        max: usize,
        expect_count: usize,
        first_position: u64,
    },
    State {
        expect: State,
    },
    Counters {
        expect: Counters,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Propose,
    Campaign,
    ConfigChange,
    TransferLeader,
    CompactLog,
    CaptureHashSlotSnapshot,
    FreshStatus,
}

impl Kind {
    fn control(self) -> ControlKind {
        match self {
            Kind::Propose => ControlKind::Propose,
            Kind::Campaign => ControlKind::Campaign,
            Kind::ConfigChange => ControlKind::ConfigChange,
            Kind::TransferLeader => ControlKind::TransferLeader,
            Kind::CompactLog => ControlKind::CompactLog,
            Kind::CaptureHashSlotSnapshot => ControlKind::CaptureHashSlotSnapshot,
            Kind::FreshStatus => ControlKind::FreshStatus,
        }
    }
}

/// A drained item's class: always normalized, so only the two names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Class {
    Foreground,
    Background,
}

impl Class {
    fn proposal(self) -> ProposalClass {
        match self {
            Class::Foreground => ProposalClass::Foreground,
            Class::Background => ProposalClass::Background,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Ok,
    Closed,
    Fatal,
    NotLeader,
    ConfigChangePending,
    Busy,
    Throttled,
}

impl Outcome {
    /// The name of a refusal (`None`: admitted). `AdmissionError` is exhaustive on purpose, so a
    /// new refusal stops this from compiling until the format names it.
    fn of(refused: Option<AdmissionError>) -> Self {
        match refused {
            None => Outcome::Ok,
            Some(AdmissionError::Closed) => Outcome::Closed,
            Some(AdmissionError::Fatal(_)) => Outcome::Fatal,
            Some(AdmissionError::NotLeader) => Outcome::NotLeader,
            Some(AdmissionError::ConfigChangePending) => Outcome::ConfigChangePending,
            Some(AdmissionError::Busy) => Outcome::Busy,
            Some(AdmissionError::Throttled) => Outcome::Throttled,
        }
    }
}

/// `resolve_config_change`: `ok` when the ticket was the pending change's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResolveOutcome {
    Ok,
    ConfigChangeStale,
}

impl ResolveOutcome {
    /// Exhaustive, as [`Outcome::of`].
    fn of(result: Result<(), ConfigChangeError>) -> Self {
        match result {
            Ok(()) => ResolveOutcome::Ok,
            Err(ConfigChangeError::Stale) => ResolveOutcome::ConfigChangeStale,
        }
    }
}

/// `fail`: `ok` when this call recorded the code, `fatal` when one was already recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FailOutcome {
    Ok,
    Fatal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    token: u64,
    kind: Kind,
    class: Class,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct State {
    queued: u32,
    queued_background: u32,
    queued_proposals: u32,
    leader: bool,
    closed: bool,
    // `deserialize_with` makes the field required: `null` must be written out.
    #[serde(deserialize_with = "Option::deserialize")]
    fatal_code: Option<u32>,
    config_change_pending: bool,
}

/// The non-zero `class/result` counts; every pair not listed is 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counters([[u64; 4]; 2]);

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountersVisitor;

        impl<'de> Visitor<'de> for CountersVisitor {
            type Value = Counters;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of \"class/result\": non-zero count")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counters, A::Error> {
                let mut counts = Counters::default();
                let mut seen = HashSet::new();
                while let Some((key, count)) = map.next_entry::<String, u64>()? {
                    let (class, result) = counter_key(&key).ok_or_else(|| {
                        de::Error::custom(format!(
                            "unknown counter {key:?} (want foreground|background / ok|busy|throttled|not_leader)"
                        ))
                    })?;
                    if !seen.insert(key.clone()) {
                        return Err(de::Error::custom(format!("duplicate counter {key:?}")));
                    }
                    if count == 0 {
                        return Err(de::Error::custom(format!(
                            "counter {key:?} is 0: list only non-zero counts"
                        )));
                    }
                    counts.0[class.index()][result.index()] = count;
                }
                Ok(counts)
            }
        }

        deserializer.deserialize_map(CountersVisitor)
    }
}

fn counter_key(key: &str) -> Option<(ProposalClass, AdmissionResult)> {
    let (class, result) = key.split_once('/')?;
    let class = ProposalClass::ALL
        .into_iter()
        .find(|c| c.label() == class)?;
    let result = AdmissionResult::ALL
        .into_iter()
        .find(|r| r.label() == result)?;
    Some((class, result))
}

/// Parses and validates a scenario file; the `Value` is the same text, for error messages.
fn parse(text: &str) -> Result<(File, Value), String> {
    let file: File =
        serde_json::from_str(text).map_err(|e| format!("invalid scenario file: {e}"))?;
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if file.system != "admission" {
        return Err(format!("system is {:?}, want \"admission\"", file.system));
    }
    let mut names = HashSet::new();
    for (s, scenario) in file.scenarios.iter().enumerate() {
        let at = |i: usize, why: String| {
            format!(
                "scenario {:?}, step {i}: {}: {why}",
                scenario.name, value["scenarios"][s]["steps"][i]
            )
        };
        if scenario.name.is_empty() || scenario.upstream.is_empty() {
            return Err(format!("scenario {s}: name and upstream must not be empty"));
        }
        if !names.insert(scenario.name.as_str()) {
            return Err(format!("duplicate scenario name {:?}", scenario.name));
        }
        // Tokens of the config changes admitted so far: what a resolve may name.
        let mut config_changes = HashSet::new();
        for (i, step) in scenario.steps.iter().enumerate() {
            match step {
                Step::Admit {
                    kind,
                    token,
                    expect,
                    position,
                    ..
                } => {
                    if *token > MAX_TOKEN {
                        return Err(at(i, "token at or above 2^53".into()));
                    }
                    if (*expect == Outcome::Ok) != position.is_some() {
                        return Err(at(
                            i,
                            "position must be a number exactly when expect is \"ok\"".into(),
                        ));
                    }
                    if *kind == Kind::ConfigChange && *expect == Outcome::Ok {
                        config_changes.insert(*token);
                    }
                }
                Step::AdmitBatch {
                    kind,
                    tokens,
                    expect_admitted,
                    expect,
                    first_position,
                    ..
                } => {
                    if tokens.is_empty() {
                        return Err(at(i, "a batch needs at least one token".into()));
                    }
                    if tokens.iter().any(|t| *t > MAX_TOKEN) {
                        return Err(at(i, "token at or above 2^53".into()));
                    }
                    if *expect_admitted > tokens.len()
                        || (*expect == Outcome::Ok) != (*expect_admitted == tokens.len())
                    {
                        return Err(at(
                            i,
                            "expect must be \"ok\" exactly when expect_admitted is the batch's length"
                                .into(),
                        ));
                    }
                    if (*expect_admitted > 0) != first_position.is_some() {
                        return Err(at(
                            i,
                            "first_position must be a number exactly when expect_admitted > 0"
                                .into(),
                        ));
                    }
                    if *kind == Kind::ConfigChange && *expect_admitted > 0 {
                        config_changes.insert(tokens[0]);
                    }
                }
                Step::ResolveConfigChange { token, .. } if !config_changes.contains(token) => {
                    return Err(at(
                        i,
                        "resolve_config_change names no config change admitted before".into(),
                    ));
                }
                Step::Take { max, .. } if *max == 0 => {
                    return Err(at(i, "take max must be at least 1".into()));
                }
                Step::Take {
                    max, expect_count, ..
                } if expect_count > max => {
                    return Err(at(i, "expect_count above max".into()));
                }
                Step::Drain {
                    max, expect_items, ..
                } => {
                    if *max == 0 {
                        return Err(at(i, "drain max must be at least 1".into()));
                    }
                    if expect_items.len() > *max {
                        return Err(at(i, "more expect_items than max".into()));
                    }
                    if expect_items.iter().any(|item| item.token > MAX_TOKEN) {
                        return Err(at(i, "token at or above 2^53".into()));
                    }
                }
                _ => {}
            }
        }
    }
    Ok((file, value))
}

/// Runs one step; `Err` says what differed. `tickets` holds the ticket of each config change
/// admitted so far, by token (the latest with that token).
fn run_step(
    slot: &SlotAdmission<u64>,
    tickets: &mut HashMap<u64, ConfigChangeTicket>,
    step: &Step,
) -> Result<(), String> {
    fn check<T: fmt::Debug + PartialEq>(what: &str, want: T, got: T) -> Result<(), String> {
        if want == got {
            Ok(())
        } else {
            Err(format!("{what}: expected {want:?}, got {got:?}"))
        }
    }
    match step {
        Step::SetLeader {} => slot.set_leader(),
        Step::Demote {} => slot.demote(),
        Step::Close {} => slot.close(),
        Step::ResolveConfigChange { token, expect } => {
            // `parse` checked that a config change with this token was admitted before.
            let ticket = *tickets
                .get(token)
                .ok_or_else(|| format!("no ticket for token {token}: the admission failed"))?;
            let got = ResolveOutcome::of(slot.resolve_config_change(ticket));
            check("resolve", *expect, got)?;
        }
        Step::Fail { code, expect } => {
            let got = if slot.fail(*code) {
                FailOutcome::Ok
            } else {
                FailOutcome::Fatal
            };
            check("fail", *expect, got)?;
        }
        Step::Admit {
            kind,
            class,
            token,
            expect,
            position,
        } => {
            let got = slot.admit(kind.control(), ProposalClass::from_label(class), *token);
            check(
                "outcome",
                *expect,
                Outcome::of(got.as_ref().err().map(|r| r.error)),
            )?;
            let admission = got.ok();
            check("position", *position, admission.map(|a| a.position))?;
            if let Some(ticket) = admission.and_then(|a| a.config_change) {
                tickets.insert(*token, ticket);
            }
            check(
                "a config change ticket",
                *kind == Kind::ConfigChange && admission.is_some(),
                admission.is_some_and(|a| a.config_change.is_some()),
            )?;
        }
        Step::AdmitBatch {
            kind,
            class,
            tokens,
            expect_admitted,
            expect,
            first_position,
        } => {
            let got =
                slot.admit_batch_copied(kind.control(), ProposalClass::from_label(class), tokens);
            check("admitted", *expect_admitted, got.admitted)?;
            check("outcome", *expect, Outcome::of(got.refused))?;
            check(
                "first_position",
                *first_position,
                (got.admitted > 0).then_some(got.first_position),
            )?;
            if let Some(ticket) = got.config_change {
                tickets.insert(tokens[0], ticket);
            }
            check(
                "a config change ticket",
                *kind == Kind::ConfigChange && got.admitted > 0,
                got.config_change.is_some(),
            )?;
        }
        Step::Drain {
            max,
            first_position,
            expect_items,
        } => {
            let mut out = Vec::new();
            let drained = slot.drain(*max, &mut out);
            let got: Vec<_> = out.iter().map(|c| (c.item, c.kind, c.class)).collect();
            let want: Vec<_> = expect_items
                .iter()
                .map(|i| (i.token, i.kind.control(), i.class.proposal()))
                .collect();
            check("drained items", want, got)?;
            check("first_position", *first_position, drained.first_position)?;
        }
        Step::Take {
            max,
            expect_count,
            first_position,
        } => {
            let taken = slot.take(*max);
            check("taken", *expect_count, taken.count)?;
            check("first_position", *first_position, taken.first_position)?;
        }
        Step::State { expect } => {
            let s = slot.snapshot();
            let got = State {
                queued: s.queued,
                queued_background: s.queued_background,
                queued_proposals: s.queued_proposals,
                leader: s.leader,
                closed: s.closed,
                fatal_code: s.fatal,
                config_change_pending: s.config_change_pending,
            };
            check("state", *expect, got)?;
        }
        Step::Counters { expect } => {
            let counts = slot.counters();
            let mut got = Counters::default();
            for class in ProposalClass::ALL {
                for result in AdmissionResult::ALL {
                    got.0[class.index()][result.index()] = counts.get(class, result);
                }
            }
            check(
                "counters [class][ok, busy, throttled, not_leader]",
                *expect,
                got,
            )?;
        }
    }
    Ok(())
}

/// Replays every scenario of a parsed file; returns one message per failed scenario.
fn replay(file: &File, value: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for (s, scenario) in file.scenarios.iter().enumerate() {
        let limits = SlotLimits::new(
            scenario.limits.max_queued_controls,
            scenario.limits.max_queued_background_controls,
        );
        let slot = match SlotAdmission::<u64>::builder(limits)
            .without_metrics()
            .build()
        {
            Ok(slot) => slot,
            Err(e) => {
                failures.push(format!("scenario {:?}: limits: {e}", scenario.name));
                continue;
            }
        };
        let mut tickets = HashMap::new();
        for (i, step) in scenario.steps.iter().enumerate() {
            if let Err(why) = run_step(&slot, &mut tickets, step) {
                failures.push(format!(
                    "scenario {:?}, step {i}: {}: {why}",
                    scenario.name, value["scenarios"][s]["steps"][i]
                ));
                break;
            }
        }
    }
    failures
}

/// Parses, validates and replays `text`.
fn replay_text(text: &str) -> Result<usize, String> {
    let (file, value) = parse(text)?;
    let failures = replay(&file, &value);
    if failures.is_empty() {
        Ok(file.scenarios.len())
    } else {
        Err(failures.join("\n"))
    }
}

#[test]
fn upstream_admission_scenarios_replay() {
    let text = std::fs::read_to_string(SCENARIOS).expect("read testdata/admission/scenarios.json");
    match replay_text(&text) {
        Ok(n) => assert!(
            n >= MIN_SCENARIOS,
            "{n} scenarios, want at least {MIN_SCENARIOS}"
        ),
        Err(e) => panic!("{e}"),
    }
}

/// One scenario with `limits` 2/1 and `steps` (a JSON array's contents), as a file.
fn one_scenario(steps: &str) -> String {
    format!(
        r#"{{"system": "admission", "scenarios": [{{"name": "in_memory", "upstream": "none: harness check",
            "limits": {{"max_queued_controls": 2, "max_queued_background_controls": 1}},
            "steps": [{steps}]}}]}}"#
    )
}

#[test]
fn a_wrong_expectation_fails_the_replay() {
    const LEADER: &str = r#"{"op": "set_leader"}"#;
    let state = r#""queued": 1, "queued_background": 1, "queued_proposals": 1, "leader": true, "closed": false, "config_change_pending": false"#;
    let right = [
        LEADER,
        r#"{"op": "admit", "kind": "propose", "class": "background", "token": 7, "expect": "ok", "position": 0}"#,
    ]
    .join(", ");
    assert_eq!(replay_text(&one_scenario(&right)), Ok(1));
    let wrong = [
        r#"{"op": "admit", "kind": "propose", "class": "background", "token": 8, "expect": "ok", "position": 1}"#.to_string(),
        r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "busy", "position": null}"#.to_string(),
        r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "ok", "position": 0}"#.to_string(),
        r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 2, "expect": "ok", "first_position": 1}"#.to_string(),
        r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 1, "expect": "throttled", "first_position": 1}"#.to_string(),
        r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 1, "expect": "busy", "first_position": 0}"#.to_string(),
        r#"{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "propose", "class": "foreground"}]}"#.to_string(),
        r#"{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 8, "kind": "propose", "class": "background"}]}"#.to_string(),
        r#"{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "compact_log", "class": "background"}]}"#.to_string(),
        r#"{"op": "drain", "max": 10, "first_position": 0, "expect_items": []}"#.to_string(),
        r#"{"op": "drain", "max": 10, "first_position": 1, "expect_items": [{"token": 7, "kind": "propose", "class": "background"}]}"#.to_string(),
        r#"{"op": "take", "max": 10, "expect_count": 0, "first_position": 0}"#.to_string(),
        r#"{"op": "take", "max": 10, "expect_count": 1, "first_position": 1}"#.to_string(),
        format!(r#"{{"op": "state", "expect": {{{}, "fatal_code": null}}}}"#, state.replace("\"queued_proposals\": 1", "\"queued_proposals\": 0")),
        format!(r#"{{"op": "state", "expect": {{{state}, "fatal_code": 3}}}}"#),
        format!(r#"{{"op": "state", "expect": {{{}, "fatal_code": null}}}}"#, state.replace("\"leader\": true", "\"leader\": false")),
        r#"{"op": "counters", "expect": {"background/ok": 2}}"#.to_string(),
        r#"{"op": "counters", "expect": {}}"#.to_string(),
        r#"{"op": "counters", "expect": {"background/ok": 1, "foreground/ok": 1}}"#.to_string(),
        r#"{"op": "fail", "code": 1, "expect": "fatal"}"#.to_string(),
    ];
    for step in wrong {
        let text = one_scenario(&format!("{right}, {step}"));
        let err = replay_text(&text).expect_err(&format!("the replay accepted {step}"));
        assert!(
            err.starts_with("scenario \"in_memory\", step 2: {"),
            "the failure must name the scenario, the step and its JSON: {err}"
        );
    }
    // The right counterparts of some of them pass.
    for step in [
        format!(r#"{{"op": "state", "expect": {{{state}, "fatal_code": null}}}}"#),
        r#"{"op": "counters", "expect": {"background/ok": 1}}"#.to_string(),
        r#"{"op": "fail", "code": 1, "expect": "ok"}"#.to_string(),
        r#"{"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "propose", "class": "background"}]}"#.to_string(),
        r#"{"op": "take", "max": 10, "expect_count": 1, "first_position": 0}"#.to_string(),
        r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "ok", "position": 1}"#.to_string(),
    ] {
        let text = one_scenario(&format!("{right}, {step}"));
        assert_eq!(replay_text(&text), Ok(1), "{step}");
    }
    // Config change tickets: the right resolves pass, the wrong ones fail.
    let cc = r#"{"op": "admit", "kind": "config_change", "class": "foreground", "token": 3, "expect": "ok", "position": 1}"#;
    let ok = r#"{"op": "resolve_config_change", "token": 3, "expect": "ok"}"#;
    let stale = r#"{"op": "resolve_config_change", "token": 3, "expect": "config_change_stale"}"#;
    assert_eq!(
        replay_text(&one_scenario(&format!("{right}, {cc}, {ok}, {stale}"))),
        Ok(1)
    );
    for steps in [format!("{cc}, {stale}"), format!("{cc}, {ok}, {ok}")] {
        let text = one_scenario(&format!("{right}, {steps}"));
        let err = replay_text(&text).expect_err(&steps);
        assert!(err.contains("resolve: expected"), "{err}");
    }
}

#[test]
fn a_malformed_file_is_rejected() {
    // Each malformed step, and the reason it must be refused for.
    let bad_steps = [
        (
            r#"{"op": "admitt", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok"}"#,
            "unknown variant `admitt`",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 0, "note": 1}"#,
            "unknown field `note`",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok"}"#,
            "missing field `position`",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": null}"#,
            "exactly when expect",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "busy", "position": 0}"#,
            "exactly when expect",
        ),
        (
            r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1], "expect_admitted": 1, "expect": "ok", "first_position": null}"#,
            "exactly when expect_admitted > 0",
        ),
        (
            r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1], "expect_admitted": 1, "expect": "ok"}"#,
            "missing field `first_position`",
        ),
        (
            r#"{"op": "drain", "max": 1, "expect_items": []}"#,
            "missing field `first_position`",
        ),
        (
            r#"{"op": "take", "max": 0, "expect_count": 0, "first_position": 0}"#,
            "take max must be at least 1",
        ),
        (
            r#"{"op": "take", "max": 1, "expect_count": 2, "first_position": 0}"#,
            "expect_count above max",
        ),
        (
            r#"{"op": "resolve_config_change", "token": 1, "expect": "ok"}"#,
            "names no config change admitted before",
        ),
        (
            r#"{"op": "resolve_config_change", "token": 1, "expect": "stale"}"#,
            "unknown variant `stale`",
        ),
        (
            r#"{"op": "config_change_resolved"}"#,
            "unknown variant `config_change_resolved`",
        ),
        (
            r#"{"op": "close", "expect": "ok"}"#,
            "unknown field `expect`",
        ),
        (
            r#"{"op": "admit", "kind": "proposal", "class": "foreground", "token": 1, "expect": "ok", "position": 0}"#,
            "unknown variant `proposal`",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "okay", "position": 0}"#,
            "unknown variant `okay`",
        ),
        (
            r#"{"op": "fail", "code": 1, "expect": "busy"}"#,
            "unknown variant `busy`",
        ),
        (
            r#"{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "bulk"}]}"#,
            "unknown variant `bulk`",
        ),
        (
            r#"{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "foreground", "x": 0}]}"#,
            "unknown field `x`",
        ),
        (
            r#"{"op": "counters", "expect": {"foreground/stopped": 1}}"#,
            "unknown counter",
        ),
        (
            r#"{"op": "counters", "expect": {"foreground/ok": 0}}"#,
            "is 0",
        ),
        (
            r#"{"op": "counters", "expect": {"foreground/ok": 1, "foreground/ok": 1}}"#,
            "duplicate counter",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "token": 1, "expect": "ok", "position": 0}"#,
            "missing field `class`",
        ),
        (
            r#"{"kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 0}"#,
            "missing field `op`",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "expect": "busy", "position": 0}"#,
            "duplicate field `expect`",
        ),
        (
            r#"{"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": false, "closed": false, "config_change_pending": false}}"#,
            "missing field `fatal_code`",
        ),
        (
            r#"{"op": "state", "expect": {"queued": 0, "queued_background": 0, "leader": false, "closed": false, "fatal_code": null, "config_change_pending": false}}"#,
            "missing field `queued_proposals`",
        ),
        (
            r#"{"op": "drain", "max": 1, "first_position": 0}"#,
            "missing field `expect_items`",
        ),
        (
            r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [], "expect_admitted": 0, "expect": "ok", "first_position": null}"#,
            "at least one token",
        ),
        (
            r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1, 2], "expect_admitted": 1, "expect": "ok", "first_position": 0}"#,
            "exactly when",
        ),
        (
            r#"{"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1], "expect_admitted": 1, "expect": "busy", "first_position": 0}"#,
            "exactly when",
        ),
        (
            r#"{"op": "drain", "max": 0, "first_position": 0, "expect_items": []}"#,
            "max must be at least 1",
        ),
        (
            r#"{"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "foreground"}, {"token": 2, "kind": "propose", "class": "foreground"}]}"#,
            "more expect_items than max",
        ),
        (
            r#"{"op": "admit", "kind": "propose", "class": "foreground", "token": 9007199254740992, "expect": "ok", "position": 0}"#,
            "2^53",
        ),
    ];
    for (step, reason) in bad_steps {
        let err = replay_text(&one_scenario(step)).expect_err(step);
        assert!(
            err.contains(reason),
            "{step} was refused for another reason: {err}"
        );
    }
    let good = one_scenario(r#"{"op": "set_leader"}"#);
    assert_eq!(replay_text(&good), Ok(1));
    for (bad, reason) in [
        (good.replace("\"system\": \"admission\"", "\"system\": \"tags\""), "want \"admission\""),
        (good.replace("\"limits\"", "\"limit\""), "unknown field `limit`"),
        (good.replace("\"upstream\": \"none: harness check\",", ""), "missing field `upstream`"),
        (good.replace("\"upstream\": \"none: harness check\"", "\"upstream\": \"\""), "must not be empty"),
        (good.replace("_background_controls\": 1", "_background\": 1"), "unknown field `max_queued_background`"),
        (good.replace("\"scenarios\"", "\"comment\": \"\", \"scenarios\""), "unknown field `comment`"),
        (
            good.replace(
                "\"scenarios\": [{",
                "\"scenarios\": [{\"name\": \"in_memory\", \"upstream\": \"x\", \"limits\": {\"max_queued_controls\": 0, \"max_queued_background_controls\": 0}, \"steps\": []}, {",
            ),
            "duplicate scenario name",
        ),
    ] {
        assert_ne!(bad, good);
        let err = replay_text(&bad).expect_err(&bad);
        assert!(err.contains(reason), "{bad} was refused for another reason: {err}");
    }
}
