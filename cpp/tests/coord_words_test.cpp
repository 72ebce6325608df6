// The coordination words through wkcore.hpp and the raw C calls (wk_flip, wk_counter,
// wk_exclusive_trigger, wk_windowed_counter): the RAII classes (move, clone, free, empty
// objects), the write-up's scenarios on many threads (one flipper each way, exact and unique
// increments, one started run per trigger burst, the login lock-out window), and bad input on
// every word function of the C ABI (NULL and misaligned pointers, handles of another type,
// invalid times: the documented status, out-parameters untouched, no state changed).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <ostream>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_util.hpp"
#include "wkcore.h"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::Counter;
using wkcore::ExclusiveTrigger;
using wkcore::Flip;
using wkcore::Result;
using wkcore::Status;
using wkcore::Trigger;
using wkcore::WindowedCounter;

namespace wkcore {
inline void PrintTo(const Trigger& t, std::ostream* os) {
  *os << "{result " << t.result << ", run " << t.run << "}";
}
}  // namespace wkcore

// --- Compile-time properties ------------------------------------------------------------------

template <typename H>
constexpr bool is_move_only_handle =
    !std::is_copy_constructible<H>::value && !std::is_copy_assignable<H>::value &&
    std::is_nothrow_move_constructible<H>::value && std::is_nothrow_move_assignable<H>::value &&
    std::is_nothrow_default_constructible<H>::value;
static_assert(is_move_only_handle<Flip>, "");
static_assert(is_move_only_handle<Counter>, "");
static_assert(is_move_only_handle<ExclusiveTrigger>, "");
static_assert(is_move_only_handle<WindowedCounter>, "");
static_assert(std::is_base_of<wkcore::Handle<Flip, wk_flip, &wk_flip_free, &wk_flip_clone>,
                              Flip>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<Counter, wk_counter, &wk_counter_free,
                                             &wk_counter_clone>,
                              Counter>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<ExclusiveTrigger, wk_exclusive_trigger,
                                             &wk_exclusive_trigger_free,
                                             &wk_exclusive_trigger_clone>,
                              ExclusiveTrigger>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<WindowedCounter, wk_windowed_counter,
                                             &wk_windowed_counter_free,
                                             &wk_windowed_counter_clone>,
                              WindowedCounter>::value,
              "");
static_assert(Flip::clonable && Counter::clonable && ExclusiveTrigger::clonable &&
                  WindowedCounter::clonable,
              "");
static_assert(sizeof(Flip) == sizeof(wk_flip*) && sizeof(Counter) == sizeof(wk_counter*) &&
                  sizeof(ExclusiveTrigger) == sizeof(wk_exclusive_trigger*) &&
                  sizeof(WindowedCounter) == sizeof(wk_windowed_counter*),
              "a handle is one pointer");
static_assert(std::is_same<decltype(&Flip::flip),
                           Result<bool> (Flip::*)(uint64_t, uint64_t) const noexcept>::value,
              "");
static_assert(std::is_same<decltype(&Counter::increment),
                           Result<uint64_t> (Counter::*)() const noexcept>::value,
              "");
static_assert(std::is_same<decltype(&ExclusiveTrigger::trigger),
                           Result<Trigger> (ExclusiveTrigger::*)() const noexcept>::value,
              "");
static_assert(std::is_same<decltype(&WindowedCounter::increment),
                           Result<uint32_t> (WindowedCounter::*)(uint64_t, uint64_t)
                               const noexcept>::value,
              "");
static_assert(std::is_trivially_copyable<Trigger>::value, "a trigger outcome is a value");

// The layout the C ABI fixes (ffi/src/coord/words.rs pins the same size).
static_assert(sizeof(wk_trigger) == 16, "");
static_assert(offsetof(wk_trigger, result) == 0 && offsetof(wk_trigger, reserved) == 4 &&
                  offsetof(wk_trigger, run) == 8,
              "");
static_assert(sizeof(wk_trigger_result) == 4, "");
static_assert(WK_TRIGGER_RESULT_STARTED == 0 && WK_TRIGGER_RESULT_BUSY == 1 &&
                  WK_TRIGGER_RESULT_EXHAUSTED == 2,
              "the values are fixed");
static_assert(wkcore::kWindowTimeMax == (uint64_t{1} << 44) - 1, "");
static_assert(wkcore::kWindowCountMax == (uint32_t{1} << 20) - 1, "");
static_assert(WK_STATUS_COORD_INVALID_TIME == 403, "");
// The generated macros themselves: WK_WINDOW_TIME_MAX was once `((1 << 44) - 1)`, an int shifted
// by 44 (undefined; an error under -Werror in C++).
static_assert(WK_WINDOW_TIME_MAX == (uint64_t{1} << 44) - 1, "");
static_assert(WK_WINDOW_COUNT_MAX == (1u << 20) - 1, "");

namespace {

constexpr uint64_t kMinute = 60'000;
constexpr uint64_t kOnline = 1;
constexpr uint64_t kOffline = 2;
// The trigger's largest run number (2^63 - 1): run numbers are 63 bits of the word.
constexpr uint64_t kMaxRun = (uint64_t{1} << 63) - 1;

// How many rounds a race runs: fewer where every access is instrumented.
size_t rounds(size_t n) {
#if defined(WK_SANITIZE)
  return n / 4;
#else
  return freed_memory_is_checked() ? n / 10 : n;
#endif
}

// A reusable barrier (C++17 has none): the threads of a race start each round together.
class Barrier {
 public:
  explicit Barrier(size_t n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t generation = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t n_;
  size_t arrived_ = 0;
  uint64_t generation_ = 0;
};

template <typename T>
T must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().str();
  return std::move(r).value();
}

size_t threads_for_race() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::max<size_t>(4, std::min<size_t>(hw == 0 ? 4 : hw, 8));
}

}  // namespace

