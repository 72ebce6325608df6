// The admission scenarios shared by the Rust, Go and C++ suites
// (testdata/admission/scenarios.json, format in testdata/README.md), replayed through
// wkcore.hpp, plus what the data cannot say.
//
// The file is parsed strictly first: an unknown op, field, kind, outcome or counter name, a
// missing or duplicate field, or an inconsistent step fails the test, so a typo cannot skip a
// check. Then every scenario runs on a fresh slot (in a metrics registry of its own), and a
// mismatch names the scenario, the step's index (from 0) and the step's JSON.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "json_util.hpp"
#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::Status;

namespace {

// How many scenarios the file holds at least (it may grow, not shrink unnoticed).
constexpr size_t kMinScenarios = 35;

// Tokens stay below 2^53 so that every JSON parser reads them exactly.
constexpr uint64_t kMaxToken = (uint64_t{1} << 53) - 1;

// The largest drain or take a step may ask for (the ceiling of a queue limit).
constexpr uint64_t kMaxDrain = uint64_t{1} << 25;

// What an unknown class string becomes: neither 0 nor 1, normalized to foreground by the library.
constexpr wk_proposal_class kUnknownClass = static_cast<wk_proposal_class>(7);

enum class Op {
  kSetLeader,
  kDemote,
  kClose,
  kResolveConfigChange,
  kFail,
  kAdmit,
  kAdmitBatch,
  kDrain,
  kTake,
  kState,
  kCounters,
};

enum class Outcome { kOk, kClosed, kFatal, kNotLeader, kConfigChangePending, kBusy, kThrottled };

struct KindName {
  const char* name;
  wk_control_kind kind;
};
constexpr KindName kKinds[] = {
    {"propose", WK_CONTROL_KIND_PROPOSE},
    {"campaign", WK_CONTROL_KIND_CAMPAIGN},
    {"config_change", WK_CONTROL_KIND_CONFIG_CHANGE},
    {"transfer_leader", WK_CONTROL_KIND_TRANSFER_LEADER},
    {"compact_log", WK_CONTROL_KIND_COMPACT_LOG},
    {"capture_hash_slot_snapshot", WK_CONTROL_KIND_CAPTURE_HASH_SLOT_SNAPSHOT},
    {"fresh_status", WK_CONTROL_KIND_FRESH_STATUS},
};

struct OutcomeName {
  const char* name;
  Outcome outcome;
};
constexpr OutcomeName kOutcomes[] = {
    {"ok", Outcome::kOk},
    {"closed", Outcome::kClosed},
    {"fatal", Outcome::kFatal},
    {"not_leader", Outcome::kNotLeader},
    {"config_change_pending", Outcome::kConfigChangePending},
    {"busy", Outcome::kBusy},
    {"throttled", Outcome::kThrottled},
};

// Counter pairs "class/result", in the order of wk_admission_counters' fields.
constexpr const char* kCounterNames[8] = {
    "foreground/ok", "foreground/busy", "foreground/throttled", "foreground/not_leader",
    "background/ok", "background/busy", "background/throttled", "background/not_leader",
};
using Counts = std::array<uint64_t, 8>;

Counts counts_of(const wk_admission_counters& c) {
  return {c.foreground_ok,  c.foreground_busy,  c.foreground_throttled,  c.foreground_not_leader,
          c.background_ok,  c.background_busy,  c.background_throttled,  c.background_not_leader};
}

const char* outcome_name(Outcome outcome) {
  for (const auto& o : kOutcomes)
    if (o.outcome == outcome) return o.name;
  return "?";
}

std::string kind_name(uint32_t kind) {
  for (const auto& k : kKinds)
    if (static_cast<uint32_t>(k.kind) == kind) return k.name;
  return "kind " + std::to_string(kind);
}

// The status the C ABI returns for `outcome` of an action of `kind`.
wk_status status_of(Outcome outcome, wk_control_kind kind) {
  switch (outcome) {
    case Outcome::kOk:
      return WK_STATUS_OK;
    case Outcome::kClosed:
      return WK_STATUS_SLOT_CLOSED;
    case Outcome::kFatal:
      return WK_STATUS_SLOT_FAILED;
    case Outcome::kNotLeader:
      return WK_STATUS_NOT_LEADER;
    case Outcome::kConfigChangePending:
      return WK_STATUS_CONFIG_CHANGE_PENDING;
    case Outcome::kBusy:
      return kind == WK_CONTROL_KIND_PROPOSE ? WK_STATUS_PROPOSAL_BUSY : WK_STATUS_SLOT_BUSY;
    case Outcome::kThrottled:
      return WK_STATUS_PROPOSAL_THROTTLED;
  }
  return WK_STATUS_PANIC;
}

std::string describe(Status st) {
  return std::to_string(st.code()) + " \"" + st.str() + "\"";
}

struct Item {
  uint64_t token = 0;
  uint32_t kind = 0;
  uint32_t cls = 0;
  bool operator==(const Item& o) const {
    return token == o.token && kind == o.kind && cls == o.cls;
  }
};

std::string describe(const std::vector<Item>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += "{" + std::to_string(items[i].token) + " " + kind_name(items[i].kind) + " " +
           (items[i].cls == WK_PROPOSAL_CLASS_BACKGROUND ? "background" : "foreground") + "}";
  }
  return out + "]";
}

