// What the C ABI's documentation promises, pinned from C++ through the raw calls: argument checks
// come before deadline checks in the owner calls (and a spent budget is reported only when there
// was something to wait for); every family renders before any object exists; and the small
// behaviours a C user meets (a clone is the same pointer, zero limits and intervals, begin on a
// pending owner, the operations gauge while calls are in flight, a won take is a finalization).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "wkcore.h"
#include "wkcore.hpp"

namespace {

using wkcore::MetricsRegistry;
using wkcore::Owner;
using wkcore::OwnerIdentity;
using wkcore::OwnerRegistry;
using wkcore::Status;

constexpr uint64_t kSec = 1000000000ULL;

OwnerRegistry manual_registry() {
  OwnerRegistry::Options o;
  o.node_id = 7;
  o.boot_id = "boot-1";
  o.capacity = 16;
  o.max_operations = 8;
  auto r = OwnerRegistry::create_with_manual_clock(o, 1000);
  EXPECT_TRUE(r.ok()) << r.status().str();
  return std::move(r).value();
}

Owner reserved(const OwnerRegistry& reg, const std::string& client) {
  auto o = reg.reserve("ns", client, "alice", 1, 2, [](uint64_t) { return wk_status{WK_STATUS_OK}; });
  EXPECT_TRUE(o.ok()) << o.status().str();
  return std::move(o).value();
}

Owner active(const OwnerRegistry& reg, const std::string& client) {
  Owner o = reserved(reg, client);
  EXPECT_TRUE(o.activate(1, reg.now().value() + 30 * kSec).ok());
  return o;
}

OwnerIdentity identity_of(const Owner& owner, const std::string& client) {
  wk_owner_info i = owner.info().value();
  return OwnerIdentity{"ns", client, i.session_generation, i.owner_generation, i.node_id, "boot-1",
                       i.connection_id};
}

}  // namespace

// --- Argument checks before deadlines --------------------------------------------------------

TEST(AbiContract, QuiesceWithTimeoutZeroChecksTheIdentityFirst) {
  OwnerRegistry reg = manual_registry();
  Owner owner = active(reg, "c1");
  OwnerIdentity good = identity_of(owner, "c1");

  OwnerIdentity malformed = good;
  malformed.namespace_.clear();  // an empty namespace: not a valid owner
  EXPECT_STATUS(reg.quiesce(malformed, 0), WK_STATUS_OWNER_INVALID);

  OwnerIdentity never_issued = good;
  never_issued.connection_id = 999;
  EXPECT_STATUS(reg.quiesce(never_issued, 0), WK_STATUS_OWNER_UNKNOWN);

  OwnerIdentity other_boot = good;
  other_boot.boot_id = "boot-0";
  EXPECT_STATUS(reg.quiesce(other_boot, 0), WK_STATUS_OWNER_UNKNOWN);

  // Nothing of that touched the owner: it still admits.
  auto op = owner.begin();
  ASSERT_OK(op.status());
  ASSERT_OK(op->done());
}

TEST(AbiContract, IsolationQuiesceWithTimeoutZeroChecksTheIdentityFirst) {
  OwnerRegistry reg = manual_registry();
  Owner owner = active(reg, "c1");
  OwnerIdentity id = identity_of(owner, "c1");
  id.boot_id = std::string("boot-\xff", 6);  // not UTF-8
  wk_owner_identity v = id.view();
  EXPECT_STATUS(wk_owner_isolation_quiesce(reg.c_ptr(), nullptr, 0, &v, 0, nullptr, nullptr),
                WK_STATUS_OWNER_INVALID);
  EXPECT_STATUS(wk_owner_isolation_quiesce(nullptr, nullptr, 0, &v, 0, nullptr, nullptr),
                WK_STATUS_OWNER_INVALID);
  // A proof whose boot id is not UTF-8 is refused before the deadline too.
  wk_retired_boot proof{};
  proof.node_id = 7;
  proof.boot_id[0] = 0xff;
  proof.boot_id_len = 1;
  proof.last_connection_id = 1;
  OwnerIdentity fine = identity_of(owner, "c1");
  wk_owner_identity fv = fine.view();
  EXPECT_STATUS(wk_owner_isolation_quiesce(nullptr, &proof, 1, &fv, 0, nullptr, nullptr),
                WK_STATUS_OWNER_INVALID);
  // This boot's identity with a connection id never issued: this registry answers, before the
  // deadline.
  OwnerIdentity never = identity_of(owner, "c1");
  never.connection_id = 999;
  wk_owner_identity nv = never.view();
  EXPECT_STATUS(wk_owner_isolation_quiesce(reg.c_ptr(), nullptr, 0, &nv, 0, nullptr, nullptr),
                WK_STATUS_OWNER_UNKNOWN);
  // A malformed identity (empty client id), valid UTF-8.
  OwnerIdentity empty = identity_of(owner, "c1");
  empty.client_id.clear();
  wk_owner_identity ev = empty.view();
  EXPECT_STATUS(wk_owner_isolation_quiesce(reg.c_ptr(), nullptr, 0, &ev, 0, nullptr, nullptr),
                WK_STATUS_OWNER_INVALID);
}