// --- RAII ------------------------------------------------------------------------------------

TEST(CoordWordsRaii, FlipMoveCloneAndFree) {
  Flip a = must(Flip::create(kOnline));
  ASSERT_TRUE(a);
  EXPECT_EQ(a.get(), kOnline);

  auto b = a.clone();
  ASSERT_OK(b);
  EXPECT_EQ(b->c_ptr(), a.c_ptr()) << "a clone is another reference to the same flip";
  EXPECT_TRUE(must(b->flip(kOnline, kOffline)));
  EXPECT_EQ(a.get(), kOffline) << "the flip is shared";
  EXPECT_FALSE(must(a.flip(kOnline, kOffline))) << "already flipped";
  EXPECT_FALSE(must(a.flip(kOffline, kOffline))) << "from == to flips nothing";

  Flip moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(a.get(), 0u);
  EXPECT_STATUS(a.flip(kOffline, kOnline), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.clone(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(moved.get(), kOffline);

  moved.reset();  // drops one reference: the clone keeps the flip alive
  EXPECT_FALSE(moved);
  EXPECT_TRUE(must(b->flip(kOffline, kOnline)));

  // release() and adopt() hand the reference over without a count change.
  wk_flip* raw = b->release();
  ASSERT_NE(raw, nullptr);
  EXPECT_FALSE(*b);
  Flip again = Flip::adopt(raw);
  EXPECT_EQ(again.get(), kOnline);
  // Move-assigning over a live handle frees the old reference.
  Flip other = must(Flip::create(99));
  other = std::move(again);
  EXPECT_EQ(other.get(), kOnline);
  EXPECT_FALSE(again);  // NOLINT(bugprone-use-after-move)
}

TEST(CoordWordsRaii, CounterMoveCloneAndFree) {
  Counter a = must(Counter::create());
  EXPECT_EQ(a.get(), 0u);
  EXPECT_EQ(must(a.increment()), 1u);
  Counter b = must(a.clone());
  EXPECT_EQ(b.c_ptr(), a.c_ptr());
  EXPECT_EQ(must(b.increment()), 2u);
  EXPECT_EQ(a.get(), 2u);

  a = Counter();
  EXPECT_EQ(a.get(), 0u);
  EXPECT_STATUS(a.increment(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.clone(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(b.get(), 2u);

  Counter c = must(Counter::create(41));
  EXPECT_EQ(must(c.increment()), 42u);
  Counter d = std::move(c);
  EXPECT_FALSE(c);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(d.get(), 42u);

  // Wraps at 2^64.
  Counter top = must(Counter::create(UINT64_MAX));
  EXPECT_EQ(must(top.increment()), 0u);
  EXPECT_EQ(top.get(), 0u);
}

TEST(CoordWordsRaii, ExclusiveTriggerMoveCloneAndFree) {
  ExclusiveTrigger a = must(ExclusiveTrigger::create());
  EXPECT_EQ(a.active(), 0u);
  EXPECT_EQ(a.last_run(), 0u);
  EXPECT_EQ(must(a.trigger()), Trigger(WK_TRIGGER_RESULT_STARTED, 1));
  ExclusiveTrigger b = must(a.clone());
  EXPECT_EQ(b.c_ptr(), a.c_ptr());
  const Trigger busy = must(b.trigger());
  EXPECT_TRUE(busy.busy());
  EXPECT_EQ(busy.run, 1u);
  EXPECT_EQ(b.active(), 1u);

  ExclusiveTrigger moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move)
  EXPECT_STATUS(a.trigger(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.finish(1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.clone(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(a.active(), 0u);
  EXPECT_EQ(a.last_run(), 0u);
  EXPECT_EQ(b.active(), 1u) << "refusals through an empty handle change nothing";

  moved.reset();
  EXPECT_FALSE(must(b.finish(2))) << "run 2 does not hold the key";
  EXPECT_TRUE(must(b.finish(1)));
  EXPECT_FALSE(must(b.finish(1))) << "finished once";
  EXPECT_EQ(b.active(), 0u);
  EXPECT_EQ(b.last_run(), 1u);

  // A trigger resumes numbering after `last_run`.
  ExclusiveTrigger resumed = must(ExclusiveTrigger::create(41));
  EXPECT_EQ(resumed.last_run(), 41u);
  EXPECT_EQ(must(resumed.trigger()), Trigger(WK_TRIGGER_RESULT_STARTED, 42));

  // The run numbers run out without wrapping; a last run beyond 2^63 - 1 is refused.
  {
    ExclusiveTrigger spent = must(ExclusiveTrigger::create(kMaxRun));
    EXPECT_EQ(spent.last_run(), kMaxRun);
    const Trigger t = must(spent.trigger());
    EXPECT_TRUE(t.exhausted());
    EXPECT_EQ(t, Trigger(WK_TRIGGER_RESULT_EXHAUSTED, 0));
    EXPECT_EQ(spent.active(), 0u);
  }
  for (uint64_t beyond : {kMaxRun + 1, UINT64_MAX}) {
    auto refused = ExclusiveTrigger::create(beyond);
    EXPECT_FALSE(refused.ok()) << beyond;
    EXPECT_EQ(refused.status().code(), WK_STATUS_INVALID_ARGUMENT) << beyond;
  }
  ExclusiveTrigger last = must(ExclusiveTrigger::create(kMaxRun - 1));
  EXPECT_EQ(must(last.trigger()), Trigger(WK_TRIGGER_RESULT_STARTED, kMaxRun));
  EXPECT_EQ(must(last.trigger()), Trigger(WK_TRIGGER_RESULT_BUSY, kMaxRun));
  EXPECT_TRUE(must(last.finish(kMaxRun)));
  EXPECT_EQ(must(last.trigger()), Trigger(WK_TRIGGER_RESULT_EXHAUSTED, 0));
}

TEST(CoordWordsRaii, WindowedCounterMoveCloneAndFree) {
  WindowedCounter a = must(WindowedCounter::create());
  EXPECT_EQ(a.count(0), 0u);
  EXPECT_EQ(must(a.increment(100, 50)), 1u);
  WindowedCounter b = must(a.clone());
  EXPECT_EQ(b.c_ptr(), a.c_ptr());
  EXPECT_EQ(must(b.increment(120, 50)), 2u);
  EXPECT_EQ(a.count(149), 2u);

  WindowedCounter moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move)
  EXPECT_STATUS(a.increment(130, 50), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.clone(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(a.count(130), 0u);
  moved.reset();
  EXPECT_EQ(b.count(130), 2u);

  // The library's refusals come through the layer as they are.
  EXPECT_STATUS(b.increment(130, 0), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_STATUS(b.increment(wkcore::kWindowTimeMax, 1), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_TRUE(Status(WK_STATUS_COORD_INVALID_TIME).is(WK_STATUS_COORD_INVALID_TIME));
  EXPECT_EQ(b.count(130), 2u);
}

// --- The write-up's scenarios ------------------------------------------------------------------

// Many monitors see a node go down at once: exactly one flips ONLINE → OFFLINE (and emits the
// alert); when it comes back, exactly one flips OFFLINE → ONLINE (the recovery alert).
TEST(CoordWordsRace, ConcurrentFlipsHaveOneFlipperEachWay) {
  const size_t kThreads = threads_for_race();
  const size_t n = rounds(2000);
  Flip shared = must(Flip::create(kOnline));
  Barrier start(kThreads);
  std::vector<std::vector<unsigned char>> down(kThreads, std::vector<unsigned char>(n, 2));
  std::vector<std::vector<unsigned char>> up(kThreads, std::vector<unsigned char>(n, 2));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = must(shared.clone())]() {
      for (size_t r = 0; r < n; ++r) {
        start.wait();
        auto f = mine.flip(kOnline, kOffline);
        down[t][r] = f.ok() ? static_cast<unsigned char>(*f) : 3;
        start.wait();
        auto g = mine.flip(kOffline, kOnline);
        up[t][r] = g.ok() ? static_cast<unsigned char>(*g) : 3;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (size_t r = 0; r < n; ++r) {
    size_t downs = 0, ups = 0;
    for (size_t t = 0; t < kThreads; ++t) {
      ASSERT_LE(down[t][r], 1) << "round " << r << ": a flip failed";
      ASSERT_LE(up[t][r], 1) << "round " << r << ": a recovery flip failed";
      downs += down[t][r];
      ups += up[t][r];
    }
    ASSERT_EQ(downs, 1u) << "round " << r << ": " << downs << " flippers";
    ASSERT_EQ(ups, 1u) << "round " << r << ": " << ups << " recovery flippers";
  }
  EXPECT_EQ(shared.get(), kOnline);
}

// N threads × M increments give exactly N·M, and every returned value is unique.
TEST(CoordWordsRace, IncrementsAreExactAndEveryValueUnique) {
  const size_t kThreads = threads_for_race();
  const size_t m = rounds(20000);
  Counter shared = must(Counter::create());
  Barrier start(kThreads);
  std::vector<std::vector<uint64_t>> got(kThreads, std::vector<uint64_t>(m, 0));
  std::atomic<size_t> failures{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = must(shared.clone())]() {
      start.wait();
      for (size_t i = 0; i < m; ++i) {
        auto v = mine.increment();
        if (v.ok()) {
          got[t][i] = *v;
        } else {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0u);
  const uint64_t total = static_cast<uint64_t>(kThreads) * m;
  EXPECT_EQ(shared.get(), total);
  std::vector<uint64_t> all;
  all.reserve(total);
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), total);
  for (uint64_t i = 0; i < total; ++i) {
    ASSERT_EQ(all[i], i + 1) << "every value 1..N*M exactly once";
  }
}

// N concurrent triggers: exactly one STARTED, the others BUSY with its number; after finish the
// next burst starts number + 1.
TEST(CoordWordsRace, ConcurrentTriggersStartOneRun) {
  const size_t kThreads = threads_for_race();
  const size_t n = rounds(2000);
  const uint64_t first_last_run = 100;
  ExclusiveTrigger shared = must(ExclusiveTrigger::create(first_last_run));
  Barrier start(kThreads + 1), done(kThreads + 1);
  std::vector<std::vector<Trigger>> got(kThreads, std::vector<Trigger>(n));
  std::vector<std::vector<unsigned char>> ok(kThreads, std::vector<unsigned char>(n, 0));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = must(shared.clone())]() {
      for (size_t r = 0; r < n; ++r) {
        start.wait();
        auto tr = mine.trigger();
        ok[t][r] = tr.ok();
        if (tr.ok()) got[t][r] = *tr;
        done.wait();
      }
    });
  }
  // Every round runs (the threads wait on the barriers), so failures are counted, not asserted.
  uint64_t expected = first_last_run + 1;
  size_t bad_rounds = 0;
  for (size_t r = 0; r < n; ++r) {
    start.wait();
    done.wait();
    size_t started = 0, others_busy = 0;
    for (size_t t = 0; t < kThreads; ++t) {
      const Trigger& tr = got[t][r];
      if (!ok[t][r]) continue;
      if (tr.started() && tr.run == expected) ++started;
      if (tr == Trigger(WK_TRIGGER_RESULT_BUSY, expected)) ++others_busy;
    }
    const bool good = started == 1 && others_busy == kThreads - 1 &&
                      shared.active() == expected && !must(shared.finish(expected + 1)) &&
                      must(shared.finish(expected)) && shared.active() == 0 &&
                      shared.last_run() == expected;
    if (!good && bad_rounds++ < 5) {
      ADD_FAILURE() << "round " << r << ": " << started << " started run " << expected << ", "
                    << others_busy << " of " << kThreads - 1 << " busy with it";
    }
    if (shared.active() != 0) (void)must(shared.finish(shared.active()));
    expected = shared.last_run() + 1;
  }
  EXPECT_EQ(bad_rounds, 0u);
  EXPECT_EQ(shared.last_run(), first_last_run + n) << "one run per round, numbered in order";
  for (auto& th : threads) th.join();
}

// A login lock-out: five failures inside the window, the fifth increment returns 5 (and locks);
// the count reads 0 once the window has ended, and the next failure starts a new window.
TEST(CoordWordsScenario, FiveFailuresInsideTheWindowLock) {
  WindowedCounter failures = must(WindowedCounter::create());
  const uint64_t t0 = 1'764'000'000'000;
  const uint64_t window = 15 * kMinute;
  std::vector<uint32_t> counts;
  for (uint64_t i = 0; i < 5; ++i) counts.push_back(must(failures.increment(t0 + i * kMinute, window)));
  EXPECT_EQ(counts, (std::vector<uint32_t>{1, 2, 3, 4, 5}));
  EXPECT_GE(counts.back(), 5u) << "the fifth failure locks";
  EXPECT_EQ(failures.count(t0), 5u);
  EXPECT_EQ(failures.count(t0 + window - 1), 5u);
  EXPECT_EQ(failures.count(t0 + window), 0u) << "0 after the window";
  EXPECT_EQ(failures.count(t0 + 10 * window), 0u);
  EXPECT_EQ(must(failures.increment(t0 + window + kMinute, window)), 1u) << "a new window";
  EXPECT_EQ(failures.count(t0 + window + kMinute), 1u);
}

// Failures from many threads inside one window: every count 1..N once; the one that reads the
// threshold is the one that locks.
TEST(CoordWordsRace, ConcurrentFailuresCountOnceEach) {
  const size_t kThreads = threads_for_race();
  const size_t m = rounds(2000);
  const uint64_t t0 = 1'000'000;
  WindowedCounter shared = must(WindowedCounter::create());
  Barrier start(kThreads);
  std::vector<std::vector<uint32_t>> got(kThreads, std::vector<uint32_t>(m, 0));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = must(shared.clone())]() {
      start.wait();
      for (size_t i = 0; i < m; ++i) {
        auto c = mine.increment(t0 + i, 1'000'000);
        got[t][i] = c.ok() ? *c : 0;
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint32_t> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), kThreads * m);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i + 1);
  EXPECT_EQ(shared.count(t0), kThreads * m);
  EXPECT_EQ(shared.count(t0 + 1'000'000), 0u);
}

TEST(CoordWordsScenario, WindowBoundsAndSaturation) {
  using wkcore::kWindowTimeMax;
  {
    WindowedCounter c = must(WindowedCounter::create());
    EXPECT_EQ(must(c.increment(kWindowTimeMax - 1, 1)), 1u) << "ends exactly at the maximum";
    EXPECT_EQ(c.count(kWindowTimeMax - 1), 1u);
    EXPECT_EQ(c.count(kWindowTimeMax), 0u);
  }
  {
    WindowedCounter c = must(WindowedCounter::create());
    EXPECT_EQ(must(c.increment(0, kWindowTimeMax)), 1u);
    EXPECT_EQ(c.count(kWindowTimeMax - 1), 1u);
  }
  {
    // The count saturates at kWindowCountMax.
    WindowedCounter c = must(WindowedCounter::create());
    uint32_t last = 0;
    for (uint32_t i = 0; i < wkcore::kWindowCountMax; ++i) {
      auto r = c.increment(10, 100);
      ASSERT_OK(r);
      last = *r;
    }
    EXPECT_EQ(last, wkcore::kWindowCountMax);
    EXPECT_EQ(must(c.increment(11, 100)), wkcore::kWindowCountMax);
    EXPECT_EQ(must(c.increment(12, 100)), wkcore::kWindowCountMax);
    EXPECT_EQ(c.count(50), wkcore::kWindowCountMax);
    EXPECT_EQ(c.count(110), 0u);
    EXPECT_EQ(must(c.increment(110, 100)), 1u);
  }
}

// --- Bad input on every word function of the C ABI ---------------------------------------------

namespace {

template <typename T>
T filled(unsigned char byte) {
  T value;
  std::memset(static_cast<void*>(&value), byte, sizeof value);
  return value;
}

template <typename T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

wk_flip* const kSentinelFlip = reinterpret_cast<wk_flip*>(uintptr_t{0x10});
wk_counter* const kSentinelCounter = reinterpret_cast<wk_counter*>(uintptr_t{0x20});
wk_exclusive_trigger* const kSentinelTrigger = reinterpret_cast<wk_exclusive_trigger*>(uintptr_t{0x30});
wk_windowed_counter* const kSentinelWindowed =
    reinterpret_cast<wk_windowed_counter*>(uintptr_t{0x40});

constexpr uint64_t kT = 1000;      // the fixture's window starts here
constexpr uint64_t kWindow = 500;  // and ends at kT + kWindow

// A flip in kOffline (flipped once), a counter at 42, a trigger with run 7 active, an idle
// trigger whose last run was 3, and a windowed counter at 3 in [kT, kT + kWindow); and one
// out-parameter of each kind, filled with a pattern no call writes. expect_unchanged() checks
// that the objects are as SetUp left them and that every out-parameter still holds its pattern.
class CoordWordsAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    bool b = false;
    ASSERT_OK(wk_flip_new(kOnline, &flip_));
    ASSERT_OK(wk_flip_flip(flip_, kOnline, kOffline, &b));
    ASSERT_TRUE(b);
    uint64_t v = 0;
    ASSERT_OK(wk_counter_new(41, &counter_));
    ASSERT_OK(wk_counter_increment(counter_, &v));
    ASSERT_EQ(v, 42u);
    wk_trigger t{};
    ASSERT_OK(wk_exclusive_trigger_new(6, &busy_));
    ASSERT_OK(wk_exclusive_trigger_trigger(busy_, &t));
    ASSERT_EQ(t.result, WK_TRIGGER_RESULT_STARTED);
    ASSERT_EQ(t.run, 7u);
    ASSERT_OK(wk_exclusive_trigger_new(2, &idle_));
    ASSERT_OK(wk_exclusive_trigger_trigger(idle_, &t));
    ASSERT_OK(wk_exclusive_trigger_finish(idle_, 3, &b));
    ASSERT_TRUE(b);
    uint32_t n = 0;
    ASSERT_OK(wk_windowed_counter_new(&window_));
    for (uint32_t i = 1; i <= 3; ++i) {
      ASSERT_OK(wk_windowed_counter_increment(window_, kT + i, kWindow, &n));
      ASSERT_EQ(n, i);
    }
    ASSERT_OK(wk_metrics_registry_new(&metrics_));
    before_ = snapshot();
    reset_outs();
  }
  void TearDown() override {
    wk_flip_free(flip_);
    wk_counter_free(counter_);
    wk_exclusive_trigger_free(busy_);
    wk_exclusive_trigger_free(idle_);
    wk_windowed_counter_free(window_);
    wk_metrics_registry_free(metrics_);
  }

  struct Snapshot {
    uint64_t flip = 0;
    uint64_t counter = 0;
    uint64_t busy_active = 0;
    uint64_t busy_last = 0;
    uint64_t idle_active = 0;
    uint64_t idle_last = 0;
    uint32_t window_at_start = 0;
    uint32_t window_at_end = 0;
    uint32_t window_after = 0;
    bool operator==(const Snapshot& o) const {
      return flip == o.flip && counter == o.counter && busy_active == o.busy_active &&
             busy_last == o.busy_last && idle_active == o.idle_active &&
             idle_last == o.idle_last && window_at_start == o.window_at_start &&
             window_at_end == o.window_at_end && window_after == o.window_after;
    }
  };

  Snapshot snapshot() const {
    Snapshot s;
    s.flip = wk_flip_get(flip_);
    s.counter = wk_counter_get(counter_);
    s.busy_active = wk_exclusive_trigger_active_get(busy_);
    s.busy_last = wk_exclusive_trigger_last_run_get(busy_);
    s.idle_active = wk_exclusive_trigger_active_get(idle_);
    s.idle_last = wk_exclusive_trigger_last_run_get(idle_);
    s.window_at_start = wk_windowed_counter_count_get(window_, kT + 1);
    s.window_at_end = wk_windowed_counter_count_get(window_, kT + 1 + kWindow - 1);
    s.window_after = wk_windowed_counter_count_get(window_, kT + 1 + kWindow);
    return s;
  }

  void reset_outs() {
    bool_byte_ = 0x5a;
    u64_ = 0x1234;
    u32_ = 0x4321;
    trigger_ = filled<wk_trigger>(0xa5);
    flip_out_ = kSentinelFlip;
    counter_out_ = kSentinelCounter;
    trigger_out_ = kSentinelTrigger;
    window_out_ = kSentinelWindowed;
  }

  // Called after every refused call (EXPECT_REFUSED).
  void expect_unchanged(const char* call) const {
    SCOPED_TRACE(call);
    EXPECT_EQ(bool_byte_, 0x5a) << "bool written";
    EXPECT_EQ(u64_, 0x1234u) << "value written";
    EXPECT_EQ(u32_, 0x4321u) << "count written";
    EXPECT_TRUE(same_bytes(trigger_, filled<wk_trigger>(0xa5))) << "trigger written";
    EXPECT_EQ(flip_out_, kSentinelFlip);
    EXPECT_EQ(counter_out_, kSentinelCounter);
    EXPECT_EQ(trigger_out_, kSentinelTrigger);
    EXPECT_EQ(window_out_, kSentinelWindowed);
    const Snapshot now = snapshot();
    EXPECT_EQ(now.flip, kOffline);
    EXPECT_EQ(now.counter, 42u);
    EXPECT_EQ(now.busy_active, 7u);
    EXPECT_EQ(now.busy_last, 7u);
    EXPECT_EQ(now.idle_active, 0u);
    EXPECT_EQ(now.idle_last, 3u);
    EXPECT_EQ(now.window_at_start, 3u);
    EXPECT_EQ(now.window_at_end, 3u);
    EXPECT_EQ(now.window_after, 0u);
    EXPECT_TRUE(now == before_) << "state changed";
  }

  bool* out_bool() { return reinterpret_cast<bool*>(&bool_byte_); }

  wk_flip* flip_ = nullptr;
  wk_counter* counter_ = nullptr;
  wk_exclusive_trigger* busy_ = nullptr;
  wk_exclusive_trigger* idle_ = nullptr;
  wk_windowed_counter* window_ = nullptr;
  wk_metrics_registry* metrics_ = nullptr;
  Snapshot before_;

  alignas(bool) unsigned char bool_byte_ = 0;
  uint64_t u64_ = 0;
  uint32_t u32_ = 0;
  wk_trigger trigger_{};
  wk_flip* flip_out_ = nullptr;
  wk_counter* counter_out_ = nullptr;
  wk_exclusive_trigger* trigger_out_ = nullptr;
  wk_windowed_counter* window_out_ = nullptr;
};

#define EXPECT_REFUSED(expr, code) \
  do {                             \
    EXPECT_STATUS(expr, code);     \
    expect_unchanged(#expr);       \
  } while (0)

}  // namespace

TEST_F(CoordWordsAbi, NullHandleEverywhere) {
  const wk_flip* f = nullptr;
  const wk_counter* c = nullptr;
  const wk_exclusive_trigger* t = nullptr;
  const wk_windowed_counter* w = nullptr;
  EXPECT_REFUSED(wk_flip_clone(f, &flip_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_flip_flip(f, kOffline, kOnline, out_bool()), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_flip_get(f), 0u);
  wk_flip_free(nullptr);  // no-op

  EXPECT_REFUSED(wk_counter_clone(c, &counter_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_counter_increment(c, &u64_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_counter_get(c), 0u);
  wk_counter_free(nullptr);

  EXPECT_REFUSED(wk_exclusive_trigger_clone(t, &trigger_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_trigger(t, &trigger_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_finish(t, 7, out_bool()), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_exclusive_trigger_active_get(t), 0u);
  EXPECT_EQ(wk_exclusive_trigger_last_run_get(t), 0u);
  wk_exclusive_trigger_free(nullptr);

  EXPECT_REFUSED(wk_windowed_counter_clone(w, &window_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_increment(w, kT + 10, kWindow, &u32_),
                 WK_STATUS_NULL_ARGUMENT);
  // A NULL handle with invalid times as well: the handle is checked first.
  EXPECT_REFUSED(wk_windowed_counter_increment(w, kT, 0, &u32_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_windowed_counter_count_get(w, kT + 10), 0u);
  wk_windowed_counter_free(nullptr);
  expect_unchanged("after all");
}

TEST_F(CoordWordsAbi, NullOutPointers) {
  // Constructors and clones.
  EXPECT_REFUSED(wk_flip_new(kOnline, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_counter_new(1, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_new(1, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_new(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_flip_clone(flip_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_counter_clone(counter_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_clone(busy_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_clone(window_, nullptr), WK_STATUS_NULL_ARGUMENT);
  // Transitions that would succeed: refused before they run.
  EXPECT_REFUSED(wk_flip_flip(flip_, kOffline, kOnline, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_counter_increment(counter_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_trigger(idle_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_trigger(busy_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_finish(busy_, 7, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_increment(window_, kT + 10, kWindow, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_increment(window_, kT + 10 * kWindow, kWindow, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
}

TEST_F(CoordWordsAbi, MisalignedPointers) {
  alignas(16) unsigned char raw[64] = {};
  EXPECT_REFUSED(wk_counter_increment(counter_, reinterpret_cast<uint64_t*>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_trigger(idle_, reinterpret_cast<wk_trigger*>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_increment(window_, kT + 10, kWindow,
                                               reinterpret_cast<uint32_t*>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_flip_new(kOnline, reinterpret_cast<wk_flip**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_counter_new(1, reinterpret_cast<wk_counter**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_new(1, reinterpret_cast<wk_exclusive_trigger**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_windowed_counter_new(reinterpret_cast<wk_windowed_counter**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_flip_clone(flip_, reinterpret_cast<wk_flip**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_counter_clone(counter_, reinterpret_cast<wk_counter**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_exclusive_trigger_clone(busy_, reinterpret_cast<wk_exclusive_trigger**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(
      wk_windowed_counter_clone(window_, reinterpret_cast<wk_windowed_counter**>(raw + 1)),
      WK_STATUS_INVALID_ARGUMENT);
  for (size_t i = 0; i < sizeof raw; ++i) EXPECT_EQ(raw[i], 0u) << "byte " << i << " written";
  // A misaligned handle is an invalid handle.
  auto* f = reinterpret_cast<const wk_flip*>(reinterpret_cast<const unsigned char*>(flip_) + 1);
  EXPECT_REFUSED(wk_flip_flip(f, kOffline, kOnline, out_bool()), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(wk_flip_get(f), 0u);
  auto* c = reinterpret_cast<const wk_counter*>(reinterpret_cast<const unsigned char*>(counter_) + 1);
  EXPECT_REFUSED(wk_counter_increment(c, &u64_), WK_STATUS_INVALID_HANDLE);
  auto* t = reinterpret_cast<const wk_exclusive_trigger*>(reinterpret_cast<const unsigned char*>(idle_) + 1);
  EXPECT_REFUSED(wk_exclusive_trigger_trigger(t, &trigger_), WK_STATUS_INVALID_HANDLE);
  auto* w = reinterpret_cast<const wk_windowed_counter*>(reinterpret_cast<const unsigned char*>(window_) + 1);
  EXPECT_REFUSED(wk_windowed_counter_increment(w, kT + 10, kWindow, &u32_), WK_STATUS_INVALID_HANDLE);
}

// Every call that takes a handle, given a handle of another type: the magic-word check refuses
// it (every handle object starts with its word, so the check reads in bounds).
TEST_F(CoordWordsAbi, WrongHandleTypeIsDetected) {
  for (const void* other : {static_cast<const void*>(counter_), static_cast<const void*>(busy_),
                            static_cast<const void*>(window_), static_cast<const void*>(metrics_)}) {
    const auto* f = static_cast<const wk_flip*>(other);
    EXPECT_REFUSED(wk_flip_clone(f, &flip_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_flip_flip(f, kOffline, kOnline, out_bool()), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_flip_flip(f, 42, 43, out_bool()), WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_flip_get(f), 0u);
    wk_flip_free(const_cast<wk_flip*>(f));  // ignored: not a live flip
    expect_unchanged("wk_flip_free of another type");
  }
  for (const void* other : {static_cast<const void*>(flip_), static_cast<const void*>(idle_),
                            static_cast<const void*>(window_), static_cast<const void*>(metrics_)}) {
    const auto* c = static_cast<const wk_counter*>(other);
    EXPECT_REFUSED(wk_counter_clone(c, &counter_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_counter_increment(c, &u64_), WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_counter_get(c), 0u);
    wk_counter_free(const_cast<wk_counter*>(c));  // ignored
    expect_unchanged("wk_counter_free of another type");
  }
  for (const void* other : {static_cast<const void*>(flip_), static_cast<const void*>(counter_),
                            static_cast<const void*>(window_), static_cast<const void*>(metrics_)}) {
    const auto* t = static_cast<const wk_exclusive_trigger*>(other);
    EXPECT_REFUSED(wk_exclusive_trigger_clone(t, &trigger_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_exclusive_trigger_trigger(t, &trigger_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_exclusive_trigger_finish(t, 7, out_bool()), WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_exclusive_trigger_active_get(t), 0u);
    EXPECT_EQ(wk_exclusive_trigger_last_run_get(t), 0u);
    wk_exclusive_trigger_free(const_cast<wk_exclusive_trigger*>(t));  // ignored
    expect_unchanged("wk_exclusive_trigger_free of another type");
  }
  for (const void* other : {static_cast<const void*>(flip_), static_cast<const void*>(counter_),
                            static_cast<const void*>(busy_), static_cast<const void*>(metrics_)}) {
    const auto* w = static_cast<const wk_windowed_counter*>(other);
    EXPECT_REFUSED(wk_windowed_counter_clone(w, &window_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_windowed_counter_increment(w, kT + 10, kWindow, &u32_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_windowed_counter_increment(w, kT, 0, &u32_), WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_windowed_counter_count_get(w, kT + 10), 0u);
    wk_windowed_counter_free(const_cast<wk_windowed_counter*>(w));  // ignored
    expect_unchanged("wk_windowed_counter_free of another type");
  }

  // The C++ layer passes the library's answer through (a borrowed pointer, released).
  Flip borrowed = Flip::adopt(reinterpret_cast<wk_flip*>(counter_));
  EXPECT_STATUS(borrowed.flip(kOffline, kOnline), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(borrowed.clone(), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(borrowed.get(), 0u);
  (void)borrowed.release();
  Counter borrowed_counter = Counter::adopt(reinterpret_cast<wk_counter*>(flip_));
  EXPECT_STATUS(borrowed_counter.increment(), WK_STATUS_INVALID_HANDLE);
  (void)borrowed_counter.release();
  ExclusiveTrigger borrowed_trigger =
      ExclusiveTrigger::adopt(reinterpret_cast<wk_exclusive_trigger*>(window_));
  EXPECT_STATUS(borrowed_trigger.trigger(), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(borrowed_trigger.finish(7), WK_STATUS_INVALID_HANDLE);
  (void)borrowed_trigger.release();
  WindowedCounter borrowed_window = WindowedCounter::adopt(reinterpret_cast<wk_windowed_counter*>(busy_));
  EXPECT_STATUS(borrowed_window.increment(kT + 10, kWindow), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(borrowed_window.count(kT + 10), 0u);
  (void)borrowed_window.release();
  expect_unchanged("through the layer");
}

TEST_F(CoordWordsAbi, InvalidTimes) {
  using wkcore::kWindowTimeMax;
  struct Case {
    uint64_t now;
    uint64_t window;
  };
  const Case cases[] = {
      {kT + 10, 0},                      // an empty window
      {0, 0},
      {kWindowTimeMax, 0},
      {kWindowTimeMax, 1},               // ends past the maximum
      {kWindowTimeMax - kWindow + 1, kWindow},
      {1, kWindowTimeMax},
      {0, kWindowTimeMax + 1},
      {kWindowTimeMax + 1, 1},
      {UINT64_MAX, 1},                   // now + window overflows
      {1, UINT64_MAX},
      {UINT64_MAX, UINT64_MAX},
      {kT + 10, UINT64_MAX - kT - 9},    // now + window wraps to exactly 0
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "now " << c.now << ", window " << c.window);
    EXPECT_REFUSED(wk_windowed_counter_increment(window_, c.now, c.window, &u32_),
                   WK_STATUS_COORD_INVALID_TIME);
    WindowedCounter layer = WindowedCounter::adopt(window_);
    EXPECT_STATUS(layer.increment(c.now, c.window), WK_STATUS_COORD_INVALID_TIME);
    (void)layer.release();
    expect_unchanged("through the layer");
  }
  // A fresh counter stays at zero after refusals (no window opened).
  wk_windowed_counter* fresh = nullptr;
  ASSERT_OK(wk_windowed_counter_new(&fresh));
  EXPECT_REFUSED(wk_windowed_counter_increment(fresh, 5, 0, &u32_), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_windowed_counter_increment(fresh, kWindowTimeMax, 1, &u32_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_EQ(wk_windowed_counter_count_get(fresh, 5), 0u);
  EXPECT_EQ(wk_windowed_counter_count_get(fresh, 0), 0u);
  // The largest accepted window still works afterwards.
  EXPECT_OK(wk_windowed_counter_increment(fresh, kWindowTimeMax - 1, 1, &u32_));
  EXPECT_EQ(u32_, 1u);
  wk_windowed_counter_free(fresh);
}

// Refusals that are not errors: transitions that change nothing, with an ok status.
TEST_F(CoordWordsAbi, TransitionsThatChangeNothing) {
  EXPECT_OK(wk_flip_flip(flip_, kOnline, kOffline, out_bool()));  // not in kOnline
  EXPECT_EQ(bool_byte_, 0u) << "written false";
  bool_byte_ = 0x5a;
  EXPECT_OK(wk_flip_flip(flip_, kOffline, kOffline, out_bool()));  // from == to
  EXPECT_EQ(bool_byte_, 0u);
  bool_byte_ = 0x5a;
  EXPECT_OK(wk_exclusive_trigger_trigger(busy_, &trigger_));
  EXPECT_EQ(trigger_.result, WK_TRIGGER_RESULT_BUSY);
  EXPECT_EQ(trigger_.reserved, 0u);
  EXPECT_EQ(trigger_.run, 7u);
  trigger_ = filled<wk_trigger>(0xa5);
  for (uint64_t run : {uint64_t{0}, uint64_t{3}, uint64_t{6}, uint64_t{8}, kMaxRun, UINT64_MAX}) {
    SCOPED_TRACE(run);
    EXPECT_OK(wk_exclusive_trigger_finish(busy_, run, out_bool()));
    EXPECT_EQ(bool_byte_, 0u) << "only run 7 holds the key";
    EXPECT_OK(wk_exclusive_trigger_finish(idle_, run, out_bool()));
    EXPECT_EQ(bool_byte_, 0u) << "nothing holds the key";
    bool_byte_ = 0x5a;
  }
  expect_unchanged("after the no-op transitions");
}

// Every trigger outcome the call writes has its reserved field 0, whatever the memory held.
TEST_F(CoordWordsAbi, ReservedFieldIsZero) {
  EXPECT_OK(wk_exclusive_trigger_trigger(idle_, &trigger_));
  EXPECT_EQ(trigger_.result, WK_TRIGGER_RESULT_STARTED);
  EXPECT_EQ(trigger_.run, 4u);
  EXPECT_EQ(trigger_.reserved, 0u);
  trigger_ = filled<wk_trigger>(0xa5);
  EXPECT_OK(wk_exclusive_trigger_trigger(idle_, &trigger_));
  EXPECT_EQ(trigger_.result, WK_TRIGGER_RESULT_BUSY);
  EXPECT_EQ(trigger_.run, 4u);
  EXPECT_EQ(trigger_.reserved, 0u);
  wk_exclusive_trigger* spent = nullptr;
  ASSERT_OK(wk_exclusive_trigger_new((uint64_t{1} << 63) - 1, &spent));
  trigger_ = filled<wk_trigger>(0xa5);
  EXPECT_OK(wk_exclusive_trigger_trigger(spent, &trigger_));
  EXPECT_EQ(trigger_.result, WK_TRIGGER_RESULT_EXHAUSTED);
  EXPECT_EQ(trigger_.run, 0u);
  EXPECT_EQ(trigger_.reserved, 0u);
  wk_exclusive_trigger_free(spent);
}

// Handles used after their last free: the detector sees the overwritten magic word (as long as
// the memory was not reused). This reads freed memory on purpose, so it is skipped where such
// reads are reported (ASan, valgrind).
TEST(CoordWordsAbiFreed, FreedHandlesAreInvalid) {
  if (freed_memory_is_checked()) GTEST_SKIP() << "reads freed memory on purpose";
  wk_flip* f = nullptr;
  ASSERT_OK(wk_flip_new(kOnline, &f));
  wk_flip* f2 = nullptr;
  ASSERT_OK(wk_flip_clone(f, &f2));
  wk_flip_free(f);
  bool b = false;
  ASSERT_OK(wk_flip_flip(f2, kOnline, kOffline, &b)) << "a clone keeps the flip alive";
  EXPECT_TRUE(b);
  wk_flip_free(f2);
  unsigned char byte = 0x5a;
  const wk_status freed_flip = wk_flip_flip(f2, kOffline, kOnline, reinterpret_cast<bool*>(&byte));
  const uint64_t freed_get = wk_flip_get(f2);
  wk_flip_free(f2);  // a second free is ignored
  EXPECT_STATUS(freed_flip, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(freed_get, 0u);
  EXPECT_EQ(byte, 0x5a);

  wk_counter* c = nullptr;
  ASSERT_OK(wk_counter_new(5, &c));
  wk_counter_free(c);
  uint64_t v = 0x1234;
  const wk_status freed_inc = wk_counter_increment(c, &v);
  wk_counter_free(c);
  EXPECT_STATUS(freed_inc, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(v, 0x1234u);

  wk_exclusive_trigger* t = nullptr;
  ASSERT_OK(wk_exclusive_trigger_new(0, &t));
  wk_exclusive_trigger_free(t);
  wk_trigger out = filled<wk_trigger>(0xa5);
  const wk_status freed_trigger = wk_exclusive_trigger_trigger(t, &out);
  wk_exclusive_trigger_free(t);
  EXPECT_STATUS(freed_trigger, WK_STATUS_INVALID_HANDLE);
  EXPECT_TRUE(same_bytes(out, filled<wk_trigger>(0xa5)));

  wk_windowed_counter* w = nullptr;
  ASSERT_OK(wk_windowed_counter_new(&w));
  wk_windowed_counter_free(w);
  uint32_t n = 0x4321;
  const wk_status freed_window = wk_windowed_counter_increment(w, 1, 1, &n);
  wk_windowed_counter_free(w);
  EXPECT_STATUS(freed_window, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(n, 0x4321u);
}