struct State {
  uint32_t queued = 0;
  uint32_t queued_background = 0;
  uint32_t queued_proposals = 0;
  bool leader = false;
  bool closed = false;
  std::optional<uint32_t> fatal_code;
  bool config_change_pending = false;
  bool operator==(const State& o) const {
    return queued == o.queued && queued_background == o.queued_background &&
           queued_proposals == o.queued_proposals && leader == o.leader && closed == o.closed &&
           fatal_code == o.fatal_code && config_change_pending == o.config_change_pending;
  }
};

std::string describe(const State& s) {
  return "{queued " + std::to_string(s.queued) + ", queued_background " +
         std::to_string(s.queued_background) + ", queued_proposals " +
         std::to_string(s.queued_proposals) + ", leader " + (s.leader ? "true" : "false") +
         ", closed " + (s.closed ? "true" : "false") + ", fatal_code " +
         (s.fatal_code ? std::to_string(*s.fatal_code) : "null") + ", config_change_pending " +
         (s.config_change_pending ? "true" : "false") + "}";
}

std::string describe(const Counts& c) {
  std::string out = "{";
  bool first = true;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == 0) continue;
    out += (first ? "" : ", ") + std::string(kCounterNames[i]) + ": " + std::to_string(c[i]);
    first = false;
  }
  return out + "}";
}

struct Step {
  Op op = Op::kSetLeader;
  Json json;  // for messages
  wk_control_kind kind = WK_CONTROL_KIND_PROPOSE;
  wk_proposal_class cls = WK_PROPOSAL_CLASS_FOREGROUND;
  uint64_t token = 0;
  std::vector<uint64_t> tokens;
  size_t expect_admitted = 0;
  Outcome expect = Outcome::kOk;
  uint32_t code = 0;
  size_t max = 0;
  size_t expect_count = 0;
  // admit: `position` (empty: null); admit_batch, drain, take: `first_position`.
  std::optional<uint64_t> position;
  bool stale = false;  // resolve_config_change expects config_change_stale
  std::vector<Item> items;
  State state;
  Counts counts{};
};

// A position field: a number below the modulus, or (where allowed) null.
std::optional<uint64_t> parse_position(const Json& object, const char* name, bool nullable) {
  const Json& value = field(object, name);
  if (value.is_null()) {
    if (!nullable) throw DataError(std::string("\"") + name + "\" is null");
    return std::nullopt;
  }
  return as_uint(value, wkcore::kPositionModulus - 1, std::string("\"") + name + "\"");
}

struct Scenario {
  std::string name;
  wk_slot_limits limits{0, 0};
  std::vector<Step> steps;
};

// --- Parsing ----------------------------------------------------------------------------------

wk_control_kind parse_kind(const Json& object) {
  const std::string name = string_field(object, "kind");
  for (const auto& k : kKinds)
    if (name == k.name) return k.kind;
  throw DataError("unknown kind \"" + name + "\"");
}

// `class` of admit and admit_batch: any string; only "background" is background.
wk_proposal_class parse_admit_class(const Json& object) {
  const std::string name = string_field(object, "class");
  if (name == "background") return WK_PROPOSAL_CLASS_BACKGROUND;
  if (name == "foreground") return WK_PROPOSAL_CLASS_FOREGROUND;
  return kUnknownClass;
}

Outcome parse_outcome(const Json& object) {
  const std::string name = string_field(object, "expect");
  for (const auto& o : kOutcomes)
    if (name == o.name) return o.outcome;
  throw DataError("unknown outcome \"" + name + "\"");
}

uint64_t parse_token(const Json& value) { return as_uint(value, kMaxToken, "token"); }

Item parse_item(const Json& value) {
  expect_fields(value, {"token", "kind", "class"}, "item");
  Item item;
  item.token = parse_token(field(value, "token"));
  item.kind = parse_kind(value);
  const std::string cls = string_field(value, "class");
  if (cls == "foreground") {
    item.cls = WK_PROPOSAL_CLASS_FOREGROUND;
  } else if (cls == "background") {
    item.cls = WK_PROPOSAL_CLASS_BACKGROUND;
  } else {
    throw DataError("unknown class of a drained item \"" + cls + "\"");
  }
  return item;
}

State parse_state(const Json& value) {
  expect_fields(value,
                {"queued", "queued_background", "queued_proposals", "leader", "closed",
                 "fatal_code", "config_change_pending"},
                "state expect");
  State s;
  s.queued = static_cast<uint32_t>(uint_field(value, "queued", UINT32_MAX));
  s.queued_background = static_cast<uint32_t>(uint_field(value, "queued_background", UINT32_MAX));
  s.queued_proposals = static_cast<uint32_t>(uint_field(value, "queued_proposals", UINT32_MAX));
  s.leader = bool_field(value, "leader");
  s.closed = bool_field(value, "closed");
  const Json& fatal = field(value, "fatal_code");
  if (!fatal.is_null()) s.fatal_code = static_cast<uint32_t>(as_uint(fatal, UINT32_MAX, "fatal_code"));
  s.config_change_pending = bool_field(value, "config_change_pending");
  return s;
}

