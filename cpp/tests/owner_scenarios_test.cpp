// The MQTT owner registry's scenarios shared by the Rust, Go and C++ suites
// (testdata/owner/scenarios.json, format in testdata/owner/README.md), replayed through the owner
// classes of wkcore.hpp (OwnerRegistry, Owner, OwnerOp, CancelToken), so through the C ABI
// (wk_owner_*). The Rust replay, core/tests/owner_scenarios.rs, is the reference of the format's
// semantics; this one mirrors it.
//
// The file is parsed strictly first: an unknown op, result, budget, close outcome or cancellation,
// a missing, unknown or duplicate field, a name no earlier step created (or one created twice), a
// task never joined, or an inconsistent step (a name without `ok`, both `until` and `until_in`)
// fails the test, so a typo cannot skip a check. Then every scenario runs on a fresh registry on a
// manual clock (wk_owner_registry_new_with_manual_clock, moved only by `advance` through
// wk_owner_registry_advance_clock); close callbacks follow their scripts; background quiesces run
// on threads of their own, joined by `join` steps. A mismatch names the scenario, the step's index
// (from 0) and the step's JSON, and ends that scenario.
//
// Where the C ABI differs from the Rust API the replay composes what the ABI offers:
// - by-identity `activate`, `renew` and `begin`: the ABI has no such calls, so the replay does
//   what Rust's OwnerRegistry::activate / renew / begin do: admission stopped first (read from
//   the registry's snapshot), then wk_owner_registry_resolve (an id retired since, NOT_FOUND, is
//   `fenced`, as Rust's `None`), then the call on the resolved handle. By-identity `fence` and
//   `quiesce` are the ABI's own (wk_owner_registry_fence / _quiesce).
// - `cancelled`: the ABI has no cancellation cause; the replay reads it as Rust ranks it: `done`
//   when the op's state is WK_OWNER_OP_DONE, else `fenced` when its owner's stage is
//   WK_OWNER_STAGE_CLOSING, else `stopped` when wk_owner_info.cancelled is set, else null.
// - `metrics`: a registry made through the ABI counts into the process-wide metrics registry (the
//   ABI takes no metrics registry for owners, and has no per-registry sweep counts), so the replay
//   reads the series of `wukongim_mqtt_owner_sweep_total{event}` from the global registry's
//   snapshot and checks their increase since the scenario began. Nothing else in this test process
//   sweeps meanwhile (ctest runs each test in a process of its own; gtest runs tests one by one).
// - a scripted `panic` close: C++ throws (the README's mapping); the wrapper's close trampoline
//   catches it and returns WK_STATUS_OWNER_CLOSE, which is what a C callback, which cannot panic,
//   returns for it, and what a panic becomes in Rust (quiesce returns `close`).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "json_util.hpp"
#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::Status;

namespace {

// How many scenarios the file holds at least (it may grow, not shrink unnoticed).
constexpr size_t kMinScenarios = 24;

// Numbers of the file stay below 2^53 (testdata/README.md).
constexpr uint64_t kMaxNumber = (uint64_t{1} << 53) - 1;

// The real-time cap of an `unbounded` budget, and the longest a `join` or `close_calls` step
// waits: no scenario comes near it, so reaching it is a failure, never an outcome.
constexpr std::chrono::nanoseconds kGuard = std::chrono::seconds(10);
// A `brief` budget: a deadline this long after the step starts.
constexpr std::chrono::nanoseconds kBrief = std::chrono::milliseconds(20);
// How long a `pending` step waits before it checks that its task has not finished.
constexpr std::chrono::milliseconds kPendingWait{50};

constexpr const char* kSweepFamily = "wukongim_mqtt_owner_sweep_total";

enum class Op {
  kReserve,
  kActivate,
  kRenew,
  kBegin,
  kDone,
  kCheck,
  kMarkUncertain,
  kUid,
  kCancelled,
  kFence,
  kQuiesce,
  kQuiesceStart,
  kPending,
  kJoin,
  kAdvance,
  kSweep,
  kStopAdmission,
  kClose,
  kSnapshot,
  kCloseCalls,
  kRetirement,
  kMetrics,
};

enum class Budget { kUnbounded, kCancelled, kExpired, kBrief };
enum class CloseOutcome { kOk, kFail, kPanic, kCanceled, kDeadlineExceeded };
enum class Cancel { kNone, kDone, kFenced, kStopped };

template <typename T>
struct Named {
  const char* name;
  T value;
};

// A call's results: each is the C status WK_STATUS_OWNER_<NAME> (and `ok`).
constexpr Named<wk_status> kResults[] = {
    {"ok", WK_STATUS_OK},
    {"invalid", WK_STATUS_OWNER_INVALID},
    {"fenced", WK_STATUS_OWNER_FENCED},
    {"unknown", WK_STATUS_OWNER_UNKNOWN},
    {"limit", WK_STATUS_OWNER_LIMIT},
    {"stopped", WK_STATUS_OWNER_STOPPED},
    {"close", WK_STATUS_OWNER_CLOSE},
    {"canceled", WK_STATUS_OWNER_CANCELED},
    {"deadline_exceeded", WK_STATUS_OWNER_DEADLINE_EXCEEDED},
};
constexpr Named<Budget> kBudgets[] = {
    {"unbounded", Budget::kUnbounded},
    {"cancelled", Budget::kCancelled},
    {"expired", Budget::kExpired},
    {"brief", Budget::kBrief},
};
constexpr Named<CloseOutcome> kCloseOutcomes[] = {
    {"ok", CloseOutcome::kOk},
    {"fail", CloseOutcome::kFail},
    {"panic", CloseOutcome::kPanic},
    {"canceled", CloseOutcome::kCanceled},
    {"deadline_exceeded", CloseOutcome::kDeadlineExceeded},
};
constexpr Named<Cancel> kCancels[] = {
    {"done", Cancel::kDone},
    {"fenced", Cancel::kFenced},
    {"stopped", Cancel::kStopped},
};

template <typename T, size_t N>
T lookup(const Named<T> (&table)[N], const std::string& name, const char* what) {
  for (const Named<T>& entry : table)
    if (name == entry.name) return entry.value;
  throw DataError(std::string("unknown ") + what + " \"" + name + "\"");
}

template <typename T, size_t N>
const char* name_of(const Named<T> (&table)[N], T value) {
  for (const Named<T>& entry : table)
    if (entry.value == value) return entry.name;
  return nullptr;
}

bool is_result(Status st) { return name_of(kResults, st.code()) != nullptr; }

// A status as the file names it, or its code and text when it is no result.
std::string describe(Status st) {
  if (const char* name = name_of(kResults, st.code())) return name;
  return std::to_string(st.code()) + " \"" + st.str() + "\"";
}

std::string describe(Cancel c) {
  const char* name = name_of(kCancels, c);
  return name != nullptr ? name : "null";
}

struct Config {
  uint64_t node_id = 0;
  std::string boot_id;
  uint32_t capacity = 0;
  uint32_t max_operations = 0;
  uint64_t pending_timeout = 0;
  uint64_t max_lease = 0;
  uint64_t close_retry = 0;
  uint64_t start = 0;
};

struct Claim {
  std::string namespace_;
  std::string client_id;
  std::string uid;
  uint64_t session_generation = 0;
  uint64_t owner_generation = 0;
};

// An identity mutation (`by_identity`): every field optional, `{}` is the exact identity.
struct Mutation {
  std::optional<std::string> namespace_, client_id, boot_id;
  std::optional<uint64_t> node_id, connection_id;
  std::optional<uint64_t> session_generation_delta, owner_generation_delta, connection_id_delta;

