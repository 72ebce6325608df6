// The delivery tags' scenarios shared by the Rust, Go and C++ suites
// (testdata/tag/scenarios.json, format in testdata/tag/README.md), replayed through the tag
// classes of wkcore.hpp (TagLeader, TagCache, TagChannel, TagMutation, TagView, TagFrame, TagRpc,
// TagDecoded), so through the C ABI (wk_tag_*). The Rust replay, core/tests/tag_scenarios.rs, is
// the reference of the format's semantics; this one mirrors it.
//
// The file is checked strictly first: every op's fields (a missing, unknown or duplicate field,
// a value of the wrong type, an unknown op, reason or outcome name), the names (a node, handle,
// mutation or topology used before it is defined or defined twice, a handle used on another
// node, an ended mutation used again), `cache_lookup`'s exactly-one-of channel and handle, and
// every upstream test the README lists having its scenario. Then every scenario runs on fresh
// nodes. A mismatch names the scenario, the step's index (from 0) and the step's JSON, and ends
// that scenario.
//
// Where the C ABI differs from the Rust API the replay composes what the ABI offers:
// - a node's leader and cache have a manual clock each, both from `start`: `advance` moves both.
// - `leader_bodies` and `cache_channels` are the counts' `entries`.
// - `usable`'s null is any of WK_STATUS_TAG_DIRTY, WK_STATUS_NOT_FOUND and WK_STATUS_TAG_LAGGING.
// - `partition_by_node` is wk_tag_partition_by_node (a body holding the partitions, and the first
//   unassigned slot); `length_mismatch` is the C++ layer's refusal (the C call takes one count
//   for both lists, so it cannot be given lists of different lengths).
// - `rpc_handle` is wk_tag_rpc_handle_with: the request and the provider's answer are encoded
//   through the ABI, the provider is the host authority callback, and the response is decoded
//   back (wk_tag_frame_*) and compared field by field.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
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
constexpr size_t kMinScenarios = 37;

// Numbers of the file stay below 2^53 (testdata/README.md).
constexpr uint64_t kMaxNumber = (uint64_t{1} << 53) - 1;

// The upstream tests the README lists, each of which must have its scenario.
const char* const kUpstream[] = {
    "tag_version_increments_without_changing_key",
    "follower_caches_only_local_partition_tag",
    "stale_request_does_not_evict_newer_local_tag",
    "stale_different_tag_key_does_not_evict_newer_local_tag",
    "lookup_local_partition_rejects_subscriber_and_source_fence_mismatch",
    "lookup_local_partition_ref_returns_shared_tag_without_allocating",
    "partition_topology_mismatch_forces_refetch",
    "ttl_cleanup_removes_cold_tags_and_stale_channel_refs",
    "derived_tag_stale_when_source_subscriber_mutation_version_advances",
    "leader_incarnation_can_mint_fresh_tag_key",
    "build_ephemeral_tag_does_not_replace_current_ref",
    "delivery_tag_rpc_rejects_non_leader_update",
    "delivery_tag_rpc_returns_only_local_partition_for_fetch",
    "delivery_tag_rpc_returns_empty_local_partition_when_target_has_no_subscribers",
    "delivery_tag_rpc_converts_mismatched_ok_fence_to_retryable",
    "delivery_tag_rpc_converts_version_mismatch_ok_fence_to_retryable",
    "delivery_tag_binary_codec_round_trip",
    "delivery_tag_client_preserves_retryable_statuses",
};

const char* const kReasons[] = {"hit",           "missing_ref",   "missing_tag",
                                "tag_key_mismatch", "stale_request", "newer_request",
                                "topology_mismatch"};

uint8_t reason_code(const std::string& name) {
  for (uint8_t i = 0; i < 7; i++)
    if (name == kReasons[i]) return i;
  throw DataError("unknown reason \"" + name + "\"");
}

// --- Checking the file ------------------------------------------------------------------------

// What a field holds.
enum class K {
  kNode,          // a node's name
  kHandleDef,     // a new handle name
  kHandleOrNull,  // a handle of the step's node, or null
  kMutDef,        // a new mutation name
  kMut,           // an open mutation
  kStr,
  kStrOrNull,
  kUint,
  kUintOrNull,
  kBool,
  kTag,
  kTagOrNull,
  kBuild,
  kBuildEphemeral,  // a build request with mint_fresh_key false
  kLookup,
  kPage,
  kCounts,
  kReason,
  kStoreExpect,
  kCommitExpect,
  kPartitionExpect,
  kRpcExpect,
  kCalledOrNull,
  kStrList,
  kUintList,
  kPartitionsOrNull,
  kWireRequest,
  kWireResponse,
  kWireResponseOrNull,
};

struct OpSpec {
  const char* op;
  std::vector<std::pair<const char*, K>> fields;
};