TEST(AbiContract, NothingToWaitForIsNotATimeout) {
  OwnerRegistry reg = manual_registry();
  Owner owner = active(reg, "c1");
  OwnerIdentity id = identity_of(owner, "c1");
  ASSERT_OK(owner.quiesce());  // retired now
  EXPECT_OK(owner.quiesce(0)) << "the handle of a retired owner";
  EXPECT_OK(reg.quiesce(id, 0)) << "an owner issued here and retired since";
  wk_owner_identity v = id.view();
  EXPECT_OK(wk_owner_isolation_quiesce(reg.c_ptr(), nullptr, 0, &v, 0, nullptr, nullptr));

  OwnerRegistry empty = manual_registry();
  EXPECT_OK(empty.close(0)) << "closing an empty registry waits for nothing";
  EXPECT_TRUE(empty.snapshot()->stopped);
  EXPECT_OK(reg.close(0)) << "every owner already retired";
  // A cancelled token with nothing to wait for is no failure either.
  auto token = wkcore::CancelToken::create();
  ASSERT_OK(token.status());
  ASSERT_OK(token->cancel());
  EXPECT_OK(reg.close(kSec, &*token));
}

TEST(AbiContract, SomethingToWaitForStillTimesOut) {
  OwnerRegistry reg = manual_registry();
  Owner owner = active(reg, "c1");
  OwnerIdentity id = identity_of(owner, "c1");
  auto op = owner.begin();
  ASSERT_OK(op.status());
  EXPECT_STATUS(reg.quiesce(id, 0), WK_STATUS_OWNER_DEADLINE_EXCEEDED);
  EXPECT_STATUS(owner.quiesce(0), WK_STATUS_OWNER_DEADLINE_EXCEEDED);
  EXPECT_STATUS(reg.close(0), WK_STATUS_OWNER_DEADLINE_EXCEEDED);
  EXPECT_TRUE(reg.snapshot()->stopped) << "admission is stopped even when the wait is spent";
  ASSERT_OK(op->done());
  EXPECT_OK(reg.close(kSec));
  EXPECT_EQ(reg.snapshot()->held, 0u);
}

// --- Metrics before any object ---------------------------------------------------------------

// ctest runs each test in a fresh process, where this is the first call: every system's families
// render, at zero, before any slot, owner registry, tag object or ledger exists.
TEST(AbiContract, EveryFamilyRendersBeforeAnyObject) {
  auto global = MetricsRegistry::global();
  ASSERT_OK(global.status());
  std::string text;
  ASSERT_OK(global->render(text));
  for (const char* name :
       {"wukongim_slot_proposal_admission_total", "wukongim_mqtt_owner_work",
        "wukongim_mqtt_owner_sweep_total", "wkcore_coord_claims_total",
        "wkcore_coord_finalizations_total", "wkcore_coord_reconciled_timeouts_total",
        "wkcore_coord_rejected_total", "wkcore_coord_reclaimed_total"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name + " "), std::string::npos)
        << name << " is not rendered:\n"
        << text;
  }
  auto families = global->snapshot();
  ASSERT_OK(families.status());
  EXPECT_GE(families->size(), 9u) << "admission 1, owner 2, tag, coord 5";
  bool tag = false;
  for (const auto& f : *families) {
    if (f.name.find("tag") != std::string::npos) tag = true;
  }
  EXPECT_TRUE(tag) << "no delivery-tag family:\n" << text;
}

