// The library's own heap through the header (wk_memory_stats_get, wkcore::memory_stats): what
// a host's objects hold shows up, and goes away when they are freed. ctest runs each test in a
// process of its own, and the library starts no thread, so only this test allocates here.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "wkcore.hpp"

namespace {

TEST(Memory, LedgersShowUpInTheLibraryHeapAndLeaveItWhenFreed) {
  // A private registry, freed at the end: the process-wide one keeps a freed ledger's counters
  // until its next fold (it folds retired sources in batches), which a byte-exact check would
  // see.
  const wk_memory_stats before = wkcore::memory_stats();
  wk_metrics_registry* registry = nullptr;
  ASSERT_EQ(wk_metrics_registry_new(&registry), WK_STATUS_OK);
  constexpr uint64_t kLedgers = 32, kCapacity = 4096;
  std::vector<wk_ledger*> ledgers;
  for (uint64_t i = 0; i < kLedgers; ++i) {
    wk_ledger* l = nullptr;
    ASSERT_EQ(wk_ledger_new(registry, WK_LEDGER_KIND_CLAIM, kCapacity, 0, &l), WK_STATUS_OK);
    ledgers.push_back(l);
  }
  const wk_memory_stats held = wkcore::memory_stats();
  // Each record slot is at least a 64-bit state word and a key word.
  EXPECT_GE(held.live_bytes, before.live_bytes + kLedgers * kCapacity * 16);
  EXPECT_GE(held.live_blocks, before.live_blocks + kLedgers);
  EXPECT_GE(held.allocations_total, before.allocations_total + kLedgers);
  EXPECT_GE(held.threads, 1u);

  for (wk_ledger* l : ledgers) wk_ledger_free(l);
  wk_metrics_registry_free(registry);
  const wk_memory_stats after = wkcore::memory_stats();
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.live_blocks, before.live_blocks);
  EXPECT_GE(after.allocations_total, held.allocations_total);
}

TEST(Memory, ChecksItsOutPointerAndSize) {
  EXPECT_EQ(wk_memory_stats_get(nullptr, sizeof(wk_memory_stats)), WK_STATUS_NULL_ARGUMENT);
  wk_memory_stats s{};
  s.live_bytes = 7;
  EXPECT_EQ(wk_memory_stats_get(&s, WK_MEMORY_STATS_MIN_SIZE - 1), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(s.live_bytes, 7u) << "a refused call writes nothing";
  // Something allocated (ctest runs this test in a fresh process, where the library may have
  // allocated nothing yet).
  wk_counter* counter = nullptr;
  ASSERT_EQ(wk_counter_new(0, &counter), WK_STATUS_OK);
  wk_counter_free(counter);
  // A caller built against a newer, larger struct keeps its own initialisation of the rest.
  struct Bigger {
    wk_memory_stats stats;
    uint64_t newer_field;
  } big{};
  big.newer_field = 42;
  EXPECT_EQ(wk_memory_stats_get(&big.stats, sizeof big), WK_STATUS_OK);
  EXPECT_EQ(big.newer_field, 42u);
  EXPECT_GT(big.stats.allocations_total, 0u);
}

}  // namespace
