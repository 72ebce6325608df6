// Every exported function with NULL and bad arguments, through the raw C ABI: the status is
// the documented one, out-parameters are untouched, and no state changes.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "test_util.hpp"
#include "wkcore.h"

using namespace wktest;

namespace {

constexpr wk_control_kind kind_of(uint32_t raw) { return static_cast<wk_control_kind>(raw); }
constexpr wk_proposal_class class_of(uint32_t raw) { return static_cast<wk_proposal_class>(raw); }

// A leader slot with limits 8/4 counted in its own metrics registry, an admission registry, all
// owned by the fixture.
class AbiArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(wk_metrics_registry_new(&metrics_));
    wk_slot_limits lim{8, 4};
    ASSERT_OK(wk_slot_new(metrics_, 77, &lim, &slot_));
    ASSERT_OK(wk_slot_set_leader(slot_));
    ASSERT_OK(wk_admission_registry_new(&reg_));
  }
  void TearDown() override {
    wk_admission_registry_free(reg_);
    wk_slot_free(slot_);
    wk_metrics_registry_free(metrics_);
  }
  wk_slot_state state() const {
    wk_slot_state st{};
    EXPECT_OK(wk_slot_state_get(slot_, &st, sizeof st));
    return st;
  }
  wk_admission_counters counters() const {
    wk_admission_counters c{};
    EXPECT_OK(wk_slot_counters_get(slot_, &c, sizeof c));
    return c;
  }
  void expect_untouched() const {
    wk_slot_state st = state();
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.queued_background, 0u);
    EXPECT_EQ(st.leader, 1);
    EXPECT_EQ(st.closed, 0);
    EXPECT_EQ(st.fatal, 0);
    EXPECT_EQ(st.config_change_pending, 0);
    wk_admission_counters c = counters();
    wk_admission_counters zero{};
    EXPECT_EQ(std::memcmp(&c, &zero, sizeof c), 0);
  }

  wk_metrics_registry* metrics_ = nullptr;
  wk_slot* slot_ = nullptr;
  wk_admission_registry* reg_ = nullptr;
};

wk_slot* const kSentinelSlot = reinterpret_cast<wk_slot*>(uintptr_t{0x10});

// wk_slot_admit with an admission out-parameter of its own (the status is what is checked).
wk_status admit_raw(const wk_slot* slot, wk_control_kind kind, wk_proposal_class cls,
                    uint64_t token) {
  wk_admission a{};
  return wk_slot_admit(slot, kind, cls, token, &a);
}

// A batch result no call writes: every field a value the library never returns here.
wk_batch_result untouched_batch() { return wk_batch_result{123, WK_STATUS_PANIC, 456, 789}; }

void expect_batch_untouched(const wk_batch_result& br) {
  EXPECT_EQ(br.admitted, 123u);
  EXPECT_EQ(br.refused, WK_STATUS_PANIC);
  EXPECT_EQ(br.first_position, 456u);
  EXPECT_EQ(br.config_change, 789u);
}

}  // namespace

TEST(AbiVersion, VersionAndGuard) {
  wk_abi_v3();
  EXPECT_EQ(wk_abi_version(), static_cast<uint32_t>(WK_ABI_VERSION));
  EXPECT_EQ(wkcore::abi_version(), 3u);
  EXPECT_EQ(WK_SLOT_POSITION_MODULUS, uint64_t{1} << 27);
  EXPECT_EQ(wkcore::kPositionModulus, uint64_t{1} << 27);
  EXPECT_EQ(WK_VERSION_NUMBER,
            (WK_VERSION_MAJOR << 16) | (WK_VERSION_MINOR << 8) | WK_VERSION_PATCH);
  std::string v = WK_VERSION;
  EXPECT_EQ(v.rfind(std::to_string(WK_VERSION_MAJOR) + "." + std::to_string(WK_VERSION_MINOR) +
                        "." + std::to_string(WK_VERSION_PATCH),
                    0),
            0u);
}

