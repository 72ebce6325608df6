// Every status of testdata/<system>/statuses.json against the header and the library: its code
// is the header's constant, wk_status_str gives its text, and its identities (Go's errors.Is)
// hold through Status::is, and no others do.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "json_util.hpp"
#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::Status;

namespace {

// Every status constant of the header, by name.
const std::map<std::string, wk_status>& header_constants() {
  static const std::map<std::string, wk_status> constants = {
      {"WK_STATUS_OK", WK_STATUS_OK},
      {"WK_STATUS_NULL_ARGUMENT", WK_STATUS_NULL_ARGUMENT},
      {"WK_STATUS_INVALID_ARGUMENT", WK_STATUS_INVALID_ARGUMENT},
      {"WK_STATUS_PANIC", WK_STATUS_PANIC},
      {"WK_STATUS_INVALID_HANDLE", WK_STATUS_INVALID_HANDLE},
      {"WK_STATUS_BUFFER_TOO_SMALL", WK_STATUS_BUFFER_TOO_SMALL},
      {"WK_STATUS_NOT_FOUND", WK_STATUS_NOT_FOUND},
      {"WK_STATUS_ALREADY_EXISTS", WK_STATUS_ALREADY_EXISTS},
      {"WK_STATUS_TIMEOUT", WK_STATUS_TIMEOUT},
      {"WK_STATUS_FULL", WK_STATUS_FULL},
      {"WK_STATUS_SLOT_CLOSED", WK_STATUS_SLOT_CLOSED},
      {"WK_STATUS_SLOT_FAILED", WK_STATUS_SLOT_FAILED},
      {"WK_STATUS_NOT_LEADER", WK_STATUS_NOT_LEADER},
      {"WK_STATUS_CONFIG_CHANGE_PENDING", WK_STATUS_CONFIG_CHANGE_PENDING},
      {"WK_STATUS_SLOT_BUSY", WK_STATUS_SLOT_BUSY},
      {"WK_STATUS_PROPOSAL_BACKPRESSURE", WK_STATUS_PROPOSAL_BACKPRESSURE},
      {"WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED", WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED},
      {"WK_STATUS_PROPOSAL_BUSY", WK_STATUS_PROPOSAL_BUSY},
      {"WK_STATUS_PROPOSAL_THROTTLED", WK_STATUS_PROPOSAL_THROTTLED},
      {"WK_STATUS_SLOT_NOT_FOUND", WK_STATUS_SLOT_NOT_FOUND},
      {"WK_STATUS_CONFIG_CHANGE_STALE", WK_STATUS_CONFIG_CHANGE_STALE},
      {"WK_STATUS_COORD_INVALID_KEY", WK_STATUS_COORD_INVALID_KEY},
      {"WK_STATUS_COORD_INVALID_OUTCOME", WK_STATUS_COORD_INVALID_OUTCOME},
      {"WK_STATUS_COORD_INVALID_CAPACITY", WK_STATUS_COORD_INVALID_CAPACITY},
      {"WK_STATUS_COORD_INVALID_TIME", WK_STATUS_COORD_INVALID_TIME},
      {"WK_STATUS_COORD_INVALID_SHARE_GROUP", WK_STATUS_COORD_INVALID_SHARE_GROUP},
      {"WK_STATUS_COORD_INVALID_TOPIC_FILTER", WK_STATUS_COORD_INVALID_TOPIC_FILTER},
      {"WK_STATUS_OWNER_INVALID", WK_STATUS_OWNER_INVALID},
      {"WK_STATUS_OWNER_FENCED", WK_STATUS_OWNER_FENCED},
      {"WK_STATUS_OWNER_UNKNOWN", WK_STATUS_OWNER_UNKNOWN},
      {"WK_STATUS_OWNER_LIMIT", WK_STATUS_OWNER_LIMIT},
      {"WK_STATUS_OWNER_STOPPED", WK_STATUS_OWNER_STOPPED},
      {"WK_STATUS_OWNER_CLOSE", WK_STATUS_OWNER_CLOSE},
      {"WK_STATUS_OWNER_CANCELED", WK_STATUS_OWNER_CANCELED},
      {"WK_STATUS_OWNER_DEADLINE_EXCEEDED", WK_STATUS_OWNER_DEADLINE_EXCEEDED},
      {"WK_STATUS_OWNER_INVALID_IDENTITY", WK_STATUS_OWNER_INVALID_IDENTITY},
      {"WK_STATUS_OWNER_SWEEPER_INVALID", WK_STATUS_OWNER_SWEEPER_INVALID},
      {"WK_STATUS_OWNER_SWEEPER_STOPPING", WK_STATUS_OWNER_SWEEPER_STOPPING},
      {"WK_STATUS_OWNER_INVALID_FRAME", WK_STATUS_OWNER_INVALID_FRAME},
      {"WK_STATUS_TAG_INVALID_UTF8", WK_STATUS_TAG_INVALID_UTF8},
      {"WK_STATUS_TAG_TOO_LARGE", WK_STATUS_TAG_TOO_LARGE},
      {"WK_STATUS_TAG_UNASSIGNED_SLOT", WK_STATUS_TAG_UNASSIGNED_SLOT},
      {"WK_STATUS_TAG_LENGTH_MISMATCH", WK_STATUS_TAG_LENGTH_MISMATCH},
      {"WK_STATUS_TAG_INVALID_CONFIG", WK_STATUS_TAG_INVALID_CONFIG},
      {"WK_STATUS_TAG_UNKNOWN_OP", WK_STATUS_TAG_UNKNOWN_OP},
      {"WK_STATUS_TAG_DIRTY", WK_STATUS_TAG_DIRTY},
      {"WK_STATUS_TAG_LAGGING", WK_STATUS_TAG_LAGGING},
      {"WK_STATUS_TAG_INVALID_FRAME", WK_STATUS_TAG_INVALID_FRAME},
      {"WK_STATUS_TAG_INVALID_REQUEST_CODEC", WK_STATUS_TAG_INVALID_REQUEST_CODEC},
      {"WK_STATUS_TAG_INVALID_RESPONSE_CODEC", WK_STATUS_TAG_INVALID_RESPONSE_CODEC},
      {"WK_STATUS_TAG_SHORT_UVARINT", WK_STATUS_TAG_SHORT_UVARINT},
      {"WK_STATUS_TAG_INVALID_UVARINT", WK_STATUS_TAG_INVALID_UVARINT},
      {"WK_STATUS_TAG_SHORT_BYTES", WK_STATUS_TAG_SHORT_BYTES},
      {"WK_STATUS_TAG_SHORT_CHANNEL_TYPE", WK_STATUS_TAG_SHORT_CHANNEL_TYPE},
      {"WK_STATUS_TAG_SHORT_VARINT", WK_STATUS_TAG_SHORT_VARINT},
      {"WK_STATUS_TAG_INVALID_VARINT", WK_STATUS_TAG_INVALID_VARINT},
      {"WK_STATUS_TAG_TRAILING_REQUEST_BYTES", WK_STATUS_TAG_TRAILING_REQUEST_BYTES},
      {"WK_STATUS_TAG_TRAILING_RESPONSE_BYTES", WK_STATUS_TAG_TRAILING_RESPONSE_BYTES},
      {"WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT", WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT},
      {"WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT", WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT},
      {"WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT", WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT},
      {"WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING", WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING},
      {"WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING", WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING},
      {"WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING", WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING},
  };
  return constants;
}

// The status files known to exist, one per system; status_files() finds every other
// testdata/<system>/statuses.json too, so a new system's file is checked without an edit here.
const char* const kStatusFiles[] = {"abi/statuses.json", "admission/statuses.json",
                                    "coord/statuses.json", "owner/statuses.json",
                                    "tag/statuses.json"};

// Every testdata/<system>/statuses.json (relative to testdata/), sorted; kStatusFiles among them.
std::vector<std::string> status_files() {
  std::set<std::string> files(std::begin(kStatusFiles), std::end(kStatusFiles));
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(WK_TESTDATA_DIR, error)) {
    if (!entry.is_directory()) continue;
    if (std::filesystem::exists(entry.path() / "statuses.json")) {
      files.insert(entry.path().filename().string() + "/statuses.json");
    }
  }
  EXPECT_FALSE(error) << "cannot list " << WK_TESTDATA_DIR << ": " << error.message();
  return std::vector<std::string>(files.begin(), files.end());
}

