// Shared helpers for the wkcore C++ tests.
#ifndef WKCORE_TEST_UTIL_HPP
#define WKCORE_TEST_UTIL_HPP

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "wkcore.hpp"

namespace wktest {

constexpr uint32_t kPropose = WK_CONTROL_KIND_PROPOSE;
constexpr uint32_t kConfigChange = WK_CONTROL_KIND_CONFIG_CHANGE;
constexpr uint32_t kTransferLeader = WK_CONTROL_KIND_TRANSFER_LEADER;
constexpr uint32_t kFg = WK_PROPOSAL_CLASS_FOREGROUND;
constexpr uint32_t kBg = WK_PROPOSAL_CLASS_BACKGROUND;

// A slot that must be created successfully.
inline wkcore::Slot make_slot(uint64_t id, uint32_t total = 0, uint32_t bg = 0,
                              bool leader = false) {
  auto r = wkcore::Slot::create(id, wkcore::limits(total, bg));
  EXPECT_TRUE(r.ok()) << r.status().str();
  wkcore::Slot s = std::move(r).value();
  if (leader) {
    EXPECT_TRUE(s.set_leader().ok());
  }
  return s;
}

inline std::vector<wk_item> drain_all(const wkcore::Slot& s, size_t cap = 64) {
  std::vector<wk_item> all, part;
  for (;;) {
    EXPECT_TRUE(s.drain(part, cap).ok());
    if (part.empty()) return all;
    all.insert(all.end(), part.begin(), part.end());
  }
}

}  // namespace wktest

#endif  // WKCORE_TEST_UTIL_HPP