const std::vector<OpSpec>& specs() {
  static const std::vector<OpSpec> all = {
      {"build", {{"node", K::kNode}, {"request", K::kBuild}, {"expect", K::kTag}}},
      {"build_ephemeral",
       {{"node", K::kNode}, {"request", K::kBuildEphemeral}, {"expect", K::kTag}}},
      {"leader_lookup",
       {{"node", K::kNode}, {"channel_key", K::kStr}, {"request", K::kLookup},
        {"expect", K::kReason}, {"tag", K::kTagOrNull}}},
      {"leader_lookup_tag", {{"node", K::kNode}, {"tag_key", K::kStr}, {"expect", K::kTagOrNull}}},
      {"leader_current", {{"node", K::kNode}, {"channel_key", K::kStr}, {"expect", K::kTagOrNull}}},
      {"leader_is_source_stale",
       {{"node", K::kNode}, {"channel_key", K::kStr}, {"source_channel_key", K::kStr},
        {"source_version", K::kUint}, {"expect", K::kBool}}},
      {"leader_cleanup",
       {{"node", K::kNode}, {"now", K::kUint}, {"limit", K::kUint}, {"expect", K::kPage}}},
      {"leader_bodies", {{"node", K::kNode}, {"expect", K::kUint}}},
      {"leader_counts", {{"node", K::kNode}, {"expect", K::kCounts}}},
      {"begin_mutation", {{"node", K::kNode}, {"channel_key", K::kStr}, {"as", K::kMutDef}}},
      {"mutation_add", {{"mutation", K::kMut}, {"node_id", K::kUint}, {"uids", K::kStrList}}},
      {"mutation_remove", {{"mutation", K::kMut}, {"uids", K::kStrList}}},
      {"mutation_reset", {{"mutation", K::kMut}}},
      {"mutation_commit",
       {{"mutation", K::kMut}, {"store_version", K::kUint}, {"expect", K::kCommitExpect},
        {"tag", K::kTagOrNull}}},
      {"mutation_abandon", {{"mutation", K::kMut}}},
      {"is_dirty", {{"node", K::kNode}, {"channel_key", K::kStr}, {"expect", K::kBool}}},
      {"usable",
       {{"node", K::kNode}, {"channel_key", K::kStr}, {"authoritative_version", K::kUint},
        {"expect", K::kTagOrNull}}},
      {"handle", {{"node", K::kNode}, {"channel_key", K::kStr}, {"as", K::kHandleDef}}},
      {"store",
       {{"node", K::kNode}, {"handle", K::kHandleOrNull}, {"tag", K::kTag},
        {"expect", K::kStoreExpect}, {"body", K::kTag}}},
      {"cache_lookup",
       {{"node", K::kNode}, {"channel_key", K::kStrOrNull}, {"handle", K::kHandleOrNull},
        {"request", K::kLookup}, {"expect", K::kReason}, {"tag", K::kTagOrNull}}},
      {"cache_lookup_tag",
       {{"node", K::kNode}, {"channel_key", K::kStr}, {"tag_key", K::kStr},
        {"expect", K::kTagOrNull}}},
      {"cache_current", {{"node", K::kNode}, {"channel_key", K::kStr}, {"expect", K::kTagOrNull}}},
      {"cache_is_source_stale",
       {{"node", K::kNode}, {"channel_key", K::kStr}, {"source_channel_key", K::kStr},
        {"source_version", K::kUint}, {"expect", K::kBool}}},
      {"cache_cleanup",
       {{"node", K::kNode}, {"now", K::kUint}, {"limit", K::kUint}, {"expect", K::kPage}}},
      {"cache_channels", {{"node", K::kNode}, {"expect", K::kUint}}},
      {"cache_counts", {{"node", K::kNode}, {"expect", K::kCounts}}},
      {"advance", {{"node", K::kNode}, {"by", K::kUint}}},
      {"partition_by_node",
       {{"uids", K::kStrList}, {"slots", K::kUintList}, {"slot_nodes", K::kUintList},
        {"expect", K::kPartitionExpect}, {"slot_id", K::kUintOrNull},
        {"partitions", K::kPartitionsOrNull}}},
      {"rpc_handle",
       {{"channel_leader", K::kUint}, {"local_node_id", K::kUint}, {"request", K::kWireRequest},
        {"provider", K::kWireResponse}, {"expect", K::kRpcExpect}, {"called", K::kCalledOrNull},
        {"response", K::kWireResponseOrNull}}},
      {"rpc_redirect",
       {{"called_node_id", K::kUint}, {"status", K::kStr}, {"leader_id", K::kUint},
        {"expect", K::kUintOrNull}}},
      {"codec_request", {{"request", K::kWireRequest}, {"hex", K::kStr}}},
      {"codec_response", {{"response", K::kWireResponse}, {"hex", K::kStr}}},
  };
  return all;
}

const OpSpec& spec_of(const std::string& op) {
  for (const OpSpec& s : specs())
    if (op == s.op) return s;
  throw DataError("unknown op \"" + op + "\"");
}

void one_of(const std::string& value, std::initializer_list<const char*> names, const char* what) {
  for (const char* n : names)
    if (value == n) return;
  throw DataError(std::string("unknown ") + what + " \"" + value + "\"");
}

// The names a scenario defines, as the check meets them.
struct Names {
  std::set<std::string> topologies;
  std::set<std::string> nodes;
  std::map<std::string, std::string> handles;    // name -> node
  std::map<std::string, bool> mutations;         // name -> open
};

void check_uint(const Json& v, const std::string& what, uint64_t max = kMaxNumber) {
  (void)as_uint(v, max, what);
}

void check_partitions(const Json& v) {
  if (!v.is_array()) throw DataError("\"partitions\" is not an array");
  for (const Json& p : v) {
    expect_fields(p, {"node_id", "uids"}, "partition");
    check_uint(p["node_id"], "\"node_id\"");
    for (const Json& u : array_field(p, "uids"))
      if (!u.is_string()) throw DataError("a uid is not a string");
  }
}

void check_topology_name(const Json& v, const Names& names) {
  if (!v.is_string()) throw DataError("\"topology\" is not a string");
  if (names.topologies.count(v.get<std::string>()) == 0) {
    throw DataError("undefined topology \"" + v.get<std::string>() + "\"");
  }
}

void check_tag(const Json& v, const Names& names) {
  expect_fields(v, {"key", "channel_key", "tag_version", "subscriber_mutation_version",
                    "source_channel_key", "source_subscriber_mutation_version", "topology",
                    "partitions", "created_at", "last_access"},
                "tag");
  for (const char* s : {"key", "channel_key", "source_channel_key"}) (void)string_field(v, s);
  for (const char* n : {"tag_version", "subscriber_mutation_version",
                        "source_subscriber_mutation_version", "created_at", "last_access"}) {
    (void)uint_field(v, n, kMaxNumber);
  }
  check_topology_name(v["topology"], names);
  check_partitions(v["partitions"]);
}

void check_build(const Json& v, const Names& names, bool ephemeral) {
  expect_fields(v, {"channel_key", "subscriber_mutation_version", "source_channel_key",
                    "source_subscriber_mutation_version", "topology", "partitions",
                    "mint_fresh_key"},
                "build request");
  (void)string_field(v, "channel_key");
  (void)string_field(v, "source_channel_key");
  (void)uint_field(v, "subscriber_mutation_version", kMaxNumber);
  (void)uint_field(v, "source_subscriber_mutation_version", kMaxNumber);
  check_topology_name(v["topology"], names);
  check_partitions(v["partitions"]);
  if (bool_field(v, "mint_fresh_key") && ephemeral) {
    throw DataError("an ephemeral build's mint_fresh_key must be false");
  }
}

void check_lookup(const Json& v, const Names& names) {
  expect_fields(v, {"tag_key", "tag_version", "subscriber_mutation_version",
                    "source_channel_key", "source_subscriber_mutation_version", "topology"},
                "look-up request");
  (void)string_field(v, "tag_key");
  (void)string_field(v, "source_channel_key");
  for (const char* n :
       {"tag_version", "subscriber_mutation_version", "source_subscriber_mutation_version"}) {
    (void)uint_field(v, n, kMaxNumber);
  }
  check_topology_name(v["topology"], names);
}

void check_wire_request(const Json& v, const Names& names) {
  expect_fields(v, {"op", "channel_id", "channel_type", "tag_key", "tag_version",
                    "target_node_id", "tag"},
                "wire request");
  for (const char* s : {"op", "channel_id", "tag_key"}) (void)string_field(v, s);
  (void)uint_field(v, "channel_type", 255);
  (void)uint_field(v, "tag_version", kMaxNumber);
  (void)uint_field(v, "target_node_id", kMaxNumber);
  check_tag(v["tag"], names);
}

