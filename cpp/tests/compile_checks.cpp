// Compiled (syntax only) by ctest: as is it must compile; with one WK_MISUSE_* macro defined it
// must fail with that misuse's diagnostic (cpp/CMakeLists.txt lists them). Never linked.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wkcore.hpp"

namespace {

wkcore::Status returns_status() { return WK_STATUS_OK; }

[[maybe_unused]] void uses(const wkcore::Slot& slot, const wkcore::MetricsSnapshot& snapshot) {
  // Every result is looked at: nothing here may warn.
  wkcore::Status st = slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, 1);
  (void)st;
  auto admission = slot.admit(WK_CONTROL_KIND_CONFIG_CHANGE, WK_PROPOSAL_CLASS_FOREGROUND, 1);
  if (admission.ok()) (void)slot.resolve(admission->config_change);
  (void)slot.take(1);
  (void)slot.set_leader();
  auto clone = slot.clone();
  (void)clone;
  (void)snapshot.family_count();
  (void)returns_status();
  wkcore::Slot moved = std::move(clone).value();
  (void)moved;

#if defined(WK_MISUSE_DISCARD_STATUS)
  returns_status();
#elif defined(WK_MISUSE_DISCARD_RESULT)
  wkcore::Slot::create(1);
#elif defined(WK_MISUSE_DISCARD_METHOD_STATUS)
  slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, 2);
#elif defined(WK_MISUSE_COPY_SLOT)
  wkcore::Slot copy = slot;
  (void)copy;
#elif defined(WK_MISUSE_INT_KIND)
  (void)slot.admit(1u, WK_PROPOSAL_CLASS_FOREGROUND, 3);
#elif defined(WK_MISUSE_INT_CLASS)
  (void)slot.admit(WK_CONTROL_KIND_PROPOSE, 0u, 4);
#elif defined(WK_MISUSE_INT_TICKET)
  (void)slot.resolve(uint64_t{1});
#elif defined(WK_MISUSE_DISCARD_TAKE)
  slot.take(1);
#endif
}

[[maybe_unused]] void uses_coord(const wkcore::Ledger& ledger, const wkcore::AnchorTable& table,
                                 const wkcore::HandoffLedger& handoffs) {
  // Every result is looked at: nothing here may warn.
  auto decision = ledger.claim("k", 1, 2, 3, 4);
  if (decision.ok() && decision->won()) (void)ledger.finalize("k", WK_OUTCOME_SUCCEEDED, 0, 5);
  const std::vector<std::string> keys = {"a", "b"};
  (void)ledger.place(keys, 1, WK_COORD_DEADLINE_NEVER, 0);
  (void)ledger.finalize_batch(keys, std::vector<uint64_t>{1, 2}, WK_OUTCOME_FAILED, 1);
  // Braced lists pick the initializer_list overloads (no ambiguity with the vectors or spans).
  (void)ledger.place({"a", "b"}, 1, WK_COORD_DEADLINE_NEVER, 0);
  (void)ledger.finalize_batch({"a", "b"}, {1, 2}, WK_OUTCOME_FAILED, 1);
  (void)ledger.finalize_batch({"a"}, WK_OUTCOME_FAILED, 1);
  (void)handoffs.claim_batch({}, WK_COORD_DEADLINE_NEVER, 0);
  wkcore::Status st = table.insert(1, std::nullopt);
  (void)st;
  auto key = wkcore::HandoffKey::make("channel", 1, 2, 3, "tag", 4);
  if (key.ok()) (void)handoffs.claim(*key, WK_COORD_DEADLINE_NEVER, 0);
  auto created = wkcore::Ledger::create(wkcore::Ledger::Kind::kPending, 4, 0);
  (void)created;
#if WKCORE_HAVE_SPAN
  // C++20: the batch calls take spans too.
  const std::string_view views[] = {"a", "b"};
  const uint64_t payloads[] = {1, 2};
  (void)ledger.place(std::span<const std::string_view>(views), 1, WK_COORD_DEADLINE_NEVER, 0);
  (void)ledger.finalize_batch(std::span<const std::string_view>(views),
                              std::span<const uint64_t>(payloads), WK_OUTCOME_FAILED, 1);
  (void)ledger.place(std::span<const std::string>(keys), 1, WK_COORD_DEADLINE_NEVER, 0);
  const std::vector<wkcore::HandoffKey> handoff_keys;
  (void)handoffs.claim_batch(std::span<const wkcore::HandoffKey>(handoff_keys),
                             WK_COORD_DEADLINE_NEVER, 0);
#endif

#if defined(WK_MISUSE_DISCARD_COORD_DECISION)
  ledger.claim("k", 1, 2, 3, 4);
#elif defined(WK_MISUSE_DISCARD_ANCHOR_STATUS)
  table.insert(2, std::nullopt);
#elif defined(WK_MISUSE_COPY_LEDGER)
  wkcore::Ledger copy = ledger;
  (void)copy;
#elif defined(WK_MISUSE_INT_LEDGER_KIND)
  (void)wkcore::Ledger::create(1u, 4, 0);
#endif
}

}  // namespace
