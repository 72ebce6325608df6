// Strict reading of the shared data files (testdata/<system>/*.json): every object must have
// exactly the fields the format lists (a missing, unknown or duplicate field is an error), and
// numbers must be non-negative integers in range. Errors are DataError exceptions whose message
// says what was wrong; callers add where (scenario, step).
#ifndef WKCORE_TEST_JSON_UTIL_HPP
#define WKCORE_TEST_JSON_UTIL_HPP

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#ifndef WK_TESTDATA_DIR
#error "WK_TESTDATA_DIR must name the repository's testdata directory (cpp/CMakeLists.txt sets it)"
#endif

namespace wktest {

using Json = nlohmann::json;

struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The path of `relative` under testdata/.
inline std::string testdata_path(const std::string& relative) {
  return std::string(WK_TESTDATA_DIR) + "/" + relative;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses `text`, refusing duplicate fields (nlohmann keeps the last one silently); the error
// names the field and shows the object it is in.
inline Json parse_strict(const std::string& text) {
  struct Open {
    std::set<std::string> keys;
    std::string duplicate;
  };
  std::vector<Open> open;  // the objects being read, innermost last
  std::string error;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        open.emplace_back();
        break;
      case Json::parse_event_t::key:
        if (!open.empty()) {
          const std::string key = parsed.get<std::string>();
          if (!open.back().keys.insert(key).second && open.back().duplicate.empty()) {
            open.back().duplicate = key;
          }
        }
        break;
      case Json::parse_event_t::object_end:
        if (!open.empty()) {
          if (!open.back().duplicate.empty() && error.empty()) {
            error = "duplicate field \"" + open.back().duplicate + "\" in " + parsed.dump();
          }
          open.pop_back();
        }
        break;
      default:
        break;
    }
    return true;
  };
  Json value;
  try {
    value = Json::parse(text, callback);
  } catch (const Json::exception& e) {
    throw DataError(std::string("invalid JSON: ") + e.what());
  }
  if (!error.empty()) throw DataError(error);
  return value;
}

// `value` is an object with exactly `fields`.
inline void expect_fields(const Json& value, std::initializer_list<const char*> fields,
                          const std::string& what) {
  if (!value.is_object()) throw DataError(what + " is not an object");
  std::set<std::string> want(fields.begin(), fields.end());
  for (const auto& item : value.items()) {
    if (want.count(item.key()) == 0) {
      throw DataError(what + " has unknown field \"" + item.key() + "\"");
    }
  }
  for (const std::string& field : want) {
    if (!value.contains(field)) throw DataError(what + " lacks field \"" + field + "\"");
  }
}

inline const Json& field(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) throw DataError(std::string("missing field \"") + name + "\"");
  return *it;
}

// A non-negative integer no larger than `max`.
inline uint64_t as_uint(const Json& value, uint64_t max, const std::string& what) {
  if (!value.is_number_unsigned()) {
    throw DataError(what + " is not a non-negative integer: " + value.dump());
  }
  const uint64_t n = value.get<uint64_t>();
  if (n > max) throw DataError(what + " is above " + std::to_string(max) + ": " + value.dump());
  return n;
}

inline uint64_t uint_field(const Json& object, const char* name, uint64_t max) {
  return as_uint(field(object, name), max, std::string("\"") + name + "\"");
}

inline bool bool_field(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_boolean()) throw DataError(std::string("\"") + name + "\" is not a boolean");
  return value.get<bool>();
}

inline std::string string_field(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_string()) throw DataError(std::string("\"") + name + "\" is not a string");
  return value.get<std::string>();
}

inline const Json& array_field(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_array()) throw DataError(std::string("\"") + name + "\" is not an array");
  return value;
}

// What a replay of a scenario file found: how many scenarios it held, and every failure.
struct Outcomes {
  size_t scenarios = 0;
  std::vector<std::string> failures;
};

// Parses `text` with `parse` (a file's strict parser, throwing DataError) and replays the
// scenarios with `replay` (returning the failures): the shared driver of every system's replay.
template <class Parse, class Replay>
Outcomes replay_scenarios(const std::string& text, Parse parse, Replay replay) {
  Outcomes out;
  try {
    const auto scenarios = parse(text);
    out.scenarios = scenarios.size();
    out.failures = replay(scenarios);
  } catch (const DataError& e) {
    out.failures.push_back(std::string("invalid scenario file: ") + e.what());
  }
  return out;
}

// `text` with the first `from` replaced by `to` (the harness checks' way of breaking a file).
inline std::string replace_first(std::string text, const std::string& from,
                                 const std::string& to) {
  const size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace wktest

#endif  // WKCORE_TEST_JSON_UTIL_HPP
