// wk_coord_decision.state of wk_ledger_touch and wk_ledger_take through the C ABI: the record's
// state after a win, or as the call found it. A refused heartbeat or compare-and-delete names
// the PENDING state it found (PLACED or CLAIMED), never NONE; a won take leaves no record (NONE).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>

#include "test_util.hpp"
#include "wkcore.h"

namespace {

// A pending ledger, freed at the end of the test.
class LedgerState : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(wk_ledger_new(nullptr, WK_LEDGER_KIND_PENDING, 8, 100, &ledger_), WK_STATUS_OK);
  }
  void TearDown() override { wk_ledger_free(ledger_); }

  static const uint8_t* bytes(const char* key) { return reinterpret_cast<const uint8_t*>(key); }

  wk_coord_decision insert(const char* key, uint64_t id, uint64_t runner) {
    wk_coord_decision d = untouched();
    EXPECT_EQ(wk_ledger_insert(ledger_, bytes(key), std::strlen(key), id, runner,
                               WK_COORD_DEADLINE_NEVER, 0, &d),
              WK_STATUS_OK);
    return d;
  }
  wk_coord_decision claim(const char* key, uint64_t placeholder, uint64_t request_id,
                          uint64_t runner) {
    wk_coord_decision d = untouched();
    EXPECT_EQ(wk_ledger_claim(ledger_, bytes(key), std::strlen(key), placeholder, request_id,
                              runner, 1, &d),
              WK_STATUS_OK);
    return d;
  }
  wk_coord_decision finalize(const char* key) {
    wk_coord_decision d = untouched();
    EXPECT_EQ(wk_ledger_finalize(ledger_, bytes(key), std::strlen(key), WK_OUTCOME_FAILED, 0, 2,
                                 &d),
              WK_STATUS_OK);
    return d;
  }
  wk_coord_decision touch(const char* key, uint64_t runner) {
    wk_coord_decision d = untouched();
    EXPECT_EQ(wk_ledger_touch(ledger_, bytes(key), std::strlen(key), runner, 3, &d),
              WK_STATUS_OK);
    return d;
  }
  wk_coord_decision take(const char* key, uint64_t expected_id) {
    wk_coord_decision d = untouched();
    EXPECT_EQ(wk_ledger_take(ledger_, bytes(key), std::strlen(key), expected_id, &d),
              WK_STATUS_OK);
    return d;
  }

  // A decision no call writes.
  static wk_coord_decision untouched() {
    wk_coord_decision d{};
    d.result = WK_COORD_RESULT_FULL;
    d.state = WK_RECORD_STATE_FINALIZED;
    d.outcome = 0xdead;
    d.reserved = 0xbeef;
    return d;
  }

  wk_ledger* ledger_ = nullptr;
};

// Compares a decision with the expected result, state and outcome (reserved is always 0).
::testing::AssertionResult Is(const wk_coord_decision& d, wk_coord_result result,
                              wk_record_state state, uint32_t outcome = 0) {
  if (d.result == result && d.state == state && d.outcome == outcome && d.reserved == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "{result " << d.result << ", state " << d.state << ", outcome " << d.outcome
         << ", reserved " << d.reserved << "}, want {result " << result << ", state " << state
         << ", outcome " << outcome << "}";
}

TEST_F(LedgerState, TouchNamesThePendingStateItLeftOrFound) {
  EXPECT_TRUE(Is(insert("job", 5, 7), WK_COORD_RESULT_WON, WK_RECORD_STATE_PLACED));
  EXPECT_TRUE(Is(touch("job", 7), WK_COORD_RESULT_WON, WK_RECORD_STATE_PLACED));
  EXPECT_TRUE(Is(touch("job", 8), WK_COORD_RESULT_MISMATCH, WK_RECORD_STATE_PLACED));

  EXPECT_TRUE(Is(insert("batch", 900, 0), WK_COORD_RESULT_WON, WK_RECORD_STATE_PLACED));
  EXPECT_TRUE(Is(claim("batch", 900, 42, 9), WK_COORD_RESULT_WON, WK_RECORD_STATE_CLAIMED));
  EXPECT_TRUE(Is(touch("batch", 9), WK_COORD_RESULT_WON, WK_RECORD_STATE_CLAIMED));
  EXPECT_TRUE(Is(touch("batch", 7), WK_COORD_RESULT_MISMATCH, WK_RECORD_STATE_CLAIMED));

  EXPECT_TRUE(Is(finalize("batch"), WK_COORD_RESULT_WON, WK_RECORD_STATE_FINALIZED,
                 WK_OUTCOME_FAILED));
  EXPECT_TRUE(Is(touch("batch", 9), WK_COORD_RESULT_DUPLICATE, WK_RECORD_STATE_FINALIZED,
                 WK_OUTCOME_FAILED));
  EXPECT_TRUE(Is(touch("nope", 9), WK_COORD_RESULT_NOT_FOUND, WK_RECORD_STATE_NONE));
}

TEST_F(LedgerState, TakeNamesThePendingStateItFound) {
  EXPECT_TRUE(Is(insert("tok", 77, 0), WK_COORD_RESULT_WON, WK_RECORD_STATE_PLACED));
  EXPECT_TRUE(Is(take("tok", 78), WK_COORD_RESULT_MISMATCH, WK_RECORD_STATE_PLACED));

  EXPECT_TRUE(Is(insert("pair", 900, 0), WK_COORD_RESULT_WON, WK_RECORD_STATE_PLACED));
  EXPECT_TRUE(Is(claim("pair", 900, 42, 1), WK_COORD_RESULT_WON, WK_RECORD_STATE_CLAIMED));
  // The placeholder is no longer the record's id.
  EXPECT_TRUE(Is(take("pair", 900), WK_COORD_RESULT_MISMATCH, WK_RECORD_STATE_CLAIMED));
  // A won take removed the record: no state after it.
  EXPECT_TRUE(Is(take("pair", 42), WK_COORD_RESULT_WON, WK_RECORD_STATE_NONE));
  EXPECT_TRUE(Is(take("pair", 42), WK_COORD_RESULT_NOT_FOUND, WK_RECORD_STATE_NONE));

  EXPECT_TRUE(Is(finalize("tok"), WK_COORD_RESULT_WON, WK_RECORD_STATE_FINALIZED,
                 WK_OUTCOME_FAILED));
  EXPECT_TRUE(Is(take("tok", 77), WK_COORD_RESULT_DUPLICATE, WK_RECORD_STATE_FINALIZED,
                 WK_OUTCOME_FAILED));
}

}  // namespace
