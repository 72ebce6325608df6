// The C++ layer itself: Status, Result, the Handle template (ownership, clone, move, adopt,
// release, empty objects), the admission registry, and the README's snippet.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::Result;
using wkcore::Status;

// --- Compile-time properties ------------------------------------------------------------------

template <typename H>
constexpr bool is_move_only_handle =
    !std::is_copy_constructible<H>::value && !std::is_copy_assignable<H>::value &&
    std::is_nothrow_move_constructible<H>::value && std::is_nothrow_move_assignable<H>::value &&
    std::is_nothrow_default_constructible<H>::value;
static_assert(is_move_only_handle<wkcore::Slot>, "");
static_assert(is_move_only_handle<wkcore::AdmissionRegistry>, "");
static_assert(is_move_only_handle<wkcore::MetricsRegistry>, "");
static_assert(is_move_only_handle<wkcore::MetricsSnapshot>, "");

// All four build on the one template.
static_assert(std::is_base_of<wkcore::Handle<wkcore::Slot, wk_slot, &wk_slot_free, &wk_slot_clone>,
                              wkcore::Slot>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<wkcore::AdmissionRegistry, wk_admission_registry,
                                             &wk_admission_registry_free,
                                             &wk_admission_registry_clone>,
                              wkcore::AdmissionRegistry>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<wkcore::MetricsRegistry, wk_metrics_registry,
                                             &wk_metrics_registry_free, &wk_metrics_registry_clone>,
                              wkcore::MetricsRegistry>::value,
              "");
static_assert(std::is_base_of<wkcore::Handle<wkcore::MetricsSnapshot, wk_metrics_snapshot,
                                             &wk_metrics_snapshot_free, &wk_metrics_snapshot_clone>,
                              wkcore::MetricsSnapshot>::value,
              "");
static_assert(wkcore::Slot::clonable && wkcore::MetricsRegistry::clonable &&
                  wkcore::AdmissionRegistry::clonable && wkcore::MetricsSnapshot::clonable,
              "every handle type can be cloned");
static_assert(sizeof(wkcore::Slot) == sizeof(wk_slot*), "a handle is one pointer");

// Typed signatures.
static_assert(std::is_same<decltype(&wkcore::Slot::admit),
                           Result<wkcore::Admission> (wkcore::Slot::*)(
                               wk_control_kind, wk_proposal_class, uint64_t) const noexcept>::value,
              "");
static_assert(std::is_same<decltype(&wkcore::Slot::take),
                           Result<wkcore::Drained> (wkcore::Slot::*)(size_t) const noexcept>::value,
              "");
static_assert(std::is_same<decltype(&wkcore::Slot::resolve),
                           Status (wkcore::Slot::*)(wkcore::ConfigChange) const noexcept>::value,
              "");
// A Result stands for its Status where one is expected; a ticket is no integer.
static_assert(std::is_convertible<Result<wkcore::Admission>, Status>::value, "");
static_assert(!std::is_convertible<uint64_t, wkcore::ConfigChange>::value, "");
static_assert(!std::is_convertible<wkcore::ConfigChange, uint64_t>::value, "");
static_assert(!std::is_convertible<uint32_t, wk_control_kind>::value, "");
static_assert(!std::is_convertible<uint32_t, wk_proposal_class>::value, "");
static_assert(std::is_same<decltype(std::declval<Status>().code()), wk_status>::value, "");

// Result does not need a default-constructible T.
struct NoDefault {
  NoDefault() = delete;
  explicit NoDefault(int v) : value(v) {}
  int value;
};
static_assert(!std::is_default_constructible<NoDefault>::value, "");
static_assert(std::is_constructible<Result<NoDefault>, Status>::value, "");
static_assert(std::is_constructible<Result<NoDefault>, NoDefault>::value, "");
static_assert(!std::is_copy_constructible<Result<wkcore::Slot>>::value, "");
static_assert(!std::is_constructible<Result<wkcore::Slot>, const wkcore::Slot&>::value, "");
static_assert(std::is_nothrow_move_constructible<Result<wkcore::Slot>>::value, "");

namespace {

// Counts live instances, to see that an error Result constructs no value.
struct Counted {
  static int live;
  static int constructed;
  explicit Counted(int) {
    ++live;
    ++constructed;
  }
  Counted(const Counted&) {
    ++live;
    ++constructed;
  }
  Counted(Counted&&) noexcept {
    ++live;
    ++constructed;
  }
  ~Counted() { --live; }
};
int Counted::live = 0;
int Counted::constructed = 0;

}  // namespace