TEST(AbiLayout, StructSizes) {
  EXPECT_EQ(sizeof(wk_status), 4u);
  EXPECT_EQ(sizeof(wk_control_kind), 4u);
  EXPECT_EQ(sizeof(wk_proposal_class), 4u);
  EXPECT_EQ(sizeof(wk_item), 16u);
  EXPECT_EQ(sizeof(wk_slot_limits), 8u);
  EXPECT_EQ(sizeof(wk_batch_result), 32u);
  EXPECT_EQ(sizeof(wk_admission), 16u);
  EXPECT_EQ(sizeof(wk_drain_result), 16u);
  EXPECT_EQ(sizeof(wk_slot_state), 32u);
  EXPECT_EQ(WK_SLOT_STATE_MIN_SIZE, 16u) << "the first release's size";
  EXPECT_EQ(offsetof(wk_slot_state, queued_proposals), 16u);
  EXPECT_EQ(offsetof(wk_slot_state, memory_bytes), 24u);
  EXPECT_EQ(sizeof(wk_admission_counters), 64u);
  EXPECT_EQ(sizeof(wk_str), 16u);
  EXPECT_EQ(sizeof(wk_metric_family), 64u);
  EXPECT_EQ(sizeof(wk_metric_series), 24u);
}

TEST(AbiStatus, StringsNeverNull) {
  for (uint32_t s = 0; s < 1000; ++s) ASSERT_NE(wk_status_str(s), nullptr) << s;
  EXPECT_STREQ(wk_status_str(0xffffffffu), "unknown status");
  EXPECT_TRUE(wk_status_is(0xffffffffu, 0xffffffffu));
  EXPECT_FALSE(wk_status_is(WK_STATUS_SLOT_BUSY, WK_STATUS_PROPOSAL_BUSY)) << "not symmetric";
}