struct Entry {
  std::string file;
  std::string name;
  wk_status code = 0;
  std::string text;
  std::vector<std::string> is;
};

// Reads one file strictly: {"system", "range": [first, last], "statuses": [...]}, each status
// {"name", "code", "text", "upstream": string or null, "is": [names]}.
std::vector<Entry> read_statuses(const std::string& file) {
  const Json top = parse_strict(read_file(testdata_path(file)));
  expect_fields(top, {"system", "range", "statuses"}, file);
  if (string_field(top, "system").empty()) throw DataError(file + ": empty system");
  const Json& range = array_field(top, "range");
  if (range.size() != 2) throw DataError(file + ": range is not [first, last]");
  const uint64_t first = as_uint(range[0], UINT32_MAX, "range[0]");
  const uint64_t last = as_uint(range[1], UINT32_MAX, "range[1]");
  std::vector<Entry> out;
  for (const Json& s : array_field(top, "statuses")) {
    const std::string where = file + ": " + s.dump();
    try {
      expect_fields(s, {"name", "code", "text", "upstream", "is"}, "status");
      Entry e;
      e.file = file;
      e.name = string_field(s, "name");
      const uint64_t code = uint_field(s, "code", UINT32_MAX);
      if (code < first || code > last) throw DataError("code outside the file's range");
      e.code = static_cast<wk_status>(code);
      e.text = string_field(s, "text");
      const Json& upstream = field(s, "upstream");
      if (!upstream.is_null() && !upstream.is_string()) {
        throw DataError("\"upstream\" is neither a string nor null");
      }
      for (const Json& identity : array_field(s, "is")) {
        if (!identity.is_string()) throw DataError("\"is\" lists a non-string");
        e.is.push_back(identity.get<std::string>());
      }
      out.push_back(std::move(e));
    } catch (const DataError& error) {
      throw DataError(where + ": " + error.what());
    }
  }
  return out;
}

}  // namespace

