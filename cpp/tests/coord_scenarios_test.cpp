// The coordination scenarios shared by the Rust, Go and C++ suites
// (testdata/coord/scenarios.json, format in testdata/coord/README.md), replayed through the
// coordination classes of wkcore.hpp (Ledger, HandoffLedger, AnchorTable), so through the C ABI.
//
// The file is parsed strictly first: an unknown op, subject, field, result, state, outcome or fire
// kind, a missing or duplicate field, or an inconsistent step (an outcome without a finalized
// state, a batch whose expectations do not match its keys) fails the test, so a typo cannot skip
// a check. Then every scenario runs on a fresh ledger, hand-off ledger or anchor table (ledgers
// in a metrics registry of their own), and a mismatch names the scenario, the step's index (from
// 0) and the step's JSON.
#include <gtest/gtest.h>

#include <cstdint>
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
constexpr size_t kMinScenarios = 17;

// Numbers of the file stay below 2^53 (testdata/coord/README.md).
constexpr uint64_t kMaxNumber = (uint64_t{1} << 53) - 1;

enum class Subject { kLedger, kHandoff, kAnchors };

enum class Op {
  // ledger
  kInsert,
  kPlace,
  kClaim,
  kFinalize,
  kFinalizeBatch,
  kTake,
  kTouch,
  kReconcile,
  kReclaim,
  kFinalizeOwn,
  kSweepOrphans,
  kGet,
  kLen,
  kCounts,
  // handoff (besides reconcile, reclaim, get, len, counts)
  kHandoffClaim,
  kClaimBatch,
  kComplete,
  // anchors
  kAnchorInsert,
  kAnchorRemove,
  kTryFire,
  kAdvance,
  kAnchorUnset,
  kAnchorGet,
};

struct Name32 {
  const char* name;
  uint32_t value;
};

constexpr Name32 kResults[] = {
    {"won", WK_COORD_RESULT_WON},           {"lost", WK_COORD_RESULT_LOST},
    {"duplicate", WK_COORD_RESULT_DUPLICATE}, {"not_found", WK_COORD_RESULT_NOT_FOUND},
    {"full", WK_COORD_RESULT_FULL},         {"mismatch", WK_COORD_RESULT_MISMATCH},
};
constexpr Name32 kStates[] = {
    {"none", WK_RECORD_STATE_NONE},
    {"placed", WK_RECORD_STATE_PLACED},
    {"claimed", WK_RECORD_STATE_CLAIMED},
    {"finalized", WK_RECORD_STATE_FINALIZED},
};
constexpr Name32 kOutcomes[] = {
    {"succeeded", WK_OUTCOME_SUCCEEDED},
    {"failed", WK_OUTCOME_FAILED},
    {"timed_out", WK_OUTCOME_TIMED_OUT},
    {"orphaned", WK_OUTCOME_ORPHANED},
};
constexpr Name32 kFireKinds[] = {
    {"fired", WK_FIRE_KIND_FIRED},
    {"not_due", WK_FIRE_KIND_NOT_DUE},
    {"lost", WK_FIRE_KIND_LOST},
    {"anchored_first_seen", WK_FIRE_KIND_ANCHORED_FIRST_SEEN},
};

template <size_t N>
uint32_t lookup(const Name32 (&table)[N], const std::string& name, const char* what) {
  for (const Name32& entry : table)
    if (name == entry.name) return entry.value;
  throw DataError(std::string("unknown ") + what + " \"" + name + "\"");
}

template <size_t N>
std::string name_of(const Name32 (&table)[N], uint32_t value) {
  for (const Name32& entry : table)
    if (entry.value == value) return entry.name;
  return std::to_string(value);
}

std::string outcome_name(uint32_t code) { return name_of(kOutcomes, code); }

std::string describe(Status st) { return std::to_string(st.code()) + " \"" + st.str() + "\""; }

std::string describe(const wkcore::Decision& d) {
  return "{" + name_of(kResults, d.result) + ", " + name_of(kStates, d.state) + ", " +
         (d.state == WK_RECORD_STATE_FINALIZED ? outcome_name(d.outcome)
                                                : d.outcome == 0 ? std::string("null")
                                                                 : std::to_string(d.outcome)) +
         "}";
}

std::string describe(const std::vector<wkcore::Decision>& ds) {
  std::string out = "[";
  for (size_t i = 0; i < ds.size(); ++i) out += (i > 0 ? ", " : "") + describe(ds[i]);
  return out + "]";
}

std::string describe(const wkcore::Page& p) {
  return "{scanned " + std::to_string(p.scanned) + ", changed " + std::to_string(p.changed) +
         ", wrapped " + (p.wrapped ? "true" : "false") + "}";
}

std::string time_or_null(uint64_t t) {
  return t == WK_COORD_TIME_UNSET ? std::string("null") : std::to_string(t);
}

std::string describe(const std::optional<wkcore::Record>& r) {
  if (!r) return "null";
  return "{state " + name_of(kStates, r->state) + ", outcome " +
         (r->finalized() ? outcome_name(r->outcome) : std::to_string(r->outcome)) + ", id " +
         std::to_string(r->id) + ", runner " + std::to_string(r->runner) + ", deadline " +
         time_or_null(r->deadline) + ", refreshed_at " + std::to_string(r->refreshed_at) +
         ", finalized_at " + time_or_null(r->finalized_at) + ", payload " +
         std::to_string(r->payload) + ", duplicates " + std::to_string(r->duplicates) +
         ", last_duplicate_payload " + std::to_string(r->last_duplicate_payload) + "}";
}

std::string describe(const wkcore::Counts& c) {
  return "{claims_won " + std::to_string(c.claims_won) + ", claims_lost " +
         std::to_string(c.claims_lost) + ", finalizations_won " +
         std::to_string(c.finalizations_won) + ", finalizations_duplicate " +
         std::to_string(c.finalizations_duplicate) + ", reconciled_timeouts " +
         std::to_string(c.reconciled_timeouts) + ", rejected_full " +
         std::to_string(c.rejected_full) + ", reclaimed " + std::to_string(c.reclaimed) + "}";
}

std::string describe(const wkcore::Fire& f) {
  return "{" + name_of(kFireKinds, f.kind) + ", " + std::to_string(f.value) + "}";
}

// What an anchors step expects: a status other than ok (not_found), or a value.
struct AnchorExpect {
  std::optional<wk_status> status;  // set: the call must return it (e.g. WK_STATUS_NOT_FOUND)
  wkcore::Fire fire;                // try_fire
  bool flag = false;                // advance, anchor_unset
  std::optional<uint64_t> value;    // get: the value, nullopt while unset
};

