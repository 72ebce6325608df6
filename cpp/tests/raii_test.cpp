// The C++ layer itself: ownership, clone, move, empty objects, the registry.
#include <gtest/gtest.h>

#include <type_traits>
#include <utility>

#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;

static_assert(!std::is_copy_constructible<wkcore::Slot>::value, "Slot is move-only");
static_assert(std::is_nothrow_move_constructible<wkcore::Slot>::value, "");
static_assert(!std::is_copy_assignable<wkcore::AdmissionRegistry>::value, "");

TEST(Raii, CreateReportsBadLimits) {
  auto r = wkcore::Slot::create(1, wkcore::limits((1u << 24) + 1));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status(), wkcore::Status(WK_STATUS_INVALID_ARGUMENT));
  EXPECT_FALSE(static_cast<bool>(r.value()));
  wkcore::Slot out = make_slot(2);
  wk_slot* before = out.c_ptr();
  EXPECT_FALSE(wkcore::Slot::create(3, wkcore::limits(0, 0xffffffffu), out).ok());
  EXPECT_EQ(out.c_ptr(), before) << "out is left alone on failure";
}

TEST(Raii, CloneSharesTheSlot) {
  auto a = make_slot(10, 8, 0);
  auto b = a.clone();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->c_ptr(), a.c_ptr()) << "Arc clone: same object";
  EXPECT_TRUE(b->set_leader().ok());
  EXPECT_EQ(a.state()->leader, 1);
  EXPECT_EQ(*b->id(), 10u);
  { wkcore::Slot dropped = std::move(b).value(); }
  EXPECT_TRUE(a.admit(kPropose, kFg, 1).ok()) << "a's reference is still alive";
}

TEST(Raii, MovedFromIsEmptyAndSafe) {
  auto a = make_slot(11, 8, 0, true);
  wkcore::Slot b = std::move(a);
  EXPECT_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): documented behaviour
  EXPECT_EQ(a.admit(kPropose, kFg, 1), wkcore::Status(WK_STATUS_NULL_ARGUMENT));
  EXPECT_EQ(a.state().status(), wkcore::Status(WK_STATUS_NULL_ARGUMENT));
  EXPECT_FALSE(a.clone().ok());
  EXPECT_TRUE(b.admit(kPropose, kFg, 1).ok());
  wkcore::Slot empty;
  std::vector<wk_item> items;
  EXPECT_EQ(empty.drain(items, 4), wkcore::Status(WK_STATUS_NULL_ARGUMENT));
  EXPECT_TRUE(items.empty());
}

TEST(Raii, ReleaseAndAdopt) {
  auto a = make_slot(12);
  wk_slot* raw = a.release();
  EXPECT_FALSE(static_cast<bool>(a));
  wkcore::Slot back = wkcore::Slot::adopt(raw);
  EXPECT_EQ(*back.id(), 12u);
}

TEST(Raii, Registry) {
  auto reg = wkcore::AdmissionRegistry::create();
  ASSERT_TRUE(reg.ok());
  {
    auto s = make_slot(20, 8, 0);
    EXPECT_TRUE(reg->insert(s).ok());
    EXPECT_EQ(reg->insert(s), wkcore::Status(WK_STATUS_ALREADY_EXISTS));
  }  // the registry keeps the slot alive
  auto got = reg->get(20);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got->id(), 20u);
  EXPECT_EQ(reg->get(21).status(), wkcore::Status(WK_STATUS_NOT_FOUND));
  auto reg2 = reg->clone();
  ASSERT_TRUE(reg2.ok());
  EXPECT_EQ(reg2->c_ptr(), reg->c_ptr());
  EXPECT_TRUE(reg2->remove(20).ok());
  EXPECT_EQ(reg->remove(20), wkcore::Status(WK_STATUS_NOT_FOUND));
  EXPECT_TRUE(got->set_leader().ok()) << "our handle outlives the registry entry";
  wkcore::AdmissionRegistry empty;
  EXPECT_EQ(empty.remove(1), wkcore::Status(WK_STATUS_NULL_ARGUMENT));
}

TEST(Raii, StatusHelpers) {
  wkcore::Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(static_cast<bool>(ok));
  EXPECT_STREQ(ok.str(), "ok");
  EXPECT_TRUE(wkcore::Status(WK_STATUS_BUSY).is_backpressure());
  EXPECT_TRUE(wkcore::Status(WK_STATUS_THROTTLED).is_backpressure());
  EXPECT_FALSE(wkcore::Status(WK_STATUS_NOT_LEADER).is_backpressure());
  EXPECT_FALSE(wkcore::Status(WK_STATUS_CLOSED).ok());
}