void check_wire_response(const Json& v, const Names& names) {
  expect_fields(v, {"status", "leader_id", "result", "tag"}, "wire response");
  (void)string_field(v, "status");
  (void)string_field(v, "result");
  (void)uint_field(v, "leader_id", kMaxNumber);
  check_tag(v["tag"], names);
}

void check_field(const Json& step, const char* name, K kind, Names& names,
                 const std::string& node) {
  const Json& v = field(step, name);
  const std::string what = std::string("\"") + name + "\"";
  switch (kind) {
    case K::kNode:
      if (!v.is_string() || names.nodes.count(v.get<std::string>()) == 0) {
        throw DataError(what + " names no node");
      }
      break;
    case K::kHandleDef:
    case K::kMutDef: {
      if (!v.is_string()) throw DataError(what + " is not a string");
      const std::string n = v.get<std::string>();
      if (names.handles.count(n) != 0 || names.mutations.count(n) != 0) {
        throw DataError(what + " defines \"" + n + "\" twice");
      }
      if (kind == K::kHandleDef) {
        names.handles[n] = node;
      } else {
        names.mutations[n] = true;
      }
      break;
    }
    case K::kHandleOrNull:
      if (v.is_null()) break;
      if (!v.is_string() || names.handles.count(v.get<std::string>()) == 0) {
        throw DataError(what + " names no handle");
      }
      if (names.handles[v.get<std::string>()] != node) {
        throw DataError(what + " is a handle of another node");
      }
      break;
    case K::kMut: {
      if (!v.is_string()) throw DataError(what + " is not a string");
      auto it = names.mutations.find(v.get<std::string>());
      if (it == names.mutations.end()) throw DataError(what + " names no mutation");
      if (!it->second) throw DataError(what + " names an ended mutation");
      break;
    }
    case K::kStr:
      (void)string_field(step, name);
      break;
    case K::kStrOrNull:
      if (!v.is_null() && !v.is_string()) throw DataError(what + " is neither a string nor null");
      break;
    case K::kUint:
      check_uint(v, what);
      break;
    case K::kUintOrNull:
      if (!v.is_null()) check_uint(v, what);
      break;
    case K::kBool:
      (void)bool_field(step, name);
      break;
    case K::kTag:
      check_tag(v, names);
      break;
    case K::kTagOrNull:
      if (!v.is_null()) check_tag(v, names);
      break;
    case K::kBuild:
    case K::kBuildEphemeral:
      check_build(v, names, kind == K::kBuildEphemeral);
      break;
    case K::kLookup:
      check_lookup(v, names);
      break;
    case K::kPage:
      expect_fields(v, {"visited", "reclaimed", "unlinked", "wrapped"}, "page");
      for (const char* n : {"visited", "reclaimed", "unlinked"}) (void)uint_field(v, n, kMaxNumber);
      (void)bool_field(v, "wrapped");
      break;
    case K::kCounts: {
      expect_fields(v, {"tags", "uids", "lookups", "stored", "stale", "reclaimed_bodies",
                        "reclaimed_refs"},
                    "counts");
      for (const char* n :
           {"tags", "uids", "stored", "stale", "reclaimed_bodies", "reclaimed_refs"}) {
        (void)uint_field(v, n, kMaxNumber);
      }
      const Json& lookups = field(v, "lookups");
      if (!lookups.is_object()) throw DataError("\"lookups\" is not an object");
      for (const auto& item : lookups.items()) {
        (void)reason_code(item.key());
        if (as_uint(item.value(), kMaxNumber, "a look-up count") == 0) {
          throw DataError("a listed look-up count is 0");
        }
      }
      break;
    }
    case K::kReason:
      (void)reason_code(string_field(step, name));
      break;
    case K::kStoreExpect:
      one_of(string_field(step, name), {"stored", "stale"}, "store outcome");
      break;
    case K::kCommitExpect:
      one_of(string_field(step, name), {"applied", "no_tag", "already_current"}, "commit outcome");
      break;
    case K::kPartitionExpect:
      one_of(string_field(step, name), {"ok", "unassigned_slot", "length_mismatch"},
             "partitioning outcome");
      break;
    case K::kRpcExpect:
      one_of(string_field(step, name), {"ok", "unknown_op"}, "handler outcome");
      break;
    case K::kCalledOrNull:
      if (!v.is_null()) one_of(string_field(step, name), {"get", "update"}, "call");
      break;
    case K::kStrList:
      if (!v.is_array()) throw DataError(what + " is not an array");
      for (const Json& s : v)
        if (!s.is_string()) throw DataError(what + " lists a non-string");
      break;
    case K::kUintList:
      if (!v.is_array()) throw DataError(what + " is not an array");
      for (const Json& n : v) check_uint(n, what);
      break;
    case K::kPartitionsOrNull:
      if (!v.is_null()) check_partitions(v);
      break;
    case K::kWireRequest:
      check_wire_request(v, names);
      break;
    case K::kWireResponse:
      check_wire_response(v, names);
      break;
    case K::kWireResponseOrNull:
      if (!v.is_null()) check_wire_response(v, names);
      break;
  }
}

void check_step(const Json& step, Names& names) {
  if (!step.is_object()) throw DataError("a step is not an object");
  const OpSpec& spec = spec_of(string_field(step, "op"));
  std::set<std::string> want = {"op"};
  for (const auto& f : spec.fields) want.insert(f.first);
  for (const auto& item : step.items()) {
    if (want.count(item.key()) == 0) throw DataError("unknown field \"" + item.key() + "\"");
  }
  for (const std::string& f : want) {
    if (!step.contains(f)) throw DataError("lacks field \"" + f + "\"");
  }
  const std::string node = step.contains("node") && step["node"].is_string()
                               ? step["node"].get<std::string>()
                               : std::string();
  for (const auto& f : spec.fields) check_field(step, f.first, f.second, names, node);
  const std::string op = spec.op;
  if (op == "cache_lookup" && step["channel_key"].is_null() == step["handle"].is_null()) {
    throw DataError("exactly one of \"channel_key\" and \"handle\" must be non-null");
  }
  if (op == "mutation_commit" || op == "mutation_abandon") {
    names.mutations[step["mutation"].get<std::string>()] = false;
  }
}