Counts parse_counts(const Json& value) {
  if (!value.is_object()) throw DataError("counters expect is not an object");
  Counts counts{};
  for (const auto& entry : value.items()) {
    size_t at = counts.size();
    for (size_t i = 0; i < counts.size(); ++i)
      if (entry.key() == kCounterNames[i]) at = i;
    if (at == counts.size()) {
      throw DataError("unknown counter \"" + entry.key() +
                      "\" (want foreground|background / ok|busy|throttled|not_leader)");
    }
    const uint64_t n = as_uint(entry.value(), UINT64_MAX, "counter \"" + entry.key() + "\"");
    if (n == 0) throw DataError("counter \"" + entry.key() + "\" is 0: list only non-zero counts");
    counts[at] = n;
  }
  return counts;
}

Step parse_step(const Json& value) {
  if (!value.is_object()) throw DataError("a step is not an object");
  Step step;
  step.json = value;
  const std::string op = string_field(value, "op");
  if (op == "set_leader" || op == "demote" || op == "close") {
    expect_fields(value, {"op"}, "step");
    step.op = op == "set_leader" ? Op::kSetLeader : op == "demote" ? Op::kDemote : Op::kClose;
  } else if (op == "resolve_config_change") {
    expect_fields(value, {"op", "token", "expect"}, "step");
    step.op = Op::kResolveConfigChange;
    step.token = parse_token(field(value, "token"));
    const std::string expect = string_field(value, "expect");
    if (expect == "ok") {
      step.stale = false;
    } else if (expect == "config_change_stale") {
      step.stale = true;
    } else {
      throw DataError("unknown outcome of resolve_config_change \"" + expect +
                      "\" (want ok or config_change_stale)");
    }
  } else if (op == "fail") {
    expect_fields(value, {"op", "code", "expect"}, "step");
    step.op = Op::kFail;
    step.code = static_cast<uint32_t>(uint_field(value, "code", UINT32_MAX));
    const std::string expect = string_field(value, "expect");
    if (expect == "ok") {
      step.expect = Outcome::kOk;
    } else if (expect == "fatal") {
      step.expect = Outcome::kFatal;
    } else {
      throw DataError("unknown outcome of fail \"" + expect + "\" (want ok or fatal)");
    }
  } else if (op == "admit") {
    expect_fields(value, {"op", "kind", "class", "token", "expect", "position"}, "step");
    step.op = Op::kAdmit;
    step.kind = parse_kind(value);
    step.cls = parse_admit_class(value);
    step.token = parse_token(field(value, "token"));
    step.expect = parse_outcome(value);
    step.position = parse_position(value, "position", true);
    if ((step.expect == Outcome::kOk) != step.position.has_value()) {
      throw DataError("position must be a number exactly when expect is \"ok\"");
    }
  } else if (op == "admit_batch") {
    expect_fields(value,
                  {"op", "kind", "class", "tokens", "expect_admitted", "expect", "first_position"},
                  "step");
    step.op = Op::kAdmitBatch;
    step.kind = parse_kind(value);
    step.cls = parse_admit_class(value);
    for (const Json& t : array_field(value, "tokens")) step.tokens.push_back(parse_token(t));
    if (step.tokens.empty()) throw DataError("a batch needs at least one token");
    step.expect_admitted = static_cast<size_t>(uint_field(value, "expect_admitted", SIZE_MAX));
    step.expect = parse_outcome(value);
    if (step.expect_admitted > step.tokens.size() ||
        (step.expect == Outcome::kOk) != (step.expect_admitted == step.tokens.size())) {
      throw DataError("expect must be \"ok\" exactly when expect_admitted is the batch's length");
    }
    step.position = parse_position(value, "first_position", true);
    if ((step.expect_admitted > 0) != step.position.has_value()) {
      throw DataError("first_position must be a number exactly when expect_admitted > 0");
    }
  } else if (op == "drain") {
    expect_fields(value, {"op", "max", "first_position", "expect_items"}, "step");
    step.op = Op::kDrain;
    step.max = static_cast<size_t>(uint_field(value, "max", kMaxDrain));
    if (step.max == 0) throw DataError("drain max must be at least 1");
    step.position = parse_position(value, "first_position", false);
    for (const Json& item : array_field(value, "expect_items")) step.items.push_back(parse_item(item));
    if (step.items.size() > step.max) throw DataError("more expect_items than max");
  } else if (op == "take") {
    expect_fields(value, {"op", "max", "expect_count", "first_position"}, "step");
    step.op = Op::kTake;
    step.max = static_cast<size_t>(uint_field(value, "max", kMaxDrain));
    if (step.max == 0) throw DataError("take max must be at least 1");
    step.expect_count = static_cast<size_t>(uint_field(value, "expect_count", kMaxDrain));
    if (step.expect_count > step.max) throw DataError("expect_count above max");
    step.position = parse_position(value, "first_position", false);
  } else if (op == "state") {
    expect_fields(value, {"op", "expect"}, "step");
    step.op = Op::kState;
    step.state = parse_state(field(value, "expect"));
  } else if (op == "counters") {
    expect_fields(value, {"op", "expect"}, "step");
    step.op = Op::kCounters;
    step.counts = parse_counts(field(value, "expect"));
  } else {
    throw DataError("unknown op \"" + op + "\"");
  }
  return step;
}