  wkcore::OwnerIdentity apply(wkcore::OwnerIdentity id) const {
    if (namespace_) id.namespace_ = *namespace_;
    if (client_id) id.client_id = *client_id;
    if (session_generation_delta) id.session_generation += *session_generation_delta;
    if (owner_generation_delta) id.owner_generation += *owner_generation_delta;
    if (node_id) id.node_id = *node_id;
    if (boot_id) id.boot_id = *boot_id;
    if (connection_id) id.connection_id = *connection_id;
    if (connection_id_delta) id.connection_id += *connection_id_delta;
    return id;
  }
};

struct SweepCounts {
  uint64_t turns = 0;
  uint64_t visited = 0;
  uint64_t failures = 0;
  friend bool operator==(const SweepCounts& a, const SweepCounts& b) {
    return a.turns == b.turns && a.visited == b.visited && a.failures == b.failures;
  }
};

std::string describe(const SweepCounts& c) {
  return "{turns " + std::to_string(c.turns) + ", visited " + std::to_string(c.visited) +
         ", failures " + std::to_string(c.failures) + "}";
}

bool same(const wk_owner_snapshot& a, const wk_owner_snapshot& b) {
  return a.held == b.held && a.pending == b.pending && a.active == b.active &&
         a.closing == b.closing && a.operations == b.operations && a.deadlines == b.deadlines &&
         a.uncertain == b.uncertain && a.stopped == b.stopped;
}

std::string describe(const wk_owner_snapshot& s) {
  return "{held " + std::to_string(s.held) + ", pending " + std::to_string(s.pending) +
         ", active " + std::to_string(s.active) + ", closing " + std::to_string(s.closing) +
         ", operations " + std::to_string(s.operations) + ", deadlines " +
         std::to_string(s.deadlines) + ", uncertain " + std::to_string(s.uncertain) +
         ", stopped " + (s.stopped ? "true" : "false") + "}";
}

struct Step {
  Op op = Op::kSnapshot;
  Json json;                         // for messages
  std::string owner;                 // the owner named (reserve: its new name, "" for null)
  std::optional<Mutation> identity;  // by_identity: nullopt for null (through the handle)
  Claim claim;                       // reserve
  std::vector<CloseOutcome> close;   // reserve
  Status expect;                     // a call's result
  std::optional<uint64_t> number;    // reserve: connection_id; retirement: last_connection_id
  uint64_t revision = 0;
  std::optional<uint64_t> until, until_in;
  std::string name;       // begin, quiesce_start: `as` ("" for null)
  std::string operation;  // done, check, mark_uncertain, uid, cancelled
  std::string task;       // pending, join
  std::string uid;        // uid: the expected UID
  Cancel cancel = Cancel::kNone;
  Budget budget = Budget::kUnbounded;
  uint64_t by = 0;       // advance
  uint64_t limit = 0;    // sweep
  uint64_t visited = 0;  // sweep
  uint64_t calls = 0;    // close_calls
  wk_owner_snapshot snapshot{};
  SweepCounts counts;
};

struct Scenario {
  std::string name;
  Config config;
  std::vector<Step> steps;
};

// --- Parsing ----------------------------------------------------------------------------------

uint64_t number(const Json& object, const char* name) {
  return uint_field(object, name, kMaxNumber);
}

std::optional<uint64_t> number_or_null(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (value.is_null()) return std::nullopt;
  return as_uint(value, kMaxNumber, std::string("\"") + name + "\"");
}

std::string name_or_null(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (value.is_null()) return "";
  if (!value.is_string() || value.get<std::string>().empty()) {
    throw DataError(std::string("\"") + name + "\" is neither a name nor null");
  }
  return value.get<std::string>();
}

std::string a_name(const Json& object, const char* name) {
  const std::string s = string_field(object, name);
  if (s.empty()) throw DataError(std::string("\"") + name + "\" is an empty name");
  return s;
}

Status result_field(const Json& object, const char* name) {
  return lookup(kResults, string_field(object, name), "result");
}

Budget budget_field(const Json& object) {
  return lookup(kBudgets, string_field(object, "budget"), "budget");
}

Claim parse_claim(const Json& value) {
  expect_fields(value,
                {"namespace", "client_id", "uid", "session_generation", "owner_generation"},
                "claim");
  Claim c;
  c.namespace_ = string_field(value, "namespace");
  c.client_id = string_field(value, "client_id");
  c.uid = string_field(value, "uid");
  c.session_generation = number(value, "session_generation");
  c.owner_generation = number(value, "owner_generation");
  return c;
}

std::optional<Mutation> parse_by_identity(const Json& object) {
  const Json& value = field(object, "by_identity");
  if (value.is_null()) return std::nullopt;
  if (!value.is_object()) throw DataError("\"by_identity\" is neither an object nor null");
  static const std::set<std::string> known = {
      "namespace",     "client_id",                "boot_id",
      "node_id",       "connection_id",            "session_generation_delta",
      "owner_generation_delta", "connection_id_delta"};
  for (const auto& item : value.items()) {
    if (known.count(item.key()) == 0) {
      throw DataError("by_identity has unknown field \"" + item.key() + "\"");
    }
  }
  Mutation m;
  auto str = [&value](const char* name) -> std::optional<std::string> {
    if (!value.contains(name)) return std::nullopt;
    return string_field(value, name);
  };
  auto num = [&value](const char* name) -> std::optional<uint64_t> {
    if (!value.contains(name)) return std::nullopt;
    return number(value, name);
  };
  m.namespace_ = str("namespace");
  m.client_id = str("client_id");
  m.boot_id = str("boot_id");
  m.node_id = num("node_id");
  m.connection_id = num("connection_id");
  m.session_generation_delta = num("session_generation_delta");
  m.owner_generation_delta = num("owner_generation_delta");
  m.connection_id_delta = num("connection_id_delta");
  if (m.connection_id && m.connection_id_delta) {
    throw DataError("by_identity: connection_id and connection_id_delta together");
  }
  return m;
}

wk_owner_snapshot parse_snapshot(const Json& value) {
  expect_fields(value,
                {"held", "pending", "active", "closing", "operations", "deadlines", "uncertain",
                 "stopped"},
                "snapshot");
  wk_owner_snapshot s{};
  s.held = number(value, "held");
  s.pending = number(value, "pending");
  s.active = number(value, "active");
  s.closing = number(value, "closing");
  s.operations = number(value, "operations");
  s.deadlines = number(value, "deadlines");
  s.uncertain = number(value, "uncertain");
  s.stopped = bool_field(value, "stopped");
  return s;
}

SweepCounts parse_counts(const Json& value) {
  expect_fields(value, {"turns", "visited", "failures"}, "metrics");
  SweepCounts c;
  c.turns = number(value, "turns");
  c.visited = number(value, "visited");
  c.failures = number(value, "failures");
  return c;
}

// The names a scenario's steps create and use, checked while its steps are parsed.
struct Names {
  std::set<std::string> owners, operations, tasks, joined;

