// The MQTT owner registry through the C++ layer and the raw C ABI: upstream's scenarios, a
// multi-threaded begin/done across owners with a fencing thread, and bad input on every call.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "wkcore.hpp"

namespace {

using wkcore::CancelToken;
using wkcore::Owner;
using wkcore::OwnerFrame;
using wkcore::OwnerIdentity;
using wkcore::OwnerOp;
using wkcore::OwnerRegistry;
using wkcore::Status;

constexpr uint64_t kSec = 1000000000ULL;

OwnerRegistry::Options options(uint32_t max_ops = 8) {
  OwnerRegistry::Options o;
  o.node_id = 7;
  o.boot_id = "boot-1";
  o.capacity = 16;
  o.max_operations = max_ops;
  return o;
}

OwnerRegistry manual(uint32_t max_ops = 8) {
  auto r = OwnerRegistry::create_with_manual_clock(options(max_ops), 1000);
  EXPECT_TRUE(r.ok()) << r.status().str();
  return std::move(r).value();
}

Owner active(const OwnerRegistry& reg, const std::string& client, OwnerRegistry::CloseFn close) {
  auto o = reg.reserve("ns", client, "alice", 1, 2, std::move(close));
  EXPECT_TRUE(o.ok()) << o.status().str();
  EXPECT_TRUE(o->activate(1, reg.now().value() + 30 * kSec).ok());
  return std::move(o).value();
}

OwnerIdentity identity(const Owner& owner, const std::string& client) {
  wk_owner_info i = owner.info().value();
  return OwnerIdentity{"ns", client, i.session_generation, i.owner_generation, i.node_id, "boot-1",
                       i.connection_id};
}

TEST(Owner, Lifecycle) {
  OwnerRegistry reg = manual();
  std::atomic<int> closes{0};
  Owner owner = active(reg, "c1", [&](uint64_t) {
    closes++;
    return wk_status{WK_STATUS_OK};
  });
  EXPECT_EQ(owner.uid().value(), "alice");
  EXPECT_EQ(owner.info()->stage, static_cast<uint32_t>(WK_OWNER_STAGE_ACTIVE));
  {
    auto op = owner.begin();
    ASSERT_TRUE(op.ok());
    EXPECT_TRUE(op->check().ok());
    EXPECT_EQ(reg.snapshot()->operations, 1u);
    EXPECT_TRUE(op->done().ok());
    EXPECT_TRUE(op->done().ok());  // idempotent
    EXPECT_EQ(op->check(), Status(WK_STATUS_OWNER_FENCED));
  }
  { auto op = owner.begin(); }  // done on destruction
  EXPECT_EQ(reg.snapshot()->operations, 0u);
  auto again = owner.clone();
  ASSERT_TRUE(again.ok());
  OwnerIdentity id = identity(owner, "c1");
  EXPECT_TRUE(reg.resolve(id).ok());
  EXPECT_TRUE(owner.quiesce().ok());
  EXPECT_EQ(closes.load(), 1);
  EXPECT_EQ(reg.resolve(id).status(), Status(WK_STATUS_NOT_FOUND));
  EXPECT_TRUE(reg.quiesce(id, kSec).ok());
  EXPECT_TRUE(reg.close(kSec).ok());
  auto proof = reg.retirement();
  ASSERT_TRUE(proof.ok());
  EXPECT_EQ(proof->last_connection_id, 1u);
  wk_owner_identity v = id.view();
  EXPECT_EQ(wk_owner_isolation_quiesce(nullptr, &proof.value(), 1, &v, kSec, nullptr, nullptr), WK_STATUS_OK);
}

TEST(Owner, TwoQuiescersShareOneCloseAndWaitForDone) {
  OwnerRegistry reg = manual();
  std::atomic<int> closes{0};
  Owner owner = active(reg, "c1", [&](uint64_t) {
    closes++;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return wk_status{WK_STATUS_OK};
  });
  auto op = owner.begin();
  ASSERT_TRUE(op.ok());
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; i++) {
    threads.emplace_back([&] {
      EXPECT_TRUE(owner.quiesce(5 * kSec).ok());
      done++;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(done.load(), 0) << "quiesce waits for the live op";
  EXPECT_TRUE(op->done().ok());
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 2);
  EXPECT_EQ(closes.load(), 1);
}

TEST(Owner, FailedCloseStaysFencedAndHoldsCapacity) {
  OwnerRegistry reg = manual();
  std::atomic<bool> fail{true};
  Owner owner = active(reg, "c1", [&](uint64_t) {
    if (fail) throw std::runtime_error("socket stuck");
    return wk_status{WK_STATUS_OK};
  });
  EXPECT_EQ(owner.quiesce(kSec), Status(WK_STATUS_OWNER_CLOSE));
  EXPECT_EQ(owner.info()->stage, static_cast<uint32_t>(WK_OWNER_STAGE_CLOSING));
  EXPECT_EQ(reg.snapshot()->held, 1u);
  EXPECT_EQ(owner.begin().status(), Status(WK_STATUS_OWNER_FENCED));
  fail = false;
  EXPECT_TRUE(owner.quiesce(kSec).ok());
  EXPECT_EQ(reg.snapshot()->held, 0u);
}

TEST(Owner, UncertainIsUnknownForever) {
  OwnerRegistry reg = manual();
  Owner owner = active(reg, "c1", [](uint64_t) { return wk_status{WK_STATUS_OK}; });
  auto op = owner.begin();
  ASSERT_TRUE(op.ok());
  EXPECT_TRUE(op->mark_uncertain().ok());
  EXPECT_TRUE(op->done().ok());
  for (int i = 0; i < 3; i++) EXPECT_EQ(owner.quiesce(kSec), Status(WK_STATUS_OWNER_UNKNOWN));
  EXPECT_EQ(reg.close(kSec), Status(WK_STATUS_OWNER_UNKNOWN));
  EXPECT_EQ(reg.retirement().status(), Status(WK_STATUS_OWNER_UNKNOWN));
}

TEST(Owner, SweepYieldsFailedClose) {
  OwnerRegistry reg = manual();
  Owner bad = active(reg, "c1", [](uint64_t) { return wk_status{WK_STATUS_OWNER_CLOSE}; });
  Owner good = active(reg, "c2", [](uint64_t) { return wk_status{WK_STATUS_OK}; });
  ASSERT_TRUE(reg.advance_clock(31 * kSec).ok());
  auto r = reg.sweep(8, kSec);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ran);
  EXPECT_EQ(r->error, WK_STATUS_OWNER_CLOSE);
  ASSERT_TRUE(reg.advance_clock(kSec).ok());
  // The failed owner was rescheduled behind the other due owner.
  r = reg.sweep(8, kSec);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(good.info()->complete);
  EXPECT_FALSE(bad.info()->complete);
}

TEST(Owner, TimeoutAndCancelLeaveTheAttempt) {
  OwnerRegistry reg = manual();
  Owner owner = active(reg, "c1", [](uint64_t) { return wk_status{WK_STATUS_OK}; });
  auto op = owner.begin();
  Status st = owner.quiesce(1000000);
  EXPECT_EQ(st, Status(WK_STATUS_OWNER_DEADLINE_EXCEEDED));
  EXPECT_TRUE(st.is(WK_STATUS_TIMEOUT));
  auto token = CancelToken::create();
  ASSERT_TRUE(token.ok());
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(token->cancel().ok());
  });
  EXPECT_EQ(owner.quiesce(std::nullopt, &token.value()), Status(WK_STATUS_OWNER_CANCELED));
  t.join();
  EXPECT_TRUE(op->done().ok());
  EXPECT_TRUE(owner.quiesce(kSec).ok());
}