// --- Status and Result ------------------------------------------------------------------------

TEST(Result, ErrorConstructsNoValue) {
  Counted::constructed = 0;
  {
    Result<Counted> error(Status(WK_STATUS_SLOT_NOT_FOUND));
    EXPECT_FALSE(error.ok());
    EXPECT_FALSE(static_cast<bool>(error));
    EXPECT_STATUS(error.status(), WK_STATUS_SLOT_NOT_FOUND);
    EXPECT_EQ(Counted::constructed, 0);
    Result<Counted> copy = error;
    EXPECT_FALSE(copy.ok());
    EXPECT_EQ(Counted::constructed, 0);
  }
  {
    Result<Counted> ok(Counted(1));
    EXPECT_TRUE(ok.ok());
    EXPECT_STATUS(ok.status(), WK_STATUS_OK);
    EXPECT_EQ(Counted::live, 1);
    Result<Counted> moved = std::move(ok);
    EXPECT_TRUE(moved.ok());
  }
  EXPECT_EQ(Counted::live, 0);
}

TEST(Result, NonDefaultConstructibleValue) {
  Result<NoDefault> error = Status(WK_STATUS_INVALID_ARGUMENT);
  EXPECT_FALSE(error.ok());
  Result<NoDefault> ok = NoDefault(7);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->value, 7);
  EXPECT_EQ((*ok).value, 7);
  EXPECT_EQ(std::move(ok).value().value, 7);
}

TEST(Result, ValueOfAnErrorIsAPreconditionViolation) {
#ifdef NDEBUG
  GTEST_SKIP() << "asserts are compiled out (NDEBUG)";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> error = Status(WK_STATUS_NOT_FOUND);
  EXPECT_DEATH((void)error.value(), "error result");
  EXPECT_DEATH(Result<int> bad = Status(WK_STATUS_OK); (void)bad, "needs a value");
#endif
}

TEST(Raii, StatusHelpers) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(static_cast<bool>(ok));
  EXPECT_STREQ(ok.str(), "ok");
  EXPECT_EQ(ok.code(), static_cast<wk_status>(WK_STATUS_OK));
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_BUSY).is_backpressure());
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_THROTTLED).is_backpressure());
  EXPECT_FALSE(Status(WK_STATUS_SLOT_BUSY).is_backpressure());
  EXPECT_FALSE(Status(WK_STATUS_NOT_LEADER).is_backpressure());
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_BUSY).is(WK_STATUS_SLOT_BUSY));
  EXPECT_TRUE(Status(WK_STATUS_SLOT_CLOSED).is(WK_STATUS_SLOT_CLOSED));
  EXPECT_FALSE(Status(WK_STATUS_SLOT_CLOSED).ok());
  EXPECT_STREQ(Status(WK_STATUS_SLOT_BUSY).str(), wk_status_str(WK_STATUS_SLOT_BUSY));
  EXPECT_TRUE(Status(WK_STATUS_SLOT_BUSY) != Status(WK_STATUS_PROPOSAL_BUSY));
  constexpr Status kConst(WK_STATUS_SLOT_BUSY);
  static_assert(!kConst.ok() && kConst.code() == WK_STATUS_SLOT_BUSY, "constexpr");
}

// --- Handles ----------------------------------------------------------------------------------

TEST(Raii, CreateReportsBadLimits) {
  auto r = wkcore::Slot::create(1, wkcore::limits((1u << 25) + 1));
  EXPECT_FALSE(r.ok());
  EXPECT_STATUS(r.status(), WK_STATUS_INVALID_ARGUMENT);
  auto bg = wkcore::Slot::create(3, wkcore::limits(0, 0xffffffffu));
  EXPECT_STATUS(bg.status(), WK_STATUS_INVALID_ARGUMENT);
}

TEST(Raii, CloneSharesTheSlot) {
  auto a = make_slot(10, 8, 0);
  auto b = a.clone();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->c_ptr(), a.c_ptr()) << "Arc clone: same object";
  EXPECT_OK(b->set_leader());
  EXPECT_EQ(a.state()->leader, 1);
  EXPECT_EQ(b->id(), 10u);
  { wkcore::Slot dropped = std::move(b).value(); }
  EXPECT_OK(a.admit(kPropose, kFg, 1)) << "a's reference is still alive";
}

