// Hosted slots from C++: the words a host runs inline, read back through the library.

#include <gtest/gtest.h>

#include <cstdint>

#include "test_util.hpp"
#include "wkcore.h"

namespace {

wk_slot* const kSentinelSlot = reinterpret_cast<wk_slot*>(uintptr_t{0x10});

uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// The host's admission of one foreground proposal, as docs/ABI.md describes it.
bool host_admit(const wk_slot_words& w) {
  uint64_t cur = load(w.state);
  for (;;) {
    if ((cur & WK_SLOT_WORD_LEADER) == 0 || (cur & (WK_SLOT_WORD_CLOSED | WK_SLOT_WORD_FATAL)) != 0)
      return false;
    uint64_t queued = (cur - load(w.released_view)) & WK_SLOT_WORD_COUNT_MASK;
    if (queued >= w.max_queued_controls) {
      uint64_t released = load(w.released);
      uint64_t view = load(w.released_view);
      while (view < released &&
             !__atomic_compare_exchange_n(w.released_view, &view, released, false, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE)) {
      }
      if (((cur - load(w.released_view)) & WK_SLOT_WORD_COUNT_MASK) >= w.max_queued_controls) {
        __atomic_fetch_add(&w.outcomes[1], 1, __ATOMIC_RELAXED);  // foreground busy
        return false;
      }
      continue;
    }
    uint64_t next = (cur & ~uint64_t{WK_SLOT_WORD_COUNT_MASK}) | ((cur + 1) & WK_SLOT_WORD_COUNT_MASK);
    if (__atomic_compare_exchange_n(w.state, &cur, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return true;
  }
}

}  // namespace

TEST(HostedSlot, TheLibraryReadsWhatTheHostWrites) {
  wk_slot_limits lim{2, 1};
  wk_slot_words w{};
  wk_slot* slot = nullptr;
  ASSERT_STATUS(wk_slot_new_hosted(nullptr, 5, &lim, &w, &slot), WK_STATUS_OK);
  EXPECT_EQ(w.layout_version, static_cast<uint32_t>(WK_SLOT_WORDS_LAYOUT_VERSION));
  EXPECT_EQ(w.max_queued_controls, 2u);
  for (const uint64_t* p : {w.state, w.released_view, w.released_background_view, w.released,
                            w.released_background, w.released_other, w.admitted_other,
                            w.committed_other, w.config_serial, w.fatal_code, w.outcomes}) {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 8, 0u);
  }
  EXPECT_FALSE(host_admit(w)) << "a follower";
  ASSERT_STATUS(wk_slot_set_leader(slot), WK_STATUS_OK);
  EXPECT_TRUE(host_admit(w));
  EXPECT_TRUE(host_admit(w));
  EXPECT_FALSE(host_admit(w)) << "full";
  wk_slot_state st{};
  ASSERT_STATUS(wk_slot_state_get(slot, &st, sizeof st), WK_STATUS_OK);
  EXPECT_EQ(st.queued, 2u);
  EXPECT_EQ(st.queued_proposals, 2u);
  // The host's consumer takes both.
  __atomic_store_n(w.released, 2, __ATOMIC_RELEASE);
  EXPECT_TRUE(host_admit(w)) << "room after the take, through a view refresh";
  wk_admission_counters c{};
  ASSERT_STATUS(wk_slot_counters_get(slot, &c, sizeof c), WK_STATUS_OK);
  EXPECT_EQ(c.foreground_ok, 3u);
  EXPECT_EQ(c.foreground_busy, 1u);
  // The library's ring calls refuse a hosted slot and change nothing.
  uint64_t before = load(w.state);
  wk_admission adm{};
  EXPECT_STATUS(wk_slot_admit(slot, WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, 1, &adm),
                WK_STATUS_INVALID_ARGUMENT);
  wk_drain_result res{};
  EXPECT_STATUS(wk_slot_take(slot, 4, &res), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(load(w.state), before);
  // The host's bits survive the library's flag calls.
  __atomic_fetch_or(w.state, uint64_t{1} << WK_SLOT_WORD_HOST_SHIFT, __ATOMIC_ACQ_REL);
  ASSERT_STATUS(wk_slot_demote(slot), WK_STATUS_OK);
  EXPECT_NE(load(w.state) & (uint64_t{1} << WK_SLOT_WORD_HOST_SHIFT), 0u);
  wk_slot_free(slot);
}

TEST(HostedSlot, BadArgumentsWriteNothing) {
  wk_slot_limits lim{8, 4};
  wk_slot_limits too_big{(1u << 25) + 1, 0};
  wk_slot_words w{};
  wk_slot* out = kSentinelSlot;
  EXPECT_STATUS(wk_slot_new_hosted(nullptr, 1, &too_big, &w, &out), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_new_hosted(nullptr, 1, nullptr, &w, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_new_hosted(nullptr, 1, &lim, nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_new_hosted(nullptr, 1, &lim, &w, nullptr), WK_STATUS_NULL_ARGUMENT);
  alignas(16) unsigned char raw[128] = {};
  EXPECT_STATUS(wk_slot_new_hosted(nullptr, 1, &lim, reinterpret_cast<wk_slot_words*>(raw + 1), &out),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_EQ(w.state, nullptr);
}