struct Step {
  Op op = Op::kLen;
  Json json;  // for messages
  std::string key;
  std::vector<std::string> keys;
  wkcore::HandoffKey hkey;
  std::vector<wkcore::HandoffKey> hkeys;
  uint64_t id = 0;
  uint64_t runner = 0;
  uint64_t deadline = 0;
  uint64_t now = 0;
  uint64_t placeholder = 0;
  uint64_t request_id = 0;
  uint64_t payload = 0;
  std::vector<uint64_t> payloads;
  uint32_t outcome = 0;
  uint64_t quiet = 0;
  size_t limit = 0;
  uint64_t period = 0;
  uint64_t expected = 0;
  uint64_t next = 0;
  std::optional<uint64_t> value;  // anchors insert
  wkcore::Decision decision;
  std::vector<wkcore::Decision> decisions;
  size_t count = 0;  // place: placed; finalize_batch, claim_batch: won; len
  wkcore::Page page;
  std::optional<wkcore::Record> record;
  wkcore::Counts counts;
  wk_status status = WK_STATUS_OK;  // anchors insert, remove
  AnchorExpect anchor;
};

struct Scenario {
  std::string name;
  Subject subject = Subject::kLedger;
  wkcore::Ledger::Kind kind = wkcore::Ledger::Kind::kPending;
  uint64_t capacity = 0;
  uint64_t retention = 0;
  std::vector<Step> steps;
};

// --- Parsing ----------------------------------------------------------------------------------

uint64_t number(const Json& object, const char* name) {
  return uint_field(object, name, kMaxNumber);
}

// A time or deadline that may be null ("never"): WK_COORD_DEADLINE_NEVER / WK_COORD_TIME_UNSET.
uint64_t number_or_null(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (value.is_null()) return WK_COORD_DEADLINE_NEVER;
  return as_uint(value, kMaxNumber, std::string("\"") + name + "\"");
}

// An outcome: a name, or a host code 256..=65535.
uint32_t parse_outcome(const Json& value) {
  if (value.is_string()) return lookup(kOutcomes, value.get<std::string>(), "outcome");
  if (value.is_number_unsigned()) {
    const uint64_t code = value.get<uint64_t>();
    if (code >= WK_HOST_OUTCOME_MIN && code <= 65535) return static_cast<uint32_t>(code);
  }
  throw DataError("an outcome is a name or a host code 256..=65535: " + value.dump());
}

// `outcome` of a decision or record: an outcome exactly when `state` is finalized, else null.
uint32_t parse_state_outcome(const Json& object, wk_record_state state) {
  const Json& value = field(object, "outcome");
  if (state == WK_RECORD_STATE_FINALIZED) {
    if (value.is_null()) throw DataError("a finalized state needs an outcome");
    return parse_outcome(value);
  }
  if (!value.is_null()) throw DataError("an outcome is given exactly when the state is finalized");
  return 0;
}

wkcore::Decision parse_decision(const Json& value) {
  expect_fields(value, {"result", "state", "outcome"}, "decision");
  const auto result =
      static_cast<wk_coord_result>(lookup(kResults, string_field(value, "result"), "result"));
  const auto state =
      static_cast<wk_record_state>(lookup(kStates, string_field(value, "state"), "state"));
  return wkcore::Decision(result, state, parse_state_outcome(value, state));
}

std::vector<wkcore::Decision> parse_decisions(const Json& object, size_t want) {
  std::vector<wkcore::Decision> out;
  for (const Json& d : array_field(object, "expect")) out.push_back(parse_decision(d));
  if (out.size() != want) throw DataError("\"expect\" needs one decision per key");
  return out;
}

wkcore::Page parse_page(const Json& value) {
  expect_fields(value, {"scanned", "changed", "wrapped"}, "page");
  wkcore::Page p;
  p.scanned = number(value, "scanned");
  p.changed = number(value, "changed");
  p.wrapped = bool_field(value, "wrapped");
  return p;
}

std::optional<wkcore::Record> parse_record(const Json& value) {
  if (value.is_null()) return std::nullopt;
  expect_fields(value,
                {"state", "outcome", "id", "runner", "deadline", "refreshed_at", "finalized_at",
                 "payload", "duplicates", "last_duplicate_payload"},
                "record");
  wkcore::Record r;
  r.state = static_cast<wk_record_state>(lookup(kStates, string_field(value, "state"), "state"));
  if (r.state == WK_RECORD_STATE_NONE) throw DataError("a record's state is never none");
  r.outcome = parse_state_outcome(value, r.state);
  r.id = number(value, "id");
  r.runner = number(value, "runner");
  r.deadline = number_or_null(value, "deadline");
  r.refreshed_at = number(value, "refreshed_at");
  r.finalized_at = number_or_null(value, "finalized_at");
  r.payload = number(value, "payload");
  r.duplicates = number(value, "duplicates");
  r.last_duplicate_payload = number(value, "last_duplicate_payload");
  return r;
}

wkcore::Counts parse_counts(const Json& value) {
  expect_fields(value,
                {"claims_won", "claims_lost", "finalizations_won", "finalizations_duplicate",
                 "reconciled_timeouts", "rejected_full", "reclaimed"},
                "counts");
  wkcore::Counts c;
  c.claims_won = number(value, "claims_won");
  c.claims_lost = number(value, "claims_lost");
  c.finalizations_won = number(value, "finalizations_won");
  c.finalizations_duplicate = number(value, "finalizations_duplicate");
  c.reconciled_timeouts = number(value, "reconciled_timeouts");
  c.rejected_full = number(value, "rejected_full");
  c.reclaimed = number(value, "reclaimed");
  return c;
}

wkcore::HandoffKey parse_handoff_key(const Json& value) {
  expect_fields(value,
                {"channel_id", "channel_type", "message_id", "target_node_id", "tag_key",
                 "tag_version"},
                "hand-off key");
  auto key = wkcore::HandoffKey::make(
      string_field(value, "channel_id"),
      static_cast<uint8_t>(uint_field(value, "channel_type", UINT8_MAX)),
      number(value, "message_id"), number(value, "target_node_id"),
      string_field(value, "tag_key"), number(value, "tag_version"));
  if (!key.ok()) throw DataError("hand-off key refused: " + describe(key.status()));
  return *key;
}

std::vector<std::string> parse_keys(const Json& object) {
  std::vector<std::string> keys;
  for (const Json& k : array_field(object, "keys")) {
    if (!k.is_string()) throw DataError("a key is not a string: " + k.dump());
    keys.push_back(k.get<std::string>());
  }
  if (keys.empty()) throw DataError("a batch needs at least one key");
  return keys;
}

// "not_found", or what `parse` makes of the value.
template <typename F>
void parse_anchor_expect(const Json& step, AnchorExpect& out, F parse) {
  const Json& value = field(step, "expect");
  if (value.is_string()) {
    if (value.get<std::string>() != "not_found") {
      throw DataError("unknown expectation \"" + value.get<std::string>() + "\"");
    }
    out.status = WK_STATUS_NOT_FOUND;
    return;
  }
  parse(value);
}