// --- Small behaviours a C user meets ---------------------------------------------------------

TEST(AbiContract, CloneReturnsTheSamePointer) {
  wk_slot_limits limits{4, 1};
  wk_slot* slot = nullptr;
  ASSERT_OK(wk_slot_new(nullptr, 1, &limits, &slot));
  wk_slot* copy = nullptr;
  ASSERT_OK(wk_slot_clone(slot, &copy));
  EXPECT_EQ(copy, slot) << "a clone is one more reference to the same object";
  wk_slot_free(slot);
  // The clone still holds the object: it answers.
  wk_slot_state state{};
  EXPECT_OK(wk_slot_state_get(copy, &state, sizeof state));
  wk_slot_free(copy);

  wk_flip* flip = nullptr;
  ASSERT_OK(wk_flip_new(0, &flip));
  wk_flip* flip2 = nullptr;
  ASSERT_OK(wk_flip_clone(flip, &flip2));
  EXPECT_EQ(flip2, flip);
  wk_flip_free(flip);
  wk_flip_free(flip2);
}

TEST(AbiContract, ReconcileLimitZeroIsANoOp) {
  wk_ledger* ledger = nullptr;
  ASSERT_OK(wk_ledger_new(nullptr, WK_LEDGER_KIND_PENDING, 4, 0, &ledger));
  wk_coord_decision d{};
  ASSERT_OK(wk_ledger_insert(ledger, reinterpret_cast<const uint8_t*>("k"), 1, 1, 0, 5, 0, &d));
  wk_coord_page page{};
  page.scanned = 99;
  page.changed = 99;
  page.wrapped = true;
  ASSERT_OK(wk_ledger_reconcile(ledger, 100, 0, &page));
  EXPECT_EQ(page.scanned, 0u);
  EXPECT_EQ(page.changed, 0u);
  EXPECT_FALSE(page.wrapped);
  wk_ledger_record r{};
  ASSERT_OK(wk_ledger_get(ledger, reinterpret_cast<const uint8_t*>("k"), 1, &r, sizeof r));
  EXPECT_EQ(r.state, WK_RECORD_STATE_PLACED) << "still pending: limit 0 times nothing out";
  // The cursor did not move: the next page starts at slot 0 and finds the record.
  ASSERT_OK(wk_ledger_reconcile(ledger, 100, 1, &page));
  EXPECT_EQ(page.scanned, 1u);
  EXPECT_EQ(page.changed, 1u);
  wk_ledger_free(ledger);
}

// An interval of 0 is not "never": it is read as 1 ns of the registry clock. The first call
// sweeps; later calls sweep again once the clock has moved on.
TEST(AbiContract, SweepTurnIntervalZeroIsOneTick) {
  OwnerRegistry reg = manual_registry();
  auto first = reg.sweep_turn(0, 4);
  ASSERT_OK(first.status());
  EXPECT_TRUE(first->ran) << "the first turn anchors and runs";
  auto same_instant = reg.sweep_turn(0, 4);
  ASSERT_OK(same_instant.status());
  EXPECT_FALSE(same_instant->ran) << "at the same clock reading, no second turn";
  ASSERT_OK(reg.advance_clock(1));
  auto next_tick = reg.sweep_turn(0, 4);
  ASSERT_OK(next_tick.status());
  EXPECT_TRUE(next_tick->ran) << "one tick later, the next turn";
  wk_owner_sweep_result r{};
  EXPECT_STATUS(wk_owner_registry_sweep_turn(reg.c_ptr(), 0, 0, 0, nullptr, nullptr, &r),
                WK_STATUS_OWNER_INVALID)
      << "a limit of 0 is refused (not a no-op)";
}