// Checks the whole file; returns its scenarios.
std::vector<Json> parse_file(const std::string& text) {
  const Json top = parse_strict(text);
  expect_fields(top, {"system", "scenarios"}, "file");
  if (string_field(top, "system") != "tag") throw DataError("system is not \"tag\"");
  std::vector<Json> out;
  std::set<std::string> scenario_names;
  for (const Json& s : array_field(top, "scenarios")) {
    const std::string where = s.is_object() && s.contains("name") ? s["name"].dump() : s.dump();
    try {
      expect_fields(s, {"name", "upstream", "topologies", "nodes", "steps"}, "scenario");
      const std::string name = string_field(s, "name");
      if (!scenario_names.insert(name).second) throw DataError("name used twice");
      (void)string_field(s, "upstream");
      Names names;
      for (const Json& t : array_field(s, "topologies")) {
        expect_fields(t, {"name", "hash_slot_table_version", "refs"}, "topology");
        if (!names.topologies.insert(string_field(t, "name")).second) {
          throw DataError("topology defined twice");
        }
        (void)uint_field(t, "hash_slot_table_version", kMaxNumber);
        for (const Json& r : array_field(t, "refs")) {
          expect_fields(r, {"slot_id", "leader_node_id", "config_epoch", "balance_version"}, "ref");
          (void)uint_field(r, "slot_id", UINT32_MAX);
          for (const char* n : {"leader_node_id", "config_epoch", "balance_version"}) {
            (void)uint_field(r, n, kMaxNumber);
          }
        }
      }
      for (const Json& n : array_field(s, "nodes")) {
        expect_fields(n, {"name", "local_node_id", "ttl", "start", "key_prefix"}, "node");
        if (!names.nodes.insert(string_field(n, "name")).second) {
          throw DataError("node defined twice");
        }
        if (uint_field(n, "local_node_id", kMaxNumber) == 0) throw DataError("local_node_id is 0");
        (void)uint_field(n, "ttl", kMaxNumber);
        (void)uint_field(n, "start", kMaxNumber);
        (void)string_field(n, "key_prefix");
      }
      const Json& steps = array_field(s, "steps");
      for (size_t i = 0; i < steps.size(); i++) {
        try {
          check_step(steps[i], names);
        } catch (const DataError& e) {
          throw DataError("step " + std::to_string(i) + " " + steps[i].dump() + ": " + e.what());
        }
      }
    } catch (const DataError& e) {
      throw DataError("scenario " + where + ": " + e.what());
    }
    out.push_back(s);
  }
  for (const char* name : kUpstream) {
    if (scenario_names.count(name) == 0) {
      throw DataError(std::string("no scenario for the upstream test ") + name);
    }
  }
  return out;
}

// --- Values -----------------------------------------------------------------------------------

using Topologies = std::map<std::string, wkcore::TagTopology>;

// A tag's value, comparable whatever it came from (the file, a view, a decoded frame).
struct TagValue {
  std::string key, channel_key;
  uint64_t tag_version = 0, subscriber_mutation_version = 0;
  std::string source_channel_key;
  uint64_t source_subscriber_mutation_version = 0;
  uint64_t hash_slot_table_version = 0;
  std::vector<wk_tag_slot_ref> refs;
  std::vector<std::pair<uint64_t, std::vector<std::string>>> partitions;
  int64_t created_at = 0, last_access = 0;

  std::string dump() const {
    std::ostringstream o;
    o << "{key " << key << ", channel " << channel_key << ", v" << tag_version << ", smv "
      << subscriber_mutation_version << ", source '" << source_channel_key << "' "
      << source_subscriber_mutation_version << ", table " << hash_slot_table_version << ", refs [";
    for (const auto& r : refs) {
      o << "(" << r.slot_id << "," << r.leader_node_id << "," << r.config_epoch << ","
        << r.balance_version << ")";
    }
    o << "], partitions [";
    for (const auto& p : partitions) {
      o << p.first << ":[";
      for (const auto& u : p.second) o << u << " ";
      o << "]";
    }
    o << "], created " << created_at << ", last " << last_access << "}";
    return o.str();
  }
};

bool refs_equal(const std::vector<wk_tag_slot_ref>& a, const std::vector<wk_tag_slot_ref>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (a[i].slot_id != b[i].slot_id || a[i].leader_node_id != b[i].leader_node_id ||
        a[i].config_epoch != b[i].config_epoch || a[i].balance_version != b[i].balance_version) {
      return false;
    }
  }
  return true;
}

bool operator==(const TagValue& a, const TagValue& b) {
  return a.key == b.key && a.channel_key == b.channel_key && a.tag_version == b.tag_version &&
         a.subscriber_mutation_version == b.subscriber_mutation_version &&
         a.source_channel_key == b.source_channel_key &&
         a.source_subscriber_mutation_version == b.source_subscriber_mutation_version &&
         a.hash_slot_table_version == b.hash_slot_table_version && refs_equal(a.refs, b.refs) &&
         a.partitions == b.partitions && a.created_at == b.created_at &&
         a.last_access == b.last_access;
}

std::vector<std::string> strings_of(const Json& list) {
  std::vector<std::string> out;
  for (const Json& s : list) out.push_back(s.get<std::string>());
  return out;
}

std::vector<std::pair<uint64_t, std::vector<std::string>>> partitions_of(const Json& list) {
  std::vector<std::pair<uint64_t, std::vector<std::string>>> out;
  for (const Json& p : list) out.emplace_back(p["node_id"].get<uint64_t>(), strings_of(p["uids"]));
  return out;
}

TagValue tag_of(const Json& t, const Topologies& topologies) {
  TagValue v;
  v.key = t["key"].get<std::string>();
  v.channel_key = t["channel_key"].get<std::string>();
  v.tag_version = t["tag_version"].get<uint64_t>();
  v.subscriber_mutation_version = t["subscriber_mutation_version"].get<uint64_t>();
  v.source_channel_key = t["source_channel_key"].get<std::string>();
  v.source_subscriber_mutation_version = t["source_subscriber_mutation_version"].get<uint64_t>();
  const wkcore::TagTopology& topo = topologies.at(t["topology"].get<std::string>());
  v.hash_slot_table_version = topo.hash_slot_table_version;
  v.refs = topo.refs;
  v.partitions = partitions_of(t["partitions"]);
  v.created_at = static_cast<int64_t>(t["created_at"].get<uint64_t>());
  v.last_access = static_cast<int64_t>(t["last_access"].get<uint64_t>());
  return v;
}

// The fields of a C tag info (a view's or a frame's).
TagValue tag_of_info(const wk_tag_info& i) {
  TagValue v;
  v.key = std::string(wkcore::tag_string_view(i.key));
  v.channel_key = std::string(wkcore::tag_string_view(i.channel_key));
  v.tag_version = i.tag_version;
  v.subscriber_mutation_version = i.subscriber_mutation_version;
  v.source_channel_key = std::string(wkcore::tag_string_view(i.source_channel_key));
  v.source_subscriber_mutation_version = i.source_subscriber_mutation_version;
  v.hash_slot_table_version = i.hash_slot_table_version;
  if (i.ref_count != 0) v.refs.assign(i.refs, i.refs + i.ref_count);
  v.created_at = i.created_at_ns;
  v.last_access = i.last_access_ns;
  return v;
}

