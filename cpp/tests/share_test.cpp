// The shared-subscription topic helpers through wkcore.hpp and the raw C calls
// (wk_share_topic_build, wk_share_topic_split): built topics and split views, the malformed forms
// and their statuses, the buffer rule (nothing written unless it all fits), NULL and misaligned
// pointers, and the silent refusal an ACL check on the whole `$share/...` string causes.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "test_util.hpp"
#include "wkcore.h"
#include "wkcore.hpp"

using wkcore::Result;
using wkcore::SharedTopic;

namespace {

// An ACL rule (a filter, maybe with wildcards) covers a subscription filter read as a topic.
bool acl_allows(std::string_view rule, std::string_view subscription) {
  for (;;) {
    const size_t r = rule.find('/');
    const size_t s = subscription.find('/');
    const std::string_view rl = rule.substr(0, r);
    if (rl == "#") return true;
    const std::string_view sl = subscription.substr(0, s);
    if (rl != "+" && rl != sl) return false;
    if (r == std::string_view::npos || s == std::string_view::npos) {
      return r == std::string_view::npos && s == std::string_view::npos;
    }
    rule.remove_prefix(r + 1);
    subscription.remove_prefix(s + 1);
  }
}

const uint8_t* bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

}  // namespace

TEST(Share, BuildsAndSplitsBack) {
  Result<std::string> topic = wkcore::build_share_topic("workers", "uplink/+/data");
  ASSERT_OK(topic.status());
  EXPECT_EQ(*topic, "$share/workers/uplink/+/data");
  Result<SharedTopic> split = wkcore::split_share_topic(*topic);
  ASSERT_OK(split.status());
  EXPECT_TRUE(split->shared);
  EXPECT_EQ(split->group, "workers");
  EXPECT_EQ(split->filter, "uplink/+/data");
  // The views point into the caller's topic: nothing copied.
  EXPECT_EQ(split->group.data(), topic->data() + 7);
  EXPECT_EQ(split->filter.data(), topic->data() + 15);
  Result<std::string_view> acl = wkcore::acl_filter(*topic);
  ASSERT_OK(acl.status());
  EXPECT_EQ(*acl, "uplink/+/data");
}

TEST(Share, PlainFiltersComeBackWhole) {
  for (std::string_view t : {"a/b", "#", "+", "$SYS/x", "$sharex/g/f", "a/$share/g", "a//b"}) {
    SCOPED_TRACE(std::string(t));
    Result<SharedTopic> split = wkcore::split_share_topic(t);
    ASSERT_OK(split.status());
    EXPECT_FALSE(split->shared);
    EXPECT_TRUE(split->group.empty());
    EXPECT_EQ(split->filter, t);
    EXPECT_EQ(split->filter.data(), t.data());
  }
}

TEST(Share, MalformedFormsAreRefused) {
  const struct {
    std::string_view topic;
    wk_status want;
  } cases[] = {
      {"$share", WK_STATUS_COORD_INVALID_SHARE_GROUP},
      {"$share/", WK_STATUS_COORD_INVALID_SHARE_GROUP},
      {"$share//f", WK_STATUS_COORD_INVALID_SHARE_GROUP},
      {"$share/g+/f", WK_STATUS_COORD_INVALID_SHARE_GROUP},
      {"$share/g", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"$share/g/", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"$share/g/a/#/b", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"$share/g/a+", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"$share/g/$share/h/f", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"a/#/b", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {std::string_view("a/\xff", 3), WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {std::string_view("$share/g/a\0", 11), WK_STATUS_COORD_INVALID_TOPIC_FILTER},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.topic));
    Result<SharedTopic> split = wkcore::split_share_topic(c.topic);
    EXPECT_STATUS(split.status(), c.want);
    EXPECT_TRUE(split.status().is(WK_STATUS_INVALID_ARGUMENT));
    EXPECT_STATUS(wkcore::acl_filter(c.topic).status(), c.want);
  }
  EXPECT_STATUS(wkcore::build_share_topic("", "f").status(), WK_STATUS_COORD_INVALID_SHARE_GROUP);
  EXPECT_STATUS(wkcore::build_share_topic("a/b", "f").status(),
                WK_STATUS_COORD_INVALID_SHARE_GROUP);
  EXPECT_STATUS(wkcore::build_share_topic("g", "").status(), WK_STATUS_COORD_INVALID_TOPIC_FILTER);
  EXPECT_STATUS(wkcore::build_share_topic("g", "$share/h/f").status(),
                WK_STATUS_COORD_INVALID_TOPIC_FILTER);
  EXPECT_STATUS(wkcore::build_share_topic("g", "a/#/b").status(),
                WK_STATUS_COORD_INVALID_TOPIC_FILTER);
}

TEST(Share, TheLengthBoundIsExact) {
  const size_t room = wkcore::kShareTopicMax - WK_SHARE_PREFIX_LEN - 2;
  Result<std::string> fits = wkcore::build_share_topic("g", std::string(room, 'f'));
  ASSERT_OK(fits.status());
  EXPECT_EQ(fits->size(), wkcore::kShareTopicMax);
  EXPECT_STATUS(wkcore::build_share_topic("g", std::string(room + 1, 'f')).status(),
                WK_STATUS_COORD_INVALID_TOPIC_FILTER);
  EXPECT_STATUS(wkcore::split_share_topic(std::string(wkcore::kShareTopicMax + 1, 'p')).status(),
                WK_STATUS_COORD_INVALID_TOPIC_FILTER);
}