size_t parse_limit(const Json& object) {
  return static_cast<size_t>(uint_field(object, "limit", kMaxNumber));
}

Step parse_ledger_step(const Json& value, const std::string& op) {
  Step s;
  if (op == "insert") {
    expect_fields(value, {"op", "key", "id", "runner", "deadline", "now", "expect"}, "step");
    s.op = Op::kInsert;
    s.key = string_field(value, "key");
    s.id = number(value, "id");
    s.runner = number(value, "runner");
    s.deadline = number_or_null(value, "deadline");
    s.now = number(value, "now");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "place") {
    expect_fields(value, {"op", "keys", "placeholder", "deadline", "now", "expect", "placed"},
                  "step");
    s.op = Op::kPlace;
    s.keys = parse_keys(value);
    s.placeholder = number(value, "placeholder");
    s.deadline = number_or_null(value, "deadline");
    s.now = number(value, "now");
    s.decisions = parse_decisions(value, s.keys.size());
    s.count = static_cast<size_t>(number(value, "placed"));
    if (s.count > s.keys.size()) throw DataError("\"placed\" above the number of keys");
  } else if (op == "claim") {
    expect_fields(value, {"op", "key", "placeholder", "request_id", "runner", "now", "expect"},
                  "step");
    s.op = Op::kClaim;
    s.key = string_field(value, "key");
    s.placeholder = number(value, "placeholder");
    s.request_id = number(value, "request_id");
    s.runner = number(value, "runner");
    s.now = number(value, "now");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "finalize") {
    expect_fields(value, {"op", "key", "outcome", "payload", "now", "expect"}, "step");
    s.op = Op::kFinalize;
    s.key = string_field(value, "key");
    s.outcome = parse_outcome(field(value, "outcome"));
    s.payload = number(value, "payload");
    s.now = number(value, "now");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "finalize_batch") {
    expect_fields(value, {"op", "keys", "payloads", "outcome", "now", "expect", "won"}, "step");
    s.op = Op::kFinalizeBatch;
    s.keys = parse_keys(value);
    for (const Json& p : array_field(value, "payloads")) {
      s.payloads.push_back(as_uint(p, kMaxNumber, "payload"));
    }
    if (s.payloads.size() != s.keys.size()) throw DataError("\"payloads\" needs one per key");
    s.outcome = parse_outcome(field(value, "outcome"));
    s.now = number(value, "now");
    s.decisions = parse_decisions(value, s.keys.size());
    s.count = static_cast<size_t>(number(value, "won"));
    if (s.count > s.keys.size()) throw DataError("\"won\" above the number of keys");
  } else if (op == "take") {
    expect_fields(value, {"op", "key", "id", "expect"}, "step");
    s.op = Op::kTake;
    s.key = string_field(value, "key");
    s.id = number(value, "id");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "touch") {
    expect_fields(value, {"op", "key", "runner", "now", "expect"}, "step");
    s.op = Op::kTouch;
    s.key = string_field(value, "key");
    s.runner = number(value, "runner");
    s.now = number(value, "now");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "reconcile" || op == "reclaim") {
    expect_fields(value, {"op", "now", "limit", "expect"}, "step");
    s.op = op == "reconcile" ? Op::kReconcile : Op::kReclaim;
    s.now = number(value, "now");
    s.limit = parse_limit(value);
    s.page = parse_page(field(value, "expect"));
  } else if (op == "finalize_own") {
    expect_fields(value, {"op", "runner", "outcome", "now", "limit", "expect"}, "step");
    s.op = Op::kFinalizeOwn;
    s.runner = number(value, "runner");
    s.outcome = parse_outcome(field(value, "outcome"));
    s.now = number(value, "now");
    s.limit = parse_limit(value);
    s.page = parse_page(field(value, "expect"));
  } else if (op == "sweep_orphans") {
    expect_fields(value, {"op", "now", "quiet", "limit", "expect"}, "step");
    s.op = Op::kSweepOrphans;
    s.now = number(value, "now");
    s.quiet = number(value, "quiet");
    s.limit = parse_limit(value);
    s.page = parse_page(field(value, "expect"));
  } else if (op == "get") {
    expect_fields(value, {"op", "key", "expect"}, "step");
    s.op = Op::kGet;
    s.key = string_field(value, "key");
    s.record = parse_record(field(value, "expect"));
  } else if (op == "len") {
    expect_fields(value, {"op", "expect"}, "step");
    s.op = Op::kLen;
    s.count = static_cast<size_t>(number(value, "expect"));
  } else if (op == "counts") {
    expect_fields(value, {"op", "expect"}, "step");
    s.op = Op::kCounts;
    s.counts = parse_counts(field(value, "expect"));
  } else {
    throw DataError("unknown op \"" + op + "\" of a ledger");
  }
  return s;
}

Step parse_handoff_step(const Json& value, const std::string& op) {
  Step s;
  if (op == "claim") {
    expect_fields(value, {"op", "key", "deadline", "now", "expect"}, "step");
    s.op = Op::kHandoffClaim;
    s.hkey = parse_handoff_key(field(value, "key"));
    s.deadline = number_or_null(value, "deadline");
    s.now = number(value, "now");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "claim_batch") {
    expect_fields(value, {"op", "keys", "deadline", "now", "expect", "won"}, "step");
    s.op = Op::kClaimBatch;
    for (const Json& k : array_field(value, "keys")) s.hkeys.push_back(parse_handoff_key(k));
    if (s.hkeys.empty()) throw DataError("a batch needs at least one key");
    s.deadline = number_or_null(value, "deadline");
    s.now = number(value, "now");
    s.decisions = parse_decisions(value, s.hkeys.size());
    s.count = static_cast<size_t>(number(value, "won"));
    if (s.count > s.hkeys.size()) throw DataError("\"won\" above the number of keys");
  } else if (op == "complete") {
    expect_fields(value, {"op", "key", "outcome", "now", "expect"}, "step");
    s.op = Op::kComplete;
    s.hkey = parse_handoff_key(field(value, "key"));
    s.outcome = parse_outcome(field(value, "outcome"));
    s.now = number(value, "now");
    s.decision = parse_decision(field(value, "expect"));
  } else if (op == "get") {
    expect_fields(value, {"op", "key", "expect"}, "step");
    s.op = Op::kGet;
    s.hkey = parse_handoff_key(field(value, "key"));
    s.record = parse_record(field(value, "expect"));
  } else if (op == "reconcile" || op == "reclaim" || op == "len" || op == "counts") {
    return parse_ledger_step(value, op);  // the same fields as for a ledger
  } else {
    throw DataError("unknown op \"" + op + "\" of a hand-off ledger");
  }
  return s;
}