TagValue tag_of(const wkcore::TagView& view) {
  TagValue v = tag_of_info(view.info());
  for (size_t i = 0; i < view.partition_count(); i++) {
    wkcore::TagPartition p = view.partition(i).value();
    v.partitions.emplace_back(p.node_id(), p.copy_uids());
  }
  return v;
}

TagValue tag_of(const wkcore::TagDecoded& frame) {
  const wk_tag_info info = frame.tag().value();
  TagValue v = tag_of_info(info);
  for (size_t i = 0; i < info.partition_count; i++) {
    const wk_tag_partition_in p = frame.partition(i).value();
    std::vector<std::string> uids;
    for (size_t u = 0; u < p.uid_count; u++) uids.emplace_back(wkcore::tag_string_view(p.uids[u]));
    v.partitions.emplace_back(p.node_id, std::move(uids));
  }
  return v;
}

std::vector<wkcore::TagPartitionInput> partition_inputs(const Json& list) {
  std::vector<wkcore::TagPartitionInput> out;
  for (const auto& p : partitions_of(list)) out.push_back({p.first, p.second});
  return out;
}

wkcore::TagInput input_of(const Json& t, const Topologies& topologies) {
  const TagValue v = tag_of(t, topologies);
  wkcore::TagInput in;
  in.key = v.key;
  in.channel_key = v.channel_key;
  in.tag_version = v.tag_version;
  in.subscriber_mutation_version = v.subscriber_mutation_version;
  in.source_channel_key = v.source_channel_key;
  in.source_subscriber_mutation_version = v.source_subscriber_mutation_version;
  in.topology = {v.hash_slot_table_version, v.refs};
  in.partitions = partition_inputs(t["partitions"]);
  in.created_at_ns = v.created_at;
  in.last_access_ns = v.last_access;
  return in;
}

wkcore::TagBuild build_of(const Json& r, const Topologies& topologies) {
  wkcore::TagBuild b;
  b.channel_key = r["channel_key"].get<std::string>();
  b.subscriber_mutation_version = r["subscriber_mutation_version"].get<uint64_t>();
  b.source_channel_key = r["source_channel_key"].get<std::string>();
  b.source_subscriber_mutation_version = r["source_subscriber_mutation_version"].get<uint64_t>();
  b.topology = topologies.at(r["topology"].get<std::string>());
  b.partitions = partition_inputs(r["partitions"]);
  b.mint_fresh_key = r["mint_fresh_key"].get<bool>();
  return b;
}

// A look-up request with the strings it borrows.
struct LookupOf {
  std::string tag_key, source;
  wkcore::TagLookup lookup;

  LookupOf(const Json& r, const Topologies& topologies)
      : tag_key(r["tag_key"].get<std::string>()),
        source(r["source_channel_key"].get<std::string>()) {
    const wkcore::TagTopology& t = topologies.at(r["topology"].get<std::string>());
    lookup.tag_key = tag_key;
    lookup.tag_version = r["tag_version"].get<uint64_t>();
    lookup.subscriber_mutation_version = r["subscriber_mutation_version"].get<uint64_t>();
    lookup.source_channel_key = source;
    lookup.source_subscriber_mutation_version =
        r["source_subscriber_mutation_version"].get<uint64_t>();
    lookup.hash_slot_table_version = t.hash_slot_table_version;
    lookup.refs = t.refs.empty() ? nullptr : t.refs.data();
    lookup.ref_count = t.refs.size();
  }
  LookupOf(const LookupOf&) = delete;
  LookupOf& operator=(const LookupOf&) = delete;
};

wkcore::TagRequestFields request_fields_of(const Json& r) {
  wkcore::TagRequestFields f;
  f.op = r["op"].get<std::string>();
  f.channel_id = r["channel_id"].get<std::string>();
  f.channel_type = static_cast<uint8_t>(r["channel_type"].get<uint64_t>());
  f.tag_key = r["tag_key"].get<std::string>();
  f.tag_version = r["tag_version"].get<uint64_t>();
  f.target_node_id = r["target_node_id"].get<uint64_t>();
  return f;
}

wkcore::TagResponseFields response_fields_of(const Json& r) {
  wkcore::TagResponseFields f;
  f.status = r["status"].get<std::string>();
  f.leader_id = r["leader_id"].get<uint64_t>();
  f.result = r["result"].get<std::string>();
  return f;
}

std::string to_hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) throw DataError("odd hex length");
  std::vector<uint8_t> out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// --- Replaying --------------------------------------------------------------------------------

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T must(wkcore::Result<T> r, const char* what) {
  if (!r.ok()) throw Failure(std::string(what) + ": " + r.status().str());
  return std::move(r).value();
}

void must(Status st, const char* what) {
  if (!st.ok()) throw Failure(std::string(what) + ": " + st.str());
}

void expect_tag(const std::optional<TagValue>& got, const Json& want, const Topologies& topologies,
                const char* what) {
  if (want.is_null()) {
    if (got) throw Failure(std::string(what) + ": want null, got " + got->dump());
    return;
  }
  if (!got) throw Failure(std::string(what) + ": want a tag, got null");
  const TagValue w = tag_of(want, topologies);
  if (!(*got == w)) {
    throw Failure(std::string(what) + ": want " + w.dump() + ", got " + got->dump());
  }
}

std::optional<TagValue> optional_tag(const wkcore::TagView& v) {
  if (!v) return std::nullopt;
  return tag_of(v);
}

// A view, or null for WK_STATUS_NOT_FOUND (any other failure fails the step).
std::optional<TagValue> found(wkcore::Result<wkcore::TagView> r, const char* what) {
  if (r.ok()) return tag_of(*r);
  if (r.status().code() == WK_STATUS_NOT_FOUND) return std::nullopt;
  throw Failure(std::string(what) + ": " + r.status().str());
}

template <typename T>
void expect_eq(const T& got, const T& want, const std::string& what) {
  if (!(got == want)) {
    std::ostringstream o;
    o << what << ": want " << want << ", got " << got;
    throw Failure(o.str());
  }
}

void expect_page(const wk_tag_cleanup_page& p, const Json& want) {
  expect_eq<uint64_t>(p.visited, want["visited"].get<uint64_t>(), "visited");
  expect_eq<uint64_t>(p.reclaimed, want["reclaimed"].get<uint64_t>(), "reclaimed");
  expect_eq<uint64_t>(p.unlinked, want["unlinked"].get<uint64_t>(), "unlinked");
  expect_eq<bool>(p.wrapped, want["wrapped"].get<bool>(), "wrapped");
}