TEST(Share, RawBuildWritesNothingUnlessItAllFits) {
  uint8_t buf[16];
  std::memset(buf, 0xAA, sizeof buf);
  size_t len = 12345;
  // "$share/g/a/b" is 12 bytes.
  EXPECT_STATUS(wk_share_topic_build(bytes("g"), 1, bytes("a/b"), 3, buf, 11, &len),
                WK_STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 12345u);
  for (uint8_t b : buf) EXPECT_EQ(b, 0xAA);
  EXPECT_STATUS(wk_share_topic_build(bytes("g"), 1, bytes("a/b"), 3, nullptr, 0, &len),
                WK_STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 12345u);
  // A bad part is reported before the buffer.
  EXPECT_STATUS(wk_share_topic_build(bytes("g#"), 2, bytes("a/b"), 3, buf, 0, &len),
                WK_STATUS_COORD_INVALID_SHARE_GROUP);
  EXPECT_OK(wk_share_topic_build(bytes("g"), 1, bytes("a/b"), 3, buf, 12, &len));
  EXPECT_EQ(len, 12u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf), len), "$share/g/a/b");
  EXPECT_EQ(buf[12], 0xAA) << "no terminator, nothing past the topic";
}

TEST(Share, RawCallsCheckEveryPointer) {
  uint8_t buf[32];
  size_t len = 7;
  EXPECT_STATUS(wk_share_topic_build(bytes("g"), 1, bytes("f"), 1, buf, sizeof buf, nullptr),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_share_topic_build(nullptr, 1, bytes("f"), 1, buf, sizeof buf, &len),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_share_topic_build(bytes("g"), 1, nullptr, 1, buf, sizeof buf, &len),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_share_topic_build(bytes("g"), 1, bytes("f"), 1, nullptr, 8, &len),
                WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_share_topic_build(nullptr, 0, bytes("f"), 1, buf, sizeof buf, &len),
                WK_STATUS_COORD_INVALID_SHARE_GROUP);
  alignas(8) unsigned char raw[2 * sizeof(size_t)] = {};
  size_t* misaligned = reinterpret_cast<size_t*>(raw + 1);
  EXPECT_STATUS(wk_share_topic_build(bytes("g"), 1, bytes("f"), 1, buf, sizeof buf, misaligned),
                WK_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(len, 7u);

  wk_share_split out;
  std::memset(&out, 0x5A, sizeof out);
  wk_share_split before = out;
  EXPECT_STATUS(wk_share_topic_split(bytes("a"), 1, nullptr), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_share_topic_split(nullptr, 1, &out), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wk_share_topic_split(nullptr, 0, &out), WK_STATUS_COORD_INVALID_TOPIC_FILTER);
  EXPECT_STATUS(wk_share_topic_split(bytes("$share/g"), 8, &out),
                WK_STATUS_COORD_INVALID_TOPIC_FILTER);
  EXPECT_EQ(std::memcmp(&out, &before, sizeof out), 0) << "split_out written on a refusal";
  alignas(8) unsigned char split_raw[sizeof(wk_share_split) + 8] = {};
  EXPECT_STATUS(wk_share_topic_split(bytes("a"), 1,
                                     reinterpret_cast<wk_share_split*>(split_raw + 4)),
                WK_STATUS_INVALID_ARGUMENT);
  ASSERT_OK(wk_share_topic_split(bytes("$share/g/f"), 10, &out));
  EXPECT_EQ(out.shared, 1u);
  EXPECT_EQ(out.reserved, 0u);
  EXPECT_EQ(out.group_offset, 7u);
  EXPECT_EQ(out.group_len, 1u);
  EXPECT_EQ(out.filter_offset, 9u);
  EXPECT_EQ(out.filter_len, 1u);
}

// The trap: the ACL grants the service `uplink/#`; every replica subscribes to the shared
// subscription. Matched on the whole string, every member is refused and nothing says why;
// matched on the split filter, every member is granted, and a filter the ACL does not grant is
// still refused.
TEST(Share, MatchingTheFullStringRefusesTheWholeGroupSilently) {
  const std::vector<std::string_view> rules = {"uplink/#", "devices/+/telemetry"};
  auto allowed = [&](std::string_view sub) {
    for (std::string_view r : rules) {
      if (acl_allows(r, sub)) return true;
    }
    return false;
  };
  for (std::string_view filter : {"uplink/#", "uplink/eu/+", "devices/d1/telemetry"}) {
    SCOPED_TRACE(std::string(filter));
    ASSERT_TRUE(allowed(filter));
    Result<std::string> topic = wkcore::build_share_topic("workers", filter);
    ASSERT_OK(topic.status());
    int refused_full = 0, granted_split = 0;
    for (int member = 0; member < 3; ++member) {
      if (!allowed(*topic)) ++refused_full;
      Result<std::string_view> f = wkcore::acl_filter(*topic);
      ASSERT_OK(f.status());
      if (allowed(*f)) ++granted_split;
    }
    EXPECT_EQ(refused_full, 3);
    EXPECT_EQ(granted_split, 3);
  }
  Result<std::string> billing = wkcore::build_share_topic("workers", "billing/#");
  ASSERT_OK(billing.status());
  Result<std::string_view> f = wkcore::acl_filter(*billing);
  ASSERT_OK(f.status());
  EXPECT_FALSE(allowed(*f));
}