TEST(Statuses, EveryCodeTextAndIdentityMatchesTheData) {
  // Identities are looked up across every file (a coordination status is also the ABI's
  // WK_STATUS_INVALID_ARGUMENT): all entries are read first, then checked together.
  std::vector<Entry> all;
  for (const std::string& file : status_files()) {
    try {
      std::vector<Entry> entries = read_statuses(file);
      EXPECT_FALSE(entries.empty()) << file;
      all.insert(all.end(), entries.begin(), entries.end());
    } catch (const DataError& error) {
      FAIL() << error.what();
    }
  }

  const auto& constants = header_constants();
  std::map<std::string, wk_status> by_name;
  std::set<wk_status> codes;
  for (const Entry& e : all) {
    SCOPED_TRACE(e.file + ": " + e.name);
    EXPECT_TRUE(by_name.emplace(e.name, e.code).second) << "name listed twice";
    EXPECT_TRUE(codes.insert(e.code).second) << "code listed twice";
    auto constant = constants.find(e.name);
    ASSERT_NE(constant, constants.end()) << "the header test table lacks " << e.name;
    EXPECT_EQ(e.code, constant->second) << "the data's code differs from the header's constant";
    EXPECT_STREQ(wk_status_str(e.code), e.text.c_str());
    EXPECT_EQ(std::string(Status(e.code).str()), e.text);
    EXPECT_STRNE(Status(e.code).str(), "unknown status");
  }
  for (const auto& constant : constants) {
    EXPECT_EQ(by_name.count(constant.first), 1u)
        << constant.first << " is in the header but in no status file";
  }

  // is(): each status is itself and exactly the identities it lists.
  for (const Entry& e : all) {
    std::set<std::string> listed(e.is.begin(), e.is.end());
    for (const std::string& identity : e.is) {
      EXPECT_EQ(by_name.count(identity), 1u) << e.name << " is an unknown " << identity;
      EXPECT_NE(identity, e.name) << e.name << " lists itself";
    }
    for (const Entry& other : all) {
      const bool want = other.name == e.name || listed.count(other.name) == 1;
      EXPECT_EQ(Status(e.code).is(other.code), want) << e.name << " is " << other.name;
      EXPECT_EQ(wk_status_is(e.code, other.code), want) << e.name << " is " << other.name;
    }
    EXPECT_EQ(Status(e.code).is_backpressure(), Status(e.code).is(WK_STATUS_PROPOSAL_BACKPRESSURE))
        << e.name;
  }
}