Step parse_anchor_step(const Json& value, const std::string& op) {
  Step s;
  if (op == "insert") {
    expect_fields(value, {"op", "id", "value", "expect"}, "step");
    s.op = Op::kAnchorInsert;
    s.id = number(value, "id");
    const Json& v = field(value, "value");
    if (!v.is_null()) s.value = as_uint(v, kMaxNumber, "\"value\"");
    const std::string expect = string_field(value, "expect");
    if (expect == "ok") {
      s.status = WK_STATUS_OK;
    } else if (expect == "already_exists") {
      s.status = WK_STATUS_ALREADY_EXISTS;
    } else if (expect == "full") {
      s.status = WK_STATUS_FULL;
    } else {
      throw DataError("unknown expectation of insert \"" + expect + "\"");
    }
  } else if (op == "remove") {
    expect_fields(value, {"op", "id", "expect"}, "step");
    s.op = Op::kAnchorRemove;
    s.id = number(value, "id");
    const std::string expect = string_field(value, "expect");
    if (expect == "ok") {
      s.status = WK_STATUS_OK;
    } else if (expect == "not_found") {
      s.status = WK_STATUS_NOT_FOUND;
    } else {
      throw DataError("unknown expectation of remove \"" + expect + "\"");
    }
  } else if (op == "try_fire") {
    expect_fields(value, {"op", "id", "now", "period", "expect"}, "step");
    s.op = Op::kTryFire;
    s.id = number(value, "id");
    s.now = number(value, "now");
    s.period = number(value, "period");
    parse_anchor_expect(value, s.anchor, [&s](const Json& e) {
      expect_fields(e, {"kind", "value"}, "fire");
      s.anchor.fire.kind =
          static_cast<wk_fire_kind>(lookup(kFireKinds, string_field(e, "kind"), "fire kind"));
      s.anchor.fire.value = number(e, "value");
    });
  } else if (op == "advance") {
    expect_fields(value, {"op", "id", "expected", "next", "expect"}, "step");
    s.op = Op::kAdvance;
    s.id = number(value, "id");
    s.expected = number(value, "expected");
    s.next = number(value, "next");
    parse_anchor_expect(value, s.anchor, [&s](const Json& e) {
      if (!e.is_boolean()) throw DataError("\"expect\" is neither a boolean nor \"not_found\"");
      s.anchor.flag = e.get<bool>();
    });
  } else if (op == "anchor_unset") {
    expect_fields(value, {"op", "id", "now", "expect"}, "step");
    s.op = Op::kAnchorUnset;
    s.id = number(value, "id");
    s.now = number(value, "now");
    parse_anchor_expect(value, s.anchor, [&s](const Json& e) {
      if (!e.is_boolean()) throw DataError("\"expect\" is neither a boolean nor \"not_found\"");
      s.anchor.flag = e.get<bool>();
    });
  } else if (op == "get") {
    expect_fields(value, {"op", "id", "expect"}, "step");
    s.op = Op::kAnchorGet;
    s.id = number(value, "id");
    parse_anchor_expect(value, s.anchor, [&s](const Json& e) {
      if (!e.is_null()) s.anchor.value = as_uint(e, kMaxNumber, "\"expect\"");
    });
  } else {
    throw DataError("unknown op \"" + op + "\" of an anchor table");
  }
  return s;
}

Step parse_step(const Json& value, Subject subject) {
  if (!value.is_object()) throw DataError("a step is not an object");
  const std::string op = string_field(value, "op");
  Step s;
  switch (subject) {
    case Subject::kLedger:
      s = parse_ledger_step(value, op);
      break;
    case Subject::kHandoff:
      s = parse_handoff_step(value, op);
      break;
    case Subject::kAnchors:
      s = parse_anchor_step(value, op);
      break;
  }
  s.json = value;
  return s;
}

void parse_config(const Json& config, Scenario& scenario) {
  switch (scenario.subject) {
    case Subject::kLedger: {
      expect_fields(config, {"kind", "capacity", "retention"}, "ledger config");
      const std::string kind = string_field(config, "kind");
      if (kind == "claim") {
        scenario.kind = wkcore::Ledger::Kind::kClaim;
      } else if (kind == "pending") {
        scenario.kind = wkcore::Ledger::Kind::kPending;
      } else {
        throw DataError("unknown ledger kind \"" + kind + "\"");
      }
      scenario.capacity = number(config, "capacity");
      scenario.retention = number(config, "retention");
      break;
    }
    case Subject::kHandoff:
      expect_fields(config, {"capacity", "retention"}, "hand-off config");
      scenario.capacity = number(config, "capacity");
      scenario.retention = number(config, "retention");
      break;
    case Subject::kAnchors:
      expect_fields(config, {"capacity"}, "anchors config");
      scenario.capacity = number(config, "capacity");
      break;
  }
}

// Parses and validates a whole scenario file.
std::vector<Scenario> parse_scenarios(const std::string& text) {
  const Json top = parse_strict(text);
  expect_fields(top, {"system", "scenarios"}, "the file");
  const std::string system = string_field(top, "system");
  if (system != "coord") throw DataError("system is \"" + system + "\", want \"coord\"");
  std::vector<Scenario> out;
  std::set<std::string> names;
  const Json& scenarios = array_field(top, "scenarios");
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Json& value = scenarios[i];
    Scenario scenario;
    try {
      expect_fields(value, {"name", "upstream", "subject", "memory_only", "config", "steps"}, "scenario");
      // memory_only: null, or why the scenario depends on the in-memory backend (slot order,
      // capacity); the PostgreSQL replay (go/coordpg) skips those. Every scenario runs here.
      const Json& memory_only = value.at("memory_only");
      if (!memory_only.is_null() && (!memory_only.is_string() || memory_only.get<std::string>().empty())) {
        throw DataError("memory_only must be null or a non-empty string");
      }
      scenario.name = string_field(value, "name");
      if (scenario.name.empty() || string_field(value, "upstream").empty()) {
        throw DataError("name and upstream must not be empty");
      }
      if (!names.insert(scenario.name).second) {
        throw DataError("duplicate scenario name \"" + scenario.name + "\"");
      }
      const std::string subject = string_field(value, "subject");
      if (subject == "ledger") {
        scenario.subject = Subject::kLedger;
      } else if (subject == "handoff") {
        scenario.subject = Subject::kHandoff;
      } else if (subject == "anchors") {
        scenario.subject = Subject::kAnchors;
      } else {
        throw DataError("unknown subject \"" + subject + "\"");
      }
      parse_config(field(value, "config"), scenario);
      array_field(value, "steps");
    } catch (const DataError& e) {
      throw DataError("scenario " + std::to_string(i) +
                      (scenario.name.empty() ? "" : " \"" + scenario.name + "\"") + ": " + e.what());
    }
    const Json& steps = value["steps"];
    for (size_t s = 0; s < steps.size(); ++s) {
      try {
        scenario.steps.push_back(parse_step(steps[s], scenario.subject));
      } catch (const DataError& e) {
        throw DataError("scenario \"" + scenario.name + "\", step " + std::to_string(s) + ": " +
                        steps[s].dump() + ": " + e.what());
      }
    }
    out.push_back(std::move(scenario));
  }
  return out;
}