TEST(Owner, ConcurrentBeginDoneAcrossOwnersWithAFencer) {
  OwnerRegistry reg = OwnerRegistry::create(options(4)).value();
  std::vector<Owner> owners;
  for (int i = 0; i < 4; i++) {
    auto o = reg.reserve("ns", "c" + std::to_string(i), "u", 1, 1,
                         [](uint64_t) { return wk_status{WK_STATUS_OK}; });
    ASSERT_TRUE(o.ok());
    ASSERT_TRUE(o->activate(1, reg.now().value() + 50 * kSec).ok());
    owners.push_back(std::move(o).value());
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 8; w++) {
    workers.emplace_back([&, w] {
      for (int i = 0; i < 20000 && !stop; i++) {
        auto op = owners[static_cast<size_t>((w + i) % 4)].begin();
        if (op.ok()) EXPECT_TRUE(op->done().ok());
        else EXPECT_TRUE(op.status() == Status(WK_STATUS_OWNER_LIMIT) ||
                         op.status() == Status(WK_STATUS_OWNER_FENCED));
      }
    });
  }
  std::thread fencer([&] {
    for (auto& o : owners) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      EXPECT_TRUE(o.fence().ok());
    }
  });
  fencer.join();
  for (auto& o : owners) EXPECT_TRUE(o.quiesce(10 * kSec).ok());
  stop = true;
  for (auto& t : workers) t.join();
  auto s = reg.snapshot().value();
  EXPECT_EQ(s.operations, 0u);
  EXPECT_EQ(s.held, 0u);
}