// Parses and validates a whole scenario file.
std::vector<Scenario> parse_scenarios(const std::string& text) {
  const Json top = parse_strict(text);
  expect_fields(top, {"system", "scenarios"}, "the file");
  const std::string system = string_field(top, "system");
  if (system != "admission") throw DataError("system is \"" + system + "\", want \"admission\"");
  std::vector<Scenario> out;
  std::set<std::string> names;
  const Json& scenarios = array_field(top, "scenarios");
  for (size_t s = 0; s < scenarios.size(); ++s) {
    const Json& value = scenarios[s];
    Scenario scenario;
    try {
      expect_fields(value, {"name", "upstream", "limits", "steps"}, "scenario");
      scenario.name = string_field(value, "name");
      if (scenario.name.empty() || string_field(value, "upstream").empty()) {
        throw DataError("name and upstream must not be empty");
      }
      if (!names.insert(scenario.name).second) {
        throw DataError("duplicate scenario name \"" + scenario.name + "\"");
      }
      const Json& limits = field(value, "limits");
      expect_fields(limits, {"max_queued_controls", "max_queued_background_controls"}, "limits");
      scenario.limits.max_queued_controls =
          static_cast<uint32_t>(uint_field(limits, "max_queued_controls", UINT32_MAX));
      scenario.limits.max_queued_background_controls =
          static_cast<uint32_t>(uint_field(limits, "max_queued_background_controls", UINT32_MAX));
      array_field(value, "steps");
    } catch (const DataError& e) {
      throw DataError("scenario " + std::to_string(s) +
                      (scenario.name.empty() ? "" : " \"" + scenario.name + "\"") + ": " + e.what());
    }
    const Json& steps = value["steps"];
    std::set<uint64_t> config_changes;  // tokens of the config changes admitted so far
    for (size_t i = 0; i < steps.size(); ++i) {
      try {
        Step step = parse_step(steps[i]);
        if (step.kind == WK_CONTROL_KIND_CONFIG_CHANGE) {
          if (step.op == Op::kAdmit && step.expect == Outcome::kOk) config_changes.insert(step.token);
          if (step.op == Op::kAdmitBatch && step.expect_admitted > 0) {
            config_changes.insert(step.tokens[0]);
          }
        }
        if (step.op == Op::kResolveConfigChange && config_changes.count(step.token) == 0) {
          throw DataError("resolve_config_change names no config change admitted before");
        }
        scenario.steps.push_back(std::move(step));
      } catch (const DataError& e) {
        throw DataError("scenario \"" + scenario.name + "\", step " + std::to_string(i) + ": " +
                        steps[i].dump() + ": " + e.what());
      }
    }
    out.push_back(std::move(scenario));
  }
  return out;
}

// --- Replaying --------------------------------------------------------------------------------

std::string describe(std::optional<uint64_t> position) {
  return position ? std::to_string(*position) : std::string("null");
}