TEST(AbiSlotNew, NullAndBadArguments) {
  wk_slot_limits lim{0, 0};
  wk_slot* out = kSentinelSlot;
  EXPECT_STATUS(wk_slot_new(nullptr, 1, nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_STATUS(wk_slot_new(nullptr, 1, &lim, nullptr), WK_STATUS_NULL_ARGUMENT);
  wk_slot_limits too_big{(1u << 25) + 1, 0};
  EXPECT_STATUS(wk_slot_new(nullptr, 1, &too_big, &out), WK_STATUS_INVALID_ARGUMENT);
  wk_slot_limits too_big_bg{16, 0xffffffffu};
  EXPECT_STATUS(wk_slot_new(nullptr, 1, &too_big_bg, &out), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
  // Misaligned limits and out pointers.
  alignas(16) unsigned char raw[64] = {};
  EXPECT_STATUS(wk_slot_new(nullptr, 1, reinterpret_cast<const wk_slot_limits*>(raw + 1), &out),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_new(nullptr, 1, &lim, reinterpret_cast<wk_slot**>(raw + 1)),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
}

TEST_F(AbiArgs, SlotNewWithABadMetricsHandle) {
  wk_slot_limits lim{0, 0};
  wk_slot* out = kSentinelSlot;
  // A slot passed as a metrics registry fails the magic-word check.
  EXPECT_STATUS(wk_slot_new(reinterpret_cast<const wk_metrics_registry*>(slot_), 1, &lim, &out),
                WK_STATUS_INVALID_HANDLE);
  auto* misaligned = reinterpret_cast<const wk_metrics_registry*>(
      reinterpret_cast<const unsigned char*>(metrics_) + 1);
  EXPECT_STATUS(wk_slot_new(misaligned, 1, &lim, &out), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(out, kSentinelSlot);
}

TEST_F(AbiArgs, NullSlotEverywhere) {
  const wk_slot* null = nullptr;
  wk_slot* out = kSentinelSlot;
  uint64_t tokens[2] = {1, 2};
  wk_batch_result br = untouched_batch();
  wk_item items[4];
  wk_drain_result dr{555, 666};
  wk_admission adm{555, 666};
  wk_slot_state st{};
  st.queued = 999;
  wk_admission_counters c{};
  c.foreground_ok = 999;

  EXPECT_STATUS(wk_slot_clone(null, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_STATUS(wk_slot_admit(null, kPropose, kFg, 1, &adm), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(adm.position, 555u);
  EXPECT_STATUS(wk_slot_admit_batch(null, kPropose, kFg, tokens, 2, &br), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_admit_batch(null, kPropose, kFg, nullptr, 2, &br),
                WK_STATUS_NULL_ARGUMENT);
  expect_batch_untouched(br);
  EXPECT_STATUS(wk_slot_drain(null, items, 4, &dr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_take(null, 4, &dr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(dr.count, 555u);
  EXPECT_EQ(dr.first_position, 666u);
  EXPECT_STATUS(wk_slot_config_change_resolve(null, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_set_leader(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_demote(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_close(null), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_fail(null, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_state_get(null, &st, sizeof st), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(st.queued, 999u);
  EXPECT_STATUS(wk_slot_counters_get(null, &c, sizeof c), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(c.foreground_ok, 999u);
  EXPECT_EQ(wk_slot_id_get(null), 0u);
  wk_slot_free(nullptr);  // no-op
  expect_untouched();
}

TEST_F(AbiArgs, NullOutParams) {
  uint64_t tokens[3] = {1, 2, 3};
  wk_item items[4];
  wk_drain_result dr{555, 666};
  EXPECT_STATUS(wk_slot_clone(slot_, nullptr), WK_STATUS_NULL_ARGUMENT);
  // A NULL admission out-parameter admits nothing, whatever the kind.
  for (wk_control_kind kind : {kPropose, kConfigChange, kTransferLeader}) {
    EXPECT_STATUS(wk_slot_admit(slot_, kind, kFg, 1, nullptr), WK_STATUS_NULL_ARGUMENT);
  }
  EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kBg, tokens, 3, nullptr),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kBg, nullptr, 3, nullptr),
                WK_STATUS_NULL_ARGUMENT);
  expect_untouched();

  ASSERT_OK(admit_raw(slot_, kPropose, kFg, 9));
  EXPECT_STATUS(wk_slot_drain(slot_, nullptr, 4, &dr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_drain(slot_, items, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_take(slot_, 4, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(dr.count, 555u);
  EXPECT_EQ(state().queued, 1u) << "a refused drain or take takes nothing";
  EXPECT_STATUS(wk_slot_state_get(slot_, nullptr, sizeof(wk_slot_state)), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_slot_counters_get(slot_, nullptr, sizeof(wk_admission_counters)),
                WK_STATUS_NULL_ARGUMENT);
}

TEST_F(AbiArgs, UnknownKindsAndBadLengths) {
  uint64_t tokens[3] = {1, 2, 3};
  wk_batch_result br = untouched_batch();
  for (uint32_t kind : {0u, 8u, 100u, 0xffffffffu}) {
    EXPECT_STATUS(admit_raw(slot_, kind_of(kind), kFg, 1), WK_STATUS_INVALID_ARGUMENT) << kind;
    EXPECT_STATUS(admit_raw(slot_, kind_of(kind), kBg, 1), WK_STATUS_INVALID_ARGUMENT) << kind;
    EXPECT_STATUS(wk_slot_admit_batch(slot_, kind_of(kind), kFg, tokens, 3, &br),
                  WK_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(wk_slot_admit_batch(slot_, kind_of(kind), kFg, nullptr, 3, &br),
                  WK_STATUS_INVALID_ARGUMENT);
    // Through the C++ layer, with the enum cast in.
    wkcore::Slot borrowed = wkcore::Slot::adopt(slot_);
    EXPECT_STATUS(borrowed.admit(kind_of(kind), kFg, 1), WK_STATUS_INVALID_ARGUMENT);
    (void)borrowed.release();  // the fixture still owns it
  }
  for (const uint64_t* t : {static_cast<const uint64_t*>(tokens), static_cast<const uint64_t*>(nullptr)}) {
    EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kFg, t, 0, &br),
                  WK_STATUS_INVALID_ARGUMENT);
    // Oversized n is refused before anything is read (the array holds only 3).
    EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kFg, t, (size_t{1} << 25) + 1, &br),
                  WK_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kFg, t, SIZE_MAX, &br),
                  WK_STATUS_INVALID_ARGUMENT);
  }
  expect_batch_untouched(br);
  wk_item items[1];
  wk_drain_result dr{555, 666};
  EXPECT_STATUS(wk_slot_drain(slot_, items, 0, &dr), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_take(slot_, 0, &dr), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dr.count, 555u);
  expect_untouched();
}

TEST_F(AbiArgs, UnknownClassIsForeground) {
  EXPECT_OK(admit_raw(slot_, kPropose, class_of(2), 1));
  EXPECT_OK(admit_raw(slot_, kPropose, class_of(0xffffffffu), 2));
  uint64_t tokens[2] = {3, 4};
  wk_batch_result br{};
  EXPECT_OK(wk_slot_admit_batch(slot_, kPropose, class_of(7), tokens, 2, &br));
  EXPECT_EQ(br.admitted, 2u);
  wk_admission_counters c = counters();
  EXPECT_EQ(c.foreground_ok, 4u);
  EXPECT_EQ(c.background_ok, 0u);
  wk_item items[8];
  wk_drain_result dr{};
  ASSERT_OK(wk_slot_drain(slot_, items, 8, &dr));
  ASSERT_EQ(dr.count, 4u);
  EXPECT_EQ(dr.first_position, 0u);
  for (size_t i = 0; i < dr.count; ++i) {
    EXPECT_EQ(items[i].proposal_class, WK_PROPOSAL_CLASS_FOREGROUND);
    for (uint8_t r : items[i].reserved) EXPECT_EQ(r, 0);
  }
}

TEST_F(AbiArgs, MisalignedPointers) {
  alignas(16) unsigned char raw[128] = {};
  EXPECT_STATUS(wk_slot_state_get(slot_, reinterpret_cast<wk_slot_state*>(raw + 1),
                                  sizeof(wk_slot_state)),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_counters_get(slot_, reinterpret_cast<wk_admission_counters*>(raw + 1),
                                     sizeof(wk_admission_counters)),
                WK_STATUS_INVALID_ARGUMENT);
  wk_drain_result dr{555, 666};
  EXPECT_STATUS(wk_slot_drain(slot_, reinterpret_cast<wk_item*>(raw + 1), 2, &dr),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_drain(slot_, reinterpret_cast<wk_item*>(raw), 2,
                              reinterpret_cast<wk_drain_result*>(raw + 65)),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_take(slot_, 2, reinterpret_cast<wk_drain_result*>(raw + 65)),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_admit(slot_, kPropose, kFg, 1, reinterpret_cast<wk_admission*>(raw + 1)),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dr.count, 555u);
  uint64_t tokens[2] = {1, 2};
  wk_batch_result br{};
  EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kFg,
                                    reinterpret_cast<const uint64_t*>(raw + 1), 1, &br),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_admit_batch(slot_, kPropose, kFg, tokens, 2,
                                    reinterpret_cast<wk_batch_result*>(raw + 1)),
                WK_STATUS_INVALID_ARGUMENT);
  // A misaligned handle is an invalid handle.
  auto* handle = reinterpret_cast<const wk_slot*>(reinterpret_cast<const unsigned char*>(slot_) + 1);
  EXPECT_STATUS(admit_raw(handle, kPropose, kFg, 1), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_config_change_resolve(handle, 1), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_take(handle, 1, &dr), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(wk_slot_id_get(handle), 0u);
  expect_untouched();
}

TEST_F(AbiArgs, StructSizesBelowTheMinimum) {
  wk_slot_state st{};
  st.queued = 999;
  EXPECT_STATUS(wk_slot_state_get(slot_, &st, WK_SLOT_STATE_MIN_SIZE - 1),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_state_get(slot_, &st, 0), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(st.queued, 999u);
  wk_admission_counters c{};
  c.foreground_ok = 999;
  EXPECT_STATUS(wk_slot_counters_get(slot_, &c, 63), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_slot_counters_get(slot_, &c, 0), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(c.foreground_ok, 999u);
}

TEST_F(AbiArgs, LargerStructsKeepTheirTail) {
  // A caller built against a newer header passes a larger struct: the library writes the
  // fields it knows and leaves the rest as the caller initialised it.
  struct NewerState {
    wk_slot_state known;
    uint64_t added;
  } st{};
  st.added = 0xfeedfacecafebeefu;
  ASSERT_OK(admit_raw(slot_, kPropose, kBg, 1));
  ASSERT_OK(wk_slot_state_get(slot_, &st.known, sizeof st));
  EXPECT_EQ(st.known.queued, 1u);
  EXPECT_EQ(st.known.queued_background, 1u);
  EXPECT_EQ(st.known.queued_proposals, 1u);
  EXPECT_GT(st.known.memory_bytes, 0u);
  EXPECT_EQ(st.known.leader, 1);
  EXPECT_EQ(st.added, 0xfeedfacecafebeefu);
  // A caller of the first release (16 bytes) gets those bytes and nothing past them.
  struct FirstRelease {
    unsigned char known[WK_SLOT_STATE_MIN_SIZE];
    uint64_t after[2];
  } old{};
  old.after[0] = old.after[1] = 7;
  ASSERT_OK(wk_slot_state_get(slot_, reinterpret_cast<wk_slot_state*>(&old),
                              WK_SLOT_STATE_MIN_SIZE));
  uint32_t queued = 0;
  std::memcpy(&queued, old.known, sizeof queued);
  EXPECT_EQ(queued, 1u);
  EXPECT_EQ(old.after[0], 7u);
  EXPECT_EQ(old.after[1], 7u);
  struct NewerCounters {
    wk_admission_counters known;
    uint64_t added;
  } c{};
  c.added = 42;
  ASSERT_OK(wk_slot_counters_get(slot_, &c.known, sizeof c));
  EXPECT_EQ(c.known.background_ok, 1u);
  EXPECT_EQ(c.added, 42u);
}

TEST_F(AbiArgs, WrongHandleTypeIsDetected) {
  // Best-effort detector: a handle of another type fails the magic-word check (every handle
  // object starts with its word, so the check reads in bounds). Every call that takes a handle.
  auto* as_slot = reinterpret_cast<wk_slot*>(reg_);
  wk_slot* out = kSentinelSlot;
  uint64_t tokens[2] = {1, 2};
  wk_batch_result br = untouched_batch();
  wk_item items[2];
  wk_drain_result dr{555, 666};
  wk_slot_state st{};
  wk_admission_counters c{};
  EXPECT_STATUS(wk_slot_clone(as_slot, &out), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_STATUS(admit_raw(as_slot, kPropose, kFg, 1), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_admit_batch(as_slot, kPropose, kFg, tokens, 2, &br),
                WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_admit_batch(as_slot, kPropose, kFg, nullptr, 2, &br),
                WK_STATUS_INVALID_HANDLE);
  expect_batch_untouched(br);
  EXPECT_STATUS(wk_slot_drain(as_slot, items, 2, &dr), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_take(as_slot, 2, &dr), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(dr.count, 555u);
  EXPECT_STATUS(wk_slot_set_leader(as_slot), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_demote(as_slot), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_close(as_slot), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_config_change_resolve(as_slot, 1), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_fail(as_slot, 1), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_state_get(as_slot, &st, sizeof st), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_slot_counters_get(as_slot, &c, sizeof c), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(wk_slot_id_get(as_slot), 0u);
  wk_slot_free(as_slot);  // ignored: not a live slot

  auto* as_reg = reinterpret_cast<wk_admission_registry*>(slot_);
  wk_admission_registry* reg_out = nullptr;
  EXPECT_STATUS(wk_admission_registry_clone(as_reg, &reg_out), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(reg_out, nullptr);
  EXPECT_STATUS(wk_admission_registry_insert(as_reg, slot_), WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_admission_registry_insert(reg_, reinterpret_cast<const wk_slot*>(metrics_)),
                WK_STATUS_INVALID_HANDLE);
  EXPECT_STATUS(wk_admission_registry_get(as_reg, 77, &out), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(out, kSentinelSlot);
  EXPECT_STATUS(wk_admission_registry_remove(as_reg, 77), WK_STATUS_INVALID_HANDLE);
  wk_admission_registry_free(as_reg);  // ignored

  auto* as_metrics = reinterpret_cast<wk_metrics_registry*>(reg_);
  wk_metrics_registry* metrics_out = nullptr;
  EXPECT_STATUS(wk_metrics_registry_clone(as_metrics, &metrics_out), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(metrics_out, nullptr);
  wk_metrics_snapshot* snap = nullptr;
  EXPECT_STATUS(wk_metrics_registry_snapshot(as_metrics, &snap), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(snap, nullptr);
  size_t len = 555;
  EXPECT_STATUS(wk_metrics_registry_render(as_metrics, nullptr, 0, &len), WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(len, 555u);
  wk_metrics_registry_free(as_metrics);  // ignored

  auto* as_snapshot = reinterpret_cast<wk_metrics_snapshot*>(metrics_);
  EXPECT_EQ(wk_metrics_snapshot_family_count_get(as_snapshot), 0u);
  wk_metric_family fam{};
  EXPECT_STATUS(wk_metrics_snapshot_family_get(as_snapshot, 0, &fam, sizeof fam),
                WK_STATUS_INVALID_HANDLE);
  wk_metric_series ser{};
  EXPECT_STATUS(wk_metrics_snapshot_series_get(as_snapshot, 0, 0, &ser, sizeof ser),
                WK_STATUS_INVALID_HANDLE);
  wk_metrics_snapshot_free(as_snapshot);  // ignored

  // The C++ layer passes the library's answer through (adopting a borrowed pointer, released).
  wkcore::MetricsSnapshot borrowed = wkcore::MetricsSnapshot::adopt(as_snapshot);
  EXPECT_STATUS(borrowed.families().status(), WK_STATUS_INVALID_HANDLE);
  (void)borrowed.release();
  expect_untouched();
}

TEST_F(AbiArgs, RegistryNullAndBad) {
  wk_admission_registry* out = nullptr;
  wk_slot* s = kSentinelSlot;
  EXPECT_STATUS(wk_admission_registry_new(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_clone(nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_clone(reg_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_STATUS(wk_admission_registry_insert(nullptr, slot_), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_insert(reg_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_get(nullptr, 77, &s), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_get(reg_, 77, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_get(reg_, 77, &s), WK_STATUS_SLOT_NOT_FOUND);
  EXPECT_EQ(s, kSentinelSlot);
  EXPECT_STATUS(wk_admission_registry_remove(nullptr, 77), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_admission_registry_remove(reg_, 77), WK_STATUS_SLOT_NOT_FOUND);
  wk_admission_registry_free(nullptr);  // no-op

  ASSERT_OK(wk_admission_registry_insert(reg_, slot_));
  EXPECT_STATUS(wk_admission_registry_insert(reg_, slot_), WK_STATUS_ALREADY_EXISTS);
  ASSERT_OK(wk_admission_registry_get(reg_, 77, &s));
  EXPECT_EQ(wk_slot_id_get(s), 77u);
  EXPECT_EQ(s, slot_) << "the registry hands out the slot itself";
  wk_slot_free(s);
  EXPECT_OK(wk_admission_registry_remove(reg_, 77));
  EXPECT_STATUS(wk_admission_registry_remove(reg_, 77), WK_STATUS_SLOT_NOT_FOUND);
}

TEST_F(AbiArgs, MetricsRegistryNullAndBad) {
  wk_metrics_registry* out = nullptr;
  EXPECT_STATUS(wk_metrics_registry_new(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_registry_global(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_registry_clone(nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_registry_clone(metrics_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  wk_metrics_registry_free(nullptr);  // no-op

  wk_metrics_snapshot* snap = nullptr;
  EXPECT_STATUS(wk_metrics_registry_snapshot(nullptr, &snap), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_registry_snapshot(metrics_, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(snap, nullptr);
  alignas(16) unsigned char raw[32] = {};
  EXPECT_STATUS(wk_metrics_registry_snapshot(metrics_,
                                             reinterpret_cast<wk_metrics_snapshot**>(raw + 1)),
                WK_STATUS_INVALID_ARGUMENT);

  size_t len = 555;
  uint8_t buf[16];
  EXPECT_STATUS(wk_metrics_registry_render(nullptr, buf, sizeof buf, &len), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_registry_render(metrics_, buf, sizeof buf, nullptr),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_registry_render(metrics_, nullptr, 16, &len), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(len, 555u);
}

TEST_F(AbiArgs, MetricsSnapshotNullAndBad) {
  wk_metrics_snapshot* snap = nullptr;
  ASSERT_OK(wk_metrics_registry_snapshot(metrics_, &snap));
  const size_t families = wk_metrics_snapshot_family_count_get(snap);
  ASSERT_GE(families, 1u) << "the fixture's slot counts in this registry";

  EXPECT_EQ(wk_metrics_snapshot_family_count_get(nullptr), 0u);
  wk_metric_family fam{};
  fam.label_count = 999;
  EXPECT_STATUS(wk_metrics_snapshot_family_get(nullptr, 0, &fam, sizeof fam),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_snapshot_family_get(snap, 0, nullptr, sizeof fam),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_snapshot_family_get(snap, 0, &fam, 63), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_metrics_snapshot_family_get(snap, families, &fam, sizeof fam),
                WK_STATUS_NOT_FOUND);
  EXPECT_STATUS(wk_metrics_snapshot_family_get(snap, SIZE_MAX, &fam, sizeof fam),
                WK_STATUS_NOT_FOUND);
  alignas(16) unsigned char raw[128] = {};
  EXPECT_STATUS(wk_metrics_snapshot_family_get(snap, 0, reinterpret_cast<wk_metric_family*>(raw + 1),
                                               sizeof fam),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(fam.label_count, 999u) << "nothing written on failure";

  ASSERT_OK(wk_metrics_snapshot_family_get(snap, 0, &fam, sizeof fam));
  ASSERT_GE(fam.series_count, 1u);
  wk_metric_series ser{};
  ser.value = 999;
  EXPECT_STATUS(wk_metrics_snapshot_series_get(nullptr, 0, 0, &ser, sizeof ser),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_snapshot_series_get(snap, 0, 0, nullptr, sizeof ser),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_metrics_snapshot_series_get(snap, 0, 0, &ser, 23), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(wk_metrics_snapshot_series_get(snap, 0, fam.series_count, &ser, sizeof ser),
                WK_STATUS_NOT_FOUND);
  EXPECT_STATUS(wk_metrics_snapshot_series_get(snap, families, 0, &ser, sizeof ser),
                WK_STATUS_NOT_FOUND);
  EXPECT_STATUS(wk_metrics_snapshot_series_get(snap, 0, 0,
                                               reinterpret_cast<wk_metric_series*>(raw + 1),
                                               sizeof ser),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(ser.value, 999u) << "nothing written on failure";
  ASSERT_OK(wk_metrics_snapshot_series_get(snap, 0, 0, &ser, sizeof ser));
  EXPECT_EQ(ser.label_count, fam.label_count);

  // A larger struct keeps its tail.
  struct NewerSeries {
    wk_metric_series known;
    uint64_t added;
  } newer{};
  newer.added = 7;
  ASSERT_OK(wk_metrics_snapshot_series_get(snap, 0, 0, &newer.known, sizeof newer));
  EXPECT_EQ(newer.added, 7u);
  EXPECT_EQ(newer.known.label_count, fam.label_count);

  wk_metrics_snapshot_free(snap);
  wk_metrics_snapshot_free(nullptr);  // no-op
}

// Handles used after their last free: the detector sees the overwritten magic word (as long as
// the memory was not reused). This reads freed memory on purpose, so it is skipped where such
// reads are reported (ASan, valgrind).
TEST(AbiFreed, FreedHandlesAreInvalid) {
  if (freed_memory_is_checked()) GTEST_SKIP() << "reads freed memory on purpose";
  wk_slot_limits lim{4, 0};
  wk_metrics_registry* metrics = nullptr;
  ASSERT_OK(wk_metrics_registry_new(&metrics));
  wk_slot* slot = nullptr;
  ASSERT_OK(wk_slot_new(metrics, 5, &lim, &slot));
  wk_slot* second = nullptr;
  ASSERT_OK(wk_slot_clone(slot, &second));
  wk_slot_free(slot);
  ASSERT_OK(admit_raw(second, kTransferLeader, kFg, 1)) << "a clone keeps the slot alive";
  wk_slot_free(second);
  wk_status freed_admit = admit_raw(second, kTransferLeader, kFg, 2);
  uint64_t freed_id = wk_slot_id_get(second);
  wk_slot_free(second);  // a second free is ignored
  EXPECT_STATUS(freed_admit, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(freed_id, 0u);

  wk_metrics_snapshot* snap = nullptr;
  ASSERT_OK(wk_metrics_registry_snapshot(metrics, &snap));
  wk_metrics_snapshot_free(snap);
  wk_metric_family fam{};
  wk_status freed_family = wk_metrics_snapshot_family_get(snap, 0, &fam, sizeof fam);
  size_t freed_count = wk_metrics_snapshot_family_count_get(snap);
  wk_metrics_snapshot_free(snap);  // ignored
  EXPECT_STATUS(freed_family, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(freed_count, 0u);

  wk_metrics_registry_free(metrics);
  size_t len = 555;
  wk_status freed_render = wk_metrics_registry_render(metrics, nullptr, 0, &len);
  wk_metrics_registry_free(metrics);  // ignored
  EXPECT_STATUS(freed_render, WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(len, 555u);

  wk_admission_registry* reg = nullptr;
  ASSERT_OK(wk_admission_registry_new(&reg));
  wk_admission_registry_free(reg);
  wk_status freed_remove = wk_admission_registry_remove(reg, 1);
  wk_admission_registry_free(reg);  // ignored
  EXPECT_STATUS(freed_remove, WK_STATUS_INVALID_HANDLE);
}

// --- Generation 3: positions, tickets, takes, batches without tokens -------------------------

TEST_F(AbiArgs, PositionsAreConsecutiveAcrossAdmitBatchDrainAndTake) {
  uint64_t next = 0, taken = 0;
  // Several laps of the fixture's 8-place ring.
  for (uint64_t round = 0; round < 12; ++round) {
    wk_admission a{};
    ASSERT_OK(wk_slot_admit(slot_, kPropose, kFg, round, &a));
    EXPECT_EQ(a.position, next);
    EXPECT_EQ(a.config_change, 0u);
    ++next;
    uint64_t tokens[2] = {round, round + 1};
    wk_batch_result br{};
    ASSERT_OK(wk_slot_admit_batch(slot_, kTransferLeader, kFg, tokens, 2, &br));
    EXPECT_EQ(br.admitted, 2u);
    EXPECT_EQ(br.first_position, next);
    next += 2;
    ASSERT_OK(wk_slot_admit_batch(slot_, kPropose, kBg, nullptr, 2, &br));
    EXPECT_EQ(br.admitted, 2u);
    EXPECT_EQ(br.first_position, next);
    next += 2;
    wk_item items[3];
    wk_drain_result dr{};
    ASSERT_OK(wk_slot_drain(slot_, items, 3, &dr));
    EXPECT_EQ(dr.count, 3u);
    EXPECT_EQ(dr.first_position, taken);
    taken += 3;
    ASSERT_OK(wk_slot_take(slot_, 100, &dr));
    EXPECT_EQ(dr.count, 2u);
    EXPECT_EQ(dr.first_position, taken);
    taken += 2;
    ASSERT_OK(wk_slot_take(slot_, 1, &dr));
    EXPECT_EQ(dr.count, 0u);
    EXPECT_EQ(dr.first_position, taken) << "nothing taken: the next position";
  }
  EXPECT_EQ(next, taken);
}

TEST_F(AbiArgs, BatchWithoutTokensQueuesZeroTokens) {
  wk_batch_result br{};
  ASSERT_OK(wk_slot_admit_batch(slot_, kPropose, kBg, nullptr, 6, &br));
  EXPECT_EQ(br.admitted, 4u) << "the background limit is 4";
  EXPECT_STATUS(br.refused, WK_STATUS_PROPOSAL_THROTTLED);
  wk_item items[8];
  wk_drain_result dr{};
  ASSERT_OK(wk_slot_drain(slot_, items, 8, &dr));
  ASSERT_EQ(dr.count, 4u);
  for (size_t i = 0; i < dr.count; ++i) EXPECT_EQ(items[i].token, 0u);
}

TEST_F(AbiArgs, ConfigChangeTicketsResolveOnce) {
  for (uint64_t bogus : {uint64_t{0}, uint64_t{1}, uint64_t{2}, UINT64_MAX}) {
    EXPECT_STATUS(wk_slot_config_change_resolve(slot_, bogus), WK_STATUS_CONFIG_CHANGE_STALE);
  }
  wk_admission a{};
  ASSERT_OK(wk_slot_admit(slot_, kConfigChange, kFg, 1, &a));
  const uint64_t first = a.config_change;
  ASSERT_NE(first, 0u);
  EXPECT_EQ(first % 2, 1u);
  EXPECT_STATUS(admit_raw(slot_, kConfigChange, kFg, 2), WK_STATUS_CONFIG_CHANGE_PENDING);
  EXPECT_STATUS(wk_slot_config_change_resolve(slot_, first + 1), WK_STATUS_CONFIG_CHANGE_STALE);
  EXPECT_STATUS(wk_slot_config_change_resolve(slot_, 0), WK_STATUS_CONFIG_CHANGE_STALE);
  EXPECT_EQ(state().config_change_pending, 1);
  EXPECT_OK(wk_slot_config_change_resolve(slot_, first));
  EXPECT_EQ(state().config_change_pending, 0);
  EXPECT_STATUS(wk_slot_config_change_resolve(slot_, first), WK_STATUS_CONFIG_CHANGE_STALE)
      << "a second resolve";
  uint64_t tokens[2] = {3, 4};
  wk_batch_result br{};
  ASSERT_OK(wk_slot_admit_batch(slot_, kConfigChange, kFg, tokens, 2, &br));
  EXPECT_EQ(br.admitted, 1u);
  EXPECT_STATUS(br.refused, WK_STATUS_CONFIG_CHANGE_PENDING);
  const uint64_t second = br.config_change;
  EXPECT_GT(second, first);
  EXPECT_STATUS(wk_slot_config_change_resolve(slot_, first), WK_STATUS_CONFIG_CHANGE_STALE)
      << "a stale ticket does not clear the newer change";
  EXPECT_EQ(state().config_change_pending, 1);
  EXPECT_OK(wk_slot_config_change_resolve(slot_, second));
  EXPECT_STREQ(wk_status_str(WK_STATUS_CONFIG_CHANGE_STALE),
               "wkcore: config change already resolved");
}

TEST_F(AbiArgs, StateCountsQueuedProposalsAndMemory) {
  const uint64_t idle = state().memory_bytes;
  EXPECT_GT(idle, 0u);
  EXPECT_LT(idle, 2048u) << "an idle slot allocates no ring";
  ASSERT_OK(admit_raw(slot_, kTransferLeader, kFg, 1));
  ASSERT_OK(admit_raw(slot_, kPropose, kBg, 2));
  ASSERT_OK(admit_raw(slot_, kPropose, kFg, 3));
  wk_slot_state st = state();
  EXPECT_EQ(st.queued, 3u);
  EXPECT_EQ(st.queued_proposals, 2u);
  EXPECT_EQ(st.reserved, 0u);
  EXPECT_GT(st.memory_bytes, idle) << "the first segment";
  wk_drain_result dr{};
  ASSERT_OK(wk_slot_take(slot_, 2, &dr));
  EXPECT_EQ(state().queued_proposals, 1u);
}
