// StatEntry: one named value of a JSON answer (`stats`, `peers`), read from a source object.
//
// A group of entries is a table {name, description, accessor}: the JSON is built by walking
// it, and docs/operations.md is checked against the same tables (StatsReference), so the
// answer and its reference cannot drift apart.
#ifndef PEERBLOOM_DAEMON_STAT_TABLE_H_
#define PEERBLOOM_DAEMON_STAT_TABLE_H_

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace peerbloom::daemon {

template <typename Source>
struct StatEntry {
  const char* name;
  const char* description;
  nlohmann::json (*get)(const Source&);
};

// {name: get(source)} for every entry of `table`.
template <typename Source>
nlohmann::json StatObject(std::span<const StatEntry<Source>> table, const Source& source) {
  nlohmann::json out = nlohmann::json::object();
  for (const StatEntry<Source>& e : table) out[e.name] = e.get(source);
  return out;
}

// A documented name of an answer: a value, or an object or array of objects with its fields.
struct StatDoc {
  std::string name;
  std::string description;
  std::vector<StatDoc> fields;  // empty for a plain value
};

template <typename Source>
std::vector<StatDoc> StatDocs(std::span<const StatEntry<Source>> table) {
  std::vector<StatDoc> out;
  for (const StatEntry<Source>& e : table) out.push_back({e.name, e.description, {}});
  return out;
}

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STAT_TABLE_H_