  void create(std::set<std::string>& set, const std::string& name, const char* what) {
    if (!set.insert(name).second) throw DataError(std::string(what) + " \"" + name + "\" named twice");
  }
  void use(const std::set<std::string>& set, const std::string& name, const char* what) const {
    if (set.count(name) == 0) throw DataError(std::string("no ") + what + " named \"" + name + "\"");
  }
  void use_task(const std::string& name) const {
    use(tasks, name, "task");
    if (joined.count(name) != 0) throw DataError("task \"" + name + "\" already joined");
  }
};

// A step on an owner: `owner` (a name) and `by_identity`.
void parse_target(const Json& value, Step& s, const Names& names) {
  s.owner = a_name(value, "owner");
  names.use(names.owners, s.owner, "owner");
  s.identity = parse_by_identity(value);
}

Step parse_step(const Json& value, Names& names) {
  if (!value.is_object()) throw DataError("a step is not an object");
  const std::string op = string_field(value, "op");
  Step s;
  if (op == "reserve") {
    expect_fields(value, {"op", "owner", "claim", "close", "expect", "connection_id"}, "step");
    s.op = Op::kReserve;
    s.owner = name_or_null(value, "owner");
    s.claim = parse_claim(field(value, "claim"));
    for (const Json& outcome : array_field(value, "close")) {
      if (!outcome.is_string()) throw DataError("a close outcome is not a string: " + outcome.dump());
      s.close.push_back(lookup(kCloseOutcomes, outcome.get<std::string>(), "close outcome"));
    }
    if (s.close.empty()) throw DataError("an empty close script");
    s.expect = result_field(value, "expect");
    s.number = number_or_null(value, "connection_id");
    if (s.owner.empty() == s.expect.ok() || s.number.has_value() != s.expect.ok()) {
      throw DataError("reserve: a name and a connection id exactly when ok");
    }
    if (!s.owner.empty()) names.create(names.owners, s.owner, "owner");
  } else if (op == "activate" || op == "renew") {
    const bool until = value.is_object() && value.contains("until");
    const bool until_in = value.is_object() && value.contains("until_in");
    if (until && until_in) throw DataError("exactly one of \"until\" and \"until_in\", not both");
    expect_fields(value,
                  {"op", "owner", "by_identity", "revision", until ? "until" : "until_in",
                   "expect"},
                  "step");
    s.op = op == "activate" ? Op::kActivate : Op::kRenew;
    parse_target(value, s, names);
    s.revision = number(value, "revision");
    if (until) {
      s.until = number(value, "until");
    } else {
      s.until_in = number(value, "until_in");
    }
    s.expect = result_field(value, "expect");
  } else if (op == "begin") {
    expect_fields(value, {"op", "owner", "by_identity", "as", "expect"}, "step");
    s.op = Op::kBegin;
    parse_target(value, s, names);
    s.name = name_or_null(value, "as");
    s.expect = result_field(value, "expect");
    if (s.name.empty() == s.expect.ok()) throw DataError("begin: a name exactly when ok");
    if (!s.name.empty()) names.create(names.operations, s.name, "operation");
  } else if (op == "done") {
    expect_fields(value, {"op", "operation"}, "step");
    s.op = Op::kDone;
    s.operation = a_name(value, "operation");
    names.use(names.operations, s.operation, "operation");
  } else if (op == "check" || op == "mark_uncertain") {
    expect_fields(value, {"op", "operation", "expect"}, "step");
    s.op = op == "check" ? Op::kCheck : Op::kMarkUncertain;
    s.operation = a_name(value, "operation");
    names.use(names.operations, s.operation, "operation");
    s.expect = result_field(value, "expect");
  } else if (op == "uid") {
    expect_fields(value, {"op", "operation", "expect"}, "step");
    s.op = Op::kUid;
    s.operation = a_name(value, "operation");
    names.use(names.operations, s.operation, "operation");
    s.uid = string_field(value, "expect");
  } else if (op == "cancelled") {
    expect_fields(value, {"op", "operation", "expect"}, "step");
    s.op = Op::kCancelled;
    s.operation = a_name(value, "operation");
    names.use(names.operations, s.operation, "operation");
    const Json& e = field(value, "expect");
    if (e.is_null()) {
      s.cancel = Cancel::kNone;
    } else if (e.is_string()) {
      s.cancel = lookup(kCancels, e.get<std::string>(), "cancellation");
    } else {
      throw DataError("\"expect\" is neither a cancellation nor null");
    }
  } else if (op == "fence") {
    expect_fields(value, {"op", "owner", "by_identity", "expect"}, "step");
    s.op = Op::kFence;
    parse_target(value, s, names);
    s.expect = result_field(value, "expect");
  } else if (op == "quiesce") {
    expect_fields(value, {"op", "owner", "by_identity", "budget", "expect"}, "step");
    s.op = Op::kQuiesce;
    parse_target(value, s, names);
    s.budget = budget_field(value);
    s.expect = result_field(value, "expect");
  } else if (op == "quiesce_start") {
    expect_fields(value, {"op", "owner", "by_identity", "budget", "as"}, "step");
    s.op = Op::kQuiesceStart;
    parse_target(value, s, names);
    s.budget = budget_field(value);
    s.name = a_name(value, "as");
    names.create(names.tasks, s.name, "task");
  } else if (op == "pending") {
    expect_fields(value, {"op", "task"}, "step");
    s.op = Op::kPending;
    s.task = a_name(value, "task");
    names.use_task(s.task);
  } else if (op == "join") {
    expect_fields(value, {"op", "task", "expect"}, "step");
    s.op = Op::kJoin;
    s.task = a_name(value, "task");
    names.use_task(s.task);
    names.joined.insert(s.task);
    s.expect = result_field(value, "expect");
  } else if (op == "advance") {
    expect_fields(value, {"op", "by"}, "step");
    s.op = Op::kAdvance;
    s.by = number(value, "by");
  } else if (op == "sweep") {
    expect_fields(value, {"op", "limit", "budget", "expect", "visited"}, "step");
    s.op = Op::kSweep;
    s.limit = number(value, "limit");
    s.budget = budget_field(value);
    s.expect = result_field(value, "expect");
    s.visited = number(value, "visited");
  } else if (op == "stop_admission") {
    expect_fields(value, {"op"}, "step");
    s.op = Op::kStopAdmission;
  } else if (op == "close") {
    expect_fields(value, {"op", "budget", "expect"}, "step");
    s.op = Op::kClose;
    s.budget = budget_field(value);
    s.expect = result_field(value, "expect");
  } else if (op == "snapshot") {
    expect_fields(value, {"op", "expect"}, "step");
    s.op = Op::kSnapshot;
    s.snapshot = parse_snapshot(field(value, "expect"));
  } else if (op == "close_calls") {
    expect_fields(value, {"op", "owner", "expect"}, "step");
    s.op = Op::kCloseCalls;
    s.owner = a_name(value, "owner");
    names.use(names.owners, s.owner, "owner");
    s.calls = number(value, "expect");
  } else if (op == "retirement") {
    expect_fields(value, {"op", "expect", "last_connection_id"}, "step");
    s.op = Op::kRetirement;
    s.expect = result_field(value, "expect");
    s.number = number_or_null(value, "last_connection_id");
    if (s.number.has_value() != s.expect.ok()) {
      throw DataError("retirement: last_connection_id exactly when ok");
    }
  } else if (op == "metrics") {
    expect_fields(value, {"op", "expect"}, "step");
    s.op = Op::kMetrics;
    s.counts = parse_counts(field(value, "expect"));
  } else {
    throw DataError("unknown op \"" + op + "\"");
  }
  s.json = value;
  return s;
}

Config parse_config(const Json& value) {
  expect_fields(value,
                {"node_id", "boot_id", "capacity", "max_operations", "pending_timeout",
                 "max_lease", "close_retry", "start"},
                "config");
  Config c;
  c.node_id = number(value, "node_id");
  c.boot_id = string_field(value, "boot_id");
  c.capacity = static_cast<uint32_t>(uint_field(value, "capacity", UINT32_MAX));
  c.max_operations = static_cast<uint32_t>(uint_field(value, "max_operations", UINT32_MAX));
  c.pending_timeout = number(value, "pending_timeout");
  c.max_lease = number(value, "max_lease");
  c.close_retry = number(value, "close_retry");
  c.start = number(value, "start");
  return c;
}

bool snake_case(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Parses and validates a whole scenario file.
std::vector<Scenario> parse_scenarios(const std::string& text) {
  const Json top = parse_strict(text);
  expect_fields(top, {"system", "scenarios"}, "the file");
  const std::string system = string_field(top, "system");
  if (system != "owner") throw DataError("system is \"" + system + "\", want \"owner\"");
  std::vector<Scenario> out;
  std::set<std::string> names;
  const Json& scenarios = array_field(top, "scenarios");
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Json& value = scenarios[i];
    Scenario scenario;
    try {
      expect_fields(value, {"name", "upstream", "config", "steps"}, "scenario");
      scenario.name = string_field(value, "name");
      if (scenario.name.empty() || string_field(value, "upstream").empty()) {
        throw DataError("name and upstream must not be empty");
      }
      if (!snake_case(scenario.name)) throw DataError("the name is not snake_case");
      if (!names.insert(scenario.name).second) {
        throw DataError("duplicate scenario name \"" + scenario.name + "\"");
      }
      scenario.config = parse_config(field(value, "config"));
      array_field(value, "steps");
    } catch (const DataError& e) {
      throw DataError("scenario " + std::to_string(i) +
                      (scenario.name.empty() ? "" : " \"" + scenario.name + "\"") + ": " + e.what());
    }
    const Json& steps = value["steps"];
    Names used;
    for (size_t s = 0; s < steps.size(); ++s) {
      try {
        scenario.steps.push_back(parse_step(steps[s], used));
      } catch (const DataError& e) {
        throw DataError("scenario \"" + scenario.name + "\", step " + std::to_string(s) + ": " +
                        steps[s].dump() + ": " + e.what());
      }
    }
    for (const std::string& task : used.tasks) {
      if (used.joined.count(task) == 0) {
        throw DataError("scenario \"" + scenario.name + "\": task \"" + task + "\" never joined");
      }
    }
    out.push_back(std::move(scenario));
  }
  return out;
}

// --- Replaying --------------------------------------------------------------------------------

using Why = std::optional<std::string>;

// What a scripted `panic` close throws (the close trampoline of wkcore.hpp catches it).
struct ScriptedPanic : std::runtime_error {
  ScriptedPanic() : std::runtime_error("scripted close panic (owner scenarios)") {}
};

// A scripted close callback: the n-th call answers the n-th outcome, the last repeating.
struct Script {
  explicit Script(std::vector<CloseOutcome> o) : outcomes(std::move(o)) {}
  std::vector<CloseOutcome> outcomes;
  std::atomic<uint64_t> calls{0};