// --- Replaying --------------------------------------------------------------------------------

using Why = std::optional<std::string>;

template <typename T>
Why compare(const char* what, const wkcore::Result<T>& got, const T& want) {
  if (!got.ok()) return std::string(what) + " returned " + describe(got.status());
  if (*got == want) return std::nullopt;
  return std::string(what) + ": expected " + describe(want) + ", got " + describe(*got);
}

Why compare_batch(const char* what, const char* count_name,
                  const wkcore::Result<wkcore::BatchDecisions>& got, const Step& step) {
  if (!got.ok()) return std::string(what) + " returned " + describe(got.status());
  if (got->decisions != step.decisions) {
    return std::string(what) + ": expected " + describe(step.decisions) + ", got " +
           describe(got->decisions);
  }
  if (got->won != step.count) {
    return std::string(what) + ": " + count_name + " expected " + std::to_string(step.count) +
           ", got " + std::to_string(got->won);
  }
  return std::nullopt;
}

Why compare_record(const wkcore::Result<wkcore::Record>& got,
                   const std::optional<wkcore::Record>& want) {
  std::optional<wkcore::Record> have;
  if (got.ok()) {
    have = *got;
  } else if (got.status().code() != WK_STATUS_NOT_FOUND) {
    return "get returned " + describe(got.status());
  }
  if (have == want) return std::nullopt;
  return "get: expected " + describe(want) + ", got " + describe(have);
}

Why compare_len(size_t got, size_t want) {
  if (got == want) return std::nullopt;
  return "len: expected " + std::to_string(want) + ", got " + std::to_string(got);
}

Why run_ledger_step(const wkcore::Ledger& l, const Step& s) {
  switch (s.op) {
    case Op::kInsert:
      return compare("insert", l.insert(s.key, s.id, s.runner, s.deadline, s.now), s.decision);
    case Op::kPlace:
      return compare_batch("place", "placed", l.place(s.keys, s.placeholder, s.deadline, s.now),
                           s);
    case Op::kClaim:
      return compare("claim", l.claim(s.key, s.placeholder, s.request_id, s.runner, s.now),
                     s.decision);
    case Op::kFinalize:
      return compare("finalize", l.finalize(s.key, s.outcome, s.payload, s.now), s.decision);
    case Op::kFinalizeBatch:
      return compare_batch("finalize_batch", "won",
                           l.finalize_batch(s.keys, s.payloads, s.outcome, s.now), s);
    case Op::kTake:
      return compare("take", l.take(s.key, s.id), s.decision);
    case Op::kTouch:
      return compare("touch", l.touch(s.key, s.runner, s.now), s.decision);
    case Op::kReconcile:
      return compare("reconcile", l.reconcile(s.now, s.limit), s.page);
    case Op::kReclaim:
      return compare("reclaim", l.reclaim(s.now, s.limit), s.page);
    case Op::kFinalizeOwn:
      return compare("finalize_own", l.finalize_own(s.runner, s.outcome, s.now, s.limit), s.page);
    case Op::kSweepOrphans:
      return compare("sweep_orphans", l.sweep_orphans(s.now, s.quiet, s.limit), s.page);
    case Op::kGet:
      return compare_record(l.get(s.key), s.record);
    case Op::kLen:
      return compare_len(l.len(), s.count);
    case Op::kCounts:
      return compare("counts", l.counts(), s.counts);
    default:
      return std::string("not a ledger op");
  }
}

Why run_handoff_step(const wkcore::HandoffLedger& l, const Step& s) {
  switch (s.op) {
    case Op::kHandoffClaim:
      return compare("claim", l.claim(s.hkey, s.deadline, s.now), s.decision);
    case Op::kClaimBatch:
      return compare_batch("claim_batch", "won", l.claim_batch(s.hkeys, s.deadline, s.now), s);
    case Op::kComplete:
      return compare("complete", l.complete(s.hkey, s.outcome, s.now), s.decision);
    case Op::kReconcile:
      return compare("reconcile", l.reconcile(s.now, s.limit), s.page);
    case Op::kReclaim:
      return compare("reclaim", l.reclaim(s.now, s.limit), s.page);
    case Op::kGet:
      return compare_record(l.get(s.hkey), s.record);
    case Op::kLen:
      return compare_len(l.len(), s.count);
    case Op::kCounts:
      return compare("counts", l.counts(), s.counts);
    default:
      return std::string("not a hand-off op");
  }
}

// A call whose expectation may be "not_found": the status first, then the value.
template <typename T, typename F>
Why anchor_result(const char* what, const wkcore::Result<T>& got, const AnchorExpect& want,
                  F same) {
  const Status want_status(want.status.value_or(WK_STATUS_OK));
  if (got.status() != want_status) {
    return std::string(what) + ": expected status " + describe(want_status) + ", got " +
           describe(got.status());
  }
  if (!got.ok()) return std::nullopt;
  return same(*got);
}

std::string bool_text(bool b) { return b ? "true" : "false"; }

Why run_anchor_step(const wkcore::AnchorTable& t, const Step& s) {
  switch (s.op) {
    case Op::kAnchorInsert:
    case Op::kAnchorRemove: {
      const Status got = s.op == Op::kAnchorInsert ? t.insert(s.id, s.value) : t.remove(s.id);
      if (got == Status(s.status)) return std::nullopt;
      return std::string(s.op == Op::kAnchorInsert ? "insert" : "remove") + ": expected " +
             describe(Status(s.status)) + ", got " + describe(got);
    }
    case Op::kTryFire:
      return anchor_result("try_fire", t.try_fire(s.id, s.now, s.period), s.anchor,
                           [&s](const wkcore::Fire& got) -> Why {
                             if (got == s.anchor.fire) return std::nullopt;
                             return "try_fire: expected " + describe(s.anchor.fire) + ", got " +
                                    describe(got);
                           });
    case Op::kAdvance:
    case Op::kAnchorUnset: {
      const bool advance = s.op == Op::kAdvance;
      auto got = advance ? t.advance(s.id, s.expected, s.next) : t.anchor_unset(s.id, s.now);
      return anchor_result(advance ? "advance" : "anchor_unset", got, s.anchor,
                           [&s, advance](bool won) -> Why {
                             if (won == s.anchor.flag) return std::nullopt;
                             return std::string(advance ? "advance" : "anchor_unset") +
                                    ": expected " + bool_text(s.anchor.flag) + ", got " +
                                    bool_text(won);
                           });
    }
    case Op::kAnchorGet:
      return anchor_result("get", t.get(s.id), s.anchor,
                           [&s](const std::optional<uint64_t>& got) -> Why {
                             if (got == s.anchor.value) return std::nullopt;
                             auto text = [](const std::optional<uint64_t>& v) {
                               return v ? std::to_string(*v) : std::string("null");
                             };
                             return "get: expected " + text(s.anchor.value) + ", got " +
                                    text(got);
                           });
    default:
      return std::string("not an anchors op");
  }
}