TEST(Owner, FrameGoldenVector) {
  OwnerIdentity id{"n", "c", 1, 2, 3, "b", 4};
  auto frame = OwnerFrame::encode_request(id);
  ASSERT_TRUE(frame.ok());
  const uint8_t golden[] = {0x57, 0x4b, 0x4d, 0x51, 0x01, 0x01, 0x00, 0x01, 0x6e, 0x00, 0x01, 0x63,
                            0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3,
                            0x00, 0x01, 0x62, 0, 0, 0, 0, 0, 0, 0, 4};
  EXPECT_EQ(*frame, std::vector<uint8_t>(std::begin(golden), std::end(golden)));
  EXPECT_EQ(OwnerFrame::decode_request(*frame).value(), id);
  wk_owner_identity out{};
  ASSERT_EQ(wk_owner_frame_decode_request(golden, sizeof golden, &out), WK_STATUS_OK);
  EXPECT_EQ(out.namespace_ptr, golden + 8) << "zero-copy";
  auto resp = OwnerFrame::encode_response(id, WK_OWNER_RPC_CLOSE_FAILED);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(OwnerFrame::decode_response(*resp)->second, WK_OWNER_RPC_CLOSE_FAILED);
  EXPECT_EQ(OwnerFrame::client_result(id, *resp), Status(WK_STATUS_OWNER_CLOSE));
  EXPECT_EQ(OwnerFrame::status_for(WK_STATUS_OWNER_CANCELED), WK_OWNER_RPC_CANCELED);
  EXPECT_EQ(OwnerFrame::status_for(WK_STATUS_OK), WK_OWNER_RPC_QUIESCED);
  EXPECT_EQ(OwnerFrame::client_result(id, *frame), Status(WK_STATUS_OWNER_INVALID_FRAME));
}

