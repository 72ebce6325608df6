// Every exported function with NULL and bad arguments, through the raw C ABI: the status is
// the documented one, out-parameters are untouched, and no state changes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "test_util.hpp"
#include "wkcore.h"

using namespace wktest;

namespace {

// A leader slot with limits 8/4, owned by the fixture.
class AbiArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    wk_slot_limits lim{8, 4};
    ASSERT_EQ(wk_slot_new(77, &lim, &slot_), WK_STATUS_OK);
    ASSERT_EQ(wk_slot_set_leader(slot_), WK_STATUS_OK);
    ASSERT_EQ(wk_admission_registry_new(&reg_), WK_STATUS_OK);
  }
  void TearDown() override {
    wk_admission_registry_free(reg_);
    wk_slot_free(slot_);
  }
  wk_slot_state state() const {
    wk_slot_state st{};
    EXPECT_EQ(wk_slot_state_get(slot_, &st), WK_STATUS_OK);
    return st;
  }
  wk_admission_counters counters() const {
    wk_admission_counters c{};
    EXPECT_EQ(wk_slot_counters(slot_, &c), WK_STATUS_OK);
    return c;
  }
  void expect_untouched() const {
    wk_slot_state st = state();
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.queued_background, 0u);
    EXPECT_EQ(st.leader, 1);
    EXPECT_EQ(st.closed, 0);
    EXPECT_EQ(st.fatal, 0);
    wk_admission_counters c = counters();
    wk_admission_counters zero{};
    EXPECT_EQ(std::memcmp(&c, &zero, sizeof c), 0);
  }

  wk_slot* slot_ = nullptr;
  wk_admission_registry* reg_ = nullptr;
};

wk_slot* const kSentinelSlot = reinterpret_cast<wk_slot*>(uintptr_t{0x10});

}  // namespace

TEST(AbiVersion, VersionAndGuard) {
  wk_abi_v1();
  EXPECT_EQ(wk_abi_version(), static_cast<uint32_t>(WK_ABI_VERSION));
  EXPECT_EQ(wkcore::abi_version(), 1u);
  EXPECT_EQ(WK_VERSION_NUMBER,
            (WK_VERSION_MAJOR << 16) | (WK_VERSION_MINOR << 8) | WK_VERSION_PATCH);
  std::string v = WK_VERSION;
  EXPECT_EQ(v.rfind(std::to_string(WK_VERSION_MAJOR) + "." + std::to_string(WK_VERSION_MINOR) +
                        "." + std::to_string(WK_VERSION_PATCH),
                    0),
            0u);
}

TEST(AbiStatus, StringsNeverNull) {
  for (uint32_t s = 0; s <= 12; ++s) {
    const char* text = wk_status_str(static_cast<wk_status>(s));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "unknown status") << s;
  }
  EXPECT_STREQ(wk_status_str(WK_STATUS_OK), "ok");
  EXPECT_STREQ(wk_status_str(WK_STATUS_BUSY), "multiraft: slot busy");
  EXPECT_STREQ(wk_status_str(WK_STATUS_NOT_LEADER), "multiraft: not leader");
  EXPECT_STREQ(wk_status_str(static_cast<wk_status>(13)), "unknown status");
  EXPECT_STREQ(wk_status_str(static_cast<wk_status>(0xffffffffu)), "unknown status");
  EXPECT_EQ(WK_STATUS_ALREADY_EXISTS, 12);
  EXPECT_EQ(sizeof(wk_item), 16u);
  EXPECT_EQ(sizeof(wk_slot_state), 16u);
  EXPECT_EQ(sizeof(wk_status), 4u);
}