  wk_status close() {
    const uint64_t n = calls.fetch_add(1, std::memory_order_seq_cst);
    const size_t at = n < outcomes.size() ? static_cast<size_t>(n) : outcomes.size() - 1;
    switch (outcomes[at]) {
      case CloseOutcome::kOk:
        return WK_STATUS_OK;
      case CloseOutcome::kFail:
        return WK_STATUS_OWNER_CLOSE;  // any status but OK, CANCELED, DEADLINE_EXCEEDED fails
      case CloseOutcome::kPanic:
        // No C callback can panic; C++ throws, and the trampoline returns WK_STATUS_OWNER_CLOSE.
        throw ScriptedPanic();
      case CloseOutcome::kCanceled:
        return WK_STATUS_OWNER_CANCELED;
      case CloseOutcome::kDeadlineExceeded:
        return WK_STATUS_OWNER_DEADLINE_EXCEEDED;
    }
    return WK_STATUS_OWNER_CLOSE;
  }
};

// A blocking call's budget: a timeout (real time) and, for `cancelled`, a cancelled token.
struct BudgetArgs {
  uint64_t timeout_ns = 0;
  std::optional<wkcore::CancelToken> token;
  const wkcore::CancelToken* cancel() const { return token ? &*token : nullptr; }
};

struct Held {
  wkcore::Owner handle;
  std::shared_ptr<Script> script;
  wkcore::OwnerIdentity identity;  // the owner's exact identity
};

// An operation and the handle it was begun through (a by-identity begin resolves its own, which
// it keeps alive while the op lives, as Rust's Operation::owned does).
struct OpEntry {
  std::optional<wkcore::Owner> resolved;
  const wkcore::Owner* owner = nullptr;
  wkcore::OwnerOp op;  // declared last: done (destroyed) before `resolved` is freed
};

struct TaskState {
  std::atomic<bool> finished{false};
  wk_status result = WK_STATUS_OK;  // written before `finished`
};

struct Task {
  std::thread thread;
  std::shared_ptr<TaskState> state;
};

bool wait_until(const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + kGuard;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The global registry's series of the sweep family, by event; nullopt when it is not registered.
std::optional<SweepCounts> read_sweep_counts(std::string& error) {
  auto global = wkcore::MetricsRegistry::global();
  if (!global.ok()) {
    error = "the global metrics registry: " + describe(global.status());
    return std::nullopt;
  }
  auto families = global->snapshot();
  if (!families.ok()) {
    error = "the global metrics snapshot: " + describe(families.status());
    return std::nullopt;
  }
  for (const wkcore::MetricFamily& family : *families) {
    if (family.name != kSweepFamily) continue;
    if (family.labels != std::vector<std::string>{"event"}) {
      error = std::string(kSweepFamily) + " has labels other than {event}";
      return std::nullopt;
    }
    SweepCounts c;
    std::set<std::string> seen;
    for (const wkcore::MetricSeries& series : family.series) {
      if (series.label_values.size() != 1) continue;
      const std::string& event = series.label_values[0];
      seen.insert(event);
      if (event == "turns") c.turns = series.value;
      if (event == "visited") c.visited = series.value;
      if (event == "failures") c.failures = series.value;
    }
    if (seen != std::set<std::string>{"turns", "visited", "failures"}) {
      error = std::string(kSweepFamily) + " lacks a series of turns, visited or failures";
      return std::nullopt;
    }
    return c;
  }
  error = std::string(kSweepFamily) + " is not registered";
  return std::nullopt;
}

Why compare_status(const char* what, Status got, Status want) {
  if (!is_result(got)) return std::string(what) + " returned " + describe(got) + ", not a result";
  if (got == want) return std::nullopt;
  return std::string(what) + ": expected " + describe(want) + ", got " + describe(got);
}

Why must_be_ok(const char* what, Status got) {
  if (got.ok()) return std::nullopt;
  return std::string(what) + " returned " + describe(got);
}

class Run {
 public:
  Run(const Config& cfg, wkcore::OwnerRegistry registry, SweepCounts baseline)
      : cfg_(cfg), registry_(std::move(registry)), baseline_(baseline) {}
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // Operations first (they end their scopes, so a quiesce waiting on them returns), then any
  // task a mismatch left is joined (its budget is bounded by kGuard), then the owners.
  ~Run() {
    ops_.clear();
    for (auto& entry : tasks_) {
      if (entry.second.thread.joinable()) entry.second.thread.join();
    }
    tasks_.clear();
    owners_.clear();
  }

  Why step(const Step& s) {
    switch (s.op) {
      case Op::kReserve:
        return reserve(s);
      case Op::kActivate:
      case Op::kRenew: {
        Result<uint64_t> until = lease_end(s);
        if (!until.ok()) return "registry now returned " + describe(until.status());
        const bool renew = s.op == Op::kRenew;
        return compare_status(renew ? "renew" : "activate", lease(s, renew, *until), s.expect);
      }
      case Op::kBegin:
        return begin(s);
      case Op::kDone:
        return must_be_ok("done", op(s.operation).op.done());
      case Op::kCheck:
        return compare_status("check", op(s.operation).op.check(), s.expect);
      case Op::kMarkUncertain:
        return compare_status("mark_uncertain", op(s.operation).op.mark_uncertain(), s.expect);
      case Op::kUid: {
        auto uid = op(s.operation).owner->uid();
        if (!uid.ok()) return "uid returned " + describe(uid.status());
        if (*uid == s.uid) return std::nullopt;
        return "uid: expected \"" + s.uid + "\", got \"" + *uid + "\"";
      }
      case Op::kCancelled:
        return cancelled(s);
      case Op::kFence: {
        const Status got = s.identity ? registry_.fence(identity(s)) : owner(s.owner).handle.fence();
        return compare_status("fence", got, s.expect);
      }
      case Op::kQuiesce: {
        Result<BudgetArgs> b = budget(s.budget);
        if (!b.ok()) return "cancel token: " + describe(b.status());
        const Status got =
            s.identity ? registry_.quiesce(identity(s), b->timeout_ns, b->cancel())
                       : owner(s.owner).handle.quiesce(b->timeout_ns, b->cancel());
        return compare_status("quiesce", got, s.expect);
      }
      case Op::kQuiesceStart:
        return quiesce_start(s);
      case Op::kPending: {
        std::this_thread::sleep_for(kPendingWait);
        if (tasks_.at(s.task).state->finished.load(std::memory_order_acquire)) {
          return std::string("the task has finished");
        }
        return std::nullopt;
      }
      case Op::kJoin: {
        Task& t = tasks_.at(s.task);
        const std::shared_ptr<TaskState> state = t.state;
        if (!wait_until([&state] { return state->finished.load(std::memory_order_acquire); })) {
          return std::string("the task did not finish within the guard (10 s)");
        }
        t.thread.join();
        return compare_status("the task's quiesce", state->result, s.expect);
      }
      case Op::kAdvance:
        return must_be_ok("advance_clock", registry_.advance_clock(s.by));
      case Op::kSweep:
        return sweep(s);
      case Op::kStopAdmission:
        return must_be_ok("stop_admission", registry_.stop_admission());
      case Op::kClose: {
        Result<BudgetArgs> b = budget(s.budget);
        if (!b.ok()) return "cancel token: " + describe(b.status());
        return compare_status("close", registry_.close(b->timeout_ns, b->cancel()), s.expect);
      }
      case Op::kSnapshot: {
        auto got = registry_.snapshot();
        if (!got.ok()) return "snapshot returned " + describe(got.status());
        if (same(*got, s.snapshot)) return std::nullopt;
        return "snapshot: expected " + describe(s.snapshot) + ", got " + describe(*got);
      }
      case Op::kCloseCalls: {
        const std::shared_ptr<Script> script = owner(s.owner).script;
        const uint64_t want = s.calls;
        wait_until([&script, want] { return script->calls.load() >= want; });
        const uint64_t got = script->calls.load();
        if (got == want) return std::nullopt;
        return "close_calls: expected " + std::to_string(want) + ", got " + std::to_string(got);
      }
      case Op::kRetirement:
        return retirement(s);
      case Op::kMetrics: {
        std::string error;
        std::optional<SweepCounts> now = read_sweep_counts(error);
        if (!now) return error;
        const SweepCounts got{now->turns - baseline_.turns, now->visited - baseline_.visited,
                              now->failures - baseline_.failures};
        if (got == s.counts) return std::nullopt;
        return "metrics (since the scenario began): expected " + describe(s.counts) + ", got " +
               describe(got);
      }
    }
    return std::string("unknown op");
  }

  // False while a task has not been joined (a mismatch ended the scenario before its join).
  bool all_joined() const {
    for (const auto& entry : tasks_)
      if (entry.second.thread.joinable()) return false;
    return true;
  }

 private:
  template <typename T>
  using Result = wkcore::Result<T>;

  Held& owner(const std::string& name) { return owners_.at(name); }
  OpEntry& op(const std::string& name) { return *ops_.at(name); }

  wkcore::OwnerIdentity identity(const Step& s) {
    return s.identity->apply(owner(s.owner).identity);
  }

  Result<BudgetArgs> budget(Budget b) const {
    BudgetArgs out;
    switch (b) {
      case Budget::kUnbounded:
        out.timeout_ns = static_cast<uint64_t>(kGuard.count());
        break;
      case Budget::kCancelled: {
        out.timeout_ns = static_cast<uint64_t>(kGuard.count());
        auto token = wkcore::CancelToken::create();
        if (!token.ok()) return token.status();
        Status st = token->cancel();
        if (!st.ok()) return st;
        out.token = std::move(token).value();
        break;
      }
      case Budget::kExpired:
        out.timeout_ns = 0;  // a deadline already passed
        break;
      case Budget::kBrief:
        out.timeout_ns = static_cast<uint64_t>(kBrief.count());
        break;
    }
    return out;
  }

  Result<uint64_t> lease_end(const Step& s) const {
    if (s.until) return *s.until;
    Result<uint64_t> now = registry_.now();
    if (!now.ok()) return now.status();
    return *now + *s.until_in;
  }

  // By identity, as Rust's OwnerRegistry::{activate, renew, begin}: admission stopped first,
  // then the look-up (an id retired since is `fenced`), then the handle's own call.
  Result<wkcore::Owner> resolve_for_admission(const Step& s) {
    auto snap = registry_.snapshot();
    if (!snap.ok()) return snap.status();
    if (snap->stopped) return Status(WK_STATUS_OWNER_STOPPED);
    auto resolved = registry_.resolve(identity(s));
    if (resolved.status().code() == WK_STATUS_NOT_FOUND) return Status(WK_STATUS_OWNER_FENCED);
    return resolved;
  }

  Status lease(const Step& s, bool renew, uint64_t until) {
    if (!s.identity) {
      const wkcore::Owner& h = owner(s.owner).handle;
      return renew ? h.renew(s.revision, until) : h.activate(s.revision, until);
    }
    auto h = resolve_for_admission(s);
    if (!h.ok()) return h.status();
    return renew ? h->renew(s.revision, until) : h->activate(s.revision, until);
  }

  Why reserve(const Step& s) {
    auto script = std::make_shared<Script>(s.close);
    auto r = registry_.reserve(s.claim.namespace_, s.claim.client_id, s.claim.uid,
                               s.claim.session_generation, s.claim.owner_generation,
                               [script](uint64_t /*timeout_ns*/) { return script->close(); });
    if (Why why = compare_status("reserve", r.status(), s.expect)) return why;
    if (!r.ok()) return std::nullopt;
    auto info = r->info();
    if (!info.ok()) return "info returned " + describe(info.status());
    if (info->connection_id != *s.number) {
      return "reserve: expected connection id " + std::to_string(*s.number) + ", got " +
             std::to_string(info->connection_id);
    }
    wkcore::OwnerIdentity id{s.claim.namespace_,     s.claim.client_id, info->session_generation,
                             info->owner_generation, info->node_id,     cfg_.boot_id,
                             info->connection_id};
    owners_.emplace(s.owner, Held{std::move(r).value(), script, std::move(id)});
    return std::nullopt;
  }

  Why begin(const Step& s) {
    auto entry = std::make_unique<OpEntry>();
    Status st;
    if (!s.identity) {
      entry->owner = &owner(s.owner).handle;
    } else {
      auto h = resolve_for_admission(s);
      st = h.status();
      if (h.ok()) {
        entry->resolved = std::move(h).value();
        entry->owner = &*entry->resolved;
      }
    }
    if (st.ok()) {
      auto begun = entry->owner->begin();
      st = begun.status();
      if (begun.ok()) entry->op = std::move(begun).value();
    }
    if (Why why = compare_status("begin", st, s.expect)) return why;
    if (st.ok()) ops_.emplace(s.name, std::move(entry));
    return std::nullopt;
  }

  Why cancelled(const Step& s) {
    OpEntry& e = op(s.operation);
    Cancel got = Cancel::kNone;
    if (e.op.c_ptr()->state == WK_OWNER_OP_DONE) {
      got = Cancel::kDone;
    } else {
      auto info = e.owner->info();
      if (!info.ok()) return "info returned " + describe(info.status());
      if (info->stage == WK_OWNER_STAGE_CLOSING) {
        got = Cancel::kFenced;
      } else if (info->cancelled) {
        got = Cancel::kStopped;
      }
    }
    if (got == s.cancel) return std::nullopt;
    return "cancelled: expected " + describe(s.cancel) + ", got " + describe(got);
  }

  Why quiesce_start(const Step& s) {
    Result<BudgetArgs> b = budget(s.budget);
    if (!b.ok()) return "cancel token: " + describe(b.status());
    auto state = std::make_shared<TaskState>();
    Task task;
    task.state = state;
    if (!s.identity) {
      auto h = owner(s.owner).handle.clone();
      if (!h.ok()) return "owner clone returned " + describe(h.status());
      task.thread = std::thread(
          [state, h = std::move(h).value(), b = std::move(b).value()]() {
            state->result = h.quiesce(b.timeout_ns, b.cancel()).code();
            state->finished.store(true, std::memory_order_release);
          });
    } else {
      auto reg = registry_.clone();
      if (!reg.ok()) return "registry clone returned " + describe(reg.status());
      task.thread = std::thread([state, reg = std::move(reg).value(), id = identity(s),
                                 b = std::move(b).value()]() {
        state->result = reg.quiesce(id, b.timeout_ns, b.cancel()).code();
        state->finished.store(true, std::memory_order_release);
      });
    }
    tasks_.emplace(s.name, std::move(task));
    return std::nullopt;
  }

  Why sweep(const Step& s) {
    Result<BudgetArgs> b = budget(s.budget);
    if (!b.ok()) return "cancel token: " + describe(b.status());
    // Any limit above WK_OWNER_SWEEP_LIMIT_MAX is refused; one beyond uint32_t stays refused.
    const uint32_t limit = s.limit > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(s.limit);
    auto r = registry_.sweep(limit, b->timeout_ns, b->cancel());
    Status got = r.status();  // a refused limit: `invalid`, nothing visited
    uint64_t visited = 0;
    if (r.ok()) {
      if (!r->ran) return std::string("sweep: the result says it did not run");
      got = r->error;
      visited = r->visited;
    }
    if (!is_result(got)) return "sweep returned " + describe(got) + ", not a result";
    if (got == s.expect && visited == s.visited) return std::nullopt;
    return "sweep: expected " + describe(s.expect) + " visiting " + std::to_string(s.visited) +
           ", got " + describe(got) + " visiting " + std::to_string(visited);
  }

  Why retirement(const Step& s) {
    auto r = registry_.retirement();
    if (Why why = compare_status("retirement", r.status(), s.expect)) return why;
    if (!r.ok()) return std::nullopt;
    const std::string boot(reinterpret_cast<const char*>(r->boot_id),
                           r->boot_id_len <= sizeof r->boot_id ? r->boot_id_len : 0);
    if (r->node_id == cfg_.node_id && boot == cfg_.boot_id &&
        r->last_connection_id == *s.number) {
      return std::nullopt;
    }
    return "retirement: expected {node " + std::to_string(cfg_.node_id) + ", boot \"" +
           cfg_.boot_id + "\", last " + std::to_string(*s.number) + "}, got {node " +
           std::to_string(r->node_id) + ", boot \"" + boot + "\", last " +
           std::to_string(r->last_connection_id) + "}";
  }

  Config cfg_;
  wkcore::OwnerRegistry registry_;
  SweepCounts baseline_;
  std::map<std::string, Held> owners_;
  std::map<std::string, std::unique_ptr<OpEntry>> ops_;
  std::map<std::string, Task> tasks_;
};

// Replays every scenario; returns one message per failed scenario (its first failed step).
std::vector<std::string> replay(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> failures;
  for (const Scenario& scenario : scenarios) {
    const std::string where = "scenario \"" + scenario.name + "\"";
    std::string error;
    // The sweep counts before the scenario's registry exists (the family is registered with the
    // first registry of the process: zeros until then).
    std::optional<SweepCounts> baseline = read_sweep_counts(error);
    if (!baseline) {
      if (error != std::string(kSweepFamily) + " is not registered") {
        failures.push_back(where + ": " + error);
        continue;
      }
      baseline = SweepCounts{};
    }
    wkcore::OwnerRegistry::Options options;
    options.node_id = scenario.config.node_id;
    options.boot_id = scenario.config.boot_id;
    options.capacity = scenario.config.capacity;
    options.max_operations = scenario.config.max_operations;
    options.pending_timeout_ns = scenario.config.pending_timeout;
    options.max_lease_ns = scenario.config.max_lease;
    options.close_retry_ns = scenario.config.close_retry;
    auto registry =
        wkcore::OwnerRegistry::create_with_manual_clock(options, scenario.config.start);
    if (!registry.ok()) {
      failures.push_back(where + ": config: " + describe(registry.status()));
      continue;
    }
    Run run(scenario.config, std::move(registry).value(), *baseline);
    bool failed = false;
    for (size_t i = 0; i < scenario.steps.size(); ++i) {
      if (Why why = run.step(scenario.steps[i])) {
        failures.push_back(where + ", step " + std::to_string(i) + ": " +
                           scenario.steps[i].json.dump() + ": " + *why);
        failed = true;
        break;
      }
    }
    // The parse checked that every task is joined by a later step.
    if (!failed && !run.all_joined()) failures.push_back(where + ": a task was never joined");
  }
  return failures;
}

// Parses, validates and replays `text`: the number of scenarios, or the failures.
Outcomes replay_text(const std::string& text) {
  return replay_scenarios(text, parse_scenarios, replay);
}

constexpr const char* kConfig =
    R"({"node_id": 3, "boot_id": "boot", "capacity": 2, "max_operations": 1, "pending_timeout": 1000000000, "max_lease": 10000000000, "close_retry": 1000000000, "start": 1000000000000})";

// One scenario with `steps` (a JSON array's contents), as a file.
std::string one_scenario(const std::string& steps, const std::string& config = kConfig) {
  return R"({"system": "owner", "scenarios": [{"name": "in_memory", "upstream": "none: harness check", "config": )" +
         config + R"(, "steps": [)" + steps + "]}]}";
}


// Reserves and activates owner "a" (connection id 1), then begins "op1" through the handle.
const char* const kPrelude =
    R"({"op": "reserve", "owner": "a", "claim": {"namespace": "n", "client_id": "c", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": ["ok"], "expect": "ok", "connection_id": 1}, )"
    R"({"op": "activate", "owner": "a", "by_identity": null, "revision": 1, "until_in": 5000000000, "expect": "ok"}, )"
    R"({"op": "begin", "owner": "a", "by_identity": {}, "as": "op1", "expect": "ok"})";

}  // namespace