TEST(AbiContract, BeginOnAPendingOwnerIsFencedWithoutFencingIt) {
  OwnerRegistry reg = manual_registry();
  Owner owner = reserved(reg, "c1");
  EXPECT_EQ(owner.info()->stage, static_cast<uint32_t>(WK_OWNER_STAGE_PENDING));
  EXPECT_STATUS(owner.begin().status(), WK_STATUS_OWNER_FENCED);
  EXPECT_EQ(owner.info()->stage, static_cast<uint32_t>(WK_OWNER_STAGE_PENDING))
      << "the refusal fenced nothing";
  ASSERT_OK(owner.activate(1, reg.now().value() + 30 * kSec));
  auto op = owner.begin();
  ASSERT_OK(op.status()) << "activated after the refused begin, it admits";
  ASSERT_OK(op->done());
}

// The gauge is begun minus ended over per-thread rows, read one row at a time (every "ended" row
// first, then every "begun" row): while begins and dones run it is an estimate that may lag or
// lead them by the calls that ran during the read, and it saturates at zero instead of wrapping;
// once they have returned it is exact.
TEST(AbiContract, TheOperationsGaugeWhileCallsAreInFlight) {
  OwnerRegistry reg = manual_registry();
  constexpr int kThreads = 3;
  constexpr int kRounds = 2000;
  std::vector<Owner> owners;
  for (int i = 0; i < kThreads; i++) owners.push_back(active(reg, "c" + std::to_string(i)));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < kRounds; k++) {
        auto op = owners[static_cast<size_t>(i)].begin();
        ASSERT_OK(op.status());
        ASSERT_OK(op->done());
      }
    });
  }
  // Read while the others run (as many reads as they make rounds, not a time). Whatever the
  // interleaving, a reading is at most every begin made (never a wrapped negative).
  for (int k = 0; k < kRounds; k++) {
    const uint64_t ops = reg.snapshot()->operations;
    ASSERT_LE(ops, static_cast<uint64_t>(kThreads) * kRounds) << "a wrapped (negative) reading";
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(reg.snapshot()->operations, 0u) << "exact once every call has returned";
  // Held open, counted exactly; begun on one thread, ended on another, still exact.
  auto a = owners[0].begin();
  auto b = owners[1].begin();
  ASSERT_OK(a.status());
  ASSERT_OK(b.status());
  EXPECT_EQ(reg.snapshot()->operations, 2u);
  std::thread([&] { ASSERT_OK(a->done()); }).join();
  EXPECT_EQ(reg.snapshot()->operations, 1u);
  ASSERT_OK(b->done());
  EXPECT_EQ(reg.snapshot()->operations, 0u);
}

TEST(AbiContract, AWonTakeCountsAsAFinalizationWon) {
  wk_ledger* ledger = nullptr;
  ASSERT_OK(wk_ledger_new(nullptr, WK_LEDGER_KIND_PENDING, 4, 100, &ledger));
  const auto* key = reinterpret_cast<const uint8_t*>("refresh:abc");
  wk_coord_decision d{};
  ASSERT_OK(wk_ledger_insert(ledger, key, 11, 77, 0, WK_COORD_DEADLINE_NEVER, 0, &d));
  wk_ledger_counts before{};
  ASSERT_OK(wk_ledger_counts_get(ledger, &before, sizeof before));
  ASSERT_OK(wk_ledger_take(ledger, key, 11, 78, &d));
  EXPECT_EQ(d.result, WK_COORD_RESULT_MISMATCH);
  ASSERT_OK(wk_ledger_take(ledger, key, 11, 77, &d));
  EXPECT_EQ(d.result, WK_COORD_RESULT_WON);
  wk_ledger_counts after{};
  ASSERT_OK(wk_ledger_counts_get(ledger, &after, sizeof after));
  EXPECT_EQ(after.finalizations_won, before.finalizations_won + 1);
  EXPECT_EQ(after.reclaimed, before.reclaimed + 1);
  EXPECT_EQ(after.finalizations_duplicate, before.finalizations_duplicate);
  ASSERT_OK(wk_ledger_take(ledger, key, 11, 77, &d));
  EXPECT_EQ(d.result, WK_COORD_RESULT_NOT_FOUND) << "the pair is gone";
  wk_ledger_free(ledger);
}