TEST(Owner, BadInputOnEveryCall) {
  OwnerRegistry reg = manual();
  Owner owner = active(reg, "c1", [](uint64_t) { return wk_status{WK_STATUS_OK}; });
  // The C options point into `opts` (its boot id): it must outlive every use of `o`.
  const OwnerRegistry::Options opts = options();
  wk_owner_options o = opts.to_c();
  wk_owner_registry* r = nullptr;
  EXPECT_EQ(wk_owner_registry_new(nullptr, &r), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_new(&o, nullptr), WK_STATUS_NULL_ARGUMENT);
  o.struct_size = 4;
  EXPECT_EQ(wk_owner_registry_new(&o, &r), WK_STATUS_INVALID_ARGUMENT);
  o = opts.to_c();
  o.node_id = 0;
  EXPECT_EQ(wk_owner_registry_new(&o, &r), WK_STATUS_OWNER_INVALID);
  EXPECT_EQ(wk_owner_registry_new_with_manual_clock(nullptr, 0, &r), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(wk_owner_registry_advance_clock(nullptr, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_clone(reg.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  uint64_t now = 0;
  EXPECT_EQ(wk_owner_registry_now(nullptr, &now), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_now(reinterpret_cast<wk_owner_registry*>(owner.c_ptr()), &now),
            WK_STATUS_INVALID_HANDLE);
  wk_owner_claim c{};
  wk_owner* out = nullptr;
  EXPECT_EQ(wk_owner_reserve(reg.c_ptr(), nullptr, nullptr, nullptr, nullptr, &out),
            WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_reserve(reg.c_ptr(), &c, nullptr, nullptr, nullptr, &out),
            WK_STATUS_NULL_ARGUMENT);
  const uint8_t bad_utf8[] = {0xff};
  c.namespace_ptr = bad_utf8;
  c.namespace_len = 1;
  EXPECT_EQ(reg.reserve("ns", std::string(1025, 'x'), "u", 1, 1, nullptr).status(),
            Status(WK_STATUS_OWNER_INVALID));
  EXPECT_EQ(reg.reserve("\xff", "c", "u", 1, 1, nullptr).status(), Status(WK_STATUS_OWNER_INVALID));
  EXPECT_EQ(reg.reserve("ns", "c", "u", 0, 1, nullptr).status(), Status(WK_STATUS_OWNER_INVALID));
  EXPECT_EQ(out, nullptr);
  wk_owner_info info{};
  info.connection_id = 99;
  EXPECT_EQ(wk_owner_info_get(nullptr, &info), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_info_get(owner.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(info.connection_id, 99u);
  EXPECT_EQ(wk_owner_uid_get(owner.c_ptr(), nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_activate(nullptr, 1, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_renew(owner.c_ptr(), 0, 1), WK_STATUS_OWNER_INVALID);
  EXPECT_EQ(wk_owner_clone(nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_begin(nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_begin(owner.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  wk_owner_op op{owner.c_ptr(), 77};
  EXPECT_EQ(wk_owner_op_done(&op), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(wk_owner_op_check(&op), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(wk_owner_op_mark_uncertain(&op), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(wk_owner_op_done(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_op_done_batch(nullptr, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_op_done_batch(&op, 0), WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op.state, 77u);
  EXPECT_EQ(wk_owner_fence(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_quiesce(nullptr, 0, nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  wk_owner_identity id{};
  EXPECT_EQ(wk_owner_registry_resolve(reg.c_ptr(), nullptr, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_resolve(reg.c_ptr(), &id, &out), WK_STATUS_OWNER_INVALID);
  EXPECT_EQ(wk_owner_registry_fence(reg.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_quiesce(nullptr, &id, 0, nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_stop_admission(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_close(nullptr, 0, nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  wk_owner_sweep_result sr{5, WK_STATUS_PANIC, false};
  EXPECT_EQ(wk_owner_registry_sweep(reg.c_ptr(), 0, 0, nullptr, nullptr, &sr), WK_STATUS_OWNER_INVALID);
  EXPECT_EQ(wk_owner_registry_sweep(reg.c_ptr(), 1, 0, nullptr, nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_sweep_turn(reg.c_ptr(), 1, 257, 0, nullptr, nullptr, &sr),
            WK_STATUS_OWNER_INVALID);
  EXPECT_EQ(sr.visited, 5u);
  EXPECT_EQ(wk_owner_registry_snapshot(nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_retirement(reg.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_isolation_quiesce(nullptr, nullptr, 1, &id, 0, nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_isolation_quiesce(nullptr, nullptr, 0, nullptr, 0, nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
  size_t len = 0;
  EXPECT_EQ(wk_owner_frame_encode_request(nullptr, nullptr, 0, &len), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_frame_encode_request(&id, nullptr, 0, &len), WK_STATUS_OWNER_INVALID_FRAME);
  EXPECT_EQ(wk_owner_frame_encode_response(&id, 9, nullptr, 0, &len), WK_STATUS_OWNER_INVALID_FRAME);
  EXPECT_EQ(wk_owner_frame_decode_request(nullptr, 0, &id), WK_STATUS_NULL_ARGUMENT);
  uint8_t st8 = 0;
  EXPECT_EQ(wk_owner_frame_decode_response(bad_utf8, 1, &id, &st8), WK_STATUS_OWNER_INVALID_FRAME);
  EXPECT_EQ(wk_owner_rpc_client_result(nullptr, bad_utf8, 1), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_cancel_token_new(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_cancel_token_cancel(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(reg.snapshot()->held, 1u);
  EXPECT_EQ(owner.info()->stage, static_cast<uint32_t>(WK_OWNER_STAGE_ACTIVE));
}

// --- The inline protocol (the owner's words, run with the host's own atomics) ---------------

uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

bool cas(uint64_t* p, uint64_t* expected, uint64_t desired) {
  return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE);
}

uint64_t* gauge(const wk_owner_registry_words& r, size_t row, size_t which) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(r.gauge) + row * r.gauge_row_stride) +
         which;
}

// The header's begin: false is the slow path (wk_owner_begin answers).
bool inline_begin(const wk_owner_registry_words& r, const wk_owner_words& o) {
  if (load(r.stopped) != 0) return false;
  uint64_t w = load(o.state);
  for (;;) {
    if ((w & WK_OWNER_WORD_STAGE_MASK) != WK_OWNER_WORD_STAGE_ACTIVE) return false;
    if (load(r.clock) >= load(o.lease_until)) return false;
    if ((w & WK_OWNER_WORD_OPS_MASK) >= r.max_operations) return false;
    if (cas(o.state, &w, w + 1)) break;
  }
  __atomic_fetch_add(gauge(r, 1, 0), 1, __ATOMIC_ACQ_REL);
  return true;
}

// The header's done: the retiring end is wk_owner_scope_end's.
void inline_done(const wk_owner_registry_words& r, const wk_owner* owner, const wk_owner_words& o) {
  uint64_t w = load(o.state);
  for (;;) {
    if ((w & WK_OWNER_WORD_OPS_MASK) == 0 ||
        ((w - 1) & WK_OWNER_WORD_RETIRE_MASK) == WK_OWNER_WORD_RETIRE_VALUE) {
      EXPECT_EQ(wk_owner_scope_end(owner), WK_STATUS_OK);
      return;
    }
    if (cas(o.state, &w, w - 1)) break;
  }
  __atomic_fetch_add(gauge(r, 1, 1), 1, __ATOMIC_ACQ_REL);
}

TEST(Owner, InlineProtocolRacesFenceAndQuiesce) {
  EXPECT_EQ(wk_owner_layout_version(), static_cast<uint32_t>(WK_OWNER_WORDS_LAYOUT_VERSION));
  OwnerRegistry reg = manual(2);
  wk_owner_registry_words r{};
  ASSERT_EQ(wk_owner_registry_words_get(reg.c_ptr(), &r), WK_STATUS_OK);
  ASSERT_EQ(r.clock_kind, static_cast<uint32_t>(WK_OWNER_CLOCK_WORD));
  ASSERT_EQ(r.max_operations, 2u);
  for (int round = 0; round < 20; round++) {
    Owner owner = active(reg, "c" + std::to_string(round), [](uint64_t) { return wk_status{WK_STATUS_OK}; });
    wk_owner_words o{};
    ASSERT_EQ(wk_owner_words_get(owner.c_ptr(), &o), WK_STATUS_OK);
    std::atomic<bool> fenced{false};
    std::atomic<int> inflight{0};
    std::atomic<int> bad{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < 3; t++) {
      workers.emplace_back([&] {
        for (int i = 0; i < 2000; i++) {
          const bool after = fenced.load(std::memory_order_acquire);
          bool admitted = inline_begin(r, o);
          if (!admitted) {
            wk_owner_op op{};
            wk_status st = wk_owner_begin(owner.c_ptr(), &op);
            admitted = st == WK_STATUS_OK;
            if (!admitted && st != WK_STATUS_OWNER_FENCED && st != WK_STATUS_OWNER_LIMIT) bad++;
          }
          if (!admitted) continue;
          if (after) bad++;
          if (inflight.fetch_add(1) + 1 > 2) bad++;
          inflight.fetch_sub(1);
          inline_done(r, owner.c_ptr(), o);
        }
      });
    }
    EXPECT_TRUE(owner.fence().ok());
    fenced.store(true, std::memory_order_release);
    EXPECT_TRUE(owner.quiesce().ok());
    EXPECT_EQ(inflight.load(), 0);
    for (auto& w : workers) w.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_NE(load(o.state) & WK_OWNER_WORD_COMPLETE, 0u);
  }
  EXPECT_EQ(reg.snapshot()->held, 0u);
  EXPECT_EQ(reg.snapshot()->operations, 0u);
}

TEST(Owner, InlineWordsBadInput) {
  OwnerRegistry reg = manual();
  Owner owner = active(reg, "c1", [](uint64_t) { return wk_status{WK_STATUS_OK}; });
  wk_owner_registry_words r{};
  r.max_operations = 99;
  wk_owner_words o{};
  EXPECT_EQ(wk_owner_registry_words_get(nullptr, &r), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_words_get(reg.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_registry_words_get(reinterpret_cast<wk_owner_registry*>(owner.c_ptr()), &r),
            WK_STATUS_INVALID_HANDLE);
  EXPECT_EQ(r.max_operations, 99u);
  EXPECT_EQ(wk_owner_words_get(nullptr, &o), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_words_get(owner.c_ptr(), nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(o.state, nullptr);
  EXPECT_EQ(wk_owner_scope_end(nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(wk_owner_scope_end(owner.c_ptr()), WK_STATUS_INVALID_ARGUMENT);  // no scope
  EXPECT_EQ(reg.snapshot()->operations, 0u);
  EXPECT_EQ(wk_owner_registry_new_hosted(nullptr, nullptr), WK_STATUS_NULL_ARGUMENT);
}

}  // namespace