TEST(Statuses, UnknownValuesAreOnlyThemselves) {
  for (wk_status raw : {10u, 99u, 111u, 199u, 299u, 1000u, 0xffffffffu}) {
    SCOPED_TRACE(raw);
    Status st(raw);
    ASSERT_NE(st.str(), nullptr);
    EXPECT_STREQ(st.str(), "unknown status");
    EXPECT_TRUE(st.is(raw));
    EXPECT_FALSE(st.is(WK_STATUS_OK));
    EXPECT_FALSE(st.is(WK_STATUS_SLOT_BUSY));
    EXPECT_FALSE(st.is_backpressure());
    EXPECT_FALSE(st.ok());
  }
}

TEST(Statuses, BackpressureComesFromTheLibrary) {
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_BUSY).is_backpressure());
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_THROTTLED).is_backpressure());
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_BACKPRESSURE).is_backpressure());
  EXPECT_FALSE(Status(WK_STATUS_SLOT_BUSY).is_backpressure()) << "a busy non-proposal";
  EXPECT_FALSE(Status(WK_STATUS_NOT_LEADER).is_backpressure());
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_BUSY).is(WK_STATUS_SLOT_BUSY));
  EXPECT_FALSE(Status(WK_STATUS_PROPOSAL_THROTTLED).is(WK_STATUS_SLOT_BUSY));
  EXPECT_TRUE(Status(WK_STATUS_PROPOSAL_THROTTLED).is(WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED));
}

// The coordination statuses are the ABI's WK_STATUS_INVALID_ARGUMENT, an identity listed in
// another file (abi/statuses.json): the check above resolves identities across every file.
TEST(Statuses, IdentitiesResolveAcrossFiles) {
  std::vector<Entry> coord, abi;
  try {
    coord = read_statuses("coord/statuses.json");
    abi = read_statuses("abi/statuses.json");
  } catch (const DataError& error) {
    FAIL() << error.what();
  }
  ASSERT_EQ(coord.size(), 6u);
  std::map<std::string, wk_status> abi_codes;
  for (const Entry& e : abi) abi_codes.emplace(e.name, e.code);
  for (const Entry& e : coord) {
    SCOPED_TRACE(e.name);
    ASSERT_FALSE(e.is.empty());
    for (const std::string& identity : e.is) {
      auto it = abi_codes.find(identity);
      ASSERT_NE(it, abi_codes.end()) << identity << " is not an ABI status";
      EXPECT_TRUE(Status(e.code).is(it->second));
      EXPECT_FALSE(Status(it->second).is(e.code)) << "not symmetric";
    }
    EXPECT_GE(e.code, 400u);
    EXPECT_LE(e.code, 499u);
  }
}
