// Process-wide metrics through the header: snapshot and Prometheus text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;

TEST(Metrics, RenderBufferTooSmallThenSuccess) {
  auto s = make_slot(500, 4, 1, true);
  ASSERT_TRUE(s.admit(kPropose, kBg, 1).ok());
  ASSERT_EQ(s.admit(kPropose, kBg, 2), wkcore::Status(WK_STATUS_THROTTLED));

  size_t need = 0;
  ASSERT_EQ(wk_metrics_render(nullptr, 0, &need), WK_STATUS_BUFFER_TOO_SMALL);
  ASSERT_GT(need, 0u);
  std::vector<uint8_t> small(8, 0xAB);
  size_t need2 = 0;
  ASSERT_EQ(wk_metrics_render(small.data(), small.size(), &need2), WK_STATUS_BUFFER_TOO_SMALL);
  EXPECT_GE(need2, need);
  for (uint8_t b : small) EXPECT_EQ(b, 0xAB) << "nothing written on BUFFER_TOO_SMALL";

  std::vector<uint8_t> buf(need2 + 4096);
  size_t len = 0;
  ASSERT_EQ(wk_metrics_render(buf.data(), buf.size(), &len), WK_STATUS_OK);
  std::string text(reinterpret_cast<const char*>(buf.data()), len);
  EXPECT_NE(
      text.find(
          "wukongim_slot_proposal_admission_total{class=\"background\",result=\"throttled\"}"),
      std::string::npos)
      << text;

  std::string via_header = wkcore::metrics_render();
  EXPECT_NE(via_header.find("wukongim_slot_proposal_admission_total{class=\"foreground\","
                            "result=\"ok\"}"),
            std::string::npos);
  std::string out;
  EXPECT_TRUE(wkcore::metrics_render(out).ok());
  EXPECT_FALSE(out.empty());
}

TEST(Metrics, SnapshotCountsThisProcess) {
  auto before = wkcore::metrics_snapshot();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->version, static_cast<uint32_t>(WK_METRICS_SNAPSHOT_VERSION));
  auto s = make_slot(501, 4, 1, true);
  ASSERT_TRUE(s.admit(kPropose, kBg, 1).ok());
  ASSERT_FALSE(s.admit(kPropose, kBg, 2).ok());
  ASSERT_TRUE(s.demote().ok());
  ASSERT_FALSE(s.admit(kPropose, kFg, 3).ok());
  auto after = wkcore::metrics_snapshot();
  ASSERT_TRUE(after.ok());
  // Other tests may run in this process too, so compare at least.
  EXPECT_GE(after->slot_proposal_admission.background_ok,
            before->slot_proposal_admission.background_ok + 1);
  EXPECT_GE(after->slot_proposal_admission.background_throttled,
            before->slot_proposal_admission.background_throttled + 1);
  EXPECT_GE(after->slot_proposal_admission.foreground_not_leader,
            before->slot_proposal_admission.foreground_not_leader + 1);
}