// Runs one step; returns what differed (nothing when the step holds). `tickets` holds the ticket
// of each config change admitted so far, by token (the latest with that token).
std::optional<std::string> run_step(const wkcore::Slot& slot, const Step& step,
                                    std::map<uint64_t, wkcore::ConfigChange>& tickets) {
  auto position = [](const char* what, std::optional<uint64_t> want,
                     std::optional<uint64_t> got) -> std::optional<std::string> {
    if (want == got) return std::nullopt;
    return std::string(what) + ": expected " + describe(want) + ", got " + describe(got);
  };
  auto ticket = [&step](wkcore::ConfigChange got) -> std::optional<std::string> {
    const bool want = step.kind == WK_CONTROL_KIND_CONFIG_CHANGE &&
                      (step.op == Op::kAdmit ? step.expect == Outcome::kOk
                                             : step.expect_admitted > 0);
    if (want == static_cast<bool>(got)) return std::nullopt;
    return std::string("config change ticket: expected ") + (want ? "one" : "none");
  };
  auto must_be_ok = [](const char* what, Status st) -> std::optional<std::string> {
    if (st.ok()) return std::nullopt;
    return std::string(what) + " returned " + describe(st);
  };
  auto outcome = [](Outcome want_outcome, wk_control_kind kind,
                    Status got) -> std::optional<std::string> {
    const Status want(status_of(want_outcome, kind));
    if (got == want) return std::nullopt;
    return std::string("outcome: expected ") + outcome_name(want_outcome) + " (" + describe(want) +
           "), got " + describe(got);
  };
  switch (step.op) {
    case Op::kSetLeader:
      return must_be_ok("set_leader", slot.set_leader());
    case Op::kDemote:
      return must_be_ok("demote", slot.demote());
    case Op::kClose:
      return must_be_ok("close", slot.close());
    case Op::kResolveConfigChange: {
      auto it = tickets.find(step.token);
      if (it == tickets.end()) return "no ticket for token " + std::to_string(step.token);
      const Status want(step.stale ? WK_STATUS_CONFIG_CHANGE_STALE : WK_STATUS_OK);
      const Status got = slot.resolve(it->second);
      if (got == want) return std::nullopt;
      return "resolve: expected " + describe(want) + ", got " + describe(got);
    }
    case Op::kFail: {
      const Status want(step.expect == Outcome::kOk ? WK_STATUS_OK : WK_STATUS_SLOT_FAILED);
      const Status got = slot.fail(step.code);
      if (got == want) return std::nullopt;
      return "fail: expected " + describe(want) + ", got " + describe(got);
    }
    case Op::kAdmit: {
      auto got = slot.admit(step.kind, step.cls, step.token);
      if (auto bad = outcome(step.expect, step.kind, got.status())) return bad;
      const std::optional<uint64_t> at =
          got.ok() ? std::optional<uint64_t>(got->position) : std::nullopt;
      if (auto bad = position("position", step.position, at)) return bad;
      const wkcore::ConfigChange change = got.ok() ? got->config_change : wkcore::ConfigChange();
      if (change) tickets[step.token] = change;
      return ticket(change);
    }
    case Op::kAdmitBatch: {
      auto result = slot.admit_batch(step.kind, step.cls, step.tokens);
      if (auto bad = must_be_ok("admit_batch", result.status())) return bad;
      if (result->admitted != step.expect_admitted) {
        return "admitted: expected " + std::to_string(step.expect_admitted) + ", got " +
               std::to_string(result->admitted);
      }
      if (auto bad = outcome(step.expect, step.kind, result->refused)) return bad;
      const std::optional<uint64_t> at = result->admitted > 0
                                             ? std::optional<uint64_t>(result->first_position)
                                             : std::nullopt;
      if (auto bad = position("first_position", step.position, at)) return bad;
      if (result->config_change) tickets[step.tokens[0]] = result->config_change;
      return ticket(result->config_change);
    }
    case Op::kDrain: {
      std::vector<wk_item> out;
      auto drained = slot.drain(out, step.max);
      if (auto bad = must_be_ok("drain", drained.status())) return bad;
      std::vector<Item> got;
      for (const wk_item& it : out) got.push_back(Item{it.token, it.kind, it.proposal_class});
      if (got != step.items) {
        return "drained items: expected " + describe(step.items) + ", got " + describe(got);
      }
      return position("first_position", step.position, drained->first_position);
    }
    case Op::kTake: {
      auto taken = slot.take(step.max);
      if (auto bad = must_be_ok("take", taken.status())) return bad;
      if (taken->count != step.expect_count) {
        return "taken: expected " + std::to_string(step.expect_count) + ", got " +
               std::to_string(taken->count);
      }
      return position("first_position", step.position, taken->first_position);
    }
    case Op::kState: {
      auto st = slot.state();
      if (!st.ok()) return "state returned " + describe(st.status());
      State got;
      got.queued = st->queued;
      got.queued_background = st->queued_background;
      got.queued_proposals = st->queued_proposals;
      got.leader = st->leader != 0;
      got.closed = st->closed != 0;
      if (st->fatal != 0) got.fatal_code = st->fatal_code;
      got.config_change_pending = st->config_change_pending != 0;
      if (st->fatal == 0 && st->fatal_code != 0) {
        return "state: fatal_code " + std::to_string(st->fatal_code) + " without fatal";
      }
      if (got == step.state) return std::nullopt;
      return "state: expected " + describe(step.state) + ", got " + describe(got);
    }
    case Op::kCounters: {
      auto c = slot.counters();
      if (!c.ok()) return "counters returned " + describe(c.status());
      const Counts got = counts_of(*c);
      if (got == step.counts) return std::nullopt;
      return "counters: expected " + describe(step.counts) + ", got " + describe(got);
    }
  }
  return std::string("unhandled op");
}

// Replays every scenario; returns one message per failed scenario.
std::vector<std::string> replay(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> failures;
  for (size_t s = 0; s < scenarios.size(); ++s) {
    const Scenario& scenario = scenarios[s];
    auto metrics = wkcore::MetricsRegistry::create();
    if (!metrics.ok()) {
      failures.push_back("scenario \"" + scenario.name + "\": metrics registry: " +
                         describe(metrics.status()));
      continue;
    }
    auto slot = wkcore::Slot::create(s + 1, scenario.limits, &*metrics);
    if (!slot.ok()) {
      failures.push_back("scenario \"" + scenario.name + "\": limits: " + describe(slot.status()));
      continue;
    }
    std::map<uint64_t, wkcore::ConfigChange> tickets;
    for (size_t i = 0; i < scenario.steps.size(); ++i) {
      if (auto why = run_step(*slot, scenario.steps[i], tickets)) {
        failures.push_back("scenario \"" + scenario.name + "\", step " + std::to_string(i) + ": " +
                           scenario.steps[i].json.dump() + ": " + *why);
        break;
      }
    }
  }
  return failures;
}

// Parses, validates and replays `text`: the number of scenarios, or the failures.
Outcomes replay_text(const std::string& text) {
  return replay_scenarios(text, parse_scenarios, replay);
}

// One scenario with limits 2/1 and `steps` (a JSON array's contents), as a file.
std::string one_scenario(const std::string& steps) {
  return R"({"system": "admission", "scenarios": [{"name": "in_memory", "upstream": "none: harness check",
      "limits": {"max_queued_controls": 2, "max_queued_background_controls": 1},
      "steps": [)" +
         steps + "]}]}";
}


}  // namespace