// Replays every scenario; returns one message per failed scenario (its first failed step).
std::vector<std::string> replay(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> failures;
  for (const Scenario& scenario : scenarios) {
    const std::string where = "scenario \"" + scenario.name + "\"";
    auto metrics = wkcore::MetricsRegistry::create();
    if (!metrics.ok()) {
      failures.push_back(where + ": metrics registry: " + describe(metrics.status()));
      continue;
    }
    auto run_steps = [&](auto&& run_one) {
      for (size_t i = 0; i < scenario.steps.size(); ++i) {
        if (Why why = run_one(scenario.steps[i])) {
          failures.push_back(where + ", step " + std::to_string(i) + ": " +
                             scenario.steps[i].json.dump() + ": " + *why);
          return;
        }
      }
    };
    switch (scenario.subject) {
      case Subject::kLedger: {
        auto l = wkcore::Ledger::create(scenario.kind, scenario.capacity, scenario.retention,
                                        &*metrics);
        if (!l.ok()) {
          failures.push_back(where + ": config: " + describe(l.status()));
          break;
        }
        run_steps([&l](const Step& s) { return run_ledger_step(*l, s); });
        break;
      }
      case Subject::kHandoff: {
        auto l = wkcore::HandoffLedger::create(scenario.capacity, scenario.retention, &*metrics);
        if (!l.ok()) {
          failures.push_back(where + ": config: " + describe(l.status()));
          break;
        }
        run_steps([&l](const Step& s) { return run_handoff_step(*l, s); });
        break;
      }
      case Subject::kAnchors: {
        auto t = wkcore::AnchorTable::create(scenario.capacity);
        if (!t.ok()) {
          failures.push_back(where + ": config: " + describe(t.status()));
          break;
        }
        run_steps([&t](const Step& s) { return run_anchor_step(*t, s); });
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

// One scenario of `subject` with `config` and `steps` (a JSON array's contents), as a file.
std::string one_scenario(const std::string& subject, const std::string& config,
                         const std::string& steps) {
  return R"({"system": "coord", "scenarios": [{"name": "in_memory", "upstream": "none: harness check", "subject": ")" +
         subject + R"(", "memory_only": null, "config": )" + config + R"(, "steps": [)" + steps + "]}]}";
}

std::string ledger_scenario(const std::string& steps) {
  return one_scenario("ledger", R"({"kind": "pending", "capacity": 2, "retention": 10})", steps);
}


const char* const kInsert =
    R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})";
const char* const kHandoffKey =
    R"({"channel_id": "g", "channel_type": 1, "message_id": 2, "target_node_id": 3, "tag_key": "t", "tag_version": 4})";

}  // namespace

TEST(CoordScenarios, ReplayEverySharedScenario) {
  std::string text;
  try {
    text = read_file(testdata_path("coord/scenarios.json"));
  } catch (const DataError& e) {
    FAIL() << e.what();
  }
  const Outcomes got = replay_text(text);
  for (const std::string& failure : got.failures) ADD_FAILURE() << failure;
  EXPECT_GE(got.scenarios, kMinScenarios) << "the file holds fewer scenarios than expected";
}