TEST(AbiSlotNew, NullAndBadLimits) {
  wk_slot_limits lim{0, 0};
  wk_slot* out = kSentinelSlot;
  EXPECT_EQ(wk_slot_new(1, nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_EQ(wk_slot_new(1, &lim, nullptr), WK_STATUS_NULL_ARGUMENT);
  wk_slot_limits too_big{(1u << 24) + 1, 0};
  EXPECT_EQ(wk_slot_new(1, &too_big, &out), WK_STATUS_INVALID_ARGUMENT);
  wk_slot_limits too_big_bg{16, 0xffffffffu};
  EXPECT_EQ(wk_slot_new(1, &too_big_bg, &out), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
}

TEST_F(AbiArgs, NullSlotEverywhere) {
  const wk_slot* null = nullptr;
  wk_slot* out = kSentinelSlot;
  uint64_t tokens[2] = {1, 2};
  wk_batch_result br{123, WK_STATUS_PANIC};
  wk_item items[4];
  size_t n = 555;
  wk_slot_state st{};
  st.queued = 999;
  wk_admission_counters c{};
  c.foreground_ok = 999;
  uint64_t id = 999;

  EXPECT_EQ(wk_slot_clone(null, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_EQ(wk_slot_admit(null, kPropose, kFg, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_admit_batch(null, kPropose, kFg, tokens, 2, &br), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(br.admitted, 123u);
  EXPECT_EQ(wk_slot_drain(null, items, 4, &n), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(n, 555u);
  EXPECT_EQ(wk_slot_set_leader(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_demote(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_close(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_fail(null, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_config_change_resolved(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_state_get(null, &st), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(st.queued, 999u);
  EXPECT_EQ(wk_slot_counters(null, &c), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(c.foreground_ok, 999u);
  EXPECT_EQ(wk_slot_id(null, &id), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(id, 999u);
  wk_slot_free(nullptr);  // no-op
  expect_untouched();
}

TEST_F(AbiArgs, NullOutParams) {
  uint64_t tokens[3] = {1, 2, 3};
  wk_item items[4];
  size_t n = 555;
  EXPECT_EQ(wk_slot_clone(slot_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_admit_batch(slot_, kPropose, kBg, tokens, 3, nullptr),
            WK_STATUS_NULL_ARGUMENT);
  wk_batch_result br{123, WK_STATUS_PANIC};
  EXPECT_EQ(wk_slot_admit_batch(slot_, kPropose, kBg, nullptr, 3, &br), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(br.admitted, 123u);
  EXPECT_EQ(br.refused, WK_STATUS_PANIC);
  expect_untouched();

  ASSERT_EQ(wk_slot_admit(slot_, kPropose, kFg, 9), WK_STATUS_OK);
  EXPECT_EQ(wk_slot_drain(slot_, nullptr, 4, &n), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_drain(slot_, items, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(n, 555u);
  EXPECT_EQ(state().queued, 1u) << "a refused drain takes nothing";
  EXPECT_EQ(wk_slot_state_get(slot_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_counters(slot_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_slot_id(slot_, nullptr), WK_STATUS_NULL_ARGUMENT);
}

TEST_F(AbiArgs, UnknownKindsAndBadLengths) {
  uint64_t tokens[3] = {1, 2, 3};
  wk_batch_result br{123, WK_STATUS_PANIC};
  for (uint32_t kind : {0u, 8u, 100u, 0xffffffffu}) {
    EXPECT_EQ(wk_slot_admit(slot_, kind, kFg, 1), WK_STATUS_INVALID_ARGUMENT) << kind;
    EXPECT_EQ(wk_slot_admit(slot_, kind, kBg, 1), WK_STATUS_INVALID_ARGUMENT) << kind;
    EXPECT_EQ(wk_slot_admit_batch(slot_, kind, kFg, tokens, 3, &br), WK_STATUS_INVALID_ARGUMENT);
  }
  EXPECT_EQ(wk_slot_admit_batch(slot_, kPropose, kFg, tokens, 0, &br), WK_STATUS_INVALID_ARGUMENT);
  // Oversized n is refused before anything is read (the array holds only 3).
  EXPECT_EQ(wk_slot_admit_batch(slot_, kPropose, kFg, tokens, (size_t{1} << 24) + 1, &br),
            WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(wk_slot_admit_batch(slot_, kPropose, kFg, tokens, SIZE_MAX, &br),
            WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(br.admitted, 123u);
  EXPECT_EQ(br.refused, WK_STATUS_PANIC);
  wk_item items[1];
  size_t n = 555;
  EXPECT_EQ(wk_slot_drain(slot_, items, 0, &n), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(n, 555u);
  expect_untouched();
}

TEST_F(AbiArgs, UnknownClassIsForeground) {
  EXPECT_EQ(wk_slot_admit(slot_, kPropose, 2, 1), WK_STATUS_OK);
  EXPECT_EQ(wk_slot_admit(slot_, kPropose, 0xffffffffu, 2), WK_STATUS_OK);
  uint64_t tokens[2] = {3, 4};
  wk_batch_result br{};
  EXPECT_EQ(wk_slot_admit_batch(slot_, kPropose, 7, tokens, 2, &br), WK_STATUS_OK);
  EXPECT_EQ(br.admitted, 2u);
  wk_admission_counters c = counters();
  EXPECT_EQ(c.foreground_ok, 4u);
  EXPECT_EQ(c.background_ok, 0u);
  wk_item items[8];
  size_t n = 0;
  ASSERT_EQ(wk_slot_drain(slot_, items, 8, &n), WK_STATUS_OK);
  ASSERT_EQ(n, 4u);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(items[i].proposal_class, WK_PROPOSAL_CLASS_FOREGROUND);
    for (uint8_t r : items[i].reserved) EXPECT_EQ(r, 0);
  }
}

TEST_F(AbiArgs, MisalignedPointers) {
  alignas(16) unsigned char raw[64] = {};
  auto* state = reinterpret_cast<wk_slot_state*>(raw + 1);
  EXPECT_EQ(wk_slot_state_get(slot_, state), WK_STATUS_INVALID_ARGUMENT);
  auto* handle = reinterpret_cast<const wk_slot*>(reinterpret_cast<const unsigned char*>(slot_) + 1);
  EXPECT_EQ(wk_slot_admit(handle, kPropose, kFg, 1), WK_STATUS_INVALID_ARGUMENT);
  expect_untouched();
}

TEST_F(AbiArgs, WrongHandleTypeIsDetected) {
  // Best-effort detector: a registry passed as a slot fails the magic-word check.
  auto* as_slot = reinterpret_cast<wk_slot*>(reg_);
  EXPECT_EQ(wk_slot_admit(as_slot, kPropose, kFg, 1), WK_STATUS_INVALID_ARGUMENT);
  wk_slot_free(as_slot);  // ignored: not a live slot
  auto* as_reg = reinterpret_cast<wk_admission_registry*>(slot_);
  EXPECT_EQ(wk_admission_registry_remove(as_reg, 1), WK_STATUS_INVALID_ARGUMENT);
  expect_untouched();
}

TEST_F(AbiArgs, RegistryNullAndBad) {
  wk_admission_registry* out = nullptr;
  wk_slot* s = kSentinelSlot;
  EXPECT_EQ(wk_admission_registry_new(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_clone(nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_clone(reg_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(wk_admission_registry_insert(nullptr, slot_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_insert(reg_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_get(nullptr, 77, &s), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_get(reg_, 77, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_get(reg_, 77, &s), WK_STATUS_NOT_FOUND);
  EXPECT_EQ(s, kSentinelSlot);
  EXPECT_EQ(wk_admission_registry_remove(nullptr, 77), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_admission_registry_remove(reg_, 77), WK_STATUS_NOT_FOUND);
  wk_admission_registry_free(nullptr);  // no-op

  ASSERT_EQ(wk_admission_registry_insert(reg_, slot_), WK_STATUS_OK);
  EXPECT_EQ(wk_admission_registry_insert(reg_, slot_), WK_STATUS_ALREADY_EXISTS);
  ASSERT_EQ(wk_admission_registry_get(reg_, 77, &s), WK_STATUS_OK);
  uint64_t id = 0;
  EXPECT_EQ(wk_slot_id(s, &id), WK_STATUS_OK);
  EXPECT_EQ(id, 77u);
  wk_slot_free(s);
  EXPECT_EQ(wk_admission_registry_remove(reg_, 77), WK_STATUS_OK);
  EXPECT_EQ(wk_admission_registry_remove(reg_, 77), WK_STATUS_NOT_FOUND);
}

TEST(AbiMetrics, NullAndBad) {
  wk_metrics_snapshot snap{};
  size_t len = 0;
  EXPECT_EQ(wk_metrics_snapshot_get(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_metrics_snapshot_get(&snap), WK_STATUS_OK);
  EXPECT_EQ(snap.version, static_cast<uint32_t>(WK_METRICS_SNAPSHOT_VERSION));
  EXPECT_EQ(wk_metrics_render(nullptr, 0, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_metrics_render(nullptr, 16, &len), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(len, 0u);
}