TEST(Scenarios, ReplayEverySharedScenario) {
  std::string text;
  try {
    text = read_file(testdata_path("admission/scenarios.json"));
  } catch (const DataError& e) {
    FAIL() << e.what();
  }
  const Outcomes got = replay_text(text);
  for (const std::string& failure : got.failures) ADD_FAILURE() << failure;
  EXPECT_GE(got.scenarios, kMinScenarios) << "the file holds fewer scenarios than expected";
}

TEST(Scenarios, AWrongExpectationFailsTheReplay) {
  const std::string leader = R"({"op": "set_leader"})";
  const std::string right =
      leader + R"(, {"op": "admit", "kind": "propose", "class": "background", "token": 7, "expect": "ok", "position": 0})";
  {
    const Outcomes ok = replay_text(one_scenario(right));
    EXPECT_TRUE(ok.failures.empty()) << (ok.failures.empty() ? "" : ok.failures[0]);
    EXPECT_EQ(ok.scenarios, 1u);
  }
  const std::string state =
      R"("queued": 1, "queued_background": 1, "queued_proposals": 1, "leader": true, "closed": false, "config_change_pending": false)";
  const std::vector<std::string> wrong = {
      R"({"op": "admit", "kind": "propose", "class": "background", "token": 8, "expect": "ok", "position": 1})",
      R"({"op": "admit", "kind": "propose", "class": "background", "token": 8, "expect": "busy", "position": null})",
      R"({"op": "admit", "kind": "transfer_leader", "class": "foreground", "token": 8, "expect": "busy", "position": null})",
      R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "throttled", "position": null})",
      R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "ok", "position": 0})",
      R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 2, "expect": "ok", "first_position": 1})",
      R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 1, "expect": "throttled", "first_position": 1})",
      R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [8, 9], "expect_admitted": 1, "expect": "busy", "first_position": 0})",
      R"({"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "propose", "class": "foreground"}]})",
      R"({"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 8, "kind": "propose", "class": "background"}]})",
      R"({"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "compact_log", "class": "background"}]})",
      R"({"op": "drain", "max": 10, "first_position": 0, "expect_items": []})",
      R"({"op": "drain", "max": 10, "first_position": 1, "expect_items": [{"token": 7, "kind": "propose", "class": "background"}]})",
      R"({"op": "take", "max": 10, "expect_count": 0, "first_position": 0})",
      R"({"op": "take", "max": 10, "expect_count": 1, "first_position": 1})",
      R"({"op": "state", "expect": {)" + replace_first(state, "\"queued_proposals\": 1", "\"queued_proposals\": 0") +
          R"(, "fatal_code": null}})",
      R"({"op": "state", "expect": {)" + state + R"(, "fatal_code": 3}})",
      R"({"op": "state", "expect": {)" + replace_first(state, "\"leader\": true", "\"leader\": false") +
          R"(, "fatal_code": null}})",
      R"({"op": "counters", "expect": {"background/ok": 2}})",
      R"({"op": "counters", "expect": {}})",
      R"({"op": "counters", "expect": {"background/ok": 1, "foreground/ok": 1}})",
      R"({"op": "fail", "code": 1, "expect": "fatal"})",
  };
  for (const std::string& step : wrong) {
    const Outcomes got = replay_text(one_scenario(right + ", " + step));
    ASSERT_EQ(got.failures.size(), 1u) << "the replay accepted " << step;
    EXPECT_EQ(got.failures[0].rfind("scenario \"in_memory\", step 2: {", 0), 0u)
        << "the failure must name the scenario, the step and its JSON: " << got.failures[0];
  }
  // The right counterparts of some of them pass.
  for (const std::string& step : std::vector<std::string>{
           R"({"op": "state", "expect": {)" + state + R"(, "fatal_code": null}})",
           R"({"op": "counters", "expect": {"background/ok": 1}})",
           R"({"op": "fail", "code": 1, "expect": "ok"})",
           R"({"op": "drain", "max": 10, "first_position": 0, "expect_items": [{"token": 7, "kind": "propose", "class": "background"}]})",
           R"({"op": "take", "max": 10, "expect_count": 1, "first_position": 0})",
           R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 8, "expect": "ok", "position": 1})",
       }) {
    const Outcomes got = replay_text(one_scenario(right + ", " + step));
    EXPECT_TRUE(got.failures.empty()) << step << ": " << (got.failures.empty() ? "" : got.failures[0]);
  }
  // Config change tickets: the right resolves pass, the wrong ones fail.
  const std::string cc =
      R"({"op": "admit", "kind": "config_change", "class": "foreground", "token": 3, "expect": "ok", "position": 1})";
  const std::string ok = R"({"op": "resolve_config_change", "token": 3, "expect": "ok"})";
  const std::string stale =
      R"({"op": "resolve_config_change", "token": 3, "expect": "config_change_stale"})";
  {
    const Outcomes got = replay_text(one_scenario(right + ", " + cc + ", " + ok + ", " + stale));
    EXPECT_TRUE(got.failures.empty()) << (got.failures.empty() ? "" : got.failures[0]);
  }
  for (const std::string& steps : {cc + ", " + stale, cc + ", " + ok + ", " + ok}) {
    const Outcomes got = replay_text(one_scenario(right + ", " + steps));
    ASSERT_EQ(got.failures.size(), 1u) << "the replay accepted " << steps;
    EXPECT_NE(got.failures[0].find("resolve: expected"), std::string::npos) << got.failures[0];
  }
}