TEST(CoordScenarios, AWrongExpectationFailsTheReplay) {
  {
    const Outcomes ok = replay_text(ledger_scenario(kInsert));
    EXPECT_TRUE(ok.failures.empty()) << (ok.failures.empty() ? "" : ok.failures[0]);
    EXPECT_EQ(ok.scenarios, 1u);
  }
  const std::string counts_zero =
      R"("claims_won": 0, "claims_lost": 0, "finalizations_won": 0, "finalizations_duplicate": 0, "reconciled_timeouts": 0, "rejected_full": 0, "reclaimed": 0)";
  const std::vector<std::string> wrong = {
      R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
      R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "lost", "state": "claimed", "outcome": null}})",
      R"({"op": "finalize", "key": "r1", "outcome": "succeeded", "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": "failed"}})",
      R"({"op": "finalize", "key": "r2", "outcome": "succeeded", "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": "succeeded"}})",
      R"({"op": "claim", "key": "r1", "placeholder": 2, "request_id": 9, "runner": 0, "now": 1, "expect": {"result": "won", "state": "claimed", "outcome": null}})",
      R"({"op": "place", "keys": ["a", "b"], "placeholder": 5, "deadline": null, "now": 1, "expect": [{"result": "won", "state": "placed", "outcome": null}, {"result": "won", "state": "placed", "outcome": null}], "placed": 2})",
      R"({"op": "place", "keys": ["a"], "placeholder": 5, "deadline": null, "now": 1, "expect": [{"result": "won", "state": "placed", "outcome": null}], "placed": 0})",
      R"({"op": "finalize_batch", "keys": ["r1"], "payloads": [1], "outcome": "failed", "now": 1, "expect": [{"result": "won", "state": "finalized", "outcome": "failed"}], "won": 0})",
      R"({"op": "take", "key": "r1", "id": 2, "expect": {"result": "won", "state": "none", "outcome": null}})",
      R"({"op": "touch", "key": "r2", "runner": 0, "now": 1, "expect": {"result": "won", "state": "none", "outcome": null}})",
      R"({"op": "reconcile", "now": 50, "limit": 2, "expect": {"scanned": 2, "changed": 0, "wrapped": true}})",
      R"({"op": "reconcile", "now": 49, "limit": 1, "expect": {"scanned": 1, "changed": 0, "wrapped": true}})",
      R"({"op": "reclaim", "now": 1, "limit": 2, "expect": {"scanned": 1, "changed": 0, "wrapped": true}})",
      R"({"op": "finalize_own", "runner": 1, "outcome": "failed", "now": 1, "limit": 2, "expect": {"scanned": 2, "changed": 1, "wrapped": true}})",
      R"({"op": "sweep_orphans", "now": 1, "quiet": 1, "limit": 2, "expect": {"scanned": 2, "changed": 1, "wrapped": true}})",
      R"({"op": "get", "key": "r1", "expect": null})",
      R"({"op": "get", "key": "r2", "expect": {"state": "placed", "outcome": null, "id": 1, "runner": 0, "deadline": 50, "refreshed_at": 0, "finalized_at": null, "payload": 0, "duplicates": 0, "last_duplicate_payload": 0}})",
      R"({"op": "get", "key": "r1", "expect": {"state": "placed", "outcome": null, "id": 1, "runner": 0, "deadline": null, "refreshed_at": 0, "finalized_at": null, "payload": 0, "duplicates": 0, "last_duplicate_payload": 0}})",
      R"({"op": "len", "expect": 0})",
      R"({"op": "counts", "expect": {)" + replace_first(counts_zero, "\"rejected_full\": 0", "\"rejected_full\": 1") + "}}",
  };
  for (const std::string& step : wrong) {
    const Outcomes got = replay_text(ledger_scenario(std::string(kInsert) + ", " + step));
    ASSERT_EQ(got.failures.size(), 1u) << "the replay accepted " << step;
    EXPECT_EQ(got.failures[0].rfind("scenario \"in_memory\", step 1: {", 0), 0u)
        << "the failure must name the scenario, the step and its JSON: " << got.failures[0];
  }
  // The right counterparts of some of them pass.
  for (const std::string& step : std::vector<std::string>{
           R"({"op": "get", "key": "r1", "expect": {"state": "placed", "outcome": null, "id": 1, "runner": 0, "deadline": 50, "refreshed_at": 0, "finalized_at": null, "payload": 0, "duplicates": 0, "last_duplicate_payload": 0}})",
           R"({"op": "get", "key": "r2", "expect": null})",
           R"({"op": "len", "expect": 1})",
           R"({"op": "counts", "expect": {)" + counts_zero + "}}",
           R"({"op": "reconcile", "now": 50, "limit": 2, "expect": {"scanned": 2, "changed": 1, "wrapped": true}})",
           R"({"op": "take", "key": "r1", "id": 1, "expect": {"result": "won", "state": "none", "outcome": null}})",
           R"({"op": "finalize", "key": "r1", "outcome": 300, "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": 300}})",
       }) {
    const Outcomes got = replay_text(ledger_scenario(std::string(kInsert) + ", " + step));
    EXPECT_TRUE(got.failures.empty()) << step << ": " << (got.failures.empty() ? "" : got.failures[0]);
  }
  // Hand-offs and anchors.
  const std::string claim = std::string(R"({"op": "claim", "key": )") + kHandoffKey +
                            R"(, "deadline": null, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})";
  EXPECT_TRUE(replay_text(one_scenario("handoff", R"({"capacity": 2, "retention": 0})", claim))
                  .failures.empty());
  const Outcomes twice = replay_text(
      one_scenario("handoff", R"({"capacity": 2, "retention": 0})", claim + ", " + claim));
  ASSERT_EQ(twice.failures.size(), 1u);
  EXPECT_EQ(twice.failures[0].rfind("scenario \"in_memory\", step 1: {", 0), 0u) << twice.failures[0];
  const std::string insert = R"({"op": "insert", "id": 1, "value": 10, "expect": "ok"})";
  for (const std::string& step : {
           std::string(R"({"op": "try_fire", "id": 1, "now": 15, "period": 10, "expect": {"kind": "fired", "value": 10}})"),
           std::string(R"({"op": "try_fire", "id": 2, "now": 15, "period": 10, "expect": {"kind": "not_due", "value": 20}})"),
           std::string(R"({"op": "try_fire", "id": 1, "now": 15, "period": 10, "expect": "not_found"})"),
           std::string(R"({"op": "advance", "id": 1, "expected": 11, "next": 12, "expect": true})"),
           std::string(R"({"op": "anchor_unset", "id": 1, "now": 12, "expect": true})"),
           std::string(R"({"op": "get", "id": 1, "expect": null})"),
           std::string(R"({"op": "get", "id": 1, "expect": 11})"),
           std::string(R"({"op": "insert", "id": 1, "value": null, "expect": "ok"})"),
           std::string(R"({"op": "remove", "id": 1, "expect": "not_found"})"),
       }) {
    const Outcomes got =
        replay_text(one_scenario("anchors", R"({"capacity": 2})", insert + ", " + step));
    ASSERT_EQ(got.failures.size(), 1u) << "the replay accepted " << step;
    EXPECT_EQ(got.failures[0].rfind("scenario \"in_memory\", step 1: {", 0), 0u) << got.failures[0];
  }
}

