// Upstream admission scenarios (pkg/slot/multiraft tests) through the C++ header.
#include <gtest/gtest.h>

#include <vector>

#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::Status;

// TestBackgroundProposalAdmissionLeavesForegroundReserve
TEST(Scenarios, BackgroundProposalAdmissionLeavesForegroundReserve) {
  auto s = make_slot(1, 4, 1, true);
  EXPECT_TRUE(s.admit(kPropose, kBg, 1).ok());
  Status st = s.admit(kPropose, kBg, 2);
  EXPECT_EQ(st, Status(WK_STATUS_THROTTLED));
  EXPECT_TRUE(st.is_backpressure());
  EXPECT_STREQ(st.str(), "multiraft: background proposal throttled");
  EXPECT_TRUE(s.admit(kPropose, kFg, 3).ok());
}

// TestProposalAdmissionObserverRecordsBackgroundThrottle: exactly background:ok, then
// background:throttled.
TEST(Scenarios, CountersRecordBackgroundOkThenThrottled) {
  auto s = make_slot(2, 4, 1, true);
  auto c0 = s.counters();
  ASSERT_TRUE(c0.ok());
  EXPECT_EQ(c0->background_ok, 0u);
  ASSERT_TRUE(s.admit(kPropose, kBg, 1).ok());
  auto c1 = s.counters();
  EXPECT_EQ(c1->background_ok, 1u);
  EXPECT_EQ(c1->background_throttled, 0u);
  ASSERT_EQ(s.admit(kPropose, kBg, 2), Status(WK_STATUS_THROTTLED));
  auto c2 = s.counters();
  EXPECT_EQ(c2->background_ok, 1u);
  EXPECT_EQ(c2->background_throttled, 1u);
  EXPECT_EQ(c2->foreground_ok + c2->foreground_busy + c2->foreground_throttled +
                c2->foreground_not_leader + c2->background_busy + c2->background_not_leader,
            0u);
}

// TestEnqueueControlRejectsWhenQueueLimitReached
TEST(Scenarios, EnqueueControlRejectsWhenQueueLimitReached) {
  auto s = make_slot(3, 1, 0);
  EXPECT_TRUE(s.admit(kTransferLeader, kFg, 1).ok());
  Status st = s.admit(kTransferLeader, kFg, 2);
  EXPECT_EQ(st, Status(WK_STATUS_BUSY));
  EXPECT_TRUE(st.is_backpressure());
  EXPECT_STREQ(st.str(), "multiraft: slot busy");
  // Not a proposal: no counter moves.
  auto c = s.counters();
  EXPECT_EQ(c->foreground_busy, 0u);
}

TEST(Scenarios, BusyProposalIsCounted) {
  auto s = make_slot(4, 2, 0, true);
  EXPECT_TRUE(s.admit(kPropose, kFg, 1).ok());
  EXPECT_TRUE(s.admit(kPropose, kFg, 2).ok());
  EXPECT_EQ(s.admit(kPropose, kFg, 3), Status(WK_STATUS_BUSY));
  EXPECT_EQ(s.counters()->foreground_busy, 1u);
  EXPECT_EQ(s.counters()->foreground_ok, 2u);
}

// TestCloseSlotBlocksNewAdmissions
TEST(Scenarios, CloseSlotBlocksNewAdmissions) {
  auto s = make_slot(5, 8, 0, true);
  EXPECT_TRUE(s.admit(kPropose, kFg, 1).ok());
  EXPECT_TRUE(s.close().ok());
  EXPECT_EQ(s.admit(kPropose, kFg, 2), Status(WK_STATUS_CLOSED));
  EXPECT_EQ(s.admit(kTransferLeader, kFg, 3), Status(WK_STATUS_CLOSED));
  EXPECT_STREQ(Status(WK_STATUS_CLOSED).str(), "multiraft: slot closed");
  auto st = s.state();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->closed, 1);
  // Closed emits no counter event; the queued action can still be drained.
  EXPECT_EQ(s.counters()->foreground_ok, 1u);
  auto items = drain_all(s);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].token, 1u);
}

