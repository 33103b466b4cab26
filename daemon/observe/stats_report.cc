// The `stats` and `peers` answers: a walk of the registry through a sink that builds JSON.
// nlohmann::json objects keep their keys sorted, so the answer does not depend on the order
// of the tables.
#include "daemon/observe/stats_report.h"

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon {
namespace {

using Json = nlohmann::json;
using registry::Context;
using registry::StatInfo;

// Builds the JSON value of a walk: every stat with a key, metrics only left out.
class JsonSink : public registry::Sink {
 public:
  JsonSink() : stack_{&root_} {}
  Json Take() { return std::move(root_); }

  bool Wants(const StatInfo& stat) const override { return stat.key != nullptr; }
  void Value(const StatInfo& stat, const Json& value) override { Put(stat.key, value); }
  void BeginObject(const char* key, std::string_view) override {
    stack_.push_back(Put(key, Json::object()));
  }
  void EndObject() override { stack_.pop_back(); }
  void BeginArray(const char* key, const char*) override {
    stack_.push_back(Put(key, Json::array()));
  }
  void EndArray() override { stack_.pop_back(); }
  void Null(const char* key) override { Put(key, nullptr); }

 private:
  // Adds `value` to the innermost object or array and returns where it went. An object's
  // place stays valid while its fields are added; an array's element is the last one while
  // its own fields are.
  Json* Put(const char* key, Json value) {
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(value));
      return &top.back();
    }
    Json& slot = top[key];
    slot = std::move(value);
    return &slot;
  }

  Json root_ = Json::object();
  std::vector<Json*> stack_;
};

Context ContextAt(const StatsSources& s, int64_t now) {
  return Context{s, nullptr, now, 0, s.parts.store.builder()->current(), s.parts.engine.Peers(now)};
}

// `docs` without the metrics only, at every depth.
std::vector<StatDoc> StatsOnly(std::vector<StatDoc> docs) {
  std::vector<StatDoc> out;
  for (StatDoc& d : docs) {
    if (d.name.empty()) continue;
    d.fields = StatsOnly(std::move(d.fields));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

Json StatsReport::Stats(int64_t now) const {
  JsonSink sink;
  registry::Walk(registry::TopTable(), ContextAt(s_, now), sink);
  return sink.Take();
}

Json StatsReport::Peers(int64_t now) const {
  JsonSink sink;
  registry::Walk(registry::PeersTable(), ContextAt(s_, now), sink);
  Json answer = sink.Take();
  return std::move(answer["peers"]);
}

std::vector<StatDoc> StatsReference() { return StatsOnly(registry::Docs(registry::TopTable())); }

std::vector<StatDoc> PeersReference() {
  return StatsOnly(registry::Docs(registry::PeersTable())).at(0).fields;
}

}  // namespace peerbloom::daemon
