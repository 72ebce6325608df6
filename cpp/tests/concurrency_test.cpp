// 4 producer threads and 1 consumer on one slot: nothing lost or duplicated, FIFO per producer,
// the caps are never exceeded.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;

namespace {

constexpr uint64_t kProducers = 4;
#if defined(WK_SANITIZE)
constexpr uint64_t kPerProducer = 20000;
#else
constexpr uint64_t kPerProducer = 50000;
#endif

uint64_t token_of(uint64_t producer, uint64_t seq) { return (producer << 40) | seq; }

void run(bool batches) {
  const uint32_t limit = 256;
  auto metrics = make_metrics();
  auto slot = make_slot(900 + batches, limit, 0, true, &metrics);
  std::atomic<uint64_t> finished{0};
  std::atomic<bool> failed{false};

  std::vector<std::thread> producers;
  for (uint64_t p = 0; p < kProducers; ++p) {
    // Each producer uses its own clone: every handle is an independent reference.
    auto mine = slot.clone();
    ASSERT_TRUE(mine.ok());
    producers.emplace_back([p, batches, &finished, &failed, s = std::move(mine).value()]() {
      uint64_t seq = 0;
      std::vector<uint64_t> buf;
      while (seq < kPerProducer) {
        if (batches) {
          buf.clear();
          for (uint64_t i = seq; i < kPerProducer && buf.size() < 7; ++i)
            buf.push_back(token_of(p, i));
          auto r = s.admit_batch(kPropose, kFg, buf);
          if (!r.ok()) {
            failed = true;
            return;
          }
          if (!r->refused.ok() && r->refused != wkcore::Status(WK_STATUS_PROPOSAL_BUSY)) {
            failed = true;
          }
          seq += r->admitted;
          if (r->admitted == 0) std::this_thread::yield();
        } else {
          wkcore::Status st = s.admit(kPropose, kFg, token_of(p, seq));
          if (st.ok()) {
            ++seq;
          } else if (st == wkcore::Status(WK_STATUS_PROPOSAL_BUSY)) {
            // A busy proposal is backpressure and SLOT_BUSY, as upstream's wrapped error.
            if (!st.is_backpressure() || !st.is(WK_STATUS_SLOT_BUSY)) failed = true;
            std::this_thread::yield();
          } else {
            failed = true;
            return;
          }
        }
        if (failed) return;
      }
      finished.fetch_add(1, std::memory_order_release);
    });
  }

  std::vector<uint64_t> next(kProducers, 0);
  std::vector<wk_item> items;
  uint64_t total = 0;
  for (;;) {
    bool done = finished.load(std::memory_order_acquire) == kProducers || failed;
    auto st = slot.state();
    ASSERT_TRUE(st.ok());
    ASSERT_LE(st->queued, limit) << "total cap exceeded";
    ASSERT_LE(st->queued_proposals, st->queued);
    auto drained = slot.drain(items, 64);
    ASSERT_TRUE(drained.ok());
    ASSERT_EQ(drained->first_position, total % wkcore::kPositionModulus)
        << "drains' positions follow each other";
    for (const wk_item& it : items) {
      uint64_t p = it.token >> 40, seq = it.token & ((uint64_t{1} << 40) - 1);
      ASSERT_LT(p, kProducers);
      ASSERT_EQ(seq, next[p]) << "producer " << p << " out of order, lost or duplicated";
      ++next[p];
      ASSERT_EQ(it.kind, WK_CONTROL_KIND_PROPOSE);
    }
    total += items.size();
    if (done && items.empty()) break;
    if (items.empty()) std::this_thread::yield();
  }
  for (auto& t : producers) t.join();
  ASSERT_FALSE(failed);
  EXPECT_EQ(total, kProducers * kPerProducer);
  for (uint64_t p = 0; p < kProducers; ++p) EXPECT_EQ(next[p], kPerProducer);
  auto counters = slot.counters();
  ASSERT_TRUE(counters.ok());
  EXPECT_EQ(counters->foreground_ok, kProducers * kPerProducer);
  // The slot's registry saw the same admissions.
  auto text = metrics.render();
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("result=\"ok\"} " + std::to_string(kProducers * kPerProducer) + "\n"),
            std::string::npos)
      << *text;
}

}  // namespace

TEST(Concurrency, FourProducersOneConsumer) { run(false); }

TEST(Concurrency, FourBatchProducersOneConsumer) { run(true); }

TEST(Concurrency, BackgroundCapHoldsUnderContention) {
  auto slot = make_slot(950, 1024, 16, true);
  std::atomic<uint64_t> admitted{0};
  std::vector<std::thread> ts;
  for (int p = 0; p < 4; ++p) {
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (slot.admit(kPropose, kBg, static_cast<uint64_t>(i)).ok()) ++admitted;
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(admitted.load(), 16u) << "no drain in between: exactly the background cap";
  auto c = slot.counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->background_ok, 16u);
  EXPECT_EQ(c->background_throttled, 4000u - 16u);
}