TEST(OwnerScenarios, ReplayEverySharedScenario) {
  std::string text;
  try {
    text = read_file(testdata_path("owner/scenarios.json"));
  } catch (const DataError& e) {
    FAIL() << e.what();
  }
  const auto started = std::chrono::steady_clock::now();
  const Outcomes got = replay_text(text);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  for (const std::string& failure : got.failures) ADD_FAILURE() << failure;
  EXPECT_GE(got.scenarios, kMinScenarios) << "the file holds fewer scenarios than expected";
  std::cout << "[ owner    ] replayed " << got.scenarios << " scenarios in " << ms << " ms\n";
}

TEST(OwnerScenarios, AWrongExpectationFailsTheReplay) {
  {
    const Outcomes ok = replay_text(one_scenario(kPrelude));
    EXPECT_TRUE(ok.failures.empty()) << (ok.failures.empty() ? "" : ok.failures[0]);
    EXPECT_EQ(ok.scenarios, 1u);
  }
  const std::string zeros =
      R"("held": 1, "pending": 0, "active": 1, "closing": 0, "operations": 1, "deadlines": 1, "uncertain": 0, "stopped": false)";
  const std::vector<std::string> wrong = {
      R"({"op": "reserve", "owner": null, "claim": {"namespace": "n", "client_id": "c", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": ["ok"], "expect": "limit", "connection_id": null})",
      R"({"op": "reserve", "owner": "b", "claim": {"namespace": "n", "client_id": "d", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": ["ok"], "expect": "ok", "connection_id": 3})",
      R"({"op": "activate", "owner": "a", "by_identity": {"connection_id_delta": 1}, "revision": 1, "until_in": 5000000000, "expect": "fenced"})",
      R"({"op": "renew", "owner": "a", "by_identity": null, "revision": 0, "until_in": 5000000000, "expect": "ok"})",
      R"({"op": "begin", "owner": "a", "by_identity": null, "as": "op2", "expect": "ok"})",
      R"({"op": "check", "operation": "op1", "expect": "fenced"})",
      R"({"op": "uid", "operation": "op1", "expect": "v"})",
      R"({"op": "cancelled", "operation": "op1", "expect": "fenced"})",
      R"({"op": "fence", "owner": "a", "by_identity": {"node_id": 4}, "expect": "ok"})",
      R"({"op": "quiesce", "owner": "a", "by_identity": null, "budget": "cancelled", "expect": "ok"})",
      R"({"op": "quiesce", "owner": "a", "by_identity": null, "budget": "expired", "expect": "canceled"})",
      R"({"op": "sweep", "limit": 257, "budget": "unbounded", "expect": "ok", "visited": 0})",
      R"({"op": "sweep", "limit": 1, "budget": "unbounded", "expect": "ok", "visited": 1})",
      R"({"op": "close", "budget": "expired", "expect": "ok"})",
      R"({"op": "snapshot", "expect": {)" + replace_first(zeros, "\"operations\": 1", "\"operations\": 0") + "}}",
      R"({"op": "retirement", "expect": "ok", "last_connection_id": 1})",
      R"({"op": "metrics", "expect": {"turns": 1, "visited": 0, "failures": 0}})",
  };
  for (const std::string& step : wrong) {
    const Outcomes got = replay_text(one_scenario(std::string(kPrelude) + ", " + step));
    ASSERT_EQ(got.failures.size(), 1u) << "the replay accepted " << step;
    EXPECT_EQ(got.failures[0].rfind("scenario \"in_memory\", step 3: {", 0), 0u)
        << "the failure must name the scenario, the step and its JSON: " << got.failures[0];
  }
  // The right counterparts of some of them pass.
  for (const std::string& step : std::vector<std::string>{
           R"({"op": "reserve", "owner": "b", "claim": {"namespace": "n", "client_id": "d", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": ["ok"], "expect": "ok", "connection_id": 2})",
           R"({"op": "activate", "owner": "a", "by_identity": {"connection_id_delta": 1}, "revision": 1, "until_in": 5000000000, "expect": "unknown"})",
           R"({"op": "begin", "owner": "a", "by_identity": null, "as": null, "expect": "limit"})",
           R"({"op": "check", "operation": "op1", "expect": "ok"})",
           R"({"op": "uid", "operation": "op1", "expect": "u"})",
           R"({"op": "cancelled", "operation": "op1", "expect": null})",
           R"({"op": "fence", "owner": "a", "by_identity": {"node_id": 4}, "expect": "unknown"})",
           R"({"op": "quiesce", "owner": "a", "by_identity": null, "budget": "cancelled", "expect": "canceled"})",
           R"({"op": "sweep", "limit": 1, "budget": "unbounded", "expect": "ok", "visited": 0})",
           R"({"op": "snapshot", "expect": {)" + zeros + "}}",
           R"({"op": "close_calls", "owner": "a", "expect": 0})",
           R"({"op": "retirement", "expect": "unknown", "last_connection_id": null})",
           R"({"op": "metrics", "expect": {"turns": 0, "visited": 0, "failures": 0}})",
       }) {
    const Outcomes got = replay_text(one_scenario(std::string(kPrelude) + ", " + step));
    EXPECT_TRUE(got.failures.empty()) << step << ": " << (got.failures.empty() ? "" : got.failures[0]);
  }
  // A background quiesce waits for the op; done lets it finish; close scripts and metrics count.
  const std::string background =
      std::string(kPrelude) + ", " +
      R"({"op": "quiesce_start", "owner": "a", "by_identity": null, "budget": "unbounded", "as": "q1"}, )"
      R"({"op": "close_calls", "owner": "a", "expect": 1}, )"
      R"({"op": "pending", "task": "q1"}, )"
      R"({"op": "cancelled", "operation": "op1", "expect": "fenced"}, )"
      R"({"op": "done", "operation": "op1"}, )"
      R"({"op": "join", "task": "q1", "expect": "ok"}, )"
      R"({"op": "sweep", "limit": 1, "budget": "unbounded", "expect": "ok", "visited": 0}, )"
      R"({"op": "metrics", "expect": {"turns": 1, "visited": 0, "failures": 0}})";
  const Outcomes ok = replay_text(one_scenario(background));
  EXPECT_TRUE(ok.failures.empty()) << (ok.failures.empty() ? "" : ok.failures[0]);
  const Outcomes bad = replay_text(one_scenario(replace_first(background, "\"expect\": \"ok\"}, {\"op\": \"sweep\"", "\"expect\": \"close\"}, {\"op\": \"sweep\"")));
  ASSERT_EQ(bad.failures.size(), 1u);
  EXPECT_EQ(bad.failures[0].rfind("scenario \"in_memory\", step 8: {", 0), 0u) << bad.failures[0];
  // Each scripted failure is what quiesce returns.
  for (const auto& outcome : std::vector<std::pair<std::string, std::string>>{
           {"fail", "close"}, {"panic", "close"}, {"canceled", "canceled"},
           {"deadline_exceeded", "deadline_exceeded"}}) {
    const std::string steps =
        replace_first(std::string(kPrelude), "\"close\": [\"ok\"]",
                "\"close\": [\"" + outcome.first + "\", \"ok\"]") +
        R"(, {"op": "done", "operation": "op1"}, {"op": "quiesce", "owner": "a", "by_identity": null, "budget": "unbounded", "expect": ")" +
        outcome.second +
        R"("}, {"op": "quiesce", "owner": "a", "by_identity": {}, "budget": "unbounded", "expect": "ok"}, {"op": "close_calls", "owner": "a", "expect": 2})";
    const Outcomes got = replay_text(one_scenario(steps));
    EXPECT_TRUE(got.failures.empty()) << outcome.first << ": "
                                      << (got.failures.empty() ? "" : got.failures[0]);
    // A count below the calls made fails at once (one above would wait out the guard).
    const Outcomes fewer = replay_text(
        one_scenario(replace_first(steps, "\"expect\": 2}", "\"expect\": 1}")));
    ASSERT_EQ(fewer.failures.size(), 1u) << outcome.first;
    EXPECT_EQ(fewer.failures[0].rfind("scenario \"in_memory\", step 6: {", 0), 0u)
        << fewer.failures[0];
  }
}