TEST(Scenarios, AMalformedFileIsRejected) {
  // Each malformed step, and the reason it must be refused for.
  const std::vector<std::pair<std::string, std::string>> bad_steps = {
      {R"({"op": "admitt", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 0})",
       "unknown op \"admitt\""},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 0, "note": 1})",
       "unknown field \"note\""},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok"})",
       "lacks field \"position\""},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": null})",
       "exactly when expect"},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "busy", "position": 0})",
       "exactly when expect"},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 134217728})",
       "\"position\" is above"},
      {R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1], "expect_admitted": 1, "expect": "ok", "first_position": null})",
       "exactly when expect_admitted > 0"},
      {R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1], "expect_admitted": 1, "expect": "ok"})",
       "lacks field \"first_position\""},
      {R"({"op": "drain", "max": 1, "expect_items": []})", "lacks field \"first_position\""},
      {R"({"op": "drain", "max": 1, "first_position": null, "expect_items": []})",
       "\"first_position\" is null"},
      {R"({"op": "take", "max": 0, "expect_count": 0, "first_position": 0})",
       "take max must be at least 1"},
      {R"({"op": "take", "max": 1, "expect_count": 2, "first_position": 0})", "expect_count above max"},
      {R"({"op": "resolve_config_change", "token": 1, "expect": "ok"})",
       "names no config change admitted before"},
      {R"({"op": "resolve_config_change", "token": 1, "expect": "stale"})",
       "unknown outcome of resolve_config_change \"stale\""},
      {R"({"op": "config_change_resolved"})", "unknown op \"config_change_resolved\""},
      {R"({"op": "close", "expect": "ok"})", "unknown field \"expect\""},
      {R"({"op": "admit", "kind": "proposal", "class": "foreground", "token": 1, "expect": "ok", "position": 0})",
       "unknown kind \"proposal\""},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "okay", "position": 0})",
       "unknown outcome \"okay\""},
      {R"({"op": "fail", "code": 1, "expect": "busy"})", "unknown outcome of fail \"busy\""},
      {R"({"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "bulk"}]})",
       "unknown class of a drained item \"bulk\""},
      {R"({"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "foreground", "x": 0}]})",
       "unknown field \"x\""},
      {R"({"op": "counters", "expect": {"foreground/stopped": 1}})", "unknown counter"},
      {R"({"op": "counters", "expect": {"foreground/ok": 0}})", "is 0"},
      {R"({"op": "counters", "expect": {"foreground/ok": 1, "foreground/ok": 1}})",
       "duplicate field \"foreground/ok\""},
      {R"({"op": "admit", "kind": "propose", "token": 1, "expect": "ok", "position": 0})",
       "lacks field \"class\""},
      {R"({"kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "position": 0})",
       "missing field \"op\""},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1, "expect": "ok", "expect": "busy", "position": 0})",
       "duplicate field \"expect\""},
      {R"({"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": false, "closed": false, "config_change_pending": false}})",
       "lacks field \"fatal_code\""},
      {R"({"op": "state", "expect": {"queued": 0, "queued_background": 0, "leader": false, "closed": false, "fatal_code": null, "config_change_pending": false}})",
       "lacks field \"queued_proposals\""},
      {R"({"op": "state", "expect": {"queued": 0, "queued_background": 0, "queued_proposals": 0, "leader": 0, "closed": false, "fatal_code": null, "config_change_pending": false}})",
       "\"leader\" is not a boolean"},
      {R"({"op": "drain", "max": 1, "first_position": 0})", "lacks field \"expect_items\""},
      {R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [], "expect_admitted": 0, "expect": "ok", "first_position": null})",
       "at least one token"},
      {R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1, 2], "expect_admitted": 1, "expect": "ok", "first_position": 0})",
       "exactly when"},
      {R"({"op": "admit_batch", "kind": "propose", "class": "foreground", "tokens": [1], "expect_admitted": 1, "expect": "busy", "first_position": 0})",
       "exactly when"},
      {R"({"op": "drain", "max": 0, "first_position": 0, "expect_items": []})",
       "max must be at least 1"},
      {R"({"op": "drain", "max": 1, "first_position": 0, "expect_items": [{"token": 1, "kind": "propose", "class": "foreground"}, {"token": 2, "kind": "propose", "class": "foreground"}]})",
       "more expect_items than max"},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 9007199254740992, "expect": "ok", "position": 0})",
       "token is above"},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": -1, "expect": "ok", "position": 0})",
       "not a non-negative integer"},
      {R"({"op": "admit", "kind": "propose", "class": "foreground", "token": 1.5, "expect": "ok", "position": 0})",
       "not a non-negative integer"},
      {R"({"op": "fail", "code": 4294967296, "expect": "ok"})", "\"code\" is above"},
      {R"("set_leader")", "a step is not an object"},
  };
  for (const auto& bad : bad_steps) {
    const Outcomes got = replay_text(one_scenario(bad.first));
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    // Duplicates are found while parsing the text: the error shows the object instead.
    if (bad.second.rfind("duplicate field", 0) != 0) {
      EXPECT_NE(got.failures[0].find("invalid scenario file: scenario \"in_memory\", step 0: "),
                std::string::npos)
          << got.failures[0];
    }
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }

  const std::string good = one_scenario(R"({"op": "set_leader"})");
  ASSERT_TRUE(replay_text(good).failures.empty());
  const std::vector<std::pair<std::string, std::string>> bad_files = {
      {replace_first(good, "\"system\": \"admission\"", "\"system\": \"tags\""), "want \"admission\""},
      {replace_first(good, "\"limits\"", "\"limit\""), "unknown field \"limit\""},
      {replace_first(good, "\"upstream\": \"none: harness check\",", ""), "lacks field \"upstream\""},
      {replace_first(good, "\"upstream\": \"none: harness check\"", "\"upstream\": \"\""),
       "must not be empty"},
      {replace_first(good, "_background_controls\": 1", "_background\": 1"),
       "unknown field \"max_queued_background\""},
      {replace_first(good, "\"scenarios\"", "\"comment\": \"\", \"scenarios\""), "unknown field \"comment\""},
      {replace_first(good, "\"scenarios\": [{",
               "\"scenarios\": [{\"name\": \"in_memory\", \"upstream\": \"x\", \"limits\": "
               "{\"max_queued_controls\": 0, \"max_queued_background_controls\": 0}, \"steps\": "
               "[]}, {"),
       "duplicate scenario name"},
      {replace_first(good, "]}]}", "]}]"), "invalid JSON"},
      {replace_first(good, "\"steps\": [{\"op\": \"set_leader\"}]", "\"steps\": {}"),
       "\"steps\" is not an array"},
  };
  for (const auto& bad : bad_files) {
    ASSERT_NE(bad.first, good);
    const Outcomes got = replay_text(bad.first);
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }
}