void expect_counts(const wk_tag_counts& c, const Json& want) {
  expect_eq<uint64_t>(c.tags, want["tags"].get<uint64_t>(), "tags");
  expect_eq<uint64_t>(c.uids, want["uids"].get<uint64_t>(), "uids");
  expect_eq<uint64_t>(c.stored, want["stored"].get<uint64_t>(), "stored");
  expect_eq<uint64_t>(c.stale, want["stale"].get<uint64_t>(), "stale");
  expect_eq<uint64_t>(c.reclaimed_bodies, want["reclaimed_bodies"].get<uint64_t>(),
                      "reclaimed_bodies");
  expect_eq<uint64_t>(c.reclaimed_refs, want["reclaimed_refs"].get<uint64_t>(), "reclaimed_refs");
  for (uint8_t i = 0; i < 7; i++) {
    const Json& lookups = want["lookups"];
    const uint64_t w = lookups.contains(kReasons[i]) ? lookups[kReasons[i]].get<uint64_t>() : 0;
    expect_eq<uint64_t>(c.lookups[i], w, std::string("lookups ") + kReasons[i]);
  }
}

void expect_response(const wkcore::TagDecoded& frame, const Json& want,
                     const Topologies& topologies) {
  const wk_tag_response r = must(frame.response_fields(), "response fields");
  expect_eq(std::string(wkcore::tag_string_view(r.status)), want["status"].get<std::string>(),
            "status");
  expect_eq<uint64_t>(r.leader_id, want["leader_id"].get<uint64_t>(), "leader_id");
  expect_eq(std::string(wkcore::tag_string_view(r.result)), want["result"].get<std::string>(),
            "result");
  expect_tag(tag_of(frame), want["tag"], topologies, "response tag");
}

void expect_request(const wkcore::TagDecoded& frame, const Json& want,
                    const Topologies& topologies) {
  const wk_tag_request r = must(frame.request_fields(), "request fields");
  expect_eq(std::string(wkcore::tag_string_view(r.op)), want["op"].get<std::string>(), "op");
  expect_eq(std::string(wkcore::tag_string_view(r.channel_id)),
            want["channel_id"].get<std::string>(), "channel_id");
  expect_eq<uint64_t>(r.channel_type, want["channel_type"].get<uint64_t>(), "channel_type");
  expect_eq(std::string(wkcore::tag_string_view(r.tag_key)), want["tag_key"].get<std::string>(),
            "tag_key");
  expect_eq<uint64_t>(r.tag_version, want["tag_version"].get<uint64_t>(), "tag_version");
  expect_eq<uint64_t>(r.target_node_id, want["target_node_id"].get<uint64_t>(), "target_node_id");
  expect_tag(tag_of(frame), want["tag"], topologies, "request tag");
}

struct Node {
  wkcore::MetricsRegistry metrics;
  wkcore::TagLeader leader;
  wkcore::TagCache cache;
};

class Replay {
 public:
  explicit Replay(const Json& scenario) {
    for (const Json& t : scenario["topologies"]) {
      wkcore::TagTopology topo;
      topo.hash_slot_table_version = t["hash_slot_table_version"].get<uint64_t>();
      for (const Json& r : t["refs"]) {
        topo.refs.push_back(wk_tag_slot_ref{static_cast<uint32_t>(r["slot_id"].get<uint64_t>()),
                                            r["leader_node_id"].get<uint64_t>(),
                                            r["config_epoch"].get<uint64_t>(),
                                            r["balance_version"].get<uint64_t>()});
      }
      topologies_[t["name"].get<std::string>()] = std::move(topo);
    }
    for (const Json& n : scenario["nodes"]) {
      Node node;
      node.metrics = must(wkcore::MetricsRegistry::create(), "metrics registry");
      wkcore::TagLeader::Options lo;
      lo.local_node_id = n["local_node_id"].get<uint64_t>();
      lo.ttl_ns = n["ttl"].get<uint64_t>();
      lo.manual_clock = true;
      lo.manual_start_ns = n["start"].get<uint64_t>();
      lo.key_prefix = n["key_prefix"].get<std::string>();
      node.leader = must(wkcore::TagLeader::create(lo, &node.metrics), "leader");
      wkcore::TagCache::Options co;
      co.local_node_id = lo.local_node_id;
      co.ttl_ns = lo.ttl_ns;
      co.manual_clock = true;
      co.manual_start_ns = lo.manual_start_ns;
      node.cache = must(wkcore::TagCache::create(co, &node.metrics), "cache");
      nodes_.emplace(n["name"].get<std::string>(), std::move(node));
    }
  }