// TestProposeRejectsStaleLeaderAfterHigherTermMessageQueued (the host demotes on a queued
// higher-term message; the very next proposal sees it).
TEST(Scenarios, ProposeRejectsStaleLeaderAfterDemote) {
  auto s = make_slot(6, 8, 0, true);
  EXPECT_TRUE(s.admit(kPropose, kFg, 1).ok());
  EXPECT_TRUE(s.demote().ok());
  Status st = s.admit(kPropose, kFg, 2);
  EXPECT_EQ(st, Status(WK_STATUS_NOT_LEADER));
  EXPECT_FALSE(st.is_backpressure());
  EXPECT_EQ(s.counters()->foreground_not_leader, 1u);
  // TestChangeConfigRejectsStaleLeaderAfterHigherTermMessageQueued
  EXPECT_EQ(s.admit(kConfigChange, kFg, 3), Status(WK_STATUS_NOT_LEADER));
  // Other kinds are admitted on followers.
  EXPECT_TRUE(s.admit(kTransferLeader, kFg, 4).ok());
  EXPECT_EQ(s.state()->leader, 0);
}

TEST(Scenarios, NewSlotIsFollower) {
  auto s = make_slot(7);
  EXPECT_EQ(s.admit(kPropose, kFg, 1), Status(WK_STATUS_NOT_LEADER));
  auto st = s.state();
  EXPECT_EQ(st->leader, 0);
  EXPECT_EQ(st->closed, 0);
  EXPECT_EQ(st->fatal, 0);
  EXPECT_EQ(st->queued, 0u);
}

TEST(Scenarios, ConfigChangePendingThenResolved) {
  auto s = make_slot(8, 8, 0, true);
  EXPECT_TRUE(s.admit(kConfigChange, kFg, 1).ok());
  EXPECT_EQ(s.state()->config_change_pending, 1);
  EXPECT_EQ(s.admit(kConfigChange, kFg, 2), Status(WK_STATUS_CONFIG_CHANGE_PENDING));
  // Still pending after the queued one is drained: only resolution clears it.
  EXPECT_EQ(drain_all(s).size(), 1u);
  EXPECT_TRUE(s.config_change_resolved().ok());
  EXPECT_EQ(s.state()->config_change_pending, 0);
  EXPECT_TRUE(s.admit(kConfigChange, kFg, 3).ok());
  // Config-change refusals emit no proposal counters.
  auto c = s.counters();
  EXPECT_EQ(c->foreground_ok + c->foreground_busy + c->foreground_not_leader, 0u);
}

TEST(Scenarios, FatalFirstWins) {
  auto s = make_slot(9, 8, 0, true);
  EXPECT_TRUE(s.fail(42).ok());
  EXPECT_EQ(s.fail(43), Status(WK_STATUS_FATAL));
  auto st = s.state();
  EXPECT_EQ(st->fatal, 1);
  EXPECT_EQ(st->fatal_code, 42u);
  EXPECT_EQ(s.admit(kPropose, kFg, 1), Status(WK_STATUS_FATAL));
  EXPECT_EQ(s.admit(kTransferLeader, kFg, 1), Status(WK_STATUS_FATAL));
  // Closed is checked before fatal.
  EXPECT_TRUE(s.close().ok());
  EXPECT_EQ(s.admit(kPropose, kFg, 1), Status(WK_STATUS_CLOSED));
}