TEST(OwnerScenarios, AMalformedFileIsRejected) {
  const std::vector<std::pair<std::string, std::string>> bad_steps = {
      {R"({"op": "reserv"})", "unknown op \"reserv\""},
      {R"({"op": "done", "operation": "op1", "note": 1})", "unknown field \"note\""},
      {R"({"op": "check", "operation": "op1"})", "lacks field \"expect\""},
      {R"({"op": "check", "operation": "op1", "expect": "fence"})", "unknown result \"fence\""},
      {R"({"op": "check", "operation": "op2", "expect": "ok"})", "no operation named \"op2\""},
      {R"({"op": "fence", "owner": "b", "by_identity": null, "expect": "ok"})", "no owner named \"b\""},
      {R"({"op": "fence", "owner": "a", "by_identity": {"cid": 1}, "expect": "ok"})",
       "by_identity has unknown field \"cid\""},
      {R"({"op": "fence", "owner": "a", "by_identity": {"connection_id": 1, "connection_id_delta": 1}, "expect": "ok"})",
       "together"},
      {R"({"op": "fence", "owner": "a", "by_identity": {"node_id": "3"}, "expect": "ok"})",
       "\"node_id\" is not a non-negative integer"},
      {R"({"op": "fence", "owner": "a", "expect": "ok"})", "lacks field \"by_identity\""},
      {R"({"op": "renew", "owner": "a", "by_identity": null, "revision": 2, "until": 1, "until_in": 1, "expect": "ok"})",
       "not both"},
      {R"({"op": "renew", "owner": "a", "by_identity": null, "revision": 2, "expect": "ok"})",
       "lacks field \"until_in\""},
      {R"({"op": "quiesce", "owner": "a", "by_identity": null, "budget": "forever", "expect": "ok"})",
       "unknown budget \"forever\""},
      {R"({"op": "begin", "owner": "a", "by_identity": null, "as": "op1", "expect": "ok"})",
       "operation \"op1\" named twice"},
      {R"({"op": "begin", "owner": "a", "by_identity": null, "as": "op2", "expect": "limit"})",
       "a name exactly when ok"},
      {R"({"op": "reserve", "owner": "b", "claim": {"namespace": "n", "client_id": "d", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": ["explode"], "expect": "ok", "connection_id": 2})",
       "unknown close outcome \"explode\""},
      {R"({"op": "reserve", "owner": "b", "claim": {"namespace": "n", "client_id": "d", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": [], "expect": "ok", "connection_id": 2})",
       "an empty close script"},
      {R"({"op": "reserve", "owner": "b", "claim": {"namespace": "n", "client_id": "d", "uid": "u", "session_generation": 1}, "close": ["ok"], "expect": "ok", "connection_id": 2})",
       "lacks field \"owner_generation\""},
      {R"({"op": "reserve", "owner": "b", "claim": {"namespace": "n", "client_id": "d", "uid": "u", "session_generation": 1, "owner_generation": 1}, "close": ["ok"], "expect": "ok", "connection_id": null})",
       "exactly when ok"},
      {R"({"op": "cancelled", "operation": "op1", "expect": "canceled"})",
       "unknown cancellation \"canceled\""},
      {R"({"op": "quiesce_start", "owner": "a", "by_identity": null, "budget": "unbounded", "as": "q1"})",
       "task \"q1\" never joined"},
      {R"({"op": "join", "task": "q1", "expect": "ok"})", "no task named \"q1\""},
      {R"({"op": "snapshot", "expect": {"held": 1}})", "lacks field \"active\""},
      {R"({"op": "metrics", "expect": {"turns": 0, "visited": 0, "failures": 0, "extra": 0}})",
       "unknown field \"extra\""},
      {R"({"op": "advance", "by": 1, "by": 2})", "duplicate field \"by\""},
      {R"({"op": "advance", "by": -1})", "not a non-negative integer"},
      {R"({"op": "advance", "by": 9007199254740992})", "is above"},
      {R"({"op": "retirement", "expect": "ok", "last_connection_id": null})", "exactly when ok"},
      {R"("snapshot")", "a step is not an object"},
  };
  for (const auto& bad : bad_steps) {
    const Outcomes got = replay_text(one_scenario(std::string(kPrelude) + ", " + bad.first));
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    EXPECT_EQ(got.failures[0].find("invalid scenario file: "), 0u) << got.failures[0];
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }
  // A joined task cannot be joined again.
  {
    const Outcomes got = replay_text(one_scenario(
        std::string(kPrelude) +
        R"(, {"op": "done", "operation": "op1"}, {"op": "quiesce_start", "owner": "a", "by_identity": null, "budget": "unbounded", "as": "q1"}, {"op": "join", "task": "q1", "expect": "ok"}, {"op": "join", "task": "q1", "expect": "ok"})"));
    ASSERT_EQ(got.failures.size(), 1u);
    EXPECT_NE(got.failures[0].find("task \"q1\" already joined"), std::string::npos)
        << got.failures[0];
  }

  const std::string good = one_scenario(kPrelude);
  ASSERT_TRUE(replay_text(good).failures.empty());
  const std::vector<std::pair<std::string, std::string>> bad_files = {
      {replace_first(good, "\"system\": \"owner\"", "\"system\": \"coord\""), "want \"owner\""},
      {replace_first(good, ", \"start\": 1000000000000", ""), "lacks field \"start\""},
      {replace_first(good, "\"start\": 1000000000000", "\"start\": 1000000000000, \"clock\": 0"),
       "unknown field \"clock\""},
      {replace_first(good, "\"upstream\": \"none: harness check\", ", ""), "lacks field \"upstream\""},
      {replace_first(good, "\"upstream\": \"none: harness check\"", "\"upstream\": \"\""),
       "must not be empty"},
      {replace_first(good, "\"name\": \"in_memory\"", "\"name\": \"In-Memory\""), "not snake_case"},
      {replace_first(good, "\"scenarios\"", "\"comment\": \"\", \"scenarios\""), "unknown field \"comment\""},
      {replace_first(good, "\"scenarios\": [{",
               std::string("\"scenarios\": [{\"name\": \"in_memory\", \"upstream\": \"x\", "
                           "\"config\": ") +
                   kConfig + ", \"steps\": []}, {"),
       "duplicate scenario name"},
      {replace_first(good, "]}]}", "]}]"), "invalid JSON"},
  };
  for (const auto& bad : bad_files) {
    ASSERT_NE(bad.first, good);
    const Outcomes got = replay_text(bad.first);
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }
  // A config the library refuses fails the scenario (not the parse).
  const Outcomes zero =
      replay_text(one_scenario("", replace_first(kConfig, "\"capacity\": 2", "\"capacity\": 0")));
  ASSERT_EQ(zero.failures.size(), 1u);
  EXPECT_NE(zero.failures[0].find("config: invalid"), std::string::npos) << zero.failures[0];
}