  void step(const Json& s) {
    const std::string op = s["op"].get<std::string>();
    if (op == "build" || op == "build_ephemeral") {
      const wkcore::TagBuild b = build_of(s["request"], topologies_);
      const wkcore::TagLeader& l = node(s).leader;
      auto v = must(op == "build" ? l.build(b) : l.build_ephemeral(b), op.c_str());
      expect_tag(tag_of(v), s["expect"], topologies_, "built");
    } else if (op == "leader_lookup") {
      const LookupOf r(s["request"], topologies_);
      auto got = must(node(s).leader.lookup(str(s, "channel_key"), r.lookup.to_c()), "lookup");
      expect_reason(got.reason, s["expect"]);
      expect_tag(optional_tag(got.view), s["tag"], topologies_, "tag");
    } else if (op == "leader_lookup_tag") {
      expect_tag(found(node(s).leader.lookup_tag(str(s, "tag_key")), op.c_str()), s["expect"],
                 topologies_, "tag");
    } else if (op == "leader_current") {
      expect_tag(found(node(s).leader.current(str(s, "channel_key")), op.c_str()), s["expect"],
                 topologies_, "tag");
    } else if (op == "leader_is_source_stale" || op == "cache_is_source_stale") {
      const Node& n = node(s);
      auto got = op == "leader_is_source_stale"
                     ? n.leader.is_source_stale(str(s, "channel_key"), str(s, "source_channel_key"),
                                                s["source_version"].get<uint64_t>())
                     : n.cache.is_source_stale(str(s, "channel_key"), str(s, "source_channel_key"),
                                               s["source_version"].get<uint64_t>());
      expect_eq<bool>(must(std::move(got), op.c_str()), s["expect"].get<bool>(), "stale");
    } else if (op == "leader_cleanup" || op == "cache_cleanup") {
      const Node& n = node(s);
      const int64_t now = static_cast<int64_t>(s["now"].get<uint64_t>());
      const uint32_t limit = static_cast<uint32_t>(s["limit"].get<uint64_t>());
      auto page =
          op == "leader_cleanup" ? n.leader.cleanup(now, limit) : n.cache.cleanup(now, limit);
      expect_page(must(std::move(page), op.c_str()), s["expect"]);
    } else if (op == "leader_bodies") {
      expect_eq<uint64_t>(must(node(s).leader.counts(), "counts").entries,
                          s["expect"].get<uint64_t>(), "bodies");
    } else if (op == "cache_channels") {
      expect_eq<uint64_t>(must(node(s).cache.counts(), "counts").entries,
                          s["expect"].get<uint64_t>(), "channels");
    } else if (op == "leader_counts") {
      expect_counts(must(node(s).leader.counts(), "counts"), s["expect"]);
    } else if (op == "cache_counts") {
      expect_counts(must(node(s).cache.counts(), "counts"), s["expect"]);
    } else if (op == "begin_mutation") {
      mutations_[s["as"].get<std::string>()] =
          must(node(s).leader.begin_mutation(str(s, "channel_key")), op.c_str());
    } else if (op == "mutation_add") {
      const std::vector<std::string> uids = strings_of(s["uids"]);
      must(mutation(s).add(s["node_id"].get<uint64_t>(),
                           std::vector<std::string_view>(uids.begin(), uids.end())),
           op.c_str());
    } else if (op == "mutation_remove") {
      const std::vector<std::string> uids = strings_of(s["uids"]);
      must(mutation(s).remove(std::vector<std::string_view>(uids.begin(), uids.end())), op.c_str());
    } else if (op == "mutation_reset") {
      must(mutation(s).reset(), op.c_str());
    } else if (op == "mutation_commit") {
      auto done = must(mutation(s).commit(s["store_version"].get<uint64_t>()), op.c_str());
      mutations_.erase(s["mutation"].get<std::string>());
      const std::string want = s["expect"].get<std::string>();
      const uint8_t code = want == "applied"  ? WK_TAG_MUTATION_APPLIED
                           : want == "no_tag" ? WK_TAG_MUTATION_NO_TAG
                                              : WK_TAG_MUTATION_ALREADY_CURRENT;
      expect_eq<unsigned>(done.outcome, code, "outcome (applied 1, no_tag 2, already_current 3)");
      expect_tag(optional_tag(done.view), s["tag"], topologies_, "tag");
    } else if (op == "mutation_abandon") {
      mutations_.erase(s["mutation"].get<std::string>());  // the destructor abandons it
    } else if (op == "is_dirty") {
      expect_eq<bool>(must(node(s).leader.is_dirty(str(s, "channel_key")), op.c_str()),
                      s["expect"].get<bool>(), "dirty");
    } else if (op == "usable") {
      auto got = node(s).leader.usable(str(s, "channel_key"),
                                       s["authoritative_version"].get<uint64_t>());
      std::optional<TagValue> tag;
      if (got.ok()) {
        tag = tag_of(*got);
      } else if (!got.status().is(WK_STATUS_TAG_DIRTY) && !got.status().is(WK_STATUS_NOT_FOUND) &&
                 !got.status().is(WK_STATUS_TAG_LAGGING)) {
        throw Failure(std::string("usable: ") + got.status().str());
      }
      expect_tag(tag, s["expect"], topologies_, "usable");
    } else if (op == "handle") {
      handles_[s["as"].get<std::string>()] =
          must(node(s).cache.channel(str(s, "channel_key")), op.c_str());
    } else if (op == "store") {
      const wkcore::TagInput t = input_of(s["tag"], topologies_);
      auto got = s["handle"].is_null() ? node(s).cache.store(t) : handle(s).store(t);
      auto stored = must(std::move(got), op.c_str());
      expect_eq<std::string>(stored.stored ? "stored" : "stale", s["expect"].get<std::string>(),
                             "store");
      expect_tag(optional_tag(stored.view), s["body"], topologies_, "body");
    } else if (op == "cache_lookup") {
      const LookupOf r(s["request"], topologies_);
      auto got = s["handle"].is_null()
                     ? node(s).cache.lookup(str(s, "channel_key"), r.lookup.to_c())
                     : handle(s).lookup(r.lookup.to_c());
      auto found_lookup = must(std::move(got), op.c_str());
      expect_reason(found_lookup.reason, s["expect"]);
      expect_tag(optional_tag(found_lookup.view), s["tag"], topologies_, "tag");
    } else if (op == "cache_lookup_tag") {
      expect_tag(found(node(s).cache.lookup_tag(str(s, "channel_key"), str(s, "tag_key")),
                       op.c_str()),
                 s["expect"], topologies_, "tag");
    } else if (op == "cache_current") {
      expect_tag(found(node(s).cache.current(str(s, "channel_key")), op.c_str()), s["expect"],
                 topologies_, "tag");
    } else if (op == "advance") {
      const Node& n = node(s);
      must(n.leader.advance_clock(s["by"].get<uint64_t>()), "advance the leader");
      must(n.cache.advance_clock(s["by"].get<uint64_t>()), "advance the cache");
    } else if (op == "partition_by_node") {
      partition(s);
    } else if (op == "rpc_handle") {
      rpc_handle(s);
    } else if (op == "rpc_redirect") {
      const uint64_t next = must(wkcore::TagRpc::redirect(s["called_node_id"].get<uint64_t>(),
                                                          str(s, "status"),
                                                          s["leader_id"].get<uint64_t>()),
                                 op.c_str());
      expect_eq<uint64_t>(next, s["expect"].is_null() ? 0 : s["expect"].get<uint64_t>(),
                          "next node (0: none)");
    } else if (op == "codec_request") {
      const Json& r = s["request"];
      const wkcore::TagInput t = input_of(r["tag"], topologies_);
      auto frame = must(wkcore::TagFrame::encode_request(request_fields_of(r), &t), "encode");
      expect_eq(to_hex(frame), s["hex"].get<std::string>(), "hex");
      expect_request(must(wkcore::TagDecoded::request(from_hex(s["hex"].get<std::string>())),
                          "decode"),
                     r, topologies_);
    } else if (op == "codec_response") {
      const Json& r = s["response"];
      const wkcore::TagInput t = input_of(r["tag"], topologies_);
      auto frame = must(wkcore::TagRpc::encode_response(response_fields_of(r), &t), "encode");
      expect_eq(to_hex(frame), s["hex"].get<std::string>(), "hex");
      expect_response(must(wkcore::TagDecoded::response(from_hex(s["hex"].get<std::string>())),
                           "decode"),
                      r, topologies_);
    } else {
      throw Failure("op \"" + op + "\" has no replay");  // the check knows every op
    }
  }

 private:
  static std::string str(const Json& s, const char* name) { return s[name].get<std::string>(); }