// --- What the data cannot say -----------------------------------------------------------------

// TestNormalizeRaftOptionsDefaultsBackpressureLimits: 8192 total, 4096 background (too many
// tokens for the data file).
TEST(Scenarios, DefaultLimits) {
  auto s = make_slot(10, 0, 0, true);
  std::vector<uint64_t> tokens(10000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = i;
  auto r = s.admit_batch(kPropose, kBg, tokens);
  ASSERT_OK(r);
  EXPECT_EQ(r->admitted, 4096u);
  EXPECT_STATUS(r->refused, WK_STATUS_PROPOSAL_THROTTLED);
  EXPECT_EQ(r->first_position, 0u);
  r = s.admit_batch(kPropose, kFg, tokens);
  ASSERT_OK(r);
  EXPECT_EQ(r->admitted, 8192u - 4096u);
  EXPECT_STATUS(r->refused, WK_STATUS_PROPOSAL_BUSY);
  EXPECT_EQ(r->first_position, 4096u);
  auto st = s.state();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->queued, 8192u);
  EXPECT_EQ(st->queued_background, 4096u);
  EXPECT_EQ(st->queued_proposals, 8192u);
  EXPECT_STATUS(s.admit(kTransferLeader, kFg, 1), WK_STATUS_SLOT_BUSY);
}

// The statuses refusals come back with: identities and texts (the data names outcomes only).
TEST(Scenarios, RefusalsCarryUpstreamIdentities) {
  auto s = make_slot(20, 2, 1, true);
  ASSERT_OK(s.admit(kPropose, kBg, 1));
  Status throttled = s.admit(kPropose, kBg, 2);
  EXPECT_STATUS(throttled, WK_STATUS_PROPOSAL_THROTTLED);
  EXPECT_TRUE(throttled.is_backpressure());
  EXPECT_TRUE(throttled.is(WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED));
  EXPECT_FALSE(throttled.is(WK_STATUS_SLOT_BUSY));

  ASSERT_OK(s.admit(kPropose, kFg, 3));
  Status busy_proposal = s.admit(kPropose, kFg, 4);
  EXPECT_STATUS(busy_proposal, WK_STATUS_PROPOSAL_BUSY);
  EXPECT_TRUE(busy_proposal.is_backpressure());
  EXPECT_TRUE(busy_proposal.is(WK_STATUS_SLOT_BUSY));
  EXPECT_STREQ(busy_proposal.str(), "multiraft: proposal backpressure: multiraft: slot busy");

  Status busy_other = s.admit(kTransferLeader, kFg, 5);
  EXPECT_STATUS(busy_other, WK_STATUS_SLOT_BUSY);
  EXPECT_FALSE(busy_other.is_backpressure()) << "upstream: a busy non-proposal is plain ErrSlotBusy";
  EXPECT_STREQ(busy_other.str(), "multiraft: slot busy");

  ASSERT_OK(s.demote());
  Status not_leader = s.admit(kPropose, kFg, 6);
  EXPECT_STATUS(not_leader, WK_STATUS_NOT_LEADER);
  EXPECT_FALSE(not_leader.is_backpressure());
  ASSERT_OK(s.fail(9));
  EXPECT_STATUS(s.fail(10), WK_STATUS_SLOT_FAILED);
  EXPECT_STATUS(s.admit(kPropose, kFg, 7), WK_STATUS_SLOT_FAILED);
  ASSERT_OK(s.close());
  Status closed = s.admit(kPropose, kFg, 8);
  EXPECT_STATUS(closed, WK_STATUS_SLOT_CLOSED);
  EXPECT_STREQ(closed.str(), "multiraft: slot closed");
}
