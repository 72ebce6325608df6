// Shared helpers for the wkcore C++ tests.
#ifndef WKCORE_TEST_UTIL_HPP
#define WKCORE_TEST_UTIL_HPP

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

#include "wkcore.hpp"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define WK_HAVE_VALGRIND_H 1
#endif
#endif

namespace wkcore {
// gtest prints a Status as its code and text.
inline void PrintTo(const Status& status, std::ostream* os) {
  *os << status.code() << " (\"" << status.str() << "\")";
}
}  // namespace wkcore

// Compare a status (a wk_status or a wkcore::Status) with an expected code, printing both texts.
#define EXPECT_STATUS(expr, code) EXPECT_EQ(::wkcore::Status(expr), ::wkcore::Status(code))
#define ASSERT_STATUS(expr, code) ASSERT_EQ(::wkcore::Status(expr), ::wkcore::Status(code))
#define EXPECT_OK(expr) EXPECT_STATUS(expr, WK_STATUS_OK)
#define ASSERT_OK(expr) ASSERT_STATUS(expr, WK_STATUS_OK)

namespace wktest {

constexpr wk_control_kind kPropose = WK_CONTROL_KIND_PROPOSE;
constexpr wk_control_kind kConfigChange = WK_CONTROL_KIND_CONFIG_CHANGE;
constexpr wk_control_kind kTransferLeader = WK_CONTROL_KIND_TRANSFER_LEADER;
constexpr wk_proposal_class kFg = WK_PROPOSAL_CLASS_FOREGROUND;
constexpr wk_proposal_class kBg = WK_PROPOSAL_CLASS_BACKGROUND;

// True when the run would flag a deliberate read of freed memory (ASan, valgrind): tests of the
// library's best-effort use-after-free detector skip themselves there.
inline bool freed_memory_is_checked() {
#if defined(WK_SANITIZE) || defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(WK_HAVE_VALGRIND_H)
  return RUNNING_ON_VALGRIND != 0;
#else
  return false;
#endif
}

// True under valgrind, which runs threads one at a time: spinning concurrency tests skip there
// (the plain and ASan runs check them).
inline bool under_valgrind() {
#if defined(WK_HAVE_VALGRIND_H)
  return RUNNING_ON_VALGRIND != 0;
#else
  return false;
#endif
}

// A slot that must be created successfully (in `metrics`, or the process-wide registry).
inline wkcore::Slot make_slot(uint64_t id, uint32_t total = 0, uint32_t bg = 0,
                              bool leader = false,
                              const wkcore::MetricsRegistry* metrics = nullptr) {
  auto r = wkcore::Slot::create(id, wkcore::limits(total, bg), metrics);
  EXPECT_TRUE(r.ok()) << r.status().str();
  if (!r.ok()) return wkcore::Slot();
  wkcore::Slot s = std::move(r).value();
  if (leader) {
    EXPECT_OK(s.set_leader());
  }
  return s;
}

// An isolated metrics registry that must be created successfully.
inline wkcore::MetricsRegistry make_metrics() {
  auto r = wkcore::MetricsRegistry::create();
  EXPECT_TRUE(r.ok()) << r.status().str();
  if (!r.ok()) return wkcore::MetricsRegistry();
  return std::move(r).value();
}

inline std::vector<wk_item> drain_all(const wkcore::Slot& s, size_t cap = 64) {
  std::vector<wk_item> all, part;
  for (;;) {
    EXPECT_OK(s.drain(part, cap));
    if (part.empty()) return all;
    all.insert(all.end(), part.begin(), part.end());
  }
}

}  // namespace wktest

#endif  // WKCORE_TEST_UTIL_HPP