TEST(Raii, MovedFromIsEmptyAndSafe) {
  auto a = make_slot(11, 8, 0, true);
  wkcore::Slot b = std::move(a);
  EXPECT_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): documented behaviour
  EXPECT_STATUS(a.admit(kPropose, kFg, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.state().status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.counters().status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(a.clone().status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(a.id(), 0u);
  EXPECT_OK(b.admit(kPropose, kFg, 1));
  wkcore::Slot empty;
  std::vector<wk_item> items(3);
  EXPECT_STATUS(empty.drain(items, 4), WK_STATUS_NULL_ARGUMENT);
  EXPECT_TRUE(items.empty());
  EXPECT_STATUS(empty.admit_batch(kPropose, kFg, {1, 2}), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.admit_batch(kPropose, kFg, 2), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.take(1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.set_leader(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.demote(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.close(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.fail(1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.resolve(wkcore::ConfigChange(1)), WK_STATUS_NULL_ARGUMENT);
}

TEST(Raii, MoveAssignDropsTheOldReference) {
  auto a = make_slot(13, 8, 0);
  auto b = make_slot(14, 8, 0);
  a = std::move(b);  // the slot 13 reference is freed (leak checkers see it otherwise)
  EXPECT_EQ(a.id(), 14u);
  EXPECT_FALSE(static_cast<bool>(b));  // NOLINT(bugprone-use-after-move)
  wkcore::Slot& self = a;
  a = std::move(self);  // self-move keeps the reference
  EXPECT_EQ(a.id(), 14u);
  a.reset();
  EXPECT_FALSE(static_cast<bool>(a));
  a.reset();  // reset of an empty handle is a no-op
}

TEST(Raii, ReleaseAndAdopt) {
  auto a = make_slot(12);
  wk_slot* raw = a.release();
  EXPECT_FALSE(static_cast<bool>(a));
  EXPECT_EQ(wk_slot_id_get(raw), 12u);
  wkcore::Slot back = wkcore::Slot::adopt(raw);
  EXPECT_EQ(back.c_ptr(), raw);
  EXPECT_EQ(back.id(), 12u);
  wkcore::Slot none = wkcore::Slot::adopt(nullptr);
  EXPECT_FALSE(static_cast<bool>(none));
}

TEST(Raii, SlotDrainVectorRefusesZero) {
  auto s = make_slot(15, 8, 0, true);
  ASSERT_OK(s.admit(kPropose, kFg, 1));
  std::vector<wk_item> items(2);
  EXPECT_STATUS(s.drain(items, 0), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(s.state()->queued, 1u);
}

// The last C++ owner frees the slot; a clone keeps it alive. Observed through the library's
// use-after-free detector, so skipped where reading freed memory is reported.
TEST(Raii, LastOwnerFreesTheSlot) {
  if (freed_memory_is_checked()) GTEST_SKIP() << "reads freed memory on purpose";
  wk_slot* raw = nullptr;
  {
    auto a = make_slot(16, 4, 0);
    raw = a.c_ptr();
    {
      auto b = a.clone();
      ASSERT_TRUE(b.ok());
      a.reset();
      wk_admission a{};
      ASSERT_OK(wk_slot_admit(raw, kTransferLeader, kFg, 1, &a)) << "the clone keeps it alive";
    }
  }
  wk_admission a{};
  wk_status after = wk_slot_admit(raw, kTransferLeader, kFg, 2, &a);
  EXPECT_STATUS(after, WK_STATUS_INVALID_HANDLE);
}

// --- Generation 3 through the C++ layer ----------------------------------------------------

TEST(Slot, AdmissionsReportPositionsAndTickets) {
  auto s = make_slot(30, 4, 2, true);
  auto a = s.admit(kPropose, kFg, 1);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->position, 0u);
  EXPECT_FALSE(a->config_change) << "only a config change has a ticket";
  auto b = s.admit_batch(kPropose, kBg, std::vector<uint64_t>{2, 3, 4});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->admitted, 2u);
  EXPECT_STATUS(b->refused, WK_STATUS_PROPOSAL_THROTTLED);
  EXPECT_EQ(b->first_position, 1u);
  auto c = s.admit_batch(kTransferLeader, kFg, 5);  // no tokens
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->admitted, 1u);
  EXPECT_STATUS(c->refused, WK_STATUS_SLOT_BUSY);
  EXPECT_EQ(c->first_position, 3u);
  EXPECT_STATUS(s.admit_batch(kPropose, kFg, std::vector<uint64_t>{}), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(s.admit_batch(kPropose, kFg, 0), WK_STATUS_INVALID_ARGUMENT);
  auto st = s.state();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->queued, 4u);
  EXPECT_EQ(st->queued_proposals, 3u);
  EXPECT_GT(st->memory_bytes, 0u);

  std::vector<wk_item> items;
  auto d = s.drain(items, 2);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->count, 2u);
  EXPECT_EQ(d->first_position, 0u);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].token, 2u);
  auto t = s.take(10);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->count, 2u);
  EXPECT_EQ(t->first_position, 2u);
  EXPECT_STATUS(s.take(0), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(s.state()->queued_proposals, 0u);
}

TEST(Slot, ConfigChangeTicketsResolveOnce) {
  auto s = make_slot(31, 8, 0, true);
  auto a = s.admit(kConfigChange, kFg, 1);
  ASSERT_TRUE(a.ok());
  wkcore::ConfigChange first = a->config_change;
  ASSERT_TRUE(first);
  EXPECT_EQ(first.ticket() % 2, 1u);
  EXPECT_STATUS(s.admit(kConfigChange, kFg, 2), WK_STATUS_CONFIG_CHANGE_PENDING);
  EXPECT_STATUS(s.resolve(wkcore::ConfigChange()), WK_STATUS_CONFIG_CHANGE_STALE);
  EXPECT_OK(first.resolve(s));
  EXPECT_STATUS(s.resolve(first), WK_STATUS_CONFIG_CHANGE_STALE) << "a second resolve";
  auto b = s.admit_batch(kConfigChange, kFg, std::vector<uint64_t>{3, 4});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->admitted, 1u);
  ASSERT_TRUE(b->config_change);
  EXPECT_NE(b->config_change, first);
  EXPECT_STATUS(s.resolve(first), WK_STATUS_CONFIG_CHANGE_STALE);
  EXPECT_EQ(s.state()->config_change_pending, 1) << "the stale resolve cleared nothing";
  EXPECT_OK(s.resolve(b->config_change));
  EXPECT_EQ(s.state()->config_change_pending, 0);
  EXPECT_STREQ(Status(WK_STATUS_CONFIG_CHANGE_STALE).str(),
               "wkcore: config change already resolved");
}

TEST(Raii, Registry) {
  auto reg = wkcore::AdmissionRegistry::create();
  ASSERT_TRUE(reg.ok());
  {
    auto s = make_slot(20, 8, 0);
    EXPECT_OK(reg->insert(s));
    EXPECT_STATUS(reg->insert(s), WK_STATUS_ALREADY_EXISTS);
  }  // the registry keeps the slot alive
  auto got = reg->get(20);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->id(), 20u);
  EXPECT_STATUS(reg->get(21).status(), WK_STATUS_SLOT_NOT_FOUND);
  auto reg2 = reg->clone();
  ASSERT_TRUE(reg2.ok());
  EXPECT_EQ(reg2->c_ptr(), reg->c_ptr());
  EXPECT_OK(reg2->remove(20));
  EXPECT_STATUS(reg->remove(20), WK_STATUS_SLOT_NOT_FOUND);
  EXPECT_OK(got->set_leader()) << "our handle outlives the registry entry";
  wkcore::AdmissionRegistry empty;
  EXPECT_STATUS(empty.remove(1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.get(1).status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.insert(*got), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(reg->insert(wkcore::Slot()), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(empty.clone().status(), WK_STATUS_NULL_ARGUMENT);
}

// The README's C++ snippet, verbatim between the markers (the README shows the same lines).
TEST(Readme, CppSnippetCompilesAndRuns) {
  const uint64_t token = 1;
  // --- README snippet begin ---
  auto created = wkcore::Slot::create(/*slot_id=*/7, wkcore::limits(8192, 4096));
  if (!created.ok()) { /* created.status().str() */ }
  wkcore::Slot slot = std::move(created).value();
  (void)slot.set_leader();
  wkcore::Status st = slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, token);
  if (st.is_backpressure()) { /* busy or throttled: back off */ }
  std::vector<wk_item> items;
  st = slot.drain(items, 256);                               // FIFO, in the slot's worker
  auto metrics = wkcore::MetricsRegistry::global();          // or ::create(), passed to create()
  auto families = metrics->snapshot();                       // every family; no names needed
  std::string text = wkcore::render_prometheus(*families);   // Prometheus text for /metrics
  // --- README snippet end ---
  EXPECT_OK(st);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].token, token);
  ASSERT_TRUE(metrics.ok());
  ASSERT_TRUE(families.ok());
  EXPECT_EQ(text, *metrics->render());
}
