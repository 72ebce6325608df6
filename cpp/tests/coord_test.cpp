// The coordination ABI through wkcore.hpp and the raw C calls: the RAII classes (move, clone,
// free, empty objects, keys and batches), races on many threads (claims, finalize against
// reconcile, takes, two replicas sharing an anchor table, a burst of hand-off claims), and bad
// arguments on every coordination function of the C ABI (the documented status, out-parameters
// untouched, no state changed).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_util.hpp"
#include "wkcore.h"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::AnchorTable;
using wkcore::Decision;
using wkcore::HandoffKey;
using wkcore::HandoffLedger;
using wkcore::Ledger;
using wkcore::Result;
using wkcore::Status;

namespace wkcore {
// gtest prints the coordination values by their fields.
inline void PrintTo(const Decision& d, std::ostream* os) {
  *os << "{result " << d.result << ", state " << d.state << ", outcome " << d.outcome << "}";
}
inline void PrintTo(const Counts& c, std::ostream* os) {
  *os << "{claims_won " << c.claims_won << ", claims_lost " << c.claims_lost
      << ", finalizations_won " << c.finalizations_won << ", finalizations_duplicate "
      << c.finalizations_duplicate << ", reconciled_timeouts " << c.reconciled_timeouts
      << ", rejected_full " << c.rejected_full << ", reclaimed " << c.reclaimed << "}";
}
inline void PrintTo(const Fire& f, std::ostream* os) {
  *os << "{kind " << f.kind << ", value " << f.value << "}";
}
}  // namespace wkcore

// --- Compile-time properties ------------------------------------------------------------------

template <typename H>
constexpr bool is_move_only_handle =
    !std::is_copy_constructible<H>::value && !std::is_copy_assignable<H>::value &&
    std::is_nothrow_move_constructible<H>::value && std::is_nothrow_move_assignable<H>::value &&
    std::is_nothrow_default_constructible<H>::value;
static_assert(is_move_only_handle<Ledger>, "");
static_assert(is_move_only_handle<HandoffLedger>, "");
static_assert(is_move_only_handle<AnchorTable>, "");
static_assert(std::is_base_of<wkcore::Handle<Ledger, wk_ledger, &wk_ledger_free, &wk_ledger_clone>,
                              Ledger>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<HandoffLedger, wk_handoff_ledger,
                                             &wk_handoff_ledger_free, &wk_handoff_ledger_clone>,
                              HandoffLedger>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<AnchorTable, wk_anchor_table, &wk_anchor_table_free,
                                             &wk_anchor_table_clone>,
                              AnchorTable>::value,
              "");
static_assert(Ledger::clonable && HandoffLedger::clonable && AnchorTable::clonable, "");
static_assert(sizeof(Ledger) == sizeof(wk_ledger*), "a handle is one pointer");
static_assert(std::is_copy_constructible<HandoffKey>::value, "a key is a value");
static_assert(std::is_same<std::underlying_type_t<Ledger::Kind>, uint32_t>::value, "");
static_assert(static_cast<uint32_t>(Ledger::Kind::kClaim) == WK_LEDGER_KIND_CLAIM, "");
static_assert(static_cast<uint32_t>(Ledger::Kind::kPending) == WK_LEDGER_KIND_PENDING, "");
static_assert(std::is_same<decltype(&Ledger::claim),
                           Result<Decision> (Ledger::*)(std::string_view, uint64_t, uint64_t,
                                                        uint64_t, uint64_t) const noexcept>::value,
              "");
static_assert(!std::is_convertible<uint32_t, Ledger::Kind>::value, "a kind is typed");

// The layout the C ABI fixes (ffi/src/coord/types.rs pins the same sizes).
static_assert(sizeof(wk_coord_decision) == 16, "");
static_assert(sizeof(wk_ledger_record) == 72, "");
static_assert(sizeof(wk_ledger_counts) == 56, "");
static_assert(sizeof(wk_coord_page) == 24, "");
static_assert(sizeof(wk_fire) == 16, "");
static_assert(sizeof(wk_handoff_key) == 224, "");
static_assert(sizeof(wk_coord_result) == 4 && sizeof(wk_record_state) == 4 &&
                  sizeof(wk_fire_kind) == 4,
              "");
static_assert(offsetof(wk_handoff_key, channel_type) == 24, "");
static_assert(offsetof(wk_handoff_key, channel_id) == 32, "");
static_assert(offsetof(wk_handoff_key, tag_key) == 32 + WK_HANDOFF_CHANNEL_ID_MAX, "");
static_assert(WK_LEDGER_RECORD_MIN_SIZE == 72 && WK_LEDGER_COUNTS_MIN_SIZE == 56,
              "the first release's sizes");

namespace {

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

Ledger make_ledger(Ledger::Kind kind, uint64_t capacity, uint64_t retention,
                   const wkcore::MetricsRegistry* metrics) {
  auto r = Ledger::create(kind, capacity, retention, metrics);
  EXPECT_TRUE(r.ok()) << r.status().str();
  return r.ok() ? std::move(r).value() : Ledger();
}

HandoffKey hkey(std::string_view channel, uint64_t message_id, std::string_view tag = "tag",
                uint64_t node = 3) {
  auto k = HandoffKey::make(channel, 2, message_id, node, tag, 8);
  EXPECT_TRUE(k.ok()) << k.status().str();
  return k.ok() ? *k : HandoffKey();
}

const Decision kWonPlaced(WK_COORD_RESULT_WON, WK_RECORD_STATE_PLACED);

}  // namespace

// --- RAII ------------------------------------------------------------------------------------