  const Node& node(const Json& s) { return nodes_.at(s["node"].get<std::string>()); }
  wkcore::TagMutation& mutation(const Json& s) {
    return mutations_.at(s["mutation"].get<std::string>());
  }
  const wkcore::TagChannel& handle(const Json& s) {
    return handles_.at(s["handle"].get<std::string>());
  }

  static void expect_reason(uint8_t got, const Json& want) {
    expect_eq<std::string>(wkcore::tag_lookup_reason_name(got), want.get<std::string>(), "reason");
  }

  void partition(const Json& s) {
    const std::vector<std::string> uids = strings_of(s["uids"]);
    std::vector<uint32_t> slots;
    for (const Json& n : s["slots"]) slots.push_back(static_cast<uint32_t>(n.get<uint64_t>()));
    std::vector<uint64_t> slot_nodes;
    for (const Json& n : s["slot_nodes"]) slot_nodes.push_back(n.get<uint64_t>());
    uint32_t unassigned = UINT32_MAX;
    auto got = wkcore::TagRpc::partition_by_node(uids, slots, slot_nodes, &unassigned);
    const std::string want = s["expect"].get<std::string>();
    if (want == "ok") {
      const TagValue v = tag_of(must(std::move(got), "partition_by_node"));
      if (v.partitions != partitions_of(s["partitions"])) {
        throw Failure("partitions: got " + v.dump());
      }
    } else if (want == "unassigned_slot") {
      expect_eq<uint32_t>(got.status().code(), WK_STATUS_TAG_UNASSIGNED_SLOT, "status");
      expect_eq<uint64_t>(unassigned, s["slot_id"].get<uint64_t>(), "slot_id");
    } else {
      expect_eq<uint32_t>(got.status().code(), WK_STATUS_TAG_LENGTH_MISMATCH, "status");
    }
  }

  void rpc_handle(const Json& s) {
    const Json& req = s["request"];
    const wkcore::TagInput rt = input_of(req["tag"], topologies_);
    const std::vector<uint8_t> frame =
        must(wkcore::TagFrame::encode_request(request_fields_of(req), &rt), "encode the request");
    const Json& prov = s["provider"];
    const wkcore::TagInput pt = input_of(prov["tag"], topologies_);
    const std::vector<uint8_t> answer =
        must(wkcore::TagRpc::encode_response(response_fields_of(prov), &pt), "encode the provider");
    int calls = 0;
    auto handled = wkcore::TagRpc::handle_with(
        frame, s["channel_leader"].get<uint64_t>(), s["local_node_id"].get<uint64_t>(),
        [&](uint8_t, const wk_tag_frame*) -> wkcore::Result<std::vector<uint8_t>> {
          calls++;
          return answer;
        });
    const std::string want = s["expect"].get<std::string>();
    if (want == "unknown_op") {
      expect_eq<uint32_t>(handled.status().code(), WK_STATUS_TAG_UNKNOWN_OP, "status");
      expect_eq(calls, 0, "provider calls");
      return;
    }
    auto h = must(std::move(handled), "rpc_handle");
    const std::string called = h.called == WK_TAG_OP_GET      ? "get"
                               : h.called == WK_TAG_OP_UPDATE ? "update"
                                                              : "null";
    expect_eq(called, s["called"].is_null() ? std::string("null") : s["called"].get<std::string>(),
              "called");
    expect_eq(calls, h.called == 0 ? 0 : 1, "provider calls");
    expect_response(must(wkcore::TagDecoded::response(h.response), "decode the response"),
                    s["response"], topologies_);
  }

  Topologies topologies_;
  std::map<std::string, Node> nodes_;
  std::map<std::string, wkcore::TagChannel> handles_;
  std::map<std::string, wkcore::TagMutation> mutations_;
};

std::vector<std::string> replay_all(const std::vector<Json>& scenarios) {
  std::vector<std::string> failures;
  for (const Json& s : scenarios) {
    const std::string name = s["name"].get<std::string>();
    try {
      Replay replay(s);
      const Json& steps = s["steps"];
      for (size_t i = 0; i < steps.size(); i++) {
        try {
          replay.step(steps[i]);
        } catch (const std::exception& e) {
          failures.push_back(name + ": step " + std::to_string(i) + " " + steps[i].dump() + ": " +
                             e.what());
          break;
        }
      }
    } catch (const std::exception& e) {
      failures.push_back(name + ": " + e.what());
    }
  }
  return failures;
}

Outcomes replay_text(const std::string& text) {
  return replay_scenarios(text, parse_file, replay_all);
}

std::string file_text() { return read_file(testdata_path("tag/scenarios.json")); }

TEST(TagScenarios, ReplayTheSharedFile) {
  const Outcomes out = replay_text(file_text());
  for (const std::string& f : out.failures) ADD_FAILURE() << f;
  EXPECT_GE(out.scenarios, kMinScenarios) << "the file lost scenarios";
}

// The harness refuses a file it does not understand instead of skipping what it does not know.
TEST(TagScenarios, TheCheckRefusesBrokenFiles) {
  const std::string text = file_text();
  const std::pair<std::string, std::string> edits[] = {
      {"\"op\": \"store\"", "\"op\": \"stroe\""},
      {"\"expect\": \"stored\"", "\"expect\": \"saved\""},
      {"\"expect\": \"stale_request\"", "\"expect\": \"stale\""},
      {"\"handle\": null", "\"handle\": \"nobody\""},
      {"\"topology\": \"t1\"", "\"topology\": \"t9\""},
      {"\"node\": \"f\"", "\"node\": \"nobody\""},
      {"\"created_at\": 0", "\"created_at\": -1"},
      {"\"system\": \"tag\"", "\"system\": \"tags\""},
      {"\"mint_fresh_key\": false", "\"mint_fresh_key\": false, \"extra\": 1"},
      {"\"name\": \"follower_caches_only_local_partition_tag\"", "\"name\": \"renamed\""},
  };
  for (const auto& edit : edits) {
    const std::string broken = replace_first(text, edit.first, edit.second);
    ASSERT_NE(broken, text) << "the edit found nothing: " << edit.first;
    const Outcomes out = replay_text(broken);
    ASSERT_FALSE(out.failures.empty()) << edit.second;
    EXPECT_NE(out.failures[0].find("invalid scenario file"), std::string::npos)
        << edit.second << ": " << out.failures[0];
  }
  // A value the check accepts but the library answers otherwise fails the replay, not the check.
  const std::string wrong = replace_first(text, "\"expect\": \"stored\"", "\"expect\": \"stale\"");
  const Outcomes out = replay_text(wrong);
  ASSERT_FALSE(out.failures.empty());
  EXPECT_EQ(out.failures[0].find("invalid scenario file"), std::string::npos) << out.failures[0];
}

}  // namespace