TEST(CoordScenarios, AMalformedFileIsRejected) {
  const std::vector<std::pair<std::string, std::string>> bad_steps = {
      {R"({"op": "insrt", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
       "unknown op \"insrt\""},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}, "note": 1})",
       "unknown field \"note\""},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
       "lacks field \"deadline\""},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed"}})",
       "lacks field \"outcome\""},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "winner", "state": "placed", "outcome": null}})",
       "unknown result \"winner\""},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "pending", "outcome": null}})",
       "unknown state \"pending\""},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": "succeeded"}})",
       "exactly when the state is finalized"},
      {R"({"op": "finalize", "key": "r1", "outcome": "succeeded", "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": null}})",
       "needs an outcome"},
      {R"({"op": "finalize", "key": "r1", "outcome": "done", "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": "succeeded"}})",
       "unknown outcome \"done\""},
      {R"({"op": "finalize", "key": "r1", "outcome": 255, "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": "succeeded"}})",
       "host code"},
      {R"({"op": "finalize", "key": "r1", "outcome": 65536, "payload": 0, "now": 1, "expect": {"result": "won", "state": "finalized", "outcome": "succeeded"}})",
       "host code"},
      {R"({"op": "place", "keys": [], "placeholder": 5, "deadline": null, "now": 1, "expect": [], "placed": 0})",
       "at least one key"},
      {R"({"op": "place", "keys": ["a", "b"], "placeholder": 5, "deadline": null, "now": 1, "expect": [{"result": "won", "state": "placed", "outcome": null}], "placed": 1})",
       "one decision per key"},
      {R"({"op": "place", "keys": ["a"], "placeholder": 5, "deadline": null, "now": 1, "expect": [{"result": "won", "state": "placed", "outcome": null}], "placed": 2})",
       "\"placed\" above"},
      {R"({"op": "place", "keys": [1], "placeholder": 5, "deadline": null, "now": 1, "expect": [{"result": "won", "state": "placed", "outcome": null}], "placed": 1})",
       "a key is not a string"},
      {R"({"op": "finalize_batch", "keys": ["a", "b"], "payloads": [1], "outcome": "failed", "now": 1, "expect": [{"result": "not_found", "state": "none", "outcome": null}, {"result": "not_found", "state": "none", "outcome": null}], "won": 0})",
       "one per key"},
      {R"({"op": "reconcile", "now": 1, "limit": 2, "expect": {"scanned": 2, "changed": 0}})",
       "lacks field \"wrapped\""},
      {R"({"op": "reconcile", "now": 1, "limit": 2, "expect": {"scanned": 2, "changed": 0, "wrapped": 1}})",
       "\"wrapped\" is not a boolean"},
      {R"({"op": "get", "key": "r1", "expect": {"state": "none", "outcome": null, "id": 1, "runner": 0, "deadline": 50, "refreshed_at": 0, "finalized_at": null, "payload": 0, "duplicates": 0, "last_duplicate_payload": 0}})",
       "never none"},
      {R"({"op": "get", "key": "r1", "expect": {"state": "placed", "outcome": null, "id": 1, "runner": 0, "deadline": 50, "refreshed_at": 0, "finalized_at": null, "payload": 0, "duplicates": 0}})",
       "lacks field \"last_duplicate_payload\""},
      {R"({"op": "counts", "expect": {"claims_won": 0}})", "lacks field \"claims_lost\""},
      {R"({"op": "len", "expect": 1, "expect": 2})", "duplicate field \"expect\""},
      {R"({"op": "len", "expect": -1})", "not a non-negative integer"},
      {R"({"op": "len", "expect": 9007199254740992})", "is above"},
      {R"({"op": "take", "key": "r1", "id": 1.5, "expect": {"result": "won", "state": "none", "outcome": null}})",
       "not a non-negative integer"},
      {R"({"op": "claim_batch", "keys": [], "deadline": null, "now": 0, "expect": [], "won": 0})",
       "unknown op \"claim_batch\" of a ledger"},
      {R"({"key": "r1", "expect": null})", "missing field \"op\""},
      {R"("len")", "a step is not an object"},
  };
  for (const auto& bad : bad_steps) {
    const Outcomes got = replay_text(ledger_scenario(bad.first));
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    if (bad.second.rfind("duplicate field", 0) != 0) {
      EXPECT_NE(got.failures[0].find("invalid scenario file: scenario \"in_memory\", step 0: "),
                std::string::npos)
          << got.failures[0];
    }
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }

  const std::vector<std::pair<std::string, std::string>> bad_handoff_steps = {
      {std::string(R"({"op": "claim", "key": )") +
           replace_first(kHandoffKey, "\"tag_version\": 4", "\"tag_version\": 4, \"extra\": 0") +
           R"(, "deadline": null, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
       "unknown field \"extra\""},
      {std::string(R"({"op": "claim", "key": )") +
           replace_first(kHandoffKey, "\"channel_type\": 1", "\"channel_type\": 256") +
           R"(, "deadline": null, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
       "\"channel_type\" is above"},
      {std::string(R"({"op": "claim", "key": )") +
           replace_first(kHandoffKey, "\"channel_id\": \"g\"", "\"channel_id\": \"" + std::string(129, 'c') + "\"") +
           R"(, "deadline": null, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
       "hand-off key refused"},
      {R"({"op": "insert", "key": "r1", "id": 1, "runner": 0, "deadline": 50, "now": 0, "expect": {"result": "won", "state": "placed", "outcome": null}})",
       "unknown op \"insert\" of a hand-off ledger"},
  };
  for (const auto& bad : bad_handoff_steps) {
    const Outcomes got =
        replay_text(one_scenario("handoff", R"({"capacity": 2, "retention": 0})", bad.first));
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }

  const std::vector<std::pair<std::string, std::string>> bad_anchor_steps = {
      {R"({"op": "insert", "id": 1, "value": 1, "expect": "exists"})",
       "unknown expectation of insert \"exists\""},
      {R"({"op": "insert", "id": 1, "expect": "ok"})", "lacks field \"value\""},
      {R"({"op": "remove", "id": 1, "expect": "full"})", "unknown expectation of remove"},
      {R"({"op": "try_fire", "id": 1, "now": 1, "period": 1, "expect": {"kind": "fire", "value": 0}})",
       "unknown fire kind \"fire\""},
      {R"({"op": "try_fire", "id": 1, "now": 1, "period": 1, "expect": "missing"})",
       "unknown expectation \"missing\""},
      {R"({"op": "advance", "id": 1, "expected": 1, "next": 2, "expect": 1})",
       "neither a boolean"},
      {R"({"op": "get", "id": 1, "expect": "unset"})", "unknown expectation \"unset\""},
      {R"({"op": "claim", "id": 1})", "unknown op \"claim\" of an anchor table"},
  };
  for (const auto& bad : bad_anchor_steps) {
    const Outcomes got = replay_text(one_scenario("anchors", R"({"capacity": 2})", bad.first));
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }

  const std::string good = ledger_scenario(kInsert);
  ASSERT_TRUE(replay_text(good).failures.empty());
  const std::vector<std::pair<std::string, std::string>> bad_files = {
      {replace_first(good, "\"system\": \"coord\"", "\"system\": \"admission\""), "want \"coord\""},
      {replace_first(good, "\"subject\": \"ledger\"", "\"subject\": \"ledgers\""),
       "unknown subject \"ledgers\""},
      {replace_first(good, "\"kind\": \"pending\"", "\"kind\": \"receipts\""),
       "unknown ledger kind \"receipts\""},
      {replace_first(good, ", \"retention\": 10", ""), "lacks field \"retention\""},
      {replace_first(good, "\"retention\": 10", "\"retention\": 10, \"period\": 1"),
       "unknown field \"period\""},
      {replace_first(good, "\"upstream\": \"none: harness check\", ", ""), "lacks field \"upstream\""},
      {replace_first(good, "\"upstream\": \"none: harness check\"", "\"upstream\": \"\""),
       "must not be empty"},
      {replace_first(good, "\"scenarios\"", "\"comment\": \"\", \"scenarios\""), "unknown field \"comment\""},
      {replace_first(good, "\"scenarios\": [{",
               "\"scenarios\": [{\"name\": \"in_memory\", \"upstream\": \"x\", \"subject\": "
               "\"anchors\", \"memory_only\": null, \"config\": {\"capacity\": 1}, \"steps\": []}, {"),
       "duplicate scenario name"},
      {replace_first(good, "]}]}", "]}]"), "invalid JSON"},
      {replace_first(good, "\"steps\": [" + std::string(kInsert) + "]", "\"steps\": {}"),
       "\"steps\" is not an array"},
  };
  for (const auto& bad : bad_files) {
    ASSERT_NE(bad.first, good);
    const Outcomes got = replay_text(bad.first);
    ASSERT_EQ(got.failures.size(), 1u) << "accepted: " << bad.first;
    EXPECT_NE(got.failures[0].find(bad.second), std::string::npos)
        << bad.first << " was refused for another reason: " << got.failures[0];
  }
  // A config the library refuses fails the scenario (not the parse).
  const Outcomes zero = replay_text(one_scenario("anchors", R"({"capacity": 0})", ""));
  ASSERT_EQ(zero.failures.size(), 1u);
  EXPECT_NE(zero.failures[0].find("config: 402"), std::string::npos) << zero.failures[0];
}