TEST(CoordRaii, LedgerMoveCloneAndFree) {
  auto metrics = make_metrics();
  Ledger a = make_ledger(Ledger::Kind::kPending, 4, 100, &metrics);
  ASSERT_TRUE(a);
  EXPECT_EQ(must(a.insert("r1", 1, 0, 50, 0)), kWonPlaced);

  auto b = a.clone();
  ASSERT_OK(b);
  EXPECT_NE(b->c_ptr(), nullptr);
  EXPECT_EQ(b->c_ptr(), a.c_ptr()) << "a clone is another reference to the same ledger";
  EXPECT_EQ(b->len(), 1u);

  Ledger moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(a.len(), 0u);
  EXPECT_STATUS(a.insert("r2", 1, 0, 50, 0), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.counts(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.get("r1"), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.place(std::vector<std::string>{"x"}, 1, 1, 0), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.reconcile(0, 4), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.clone(), WK_STATUS_NULL_ARGUMENT);

  moved.reset();  // drops one reference: the clone keeps the ledger alive
  EXPECT_FALSE(moved);
  EXPECT_EQ(must(b->finalize("r1", WK_OUTCOME_SUCCEEDED, 7, 10)),
            Decision(WK_COORD_RESULT_WON, WK_RECORD_STATE_FINALIZED, WK_OUTCOME_SUCCEEDED));
  EXPECT_EQ(b->len(), 1u);

  // release() and adopt() hand the reference over without a count change.
  wk_ledger* raw = b->release();
  ASSERT_NE(raw, nullptr);
  EXPECT_FALSE(*b);
  Ledger again = Ledger::adopt(raw);
  EXPECT_EQ(again.len(), 1u);
  // Move-assigning over a live handle frees the old reference.
  Ledger other = make_ledger(Ledger::Kind::kClaim, 2, 0, &metrics);
  other = std::move(again);
  EXPECT_EQ(other.len(), 1u);
  EXPECT_FALSE(again);  // NOLINT(bugprone-use-after-move)

  // The registry may go first: the ledger holds what it needs.
  metrics.reset();
  EXPECT_EQ(must(other.counts()).finalizations_won, 1u);
}

TEST(CoordRaii, HandoffAndAnchorHandles) {
  auto metrics = make_metrics();
  auto h = must(HandoffLedger::create(4, 10, &metrics));
  auto h2 = must(h.clone());
  EXPECT_EQ(must(h.claim(hkey("g", 1), WK_COORD_DEADLINE_NEVER, 0)), kWonPlaced);
  EXPECT_EQ(must(h2.claim(hkey("g", 1), WK_COORD_DEADLINE_NEVER, 1)).result, WK_COORD_RESULT_LOST);
  h = HandoffLedger();
  EXPECT_EQ(h.len(), 0u);
  EXPECT_STATUS(h.claim(hkey("g", 2), 1, 0), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(h2.len(), 1u);

  auto t = must(AnchorTable::create(2));
  ASSERT_OK(t.insert(1, 100));
  auto t2 = must(t.clone());
  t.reset();
  EXPECT_STATUS(t.insert(2, std::nullopt), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(t.get(1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(t.len(), 0u);
  EXPECT_EQ(must(t2.get(1)), std::optional<uint64_t>(100));
  EXPECT_EQ(t2.len(), 1u);

  // An empty metrics registry is refused by the layer, not dereferenced.
  wkcore::MetricsRegistry empty;
  EXPECT_STATUS(Ledger::create(Ledger::Kind::kClaim, 1, 0, &empty), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(HandoffLedger::create(1, 0, &empty), WK_STATUS_NULL_ARGUMENT);
  // nullptr is the process-wide registry.
  EXPECT_OK(Ledger::create(Ledger::Kind::kClaim, 1, 0));
  EXPECT_OK(HandoffLedger::create(1, 0));
}

TEST(CoordRaii, CreateRefusalsComeFromTheLibrary) {
  auto metrics = make_metrics();
  for (uint64_t capacity : {uint64_t{0}, uint64_t{WK_LEDGER_CAPACITY_MAX} + 1, UINT64_MAX}) {
    SCOPED_TRACE(capacity);
    EXPECT_STATUS(Ledger::create(Ledger::Kind::kClaim, capacity, 0, &metrics),
                  WK_STATUS_COORD_INVALID_CAPACITY);
    EXPECT_STATUS(HandoffLedger::create(capacity, 0, &metrics), WK_STATUS_COORD_INVALID_CAPACITY);
  }
  for (uint64_t capacity : {uint64_t{0}, uint64_t{WK_ANCHOR_TABLE_CAPACITY_MAX} + 1, UINT64_MAX}) {
    EXPECT_STATUS(AnchorTable::create(capacity), WK_STATUS_COORD_INVALID_CAPACITY);
  }
  for (uint32_t kind : {2u, 3u, 0xffffffffu}) {
    Status st = Ledger::create(static_cast<Ledger::Kind>(kind), 4, 0, &metrics);
    EXPECT_STATUS(st, WK_STATUS_COORD_INVALID_CAPACITY) << kind;
    EXPECT_TRUE(st.is(WK_STATUS_INVALID_ARGUMENT));
  }
  EXPECT_STREQ(Status(WK_STATUS_COORD_INVALID_CAPACITY).str(), "coord: invalid capacity");
}

TEST(CoordRaii, KeysAndBatchesThroughTheLayer) {
  auto metrics = make_metrics();
  Ledger l = make_ledger(Ledger::Kind::kClaim, 8, 0, &metrics);
  // Keys are bytes: an embedded NUL is part of the key.
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(must(l.insert(with_nul, 1, 0, 10, 0)), kWonPlaced);
  EXPECT_EQ(must(l.insert("a", 1, 0, 10, 0)), kWonPlaced);
  EXPECT_EQ(must(l.get(with_nul)).id, 1u);
  // Empty and over-long keys are the library's refusals, whatever the view's data().
  EXPECT_STATUS(l.insert(std::string_view(), 1, 0, 10, 0), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(l.insert("", 1, 0, 10, 0), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(l.claim(std::string(WK_COORD_KEY_MAX + 1, 'k'), 1, 2, 3, 0),
                WK_STATUS_COORD_INVALID_KEY);
  EXPECT_EQ(must(l.insert(std::string(WK_COORD_KEY_MAX, 'k'), 1, 0, 10, 0)), kWonPlaced);
  EXPECT_EQ(l.len(), 3u);

  // Batches: the layer builds the bytes and lengths; vectors of strings or of views.
  const std::vector<std::string> keys = {"p1", "p2", "a"};
  auto placed = must(l.place(keys, 77, 100, 1));
  EXPECT_EQ(placed.won, 2u);
  ASSERT_EQ(placed.decisions.size(), 3u);
  EXPECT_EQ(placed.decisions[0], kWonPlaced);
  EXPECT_EQ(placed.decisions[1], kWonPlaced);
  EXPECT_EQ(placed.decisions[2], Decision(WK_COORD_RESULT_LOST, WK_RECORD_STATE_PLACED));
  const std::vector<std::string_view> views = {"p1", "p2"};
  auto fin = must(l.finalize_batch(views, std::vector<uint64_t>{5, 6}, WK_OUTCOME_FAILED, 2));
  EXPECT_EQ(fin.won, 2u);
  EXPECT_EQ(must(l.get("p2")).payload, 6u);
  auto again = must(l.finalize_batch(keys, WK_OUTCOME_SUCCEEDED, 3));
  EXPECT_EQ(again.won, 1u) << "only \"a\" was still PENDING";
  EXPECT_EQ(again.decisions[0],
            Decision(WK_COORD_RESULT_DUPLICATE, WK_RECORD_STATE_FINALIZED, WK_OUTCOME_FAILED));
  EXPECT_EQ(l.len(), 5u);
  // Braced lists of keys.
  auto listed = must(l.place({"p3", "p1"}, 78, 100, 4));
  EXPECT_EQ(listed.won, 1u);
  EXPECT_EQ(listed.decisions[1],
            Decision(WK_COORD_RESULT_DUPLICATE, WK_RECORD_STATE_FINALIZED, WK_OUTCOME_FAILED));
  EXPECT_EQ(must(l.finalize_batch({"p3"}, {9}, WK_OUTCOME_SUCCEEDED, 5)).won, 1u);
  EXPECT_EQ(must(l.get("p3")).payload, 9u);
  EXPECT_EQ(must(l.finalize_batch({"p3", "nope"}, WK_OUTCOME_SUCCEEDED, 6)).decisions[1],
            Decision(WK_COORD_RESULT_NOT_FOUND, WK_RECORD_STATE_NONE));
  EXPECT_EQ(l.len(), 6u);
  const wkcore::Counts before = must(l.counts());

  // Refusals: nothing placed, nothing counted.
  EXPECT_STATUS(l.place(std::vector<std::string>{}, 1, 1, 1), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(l.place(std::vector<std::string>{"ok", ""}, 1, 1, 1), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(l.place(std::vector<std::string>{"ok", std::string(WK_COORD_KEY_MAX + 1, 'x')}, 1,
                        1, 1),
                WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(l.place(std::vector<std::string>(WK_COORD_BATCH_MAX + 1, "k"), 1, 1, 1),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(l.place(std::vector<std::string>{"ok"}, 1, 1, UINT64_MAX),
                WK_STATUS_COORD_INVALID_TIME);
  EXPECT_STATUS(l.finalize_batch(keys, std::vector<uint64_t>{1}, WK_OUTCOME_FAILED, 4),
                WK_STATUS_INVALID_ARGUMENT)
      << "payloads must match the keys (the library cannot see their length)";
  EXPECT_STATUS(l.finalize_batch(keys, 5u, 4), WK_STATUS_COORD_INVALID_OUTCOME);
  EXPECT_STATUS(l.finalize_batch(std::vector<std::string_view>{}, WK_OUTCOME_FAILED, 4),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(l.len(), 6u);
  EXPECT_EQ(must(l.counts()), before);
  EXPECT_STATUS(l.get("nope"), WK_STATUS_NOT_FOUND);
}

TEST(CoordRaii, HandoffKeyIsAValue) {
  auto k = HandoffKey::make("group-1", 2, 1001, 3, "tag-1", 8);
  ASSERT_OK(k);
  EXPECT_EQ(k->channel_id(), "group-1");
  EXPECT_EQ(k->channel_type(), 2u);
  EXPECT_EQ(k->message_id(), 1001u);
  EXPECT_EQ(k->target_node_id(), 3u);
  EXPECT_EQ(k->tag_key(), "tag-1");
  EXPECT_EQ(k->tag_version(), 8u);
  const wk_handoff_key& c = k->c_key();
  EXPECT_EQ(c.channel_id_len, 7u);
  EXPECT_EQ(c.tag_key_len, 5u);
  for (uint8_t r : c.reserved) EXPECT_EQ(r, 0u);
  for (size_t i = 7; i < WK_HANDOFF_CHANNEL_ID_MAX; ++i) ASSERT_EQ(c.channel_id[i], 0u) << i;

  // Every field tells keys apart; equal tuples are equal.
  EXPECT_EQ(*k, hkey("group-1", 1001, "tag-1"));
  EXPECT_NE(*k, *HandoffKey::make("group-1", 1, 1001, 3, "tag-1", 8));
  EXPECT_NE(*k, *HandoffKey::make("group-1", 2, 1001, 3, "tag-1", 9));
  EXPECT_NE(*k, *HandoffKey::make("group-1", 2, 1001, 3, "", 8));

  // The longest fields fit; one byte more is refused through the layer's error path.
  EXPECT_OK(HandoffKey::make(std::string(WK_HANDOFF_CHANNEL_ID_MAX, 'c'), 0, 0, 0,
                             std::string(WK_HANDOFF_TAG_KEY_MAX, 't'), 0));
  Status too_long_channel =
      HandoffKey::make(std::string(WK_HANDOFF_CHANNEL_ID_MAX + 1, 'c'), 0, 0, 0, "", 0);
  EXPECT_STATUS(too_long_channel, WK_STATUS_COORD_INVALID_KEY);
  EXPECT_TRUE(too_long_channel.is(WK_STATUS_INVALID_ARGUMENT));
  EXPECT_STATUS(HandoffKey::make("c", 0, 0, 0, std::string(WK_HANDOFF_TAG_KEY_MAX + 1, 't'), 0),
                WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(HandoffKey::make(std::string(300, 'c'), 0, 0, 0, "", 0),
                WK_STATUS_COORD_INVALID_KEY)
      << "not truncated into a uint8_t length";

  // An empty channel id is the library's to refuse.
  auto metrics = make_metrics();
  auto h = must(HandoffLedger::create(4, 0, &metrics));
  auto empty = HandoffKey::make("", 1, 1, 1, "t", 1);
  ASSERT_OK(empty);
  EXPECT_STATUS(h.claim(*empty, 1, 0), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(h.claim(HandoffKey(), 1, 0), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_STATUS(h.claim_batch({hkey("g", 1), HandoffKey()}, 1, 0), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_EQ(h.len(), 0u) << "a batch with a bad key claims nothing";
  EXPECT_STATUS(h.claim_batch({}, 1, 0), WK_STATUS_INVALID_ARGUMENT);
  auto batch = must(h.claim_batch({hkey("g", 1), hkey("g", 2), hkey("g", 1)}, 1, 0));
  EXPECT_EQ(batch.won, 2u);
  EXPECT_EQ(batch.decisions[2], Decision(WK_COORD_RESULT_LOST, WK_RECORD_STATE_PLACED));
  EXPECT_EQ(must(h.complete(hkey("g", 1), 300, 1)),
            Decision(WK_COORD_RESULT_WON, WK_RECORD_STATE_FINALIZED, 300));
  auto rec = must(h.get(hkey("g", 1)));
  EXPECT_TRUE(rec.finalized());
  EXPECT_EQ(rec.outcome, 300u);
  EXPECT_EQ(rec.finalized_at, 1u);
  EXPECT_STATUS(h.get(hkey("g", 3)), WK_STATUS_NOT_FOUND);
}

TEST(CoordRaii, AnchorTableThroughTheLayer) {
  auto t = must(AnchorTable::create(2));
  ASSERT_OK(t.insert(1, std::nullopt));
  EXPECT_STATUS(t.insert(1, 5), WK_STATUS_ALREADY_EXISTS);
  EXPECT_EQ(must(t.get(1)), std::nullopt);
  EXPECT_EQ(must(t.try_fire(1, 100, 60)), (wkcore::Fire{WK_FIRE_KIND_ANCHORED_FIRST_SEEN, 0}));
  EXPECT_EQ(must(t.try_fire(1, 159, 60)), (wkcore::Fire{WK_FIRE_KIND_NOT_DUE, 160}));
  auto fired = must(t.try_fire(1, 160, 60));
  EXPECT_TRUE(fired.fired());
  EXPECT_EQ(fired.value, 100u);
  EXPECT_TRUE(must(t.advance(1, 160, 220)));
  EXPECT_FALSE(must(t.advance(1, 160, 221)));
  EXPECT_FALSE(must(t.advance(1, UINT64_MAX, 5))) << "the reserved value matches nothing";
  EXPECT_STATUS(t.advance(1, 220, UINT64_MAX), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_EQ(must(t.get(1)), std::optional<uint64_t>(220));
  // WK_COORD_TIME_UNSET as a value is "unset", as in C.
  ASSERT_OK(t.insert(2, WK_COORD_TIME_UNSET));
  EXPECT_EQ(must(t.get(2)), std::nullopt);
  EXPECT_TRUE(must(t.anchor_unset(2, 7)));
  EXPECT_FALSE(must(t.anchor_unset(2, 8)));
  EXPECT_STATUS(t.insert(3, 1), WK_STATUS_FULL);
  EXPECT_STATUS(t.try_fire(3, 1, 1), WK_STATUS_NOT_FOUND);
  EXPECT_STATUS(t.try_fire(1, UINT64_MAX, 1), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_OK(t.remove(2));
  EXPECT_STATUS(t.remove(2), WK_STATUS_NOT_FOUND);
  EXPECT_EQ(t.len(), 1u);
}

TEST(CoordRaii, MetricsCountInTheirRegistry) {
  auto metrics = make_metrics();
  Ledger l = make_ledger(Ledger::Kind::kClaim, 1, 0, &metrics);
  EXPECT_EQ(must(l.insert("a", 1, 0, 1, 0)), kWonPlaced);
  EXPECT_EQ(must(l.insert("b", 1, 0, 1, 0)).result, WK_COORD_RESULT_FULL);
  const std::string text = must(metrics.render());
  EXPECT_NE(text.find("wkcore_coord_rejected_total{ledger=\"claim\",reason=\"full\"} 1"),
            std::string::npos)
      << text;
  EXPECT_EQ(must(l.counts()).rejected_full, 1u);
}

// --- Races -----------------------------------------------------------------------------------

// N threads claim the same placed record: exactly one WON, every other LOST; the record holds
// the winner's request id.
TEST(CoordRace, ClaimsOfOnePlacedRecordHaveOneWinner) {
  constexpr size_t kThreads = 8;
  const size_t n = rounds(300);
  auto metrics = make_metrics();
  Ledger l = make_ledger(Ledger::Kind::kClaim, n + 1, 1000, &metrics);
  Barrier start(kThreads + 1), done(kThreads + 1);
  std::vector<std::vector<Decision>> got(kThreads, std::vector<Decision>(n));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = must(l.clone())]() {
      for (size_t r = 0; r < n; ++r) {
        start.wait();
        auto d = mine.claim("job-" + std::to_string(r), 1000 + r, 1 + t, 50 + t, r);
        got[t][r] = d.ok() ? *d : Decision(WK_COORD_RESULT_FULL, WK_RECORD_STATE_NONE, 999);
        done.wait();
      }
    });
  }
  for (size_t r = 0; r < n; ++r) {
    // No ASSERT here: the threads wait for every round.
    EXPECT_EQ(must(l.place(std::vector<std::string>{"job-" + std::to_string(r)}, 1000 + r,
                           WK_COORD_DEADLINE_NEVER, r))
                  .won,
              1u);
    start.wait();
    done.wait();
  }
  for (auto& th : threads) th.join();
  for (size_t r = 0; r < n; ++r) {
    size_t won = 0, winner = 0;
    for (size_t t = 0; t < kThreads; ++t) {
      const Decision& d = got[t][r];
      if (d.won()) {
        ++won;
        winner = t;
        EXPECT_EQ(d.state, WK_RECORD_STATE_CLAIMED);
      } else {
        EXPECT_EQ(d, Decision(WK_COORD_RESULT_LOST, WK_RECORD_STATE_CLAIMED)) << r << " " << t;
      }
    }
    ASSERT_EQ(won, 1u) << "round " << r;
    auto rec = must(l.get("job-" + std::to_string(r)));
    EXPECT_EQ(rec.state, WK_RECORD_STATE_CLAIMED);
    EXPECT_EQ(rec.id, 1 + winner) << "the winner's request id";
    EXPECT_EQ(rec.runner, 50 + winner);
  }
  const wkcore::Counts c = must(l.counts());
  EXPECT_EQ(c.claims_won, n);
  EXPECT_EQ(c.claims_lost, n * (kThreads - 1));
}

// A receipt racing the reconciler on a due record: exactly one wins; a losing receipt is told
// the timeout, a losing reconciler changes nothing; the record holds the winner's outcome.
TEST(CoordRace, FinalizeAgainstReconcileHasOneWinner) {
  const size_t n = rounds(400);
  auto metrics = make_metrics();
  Ledger l = make_ledger(Ledger::Kind::kPending, n, UINT64_MAX - 1, &metrics);
  Barrier start(3), done(3);
  std::vector<Decision> receipts(n);
  std::vector<wkcore::Page> pages(n);
  std::thread receipt([&, mine = must(l.clone())]() {
    for (size_t r = 0; r < n; ++r) {
      start.wait();
      auto d = mine.finalize("rx-" + std::to_string(r), WK_OUTCOME_SUCCEEDED, r + 1, 100 + r);
      receipts[r] = d.ok() ? *d : Decision(WK_COORD_RESULT_FULL, WK_RECORD_STATE_NONE, 999);
      done.wait();
    }
  });
  std::thread reconciler([&, mine = must(l.clone())]() {
    for (size_t r = 0; r < n; ++r) {
      start.wait();
      auto p = mine.reconcile(100 + r, n);
      pages[r] = p.ok() ? *p : wkcore::Page{0, 999, false};
      done.wait();
    }
  });
  for (size_t r = 0; r < n; ++r) {
    // Due at 100 + r, when both race.
    EXPECT_EQ(must(l.insert("rx-" + std::to_string(r), r, 0, 100 + r, r)), kWonPlaced);
    start.wait();
    done.wait();
  }
  receipt.join();
  reconciler.join();
  size_t receipt_wins = 0, timeouts = 0;
  for (size_t r = 0; r < n; ++r) {
    SCOPED_TRACE(r);
    auto rec = must(l.get("rx-" + std::to_string(r)));
    ASSERT_EQ(rec.state, WK_RECORD_STATE_FINALIZED);
    if (receipts[r].won()) {
      ++receipt_wins;
      EXPECT_EQ(receipts[r].outcome, WK_OUTCOME_SUCCEEDED);
      EXPECT_EQ(pages[r].changed, 0u) << "the losing reconciler changed the record";
      EXPECT_EQ(rec.outcome, WK_OUTCOME_SUCCEEDED);
      EXPECT_EQ(rec.payload, r + 1);
      EXPECT_EQ(rec.duplicates, 0u);
    } else {
      ++timeouts;
      EXPECT_EQ(receipts[r], Decision(WK_COORD_RESULT_DUPLICATE, WK_RECORD_STATE_FINALIZED,
                                      WK_OUTCOME_TIMED_OUT))
          << "the losing receipt is told the winner's outcome";
      EXPECT_EQ(pages[r].changed, 1u);
      EXPECT_EQ(rec.outcome, WK_OUTCOME_TIMED_OUT);
      EXPECT_EQ(rec.duplicates, 1u);
      EXPECT_EQ(rec.last_duplicate_payload, r + 1);
    }
    EXPECT_TRUE(pages[r].wrapped);
  }
  const wkcore::Counts c = must(l.counts());
  EXPECT_EQ(c.finalizations_won, receipt_wins);
  EXPECT_EQ(c.reconciled_timeouts, timeouts);
  EXPECT_EQ(c.finalizations_duplicate, timeouts);
  EXPECT_EQ(receipt_wins + timeouts, n);
}

// Two refreshes with one token: exactly one take wins; the other finds the record terminal or
// gone; the pair is gone.
TEST(CoordRace, TwoTakesOfOneTokenHaveOneWinner) {
  const size_t n = rounds(400);
  auto metrics = make_metrics();
  Ledger l = make_ledger(Ledger::Kind::kPending, 8, 0, &metrics);
  Barrier start(3), done(3);
  std::vector<Decision> got[2] = {std::vector<Decision>(n), std::vector<Decision>(n)};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 2; ++t) {
    threads.emplace_back([&, t, mine = must(l.clone())]() {
      for (size_t r = 0; r < n; ++r) {
        start.wait();
        auto d = mine.take("refresh-token", 1000 + r);
        got[t][r] = d.ok() ? *d : Decision(WK_COORD_RESULT_FULL, WK_RECORD_STATE_NONE, 999);
        done.wait();
      }
    });
  }
  for (size_t r = 0; r < n; ++r) {
    EXPECT_EQ(must(l.insert("refresh-token", 1000 + r, 0, WK_COORD_DEADLINE_NEVER, r)),
              kWonPlaced)
        << "the previous round's take removed the record";
    start.wait();
    done.wait();
  }
  for (auto& th : threads) th.join();
  for (size_t r = 0; r < n; ++r) {
    SCOPED_TRACE(r);
    const size_t won = size_t{got[0][r].won()} + size_t{got[1][r].won()};
    ASSERT_EQ(won, 1u);
    const Decision& loser = got[0][r].won() ? got[1][r] : got[0][r];
    EXPECT_TRUE(loser.duplicate() || loser.not_found()) << int(loser.result);
    if (loser.duplicate()) {
      EXPECT_EQ(loser.state, WK_RECORD_STATE_FINALIZED);
    }
  }
  EXPECT_EQ(l.len(), 0u);
  EXPECT_STATUS(l.get("refresh-token"), WK_STATUS_NOT_FOUND);
  const wkcore::Counts c = must(l.counts());
  EXPECT_EQ(c.finalizations_won, n) << "a take that wins counts one finalization";
  EXPECT_EQ(c.reclaimed, n) << "and one reclaim";
}

// The write-up's end-to-end check: two replicas share one anchor table and both run a monitor
// rule due every period, for many periods, each on its own clock (the second one a little
// ahead). Exactly one of them fires in each period, and each firing advances from the previous.
TEST(CoordRace, TwoReplicasFireAMonitorRuleOncePerPeriod) {
  constexpr uint64_t kPeriod = 60;
  constexpr uint64_t kRule = 42;
  constexpr uint64_t kSkew[2] = {0, 7};
  const size_t periods = rounds(2000);
  auto shared = must(AnchorTable::create(16));
  ASSERT_OK(shared.insert(kRule, std::nullopt));  // a new rule: unset
  Barrier start(2);
  struct Event {
    wkcore::Fire fire;
    uint64_t now = 0;
    bool ok = false;
  };
  std::vector<Event> events[2] = {std::vector<Event>(periods + 1),
                                  std::vector<Event>(periods + 1)};
  std::vector<std::thread> replicas;
  for (size_t replica = 0; replica < 2; ++replica) {
    replicas.emplace_back([&, replica, table = must(shared.clone())]() {
      for (size_t p = 0; p <= periods; ++p) {
        start.wait();
        const uint64_t now = 1000 + p * kPeriod + kSkew[replica];
        auto f = table.try_fire(kRule, now, kPeriod);
        events[replica][p] = Event{f.ok() ? *f : wkcore::Fire{}, now, f.ok()};
      }
    });
  }
  for (auto& r : replicas) r.join();
  shared.reset();  // the replicas' clones kept it alive; now it goes

  // Period 0: one replica anchors the new rule first-seen, nobody fires.
  size_t first_seen = 0;
  for (size_t replica = 0; replica < 2; ++replica) {
    ASSERT_TRUE(events[replica][0].ok);
    EXPECT_FALSE(events[replica][0].fire.fired()) << "a new rule never fires at once";
    first_seen += events[replica][0].fire.kind == WK_FIRE_KIND_ANCHORED_FIRST_SEEN;
  }
  EXPECT_EQ(first_seen, 1u);
  uint64_t anchor = events[0][0].fire.kind == WK_FIRE_KIND_ANCHORED_FIRST_SEEN
                        ? events[0][0].now
                        : events[1][0].now;
  for (size_t p = 1; p <= periods; ++p) {
    size_t fired = 0;
    for (size_t replica = 0; replica < 2; ++replica) {
      const Event& e = events[replica][p];
      ASSERT_TRUE(e.ok) << p;
      if (e.fire.fired()) {
        ++fired;
        EXPECT_EQ(e.fire.value, anchor) << "period " << p << ": advanced from the previous firing";
        anchor = e.now;
      } else {
        EXPECT_TRUE(e.fire.kind == WK_FIRE_KIND_LOST || e.fire.kind == WK_FIRE_KIND_NOT_DUE)
            << "period " << p << ": kind " << e.fire.kind;
      }
    }
    ASSERT_EQ(fired, 1u) << "period " << p << " fired " << fired << " times";
  }
}

// A burst of concurrent claims of one hand-off key (a leader retry racing a log replay): one
// WON, the rest LOST while it is in flight; once completed, every replay is a DUPLICATE.
TEST(CoordRace, ABurstOfHandoffClaimsHasOneWinner) {
  constexpr size_t kThreads = 12;
  const size_t n = rounds(200);
  auto metrics = make_metrics();
  auto h = must(HandoffLedger::create(n + 1, 1000, &metrics));
  Barrier start(kThreads + 1), done(kThreads + 1);
  std::vector<std::vector<Decision>> got(kThreads, std::vector<Decision>(n));
  std::vector<std::vector<Decision>> replays(kThreads, std::vector<Decision>(n));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t, mine = must(h.clone())]() {
      for (size_t r = 0; r < n; ++r) {
        const HandoffKey key = hkey("group-7", 5000 + r);
        start.wait();
        auto d = mine.claim(key, 1000, r);
        got[t][r] = d.ok() ? *d : Decision(WK_COORD_RESULT_FULL, WK_RECORD_STATE_NONE, 999);
        done.wait();  // the main thread completes the hand-off
        start.wait();
        auto again = mine.claim(key, 1000, r);
        replays[t][r] = again.ok() ? *again : Decision(WK_COORD_RESULT_FULL, WK_RECORD_STATE_NONE, 999);
        done.wait();
      }
    });
  }
  for (size_t r = 0; r < n; ++r) {
    start.wait();
    done.wait();
    EXPECT_EQ(must(h.complete(hkey("group-7", 5000 + r), WK_OUTCOME_SUCCEEDED, r)).result,
              WK_COORD_RESULT_WON);
    start.wait();
    done.wait();
  }
  for (auto& th : threads) th.join();
  for (size_t r = 0; r < n; ++r) {
    size_t won = 0;
    for (size_t t = 0; t < kThreads; ++t) {
      if (got[t][r].won()) {
        ++won;
        EXPECT_EQ(got[t][r].state, WK_RECORD_STATE_PLACED);
      } else {
        EXPECT_EQ(got[t][r], Decision(WK_COORD_RESULT_LOST, WK_RECORD_STATE_PLACED)) << r;
      }
      EXPECT_EQ(replays[t][r], Decision(WK_COORD_RESULT_DUPLICATE, WK_RECORD_STATE_FINALIZED,
                                        WK_OUTCOME_SUCCEEDED))
          << r;
    }
    ASSERT_EQ(won, 1u) << "round " << r;
  }
  const wkcore::Counts c = must(h.counts());
  EXPECT_EQ(c.claims_won, n);
  EXPECT_EQ(c.claims_lost, n * (2 * kThreads - 1));
  EXPECT_EQ(c.finalizations_won, n);
  EXPECT_EQ(h.len(), n);
}

// --- Bad arguments on every coordination function of the C ABI --------------------------------

namespace {

wk_handoff_key raw_hkey(const char* channel, uint64_t message_id) {
  wk_handoff_key k{};
  const size_t len = std::strlen(channel);
  k.channel_id_len = static_cast<uint8_t>(len);
  std::memcpy(k.channel_id, channel, len);
  k.channel_type = 1;
  k.message_id = message_id;
  k.target_node_id = 2;
  k.tag_version = 3;
  return k;
}

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

const uint8_t kK[] = {'k'};
const uint8_t kN[] = {'n'};
wk_ledger* const kSentinelLedger = reinterpret_cast<wk_ledger*>(uintptr_t{0x10});
wk_handoff_ledger* const kSentinelHandoff = reinterpret_cast<wk_handoff_ledger*>(uintptr_t{0x20});
wk_anchor_table* const kSentinelTable = reinterpret_cast<wk_anchor_table*>(uintptr_t{0x30});

// A pending ledger holding "k", a hand-off ledger holding one hand-off, and an anchor table
// with anchor 1 at 100 and anchor 2 unset, in a registry of their own; and one out-parameter
// of each kind, filled with a pattern no call writes. expect_unchanged() checks that the
// objects are as SetUp left them and that every out-parameter still holds its pattern.
class CoordAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(wk_metrics_registry_new(&metrics_));
    ASSERT_OK(wk_ledger_new(metrics_, WK_LEDGER_KIND_PENDING, 4, 100, &ledger_));
    wk_coord_decision d{};
    ASSERT_OK(wk_ledger_insert(ledger_, kK, 1, 1, 7, 50, 0, &d));
    ASSERT_EQ(d.result, WK_COORD_RESULT_WON);
    ASSERT_OK(wk_handoff_ledger_new(metrics_, 4, 100, &handoff_));
    hkey_ = raw_hkey("group-1", 1001);
    ASSERT_OK(wk_handoff_ledger_claim(handoff_, &hkey_, 50, 0, &d));
    ASSERT_EQ(d.result, WK_COORD_RESULT_WON);
    ASSERT_OK(wk_anchor_table_new(4, &table_));
    ASSERT_OK(wk_anchor_table_insert(table_, 1, 100));
    ASSERT_OK(wk_anchor_table_insert(table_, 2, WK_COORD_TIME_UNSET));
    before_ = snapshot();
    reset_outs();
  }
  void TearDown() override {
    wk_anchor_table_free(table_);
    wk_handoff_ledger_free(handoff_);
    wk_ledger_free(ledger_);
    wk_metrics_registry_free(metrics_);
  }

  struct Snapshot {
    size_t ledger_len = 0;
    wk_ledger_counts ledger_counts{};
    wk_ledger_record ledger_record{};
    size_t handoff_len = 0;
    wk_ledger_counts handoff_counts{};
    wk_ledger_record handoff_record{};
    size_t table_len = 0;
    uint64_t anchor1 = 0;
    uint64_t anchor2 = 0;
  };

  Snapshot snapshot() const {
    Snapshot s;
    s.ledger_len = wk_ledger_len(ledger_);
    EXPECT_OK(wk_ledger_counts_get(ledger_, &s.ledger_counts, sizeof s.ledger_counts));
    EXPECT_OK(wk_ledger_get(ledger_, kK, 1, &s.ledger_record, sizeof s.ledger_record));
    s.handoff_len = wk_handoff_ledger_len(handoff_);
    EXPECT_OK(wk_handoff_ledger_counts_get(handoff_, &s.handoff_counts, sizeof s.handoff_counts));
    EXPECT_OK(wk_handoff_ledger_get(handoff_, &hkey_, &s.handoff_record, sizeof s.handoff_record));
    s.table_len = wk_anchor_table_len(table_);
    EXPECT_OK(wk_anchor_table_get(table_, 1, &s.anchor1));
    EXPECT_OK(wk_anchor_table_get(table_, 2, &s.anchor2));
    return s;
  }

  void reset_outs() {
    d_ = filled<wk_coord_decision>(0xa5);
    for (auto& d : ds_) d = filled<wk_coord_decision>(0xa5);
    page_ = filled<wk_coord_page>(0xa5);
    record_ = filled<wk_ledger_record>(0xa5);
    counts_ = filled<wk_ledger_counts>(0xa5);
    fire_ = filled<wk_fire>(0xa5);
    n_ = 99;
    won_byte_ = 0x5a;
    value_ = 0x1234;
    ledger_out_ = kSentinelLedger;
    handoff_out_ = kSentinelHandoff;
    table_out_ = kSentinelTable;
  }

  // Called after every refused call (EXPECT_REFUSED).
  void expect_unchanged(const char* call) const {
    SCOPED_TRACE(call);
    EXPECT_TRUE(same_bytes(d_, filled<wk_coord_decision>(0xa5))) << "decision written";
    for (const auto& d : ds_) EXPECT_TRUE(same_bytes(d, filled<wk_coord_decision>(0xa5))) << "decisions written";
    EXPECT_TRUE(same_bytes(page_, filled<wk_coord_page>(0xa5))) << "page written";
    EXPECT_TRUE(same_bytes(record_, filled<wk_ledger_record>(0xa5))) << "record written";
    EXPECT_TRUE(same_bytes(counts_, filled<wk_ledger_counts>(0xa5))) << "counts written";
    EXPECT_TRUE(same_bytes(fire_, filled<wk_fire>(0xa5))) << "fire written";
    EXPECT_EQ(n_, 99u) << "count written";
    EXPECT_EQ(won_byte_, 0x5a) << "won written";
    EXPECT_EQ(value_, 0x1234u) << "value written";
    EXPECT_EQ(ledger_out_, kSentinelLedger);
    EXPECT_EQ(handoff_out_, kSentinelHandoff);
    EXPECT_EQ(table_out_, kSentinelTable);
    const Snapshot now = snapshot();
    EXPECT_EQ(now.ledger_len, before_.ledger_len);
    EXPECT_TRUE(same_bytes(now.ledger_counts, before_.ledger_counts)) << "ledger counts changed";
    EXPECT_TRUE(same_bytes(now.ledger_record, before_.ledger_record)) << "ledger record changed";
    EXPECT_EQ(now.handoff_len, before_.handoff_len);
    EXPECT_TRUE(same_bytes(now.handoff_counts, before_.handoff_counts)) << "hand-off counts changed";
    EXPECT_TRUE(same_bytes(now.handoff_record, before_.handoff_record)) << "hand-off record changed";
    EXPECT_EQ(now.table_len, before_.table_len);
    EXPECT_EQ(now.anchor1, before_.anchor1);
    EXPECT_EQ(now.anchor2, before_.anchor2);
  }

  bool* won() { return reinterpret_cast<bool*>(&won_byte_); }

  wk_metrics_registry* metrics_ = nullptr;
  wk_ledger* ledger_ = nullptr;
  wk_handoff_ledger* handoff_ = nullptr;
  wk_anchor_table* table_ = nullptr;
  wk_handoff_key hkey_{};
  Snapshot before_;

  wk_coord_decision d_{};
  wk_coord_decision ds_[4]{};
  wk_coord_page page_{};
  wk_ledger_record record_{};
  wk_ledger_counts counts_{};
  wk_fire fire_{};
  size_t n_ = 0;
  alignas(bool) unsigned char won_byte_ = 0;
  uint64_t value_ = 0;
  wk_ledger* ledger_out_ = nullptr;
  wk_handoff_ledger* handoff_out_ = nullptr;
  wk_anchor_table* table_out_ = nullptr;
};

#define EXPECT_REFUSED(expr, code) \
  do {                             \
    EXPECT_STATUS(expr, code);     \
    expect_unchanged(#expr);       \
  } while (0)

constexpr uint64_t kNever = WK_COORD_DEADLINE_NEVER;
constexpr uint64_t kMaxTime = UINT64_MAX;

}  // namespace

TEST_F(CoordAbi, NullHandleEverywhere) {
  const wk_ledger* l = nullptr;
  const wk_handoff_ledger* h = nullptr;
  const wk_anchor_table* t = nullptr;
  const uint32_t lens[2] = {1, 1};
  const uint8_t ab[2] = {'a', 'b'};
  EXPECT_REFUSED(wk_ledger_clone(l, &ledger_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_insert(l, kN, 1, 1, 0, 10, 0, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(l, ab, 2, lens, 2, 1, 10, 0, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_claim(l, kK, 1, 1, 2, 3, 0, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize(l, kK, 1, WK_OUTCOME_SUCCEEDED, 0, 1, &d_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_batch(l, ab, 2, lens, nullptr, 2, WK_OUTCOME_SUCCEEDED, 1,
                                          ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_take(l, kK, 1, 1, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_touch(l, kK, 1, 7, 1, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_reconcile(l, 100, 4, &page_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_reclaim(l, 1000, 4, &page_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_own(l, 7, WK_OUTCOME_FAILED, 1, 4, &page_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_sweep_orphans(l, 1000, 1, 4, &page_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_get(l, kK, 1, &record_, sizeof record_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_counts_get(l, &counts_, sizeof counts_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_ledger_len(l), 0u);
  wk_ledger_free(nullptr);  // no-op

  wk_handoff_key other = raw_hkey("group-2", 1);
  wk_handoff_key keys[2] = {other, raw_hkey("group-3", 1)};
  EXPECT_REFUSED(wk_handoff_ledger_clone(h, &handoff_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim(h, &other, 10, 0, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim_batch(h, keys, 2, 10, 0, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_complete(h, &hkey_, WK_OUTCOME_SUCCEEDED, 1, &d_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_reconcile(h, 100, 4, &page_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_reclaim(h, 1000, 4, &page_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_get(h, &hkey_, &record_, sizeof record_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_counts_get(h, &counts_, sizeof counts_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_handoff_ledger_len(h), 0u);
  wk_handoff_ledger_free(nullptr);

  EXPECT_REFUSED(wk_anchor_table_clone(t, &table_out_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_insert(t, 3, 5), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_remove(t, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_try_fire(t, 1, 1000, 1, &fire_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_advance(t, 1, 100, 200, won()), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_anchor_unset(t, 2, 5, won()), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_get(t, 1, &value_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_anchor_table_len(t), 0u);
  wk_anchor_table_free(nullptr);
  expect_unchanged("after all");
}

TEST_F(CoordAbi, NullOutAndInputPointers) {
  const uint32_t lens[2] = {1, 1};
  const uint8_t ab[2] = {'a', 'b'};
  // Constructors and clones.
  EXPECT_REFUSED(wk_ledger_new(metrics_, WK_LEDGER_KIND_CLAIM, 4, 0, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_new(metrics_, 4, 0, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_new(4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_clone(ledger_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_clone(handoff_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_clone(table_, nullptr), WK_STATUS_NULL_ARGUMENT);
  // Ledger: decision, page, record, counts and count out-parameters; key inputs.
  EXPECT_REFUSED(wk_ledger_insert(ledger_, kN, 1, 1, 0, 10, 0, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_insert(ledger_, nullptr, 1, 1, 0, 10, 0, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_claim(ledger_, kK, 1, 1, 2, 3, 0, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_claim(ledger_, nullptr, 1, 1, 2, 3, 0, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize(ledger_, kK, 1, WK_OUTCOME_SUCCEEDED, 0, 1, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize(ledger_, nullptr, 1, WK_OUTCOME_SUCCEEDED, 0, 1, &d_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_take(ledger_, kK, 1, 1, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_take(ledger_, nullptr, 1, 1, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_touch(ledger_, kK, 1, 7, 1, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_touch(ledger_, nullptr, 1, 7, 1, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_reconcile(ledger_, 100, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_reclaim(ledger_, 1000, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_own(ledger_, 7, WK_OUTCOME_FAILED, 1, 4, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_sweep_orphans(ledger_, 1000, 1, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_get(ledger_, kK, 1, nullptr, sizeof record_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_get(ledger_, nullptr, 1, &record_, sizeof record_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_counts_get(ledger_, nullptr, sizeof counts_), WK_STATUS_NULL_ARGUMENT);
  // Batches: each of the four pointers.
  EXPECT_REFUSED(wk_ledger_place(ledger_, nullptr, 2, lens, 2, 1, 10, 0, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, nullptr, 2, 1, 10, 0, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, lens, 2, 1, 10, 0, nullptr, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, lens, 2, 1, 10, 0, ds_, 2, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, nullptr, 2, lens, nullptr, 2,
                                          WK_OUTCOME_FAILED, 1, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, ab, 2, nullptr, nullptr, 2, WK_OUTCOME_FAILED,
                                          1, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, ab, 2, lens, nullptr, 2, WK_OUTCOME_FAILED, 1,
                                          nullptr, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, ab, 2, lens, nullptr, 2, WK_OUTCOME_FAILED, 1,
                                          ds_, 2, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  // Hand-offs.
  wk_handoff_key other = raw_hkey("group-2", 1);
  wk_handoff_key keys[2] = {other, raw_hkey("group-3", 1)};
  EXPECT_REFUSED(wk_handoff_ledger_claim(handoff_, nullptr, 10, 0, &d_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim(handoff_, &other, 10, 0, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim_batch(handoff_, nullptr, 2, 10, 0, ds_, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim_batch(handoff_, keys, 2, 10, 0, nullptr, 2, &n_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim_batch(handoff_, keys, 2, 10, 0, ds_, 2, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_complete(handoff_, nullptr, WK_OUTCOME_SUCCEEDED, 1, &d_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_complete(handoff_, &hkey_, WK_OUTCOME_SUCCEEDED, 1, nullptr),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_reconcile(handoff_, 100, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_reclaim(handoff_, 1000, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_get(handoff_, nullptr, &record_, sizeof record_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_get(handoff_, &hkey_, nullptr, sizeof record_),
                 WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_counts_get(handoff_, nullptr, sizeof counts_),
                 WK_STATUS_NULL_ARGUMENT);
  // Anchors.
  EXPECT_REFUSED(wk_anchor_table_try_fire(table_, 1, 1000, 1, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_advance(table_, 1, 100, 200, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_anchor_unset(table_, 2, 5, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_get(table_, 1, nullptr), WK_STATUS_NULL_ARGUMENT);
}

TEST_F(CoordAbi, EmptyAndOversizedKeys) {
  uint8_t long_key[WK_COORD_KEY_MAX + 1];
  std::memset(long_key, 'x', sizeof long_key);
  const size_t too_long = sizeof long_key;
  for (size_t len : {size_t{0}, too_long, SIZE_MAX}) {
    SCOPED_TRACE(len);
    const uint8_t* key = len == 0 ? kN : long_key;
    EXPECT_REFUSED(wk_ledger_insert(ledger_, key, len, 1, 0, 10, 0, &d_),
                   WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_ledger_claim(ledger_, key, len, 1, 2, 3, 0, &d_),
                   WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_ledger_finalize(ledger_, key, len, WK_OUTCOME_SUCCEEDED, 0, 1, &d_),
                   WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_ledger_take(ledger_, key, len, 1, &d_), WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_ledger_touch(ledger_, key, len, 7, 1, &d_), WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_ledger_get(ledger_, key, len, &record_, sizeof record_),
                   WK_STATUS_COORD_INVALID_KEY);
  }
  // The longest key is a key (absent here).
  EXPECT_REFUSED(wk_ledger_get(ledger_, long_key, WK_COORD_KEY_MAX, &record_, sizeof record_),
                 WK_STATUS_NOT_FOUND);

  // Hand-off keys: an empty or over-long channel id, an over-long tag key (the length bytes
  // can say up to 255).
  wk_handoff_key bad[4] = {raw_hkey("x", 1), raw_hkey("x", 1), raw_hkey("x", 1), raw_hkey("x", 1)};
  bad[0].channel_id_len = 0;
  bad[1].channel_id_len = WK_HANDOFF_CHANNEL_ID_MAX + 1;
  bad[2].channel_id_len = 255;
  bad[3].tag_key_len = WK_HANDOFF_TAG_KEY_MAX + 1;
  for (const wk_handoff_key& k : bad) {
    SCOPED_TRACE(std::to_string(k.channel_id_len) + "/" + std::to_string(k.tag_key_len));
    EXPECT_REFUSED(wk_handoff_ledger_claim(handoff_, &k, 10, 0, &d_), WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_handoff_ledger_complete(handoff_, &k, WK_OUTCOME_SUCCEEDED, 1, &d_),
                   WK_STATUS_COORD_INVALID_KEY);
    EXPECT_REFUSED(wk_handoff_ledger_get(handoff_, &k, &record_, sizeof record_),
                   WK_STATUS_COORD_INVALID_KEY);
    // One bad key refuses the whole batch: the good key before it is not claimed.
    wk_handoff_key batch[2] = {raw_hkey("good", 9), k};
    EXPECT_REFUSED(wk_handoff_ledger_claim_batch(handoff_, batch, 2, 10, 0, ds_, 2, &n_),
                   WK_STATUS_COORD_INVALID_KEY);
  }
}

TEST_F(CoordAbi, BatchLengthsAndCounts) {
  const uint8_t ab[3] = {'a', 'b', 'c'};
  const uint32_t ones[2] = {1, 1};
  const uint32_t with_empty[2] = {0, 2};
  const uint32_t with_long[2] = {1, WK_COORD_KEY_MAX + 1};
  const uint32_t overflowing[2] = {UINT32_MAX, 3};
  uint8_t many_bytes[2 * WK_COORD_KEY_MAX + 2];
  std::memset(many_bytes, 'm', sizeof many_bytes);
  const uint32_t too_many_bytes[2] = {WK_COORD_KEY_MAX, WK_COORD_KEY_MAX + 2};
  struct Bad {
    const char* what;
    const uint8_t* bytes;
    size_t bytes_len;
    const uint32_t* lens;
    size_t count;
    size_t decisions_len;
    wk_status want;
  };
  const Bad cases[] = {
      {"lengths sum below the buffer", ab, 3, ones, 2, 2, WK_STATUS_COORD_INVALID_KEY},
      {"lengths sum above the buffer", ab, 1, ones, 2, 2, WK_STATUS_COORD_INVALID_KEY},
      {"an empty key", ab, 2, with_empty, 2, 2, WK_STATUS_COORD_INVALID_KEY},
      {"an over-long key", many_bytes, 1 + WK_COORD_KEY_MAX + 1, with_long, 2, 2,
       WK_STATUS_COORD_INVALID_KEY},
      {"a length that overflows", ab, 3, overflowing, 2, 2, WK_STATUS_COORD_INVALID_KEY},
      {"more bytes than count keys can hold", many_bytes, sizeof many_bytes, too_many_bytes, 2, 2,
       WK_STATUS_COORD_INVALID_KEY},
      {"count 0", ab, 2, ones, 0, 0, WK_STATUS_INVALID_ARGUMENT},
      // Refused before anything is read: the arrays hold only 2.
      {"count above WK_COORD_BATCH_MAX", ab, 2, ones, WK_COORD_BATCH_MAX + 1,
       WK_COORD_BATCH_MAX + 1, WK_STATUS_INVALID_ARGUMENT},
      {"count SIZE_MAX", ab, 2, ones, SIZE_MAX, SIZE_MAX, WK_STATUS_INVALID_ARGUMENT},
      {"decisions_len below count", ab, 2, ones, 2, 1, WK_STATUS_INVALID_ARGUMENT},
      {"decisions_len above count", ab, 2, ones, 2, 3, WK_STATUS_INVALID_ARGUMENT},
      {"decisions_len 0", ab, 2, ones, 2, 0, WK_STATUS_INVALID_ARGUMENT},
  };
  const uint64_t payloads[2] = {5, 6};
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_REFUSED(wk_ledger_place(ledger_, c.bytes, c.bytes_len, c.lens, c.count, 1, 10, 0, ds_,
                                   c.decisions_len, &n_),
                   c.want);
    EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, c.bytes, c.bytes_len, c.lens, nullptr,
                                            c.count, WK_OUTCOME_SUCCEEDED, 1, ds_,
                                            c.decisions_len, &n_),
                   c.want);
    if (c.count <= 2) {
      EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, c.bytes, c.bytes_len, c.lens, payloads,
                                              c.count, WK_OUTCOME_SUCCEEDED, 1, ds_,
                                              c.decisions_len, &n_),
                     c.want);
    }
  }
  // A batch that includes the held key "k" is refused as a whole for a bad length elsewhere.
  const uint8_t kb[2] = {'k', 'b'};
  const uint32_t k_then_empty[3] = {1, 1, 0};
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, kb, 2, k_then_empty, nullptr, 3,
                                          WK_OUTCOME_SUCCEEDED, 1, ds_, 3, &n_),
                 WK_STATUS_COORD_INVALID_KEY);

  // Hand-off batches.
  wk_handoff_key keys[2] = {raw_hkey("group-2", 1), raw_hkey("group-3", 1)};
  for (size_t count : {size_t{0}, size_t{WK_COORD_BATCH_MAX + 1}, SIZE_MAX}) {
    SCOPED_TRACE(count);
    EXPECT_REFUSED(wk_handoff_ledger_claim_batch(handoff_, keys, count, 10, 0, ds_, count, &n_),
                   WK_STATUS_INVALID_ARGUMENT);
  }
  for (size_t decisions_len : {size_t{0}, size_t{1}, size_t{3}}) {
    SCOPED_TRACE(decisions_len);
    EXPECT_REFUSED(
        wk_handoff_ledger_claim_batch(handoff_, keys, 2, 10, 0, ds_, decisions_len, &n_),
        WK_STATUS_INVALID_ARGUMENT);
  }
}

TEST_F(CoordAbi, UnknownOutcomeCodes) {
  const uint8_t ab[2] = {'a', 'k'};
  const uint32_t ones[2] = {1, 1};
  for (uint32_t code : {0u, 5u, 100u, 255u, 65536u, 0xffffffffu}) {
    SCOPED_TRACE(code);
    EXPECT_REFUSED(wk_ledger_finalize(ledger_, kK, 1, code, 0, 1, &d_),
                   WK_STATUS_COORD_INVALID_OUTCOME);
    EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, ab, 2, ones, nullptr, 2, code, 1, ds_, 2, &n_),
                   WK_STATUS_COORD_INVALID_OUTCOME);
    EXPECT_REFUSED(wk_ledger_finalize_own(ledger_, 7, code, 1, 4, &page_),
                   WK_STATUS_COORD_INVALID_OUTCOME);
    EXPECT_REFUSED(wk_handoff_ledger_complete(handoff_, &hkey_, code, 1, &d_),
                   WK_STATUS_COORD_INVALID_OUTCOME);
    EXPECT_TRUE(Status(WK_STATUS_COORD_INVALID_OUTCOME).is(WK_STATUS_INVALID_ARGUMENT));
  }
}

TEST_F(CoordAbi, CapacitiesAndKinds) {
  for (uint64_t capacity : {uint64_t{0}, uint64_t{WK_LEDGER_CAPACITY_MAX} + 1, UINT64_MAX}) {
    SCOPED_TRACE(capacity);
    for (uint32_t kind : {uint32_t{WK_LEDGER_KIND_CLAIM}, uint32_t{WK_LEDGER_KIND_PENDING}}) {
      EXPECT_REFUSED(wk_ledger_new(metrics_, kind, capacity, 0, &ledger_out_),
                     WK_STATUS_COORD_INVALID_CAPACITY);
      EXPECT_REFUSED(wk_ledger_new(nullptr, kind, capacity, 0, &ledger_out_),
                     WK_STATUS_COORD_INVALID_CAPACITY);
    }
    EXPECT_REFUSED(wk_handoff_ledger_new(metrics_, capacity, 0, &handoff_out_),
                   WK_STATUS_COORD_INVALID_CAPACITY);
  }
  for (uint64_t capacity : {uint64_t{0}, uint64_t{WK_ANCHOR_TABLE_CAPACITY_MAX} + 1, UINT64_MAX}) {
    EXPECT_REFUSED(wk_anchor_table_new(capacity, &table_out_), WK_STATUS_COORD_INVALID_CAPACITY);
  }
  for (uint32_t kind : {2u, 3u, 255u, 0xffffffffu}) {
    SCOPED_TRACE(kind);
    EXPECT_REFUSED(wk_ledger_new(metrics_, kind, 4, 0, &ledger_out_),
                   WK_STATUS_COORD_INVALID_CAPACITY);
  }
  // A mistyped metrics handle is an invalid handle.
  EXPECT_REFUSED(wk_ledger_new(reinterpret_cast<const wk_metrics_registry*>(table_),
                               WK_LEDGER_KIND_CLAIM, 4, 0, &ledger_out_),
                 WK_STATUS_INVALID_HANDLE);
  EXPECT_REFUSED(wk_handoff_ledger_new(reinterpret_cast<const wk_metrics_registry*>(ledger_), 4, 0,
                                       &handoff_out_),
                 WK_STATUS_INVALID_HANDLE);
  // The smallest capacity is one.
  wk_ledger* one = nullptr;
  ASSERT_OK(wk_ledger_new(metrics_, WK_LEDGER_KIND_CLAIM, 1, 0, &one));
  wk_ledger_free(one);
  wk_anchor_table* small = nullptr;
  ASSERT_OK(wk_anchor_table_new(1, &small));
  wk_anchor_table_free(small);
}

TEST_F(CoordAbi, TheReservedTime) {
  const uint8_t ab[2] = {'a', 'b'};
  const uint32_t ones[2] = {1, 1};
  wk_handoff_key other = raw_hkey("group-2", 1);
  wk_handoff_key keys[2] = {other, raw_hkey("group-3", 1)};
  EXPECT_REFUSED(wk_ledger_insert(ledger_, kN, 1, 1, 0, 10, kMaxTime, &d_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, ones, 2, 1, 10, kMaxTime, ds_, 2, &n_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_claim(ledger_, kK, 1, 1, 2, 3, kMaxTime, &d_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_finalize(ledger_, kK, 1, WK_OUTCOME_SUCCEEDED, 0, kMaxTime, &d_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, ab, 2, ones, nullptr, 2, WK_OUTCOME_SUCCEEDED,
                                          kMaxTime, ds_, 2, &n_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_touch(ledger_, kK, 1, 7, kMaxTime, &d_), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_reconcile(ledger_, kMaxTime, 4, &page_), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_reclaim(ledger_, kMaxTime, 4, &page_), WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_finalize_own(ledger_, 7, WK_OUTCOME_FAILED, kMaxTime, 4, &page_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_ledger_sweep_orphans(ledger_, kMaxTime, 1, 4, &page_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_handoff_ledger_claim(handoff_, &other, 10, kMaxTime, &d_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_handoff_ledger_claim_batch(handoff_, keys, 2, 10, kMaxTime, ds_, 2, &n_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_handoff_ledger_complete(handoff_, &hkey_, WK_OUTCOME_SUCCEEDED, kMaxTime, &d_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_handoff_ledger_reconcile(handoff_, kMaxTime, 4, &page_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_handoff_ledger_reclaim(handoff_, kMaxTime, 4, &page_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_anchor_table_try_fire(table_, 1, kMaxTime, 1, &fire_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_anchor_table_try_fire(table_, 2, kMaxTime, 1, &fire_),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_anchor_table_advance(table_, 1, 100, kMaxTime, won()),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_REFUSED(wk_anchor_table_anchor_unset(table_, 2, kMaxTime, won()),
                 WK_STATUS_COORD_INVALID_TIME);
  EXPECT_TRUE(Status(WK_STATUS_COORD_INVALID_TIME).is(WK_STATUS_INVALID_ARGUMENT));
  // Deadlines may be "never"; an anchor inserted at UINT64_MAX is unset (not refused).
  EXPECT_STATUS(wk_ledger_insert(ledger_, kN, 1, 1, 0, kNever, 0, &d_), WK_STATUS_OK);
  EXPECT_EQ(d_.result, WK_COORD_RESULT_WON);
}

TEST_F(CoordAbi, StructSizesBelowTheMinimum) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{WK_LEDGER_RECORD_MIN_SIZE - 1}}) {
    SCOPED_TRACE(size);
    EXPECT_REFUSED(wk_ledger_get(ledger_, kK, 1, &record_, size), WK_STATUS_INVALID_ARGUMENT);
    EXPECT_REFUSED(wk_handoff_ledger_get(handoff_, &hkey_, &record_, size),
                   WK_STATUS_INVALID_ARGUMENT);
  }
  for (size_t size : {size_t{0}, size_t{8}, size_t{WK_LEDGER_COUNTS_MIN_SIZE - 1}}) {
    SCOPED_TRACE(size);
    EXPECT_REFUSED(wk_ledger_counts_get(ledger_, &counts_, size), WK_STATUS_INVALID_ARGUMENT);
    EXPECT_REFUSED(wk_handoff_ledger_counts_get(handoff_, &counts_, size),
                   WK_STATUS_INVALID_ARGUMENT);
  }
}

TEST_F(CoordAbi, LargerStructsKeepTheirTail) {
  struct NewerRecord {
    wk_ledger_record known;
    uint64_t added;
  } rec{};
  rec.added = 0xfeedfacecafebeefu;
  ASSERT_OK(wk_ledger_get(ledger_, kK, 1, &rec.known, sizeof rec));
  EXPECT_EQ(rec.known.id, 1u);
  EXPECT_EQ(rec.known.runner, 7u);
  EXPECT_EQ(rec.known.deadline, 50u);
  EXPECT_EQ(rec.known.state, WK_RECORD_STATE_PLACED);
  EXPECT_EQ(rec.known.finalized_at, WK_COORD_TIME_UNSET);
  EXPECT_EQ(rec.added, 0xfeedfacecafebeefu);
  ASSERT_OK(wk_handoff_ledger_get(handoff_, &hkey_, &rec.known, sizeof rec));
  EXPECT_EQ(rec.added, 0xfeedfacecafebeefu);
  struct NewerCounts {
    wk_ledger_counts known;
    uint64_t added;
  } c{};
  c.added = 42;
  ASSERT_OK(wk_handoff_ledger_counts_get(handoff_, &c.known, sizeof c));
  EXPECT_EQ(c.known.claims_won, 1u);
  EXPECT_EQ(c.added, 42u);
  ASSERT_OK(wk_ledger_counts_get(ledger_, &c.known, sizeof c));
  EXPECT_EQ(c.added, 42u);
}

TEST_F(CoordAbi, MisalignedPointers) {
  alignas(16) unsigned char raw[512] = {};
  auto* bad_d = reinterpret_cast<wk_coord_decision*>(raw + 1);
  auto* bad_page = reinterpret_cast<wk_coord_page*>(raw + 1);
  const uint8_t ab[2] = {'a', 'b'};
  const uint32_t ones[2] = {1, 1};
  EXPECT_REFUSED(wk_ledger_insert(ledger_, kN, 1, 1, 0, 10, 0, bad_d), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize(ledger_, kK, 1, WK_OUTCOME_SUCCEEDED, 0, 1, bad_d),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, reinterpret_cast<const uint32_t*>(raw + 1), 2, 1,
                                 10, 0, ds_, 2, &n_),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, ones, 2, 1, 10, 0, bad_d, 2, &n_),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_place(ledger_, ab, 2, ones, 2, 1, 10, 0, ds_, 2,
                                 reinterpret_cast<size_t*>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_finalize_batch(ledger_, ab, 2, ones,
                                          reinterpret_cast<const uint64_t*>(raw + 1), 2,
                                          WK_OUTCOME_SUCCEEDED, 1, ds_, 2, &n_),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_reconcile(ledger_, 100, 4, bad_page), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_get(ledger_, kK, 1, reinterpret_cast<wk_ledger_record*>(raw + 1),
                               sizeof(wk_ledger_record)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_counts_get(ledger_, reinterpret_cast<wk_ledger_counts*>(raw + 1),
                                      sizeof(wk_ledger_counts)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_ledger_new(metrics_, WK_LEDGER_KIND_CLAIM, 4, 0,
                               reinterpret_cast<wk_ledger**>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim(handoff_, reinterpret_cast<const wk_handoff_key*>(raw + 1),
                                         10, 0, &d_),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_handoff_ledger_claim_batch(
                     handoff_, reinterpret_cast<const wk_handoff_key*>(raw + 1), 1, 10, 0, ds_, 1, &n_),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_try_fire(table_, 1, 1000, 1, reinterpret_cast<wk_fire*>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  EXPECT_REFUSED(wk_anchor_table_get(table_, 1, reinterpret_cast<uint64_t*>(raw + 1)),
                 WK_STATUS_INVALID_ARGUMENT);
  // A misaligned handle is an invalid handle.
  auto* l = reinterpret_cast<const wk_ledger*>(reinterpret_cast<const unsigned char*>(ledger_) + 1);
  EXPECT_REFUSED(wk_ledger_take(l, kK, 1, 1, &d_), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(wk_ledger_len(l), 0u);
  auto* t = reinterpret_cast<const wk_anchor_table*>(reinterpret_cast<const unsigned char*>(table_) + 1);
  EXPECT_REFUSED(wk_anchor_table_remove(t, 1), WK_STATUS_INVALID_HANDLE);
}

TEST_F(CoordAbi, AnchorLookupsOfUnknownIds) {
  EXPECT_REFUSED(wk_anchor_table_try_fire(table_, 9, 1000, 1, &fire_), WK_STATUS_NOT_FOUND);
  EXPECT_REFUSED(wk_anchor_table_advance(table_, 9, 100, 200, won()), WK_STATUS_NOT_FOUND);
  EXPECT_REFUSED(wk_anchor_table_anchor_unset(table_, 9, 5, won()), WK_STATUS_NOT_FOUND);
  EXPECT_REFUSED(wk_anchor_table_get(table_, 9, &value_), WK_STATUS_NOT_FOUND);
  EXPECT_REFUSED(wk_anchor_table_remove(table_, 9), WK_STATUS_NOT_FOUND);
  EXPECT_REFUSED(wk_anchor_table_insert(table_, 1, 5), WK_STATUS_ALREADY_EXISTS);
  EXPECT_REFUSED(wk_ledger_get(ledger_, kN, 1, &record_, sizeof record_), WK_STATUS_NOT_FOUND);
  wk_handoff_key other = raw_hkey("group-2", 1);
  EXPECT_REFUSED(wk_handoff_ledger_get(handoff_, &other, &record_, sizeof record_),
                 WK_STATUS_NOT_FOUND);
  // The reserved value matches no anchor, unset or set: not refused, not won.
  bool w = true;
  ASSERT_OK(wk_anchor_table_advance(table_, 2, UINT64_MAX, 5, &w));
  EXPECT_FALSE(w) << "an unset anchor never matches an advance";
  expect_unchanged("advance from UINT64_MAX");
}

// Every call that takes a handle, given a handle of another type: the magic-word check refuses
// it (every handle object starts with its word, so the check reads in bounds).
TEST_F(CoordAbi, WrongHandleTypeIsDetected) {
  const auto* as_ledger = reinterpret_cast<wk_ledger*>(table_);
  const auto* as_handoff = reinterpret_cast<wk_handoff_ledger*>(ledger_);
  const auto* as_table = reinterpret_cast<wk_anchor_table*>(handoff_);
  const uint8_t ab[2] = {'a', 'b'};
  const uint32_t ones[2] = {1, 1};
  for (const wk_ledger* l : {as_ledger, reinterpret_cast<const wk_ledger*>(handoff_),
                             reinterpret_cast<const wk_ledger*>(metrics_)}) {
    EXPECT_REFUSED(wk_ledger_clone(l, &ledger_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_insert(l, kN, 1, 1, 0, 10, 0, &d_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_place(l, ab, 2, ones, 2, 1, 10, 0, ds_, 2, &n_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_claim(l, kK, 1, 1, 2, 3, 0, &d_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_finalize(l, kK, 1, WK_OUTCOME_SUCCEEDED, 0, 1, &d_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_finalize_batch(l, ab, 2, ones, nullptr, 2, WK_OUTCOME_SUCCEEDED, 1,
                                            ds_, 2, &n_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_take(l, kK, 1, 1, &d_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_touch(l, kK, 1, 7, 1, &d_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_reconcile(l, 100, 4, &page_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_reclaim(l, 1000, 4, &page_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_finalize_own(l, 7, WK_OUTCOME_FAILED, 1, 4, &page_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_sweep_orphans(l, 1000, 1, 4, &page_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_get(l, kK, 1, &record_, sizeof record_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_ledger_counts_get(l, &counts_, sizeof counts_), WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_ledger_len(l), 0u);
    wk_ledger_free(const_cast<wk_ledger*>(l));  // ignored: not a live ledger
    expect_unchanged("wk_ledger_free of another type");
  }

  wk_handoff_key other = raw_hkey("group-2", 1);
  wk_handoff_key keys[2] = {other, raw_hkey("group-3", 1)};
  for (const wk_handoff_ledger* h : {as_handoff, reinterpret_cast<const wk_handoff_ledger*>(table_)}) {
    EXPECT_REFUSED(wk_handoff_ledger_clone(h, &handoff_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_claim(h, &other, 10, 0, &d_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_claim_batch(h, keys, 2, 10, 0, ds_, 2, &n_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_complete(h, &hkey_, WK_OUTCOME_SUCCEEDED, 1, &d_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_reconcile(h, 100, 4, &page_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_reclaim(h, 1000, 4, &page_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_get(h, &hkey_, &record_, sizeof record_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_handoff_ledger_counts_get(h, &counts_, sizeof counts_),
                   WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_handoff_ledger_len(h), 0u);
    wk_handoff_ledger_free(const_cast<wk_handoff_ledger*>(h));  // ignored
    expect_unchanged("wk_handoff_ledger_free of another type");
  }

  for (const wk_anchor_table* t : {as_table, reinterpret_cast<const wk_anchor_table*>(ledger_)}) {
    EXPECT_REFUSED(wk_anchor_table_clone(t, &table_out_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_anchor_table_insert(t, 3, 5), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_anchor_table_remove(t, 1), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_anchor_table_try_fire(t, 1, 1000, 1, &fire_), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_anchor_table_advance(t, 1, 100, 200, won()), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_anchor_table_anchor_unset(t, 2, 5, won()), WK_STATUS_INVALID_HANDLE);
    EXPECT_REFUSED(wk_anchor_table_get(t, 1, &value_), WK_STATUS_INVALID_HANDLE);
    EXPECT_EQ(wk_anchor_table_len(t), 0u);
    wk_anchor_table_free(const_cast<wk_anchor_table*>(t));  // ignored
    expect_unchanged("wk_anchor_table_free of another type");
  }

  // The C++ layer passes the library's answer through (a borrowed pointer, released).
  Ledger borrowed = Ledger::adopt(reinterpret_cast<wk_ledger*>(table_));
  EXPECT_STATUS(borrowed.insert("n", 1, 0, 10, 0), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(borrowed.clone(), WK_STATUS_INVALID_HANDLE);
  (void)borrowed.release();
  expect_unchanged("through the layer");
}

// Handles used after their last free: the detector sees the overwritten magic word (as long as
// the memory was not reused). This reads freed memory on purpose, so it is skipped where such
// reads are reported (ASan, valgrind).
TEST(CoordAbiFreed, FreedHandlesAreInvalid) {
  if (freed_memory_is_checked()) GTEST_SKIP() << "reads freed memory on purpose";
  wk_metrics_registry* metrics = nullptr;
  ASSERT_OK(wk_metrics_registry_new(&metrics));
  wk_coord_decision d{};

  wk_ledger* l = nullptr;
  ASSERT_OK(wk_ledger_new(metrics, WK_LEDGER_KIND_PENDING, 4, 0, &l));
  wk_ledger* l2 = nullptr;
  ASSERT_OK(wk_ledger_clone(l, &l2));
  wk_ledger_free(l);
  ASSERT_OK(wk_ledger_insert(l2, kK, 1, 1, 0, 10, 0, &d)) << "a clone keeps the ledger alive";
  wk_ledger_free(l2);
  d.result = WK_COORD_RESULT_MISMATCH;
  const wk_status freed_insert = wk_ledger_insert(l2, kN, 1, 1, 0, 10, 0, &d);
  wk_ledger_record rec{};
  rec.id = 99;
  const wk_status freed_get = wk_ledger_get(l2, kK, 1, &rec, sizeof rec);
  const size_t freed_len = wk_ledger_len(l2);
  wk_ledger_free(l2);  // a second free is ignored
  EXPECT_STATUS(freed_insert, WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(freed_get, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(freed_len, 0u);
  EXPECT_EQ(d.result, WK_COORD_RESULT_MISMATCH);
  EXPECT_EQ(rec.id, 99u);

  wk_handoff_ledger* h = nullptr;
  ASSERT_OK(wk_handoff_ledger_new(metrics, 4, 0, &h));
  wk_handoff_ledger_free(h);
  wk_handoff_key k = raw_hkey("g", 1);
  const wk_status freed_claim = wk_handoff_ledger_claim(h, &k, 10, 0, &d);
  const size_t freed_hlen = wk_handoff_ledger_len(h);
  wk_handoff_ledger_free(h);  // ignored
  EXPECT_STATUS(freed_claim, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(freed_hlen, 0u);

  wk_anchor_table* t = nullptr;
  ASSERT_OK(wk_anchor_table_new(4, &t));
  ASSERT_OK(wk_anchor_table_insert(t, 1, 5));
  wk_anchor_table_free(t);
  uint64_t value = 0x1234;
  const wk_status freed_anchor = wk_anchor_table_get(t, 1, &value);
  const wk_status freed_insert_anchor = wk_anchor_table_insert(t, 2, 5);
  const size_t freed_tlen = wk_anchor_table_len(t);
  wk_anchor_table_free(t);  // ignored
  EXPECT_STATUS(freed_anchor, WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(freed_insert_anchor, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(freed_tlen, 0u);
  EXPECT_EQ(value, 0x1234u);
  wk_metrics_registry_free(metrics);
}

// --- What the C ABI promises beside the statuses ------------------------------------------------

// Every decision, page and fire a call writes has its reserved field 0, whatever the memory held.
TEST_F(CoordAbi, ReservedFieldsAreZero) {
  const uint8_t ab[2] = {'a', 'k'};
  const uint32_t ones[2] = {1, 1};
  ASSERT_OK(wk_ledger_claim(ledger_, kK, 1, 1, 2, 7, 1, &d_));
  EXPECT_EQ(d_.result, WK_COORD_RESULT_WON);
  EXPECT_EQ(d_.reserved, 0u);
  reset_outs();
  ASSERT_OK(wk_ledger_place(ledger_, ab, 2, ones, 2, 5, 10, 1, ds_, 2, &n_));
  EXPECT_EQ(n_, 1u);
  EXPECT_EQ(ds_[0].result, WK_COORD_RESULT_WON);
  EXPECT_EQ(ds_[1].result, WK_COORD_RESULT_LOST);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(ds_[i].reserved, 0u) << i;
  EXPECT_TRUE(same_bytes(ds_[2], filled<wk_coord_decision>(0xa5))) << "past decisions_len";
  reset_outs();
  ASSERT_OK(wk_ledger_finalize_batch(ledger_, ab, 2, ones, nullptr, 2, 300, 2, ds_, 2, &n_));
  EXPECT_EQ(n_, 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(ds_[i].reserved, 0u) << i;
    EXPECT_EQ(ds_[i].outcome, 300u) << i;
    EXPECT_EQ(ds_[i].state, WK_RECORD_STATE_FINALIZED) << i;
  }
  ASSERT_OK(wk_ledger_reconcile(ledger_, 100, 4, &page_));
  EXPECT_EQ(page_.reserved, 0u);
  EXPECT_EQ(page_.wrapped, 1u);
  ASSERT_OK(wk_anchor_table_try_fire(table_, 1, 1000, 10, &fire_));
  EXPECT_EQ(fire_.kind, WK_FIRE_KIND_FIRED);
  EXPECT_EQ(fire_.reserved, 0u);
  EXPECT_EQ(fire_.value, 100u);
  ASSERT_OK(wk_anchor_table_try_fire(table_, 1, 1001, 10, &fire_));
  EXPECT_EQ(fire_.kind, WK_FIRE_KIND_NOT_DUE);
  EXPECT_EQ(fire_.value, 1010u);
  ASSERT_OK(wk_anchor_table_try_fire(table_, 2, 1001, 10, &fire_));
  EXPECT_EQ(fire_.kind, WK_FIRE_KIND_ANCHORED_FIRST_SEEN);
  EXPECT_EQ(fire_.value, 0u);
}

// "Bytes of channel_id / tag_key past their length are ignored": two keys that differ only
// there (and in the reserved bytes) are one hand-off.
TEST_F(CoordAbi, HandoffKeyBytesPastTheLengthsAreIgnored) {
  wk_handoff_key noisy = hkey_;
  for (size_t i = noisy.channel_id_len; i < WK_HANDOFF_CHANNEL_ID_MAX; ++i) noisy.channel_id[i] = 0xee;
  for (size_t i = noisy.tag_key_len; i < WK_HANDOFF_TAG_KEY_MAX; ++i) noisy.tag_key[i] = 0xee;
  ASSERT_OK(wk_handoff_ledger_claim(handoff_, &noisy, 10, 1, &d_));
  EXPECT_EQ(d_.result, WK_COORD_RESULT_LOST) << "the same hand-off as the fixture's";
  EXPECT_EQ(wk_handoff_ledger_len(handoff_), 1u);
  ASSERT_OK(wk_handoff_ledger_get(handoff_, &noisy, &record_, sizeof record_));
  EXPECT_EQ(record_.state, WK_RECORD_STATE_PLACED);
  // One byte inside the length differs: another hand-off.
  wk_handoff_key other = hkey_;
  other.channel_id[0] = 'G';
  ASSERT_OK(wk_handoff_ledger_claim(handoff_, &other, 10, 1, &d_));
  EXPECT_EQ(d_.result, WK_COORD_RESULT_WON);
}

// Sequential cases of the anchor promises. They found a bug of the Rust side, since fixed (a
// transition that did not change the anchor was still a win):
//
// * wk_anchor_table_advance documents "*won_out is true for exactly one of many racing callers
//   with the same expected", but with next == expected the CAS (expected -> expected) succeeds
//   for every caller: all of them are told they won (core/src/coord/anchor.rs,
//   Anchor::advance -> transition(expected, next) with from == to).
// * wk_anchor_table_try_fire documents FIRED as "this call advanced the anchor from value to
//   now" (and the core: "of many callers racing on one due trigger exactly one gets Fired"),
//   but with period 0 and now equal to the anchor every call is due (now >= anchor + 0) and its
//   CAS (anchor -> now, the same value) succeeds: each caller at that instant fires.
//
// Now advance(x, x) is false, and a trigger is due at anchor + max(period, 1).
TEST_F(CoordAbi, AnchorAdvanceToTheSameValueWinsOnce) {
  bool first = false, second = false;
  ASSERT_OK(wk_anchor_table_advance(table_, 1, 100, 100, &first));
  ASSERT_OK(wk_anchor_table_advance(table_, 1, 100, 100, &second));
  EXPECT_FALSE(first && second) << "two callers with expected 100 both won";
  // Racing: N callers with the same expected, exactly one may win.
  constexpr size_t kThreads = 8;
  std::atomic<size_t> won{0};
  Barrier start(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.wait();
      bool w = false;
      if (wk_anchor_table_advance(table_, 1, 100, 100, &w) == WK_STATUS_OK && w) ++won;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(won.load(), 1u) << "callers racing with expected 100 that won";
}

TEST_F(CoordAbi, AnchorTryFireAtTheAnchorsOwnTimeFiresOnce) {
  wk_fire a{}, b{};
  ASSERT_OK(wk_anchor_table_try_fire(table_, 1, 100, 0, &a));
  ASSERT_OK(wk_anchor_table_try_fire(table_, 1, 100, 0, &b));
  EXPECT_FALSE(a.kind == WK_FIRE_KIND_FIRED && b.kind == WK_FIRE_KIND_FIRED)
      << "two callers at one instant both fired (period 0, anchor already at now)";
  // Two replicas with period 0 at one instant: at most one fires.
  wk_fire c{}, d{};
  ASSERT_OK(wk_anchor_table_try_fire(table_, 1, 200, 0, &c));
  ASSERT_OK(wk_anchor_table_try_fire(table_, 1, 200, 0, &d));
  EXPECT_EQ(int{c.kind == WK_FIRE_KIND_FIRED} + int{d.kind == WK_FIRE_KIND_FIRED}, 1);
}

// Found a bug of the Rust side, since fixed: wk_anchor_table_insert documents WK_STATUS_FULL as
// "capacity reached", but AnchorTable::insert reserved a place in its size count *before* it
// looked the id up, so an insert of an id that already exists held a place while it ran: a
// concurrent insert of a new id into a table that was not full was refused WK_STATUS_FULL. The
// place is now reserved inside the entry lock, once the id is known to be absent.
TEST(CoordRace, AnInsertOfAnExistingAnchorNeverMakesTheTableLookFull) {
  auto t = must(AnchorTable::create(2));
  ASSERT_OK(t.insert(1, 100));
  std::atomic<bool> stop{false};
  std::atomic<size_t> full{0}, inserted{0};
  Barrier start(2);
  std::thread duplicate([&, mine = must(t.clone())]() {
    start.wait();
    while (!stop.load()) {
      Status st = mine.insert(1, 5);
      if (st.code() != WK_STATUS_ALREADY_EXISTS) ADD_FAILURE() << "insert(1): " << st.code();
    }
  });
  std::thread fresh([&, mine = must(t.clone())]() {
    start.wait();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (full.load() == 0 && std::chrono::steady_clock::now() < until) {
      Status st = mine.insert(2, 5);
      if (st.code() == WK_STATUS_FULL) {
        ++full;
        continue;
      }
      EXPECT_OK(st);
      ++inserted;
      EXPECT_OK(mine.remove(2));
    }
    stop = true;
  });
  fresh.join();
  duplicate.join();
  EXPECT_EQ(full.load(), 0u) << "a table holding 1 anchor of 2 refused a new id as full (after "
                             << inserted.load() << " inserts that went in)";
}

// The ABI refuses what its docs refuse: a trigger's last run beyond its word, a hand-off key with
// a non-zero reserved field; neither writes anything.
TEST(CoordAbiDocs, RefusalsTheHeaderPromises) {
  wk_exclusive_trigger* t = nullptr;
  EXPECT_EQ(wk_exclusive_trigger_new(uint64_t{1} << 63, &t), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(wk_exclusive_trigger_new(UINT64_MAX, &t), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  ASSERT_EQ(wk_exclusive_trigger_new((uint64_t{1} << 63) - 1, &t), WK_STATUS_OK);
  wk_exclusive_trigger_free(t);

  wk_handoff_ledger* h = nullptr;
  ASSERT_EQ(wk_handoff_ledger_new(nullptr, 16, 10, &h), WK_STATUS_OK);
  wk_handoff_key key{};
  key.message_id = 1;
  key.target_node_id = 2;
  key.channel_type = 1;
  key.channel_id_len = 3;
  std::memcpy(key.channel_id, "abc", 3);
  key.reserved[2] = 7;
  wk_coord_decision d{};
  EXPECT_EQ(wk_handoff_ledger_claim(h, &key, 100, 0, &d), WK_STATUS_COORD_INVALID_KEY);
  EXPECT_EQ(wk_handoff_ledger_len(h), 0u);
  key.reserved[2] = 0;
  EXPECT_EQ(wk_handoff_ledger_claim(h, &key, 100, 0, &d), WK_STATUS_OK);
  EXPECT_EQ(wk_handoff_ledger_len(h), 1u);
  wk_handoff_ledger_free(h);
}