// TestNormalizeRaftOptionsDefaultsBackpressureLimits: 8192 total, 4096 background.
TEST(Scenarios, DefaultLimits) {
  auto s = make_slot(10, 0, 0, true);
  std::vector<uint64_t> tokens(10000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = i;
  wk_batch_result r{};
  ASSERT_TRUE(s.admit_batch(kPropose, kBg, tokens, r).ok());
  EXPECT_EQ(r.admitted, 4096u);
  EXPECT_EQ(r.refused, WK_STATUS_THROTTLED);
  ASSERT_TRUE(s.admit_batch(kPropose, kFg, tokens, r).ok());
  EXPECT_EQ(r.admitted, 8192u - 4096u);
  EXPECT_EQ(r.refused, WK_STATUS_BUSY);
  EXPECT_EQ(s.state()->queued, 8192u);
  EXPECT_EQ(s.state()->queued_background, 4096u);
}

TEST(Scenarios, BackgroundDefaultIsHalfMinOne) {
  auto s = make_slot(11, 1, 0, true);
  EXPECT_TRUE(s.admit(kPropose, kBg, 1).ok());
  EXPECT_EQ(s.admit(kPropose, kBg, 2), Status(WK_STATUS_BUSY));
}

TEST(Scenarios, DrainIsFifoAcrossBatchesAndPartialDrains) {
  auto s = make_slot(12, 64, 0, true);
  EXPECT_TRUE(s.admit(kPropose, kFg, 1).ok());
  std::vector<uint64_t> batch{100, 101, 102, 103, 104};
  wk_batch_result r{};
  ASSERT_TRUE(s.admit_batch(kPropose, kBg, batch, r).ok());
  EXPECT_EQ(r.admitted, 5u);
  EXPECT_EQ(r.refused, WK_STATUS_OK);
  EXPECT_TRUE(s.admit(kTransferLeader, kFg, 2).ok());
  ASSERT_TRUE(s.admit_batch(kPropose, kFg, batch.data(), 2, r).ok());

  std::vector<wk_item> a, b;
  ASSERT_TRUE(s.drain(a, 3).ok());
  ASSERT_EQ(a.size(), 3u);
  wk_item raw[2];
  size_t n = 99;
  ASSERT_TRUE(s.drain(raw, 2, n).ok());
  ASSERT_EQ(n, 2u);
  ASSERT_TRUE(s.drain(b, 100).ok());

  std::vector<uint64_t> got;
  for (auto& it : a) got.push_back(it.token);
  for (size_t i = 0; i < n; ++i) got.push_back(raw[i].token);
  for (auto& it : b) got.push_back(it.token);
  std::vector<uint64_t> want{1, 100, 101, 102, 103, 104, 2, 100, 101};
  EXPECT_EQ(got, want);
  EXPECT_EQ(a[0].kind, WK_CONTROL_KIND_PROPOSE);
  EXPECT_EQ(a[0].proposal_class, WK_PROPOSAL_CLASS_FOREGROUND);
  EXPECT_EQ(a[1].proposal_class, WK_PROPOSAL_CLASS_BACKGROUND);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[1].kind, WK_CONTROL_KIND_TRANSFER_LEADER);
  std::vector<wk_item> empty;
  ASSERT_TRUE(s.drain(empty, 4).ok());
  EXPECT_TRUE(empty.empty());
}

TEST(Scenarios, DrainResetsBackgroundQuota) {
  auto s = make_slot(13, 8, 2, true);
  EXPECT_TRUE(s.admit(kPropose, kBg, 1).ok());
  EXPECT_TRUE(s.admit(kPropose, kBg, 2).ok());
  EXPECT_EQ(s.admit(kPropose, kBg, 3), Status(WK_STATUS_THROTTLED));
  std::vector<wk_item> one;
  ASSERT_TRUE(s.drain(one, 1).ok());
  ASSERT_TRUE(s.drain(one, 8).ok());
  EXPECT_TRUE(s.admit(kPropose, kBg, 4).ok());
}

TEST(Scenarios, BatchStopsAtFirstRefusal) {
  auto s = make_slot(14, 3, 0, true);
  std::vector<uint64_t> tokens{1, 2, 3, 4, 5};
  wk_batch_result r{};
  ASSERT_TRUE(s.admit_batch(kPropose, kFg, tokens, r).ok());
  EXPECT_EQ(r.admitted, 3u);
  EXPECT_EQ(r.refused, WK_STATUS_BUSY);
  auto items = drain_all(s);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[2].token, 3u);
}
