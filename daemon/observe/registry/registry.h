// The registry of the daemon's counters: each is declared once, as a Stat, and every place
// that shows it renders from that declaration: the `stats` and `peers` answers (JSON), the
// /metrics text, and the references the docs are checked against (docs/operations.md).
//
// A Stat names its JSON key (its place in its group), says what it means, whether it is a
// counter or a gauge, how to read it, and where /metrics shows it (a family and the labels of
// its sample), or that it does not: kStatsOnly. A Stat without a key is a metric only. A
// group (an object, an array of objects or null) is a Stat that walks a table of its own.
//
// Rendering is a walk of the tables through a Sink: the JSON sink builds the answer, the
// metrics sink writes the samples of exported stats. Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_OBSERVE_REGISTRY_REGISTRY_H_
#define PEERBLOOM_DAEMON_OBSERVE_REGISTRY_REGISTRY_H_

#include <array>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peerbloom::daemon::registry {

using Json = nlohmann::json;

enum class Type {
  kCounter,  // only grows while the daemon runs
  kGauge,    // a level or a setting that may go either way
  kValue,    // a name, a path, a flag or a text: shown by `stats`, never a metric
  kGroup,    // an object, an array of objects or null, with fields of its own
};
inline constexpr Type kCounter = Type::kCounter;
inline constexpr Type kGauge = Type::kGauge;
inline constexpr Type kValue = Type::kValue;

// A label of a sample. A group's label has no value: each element of its array supplies one.
struct Label {
  const char* name = nullptr;
  const char* value = nullptr;
};

enum class Unit {
  kAsIs,
  kMsToSeconds,  // a time in ms, exported in seconds; a negative one (none yet) is no sample
};

// Where /metrics shows a stat: its family and the labels that tell its sample from the other
// samples of that family. A family whose samples come from several stats declares its help
// once as a Family (parts.h); one that a single stat makes takes that stat's help. For a
// group: whether any of its fields is exported (then /metrics walks it), and the label its
// array's elements give their samples.
struct Export {
  const char* family = nullptr;  // nullptr: not exported
  std::array<Label, 2> labels{};
  Unit unit = Unit::kAsIs;
  bool fields_exported = false;  // groups only
};

// Neither the value nor, for a group, any of its fields is a metric.
inline constexpr Export kStatsOnly{};
// A group some of whose fields are metrics.
inline constexpr Export kFieldsExported{nullptr, {}, Unit::kAsIs, true};

constexpr Export Metric(const char* family, Label a = {}, Label b = {}) {
  return {family, {a, b}, Unit::kAsIs};
}
constexpr Export MetricSeconds(const char* family) { return {family, {}, Unit::kMsToSeconds}; }
// An array group some of whose fields are metrics; each element labels its samples with
// `label` (a peer, a feed, a digest source).
constexpr Export ByElement(const char* label) {
  return {nullptr, {Label{label, nullptr}}, Unit::kAsIs, true};
}

// What a Sink is told of a stat, whatever its source.
struct StatInfo {
  const char* key;  // nullptr: a metric only
  const char* help;
  Type type;
  const Export* metric;
};

// Receives a walk of the tables.
class Sink {
 public:
  virtual ~Sink() = default;
  // Whether the sink takes this value (so it is read) or enters this group.
  virtual bool Wants(const StatInfo& stat) const = 0;
  virtual void Value(const StatInfo& stat, const Json& value) = 0;
  // A nested object; `key` is nullptr for an element of an array, which names its label's
  // value in `label` (empty without one).
  virtual void BeginObject(const char* key, std::string_view label) = 0;
  virtual void EndObject() = 0;
  virtual void BeginArray(const char* key, const char* label) = 0;
  virtual void EndArray() = 0;
  virtual void Null(const char* key) = 0;
};

// A documented stat: a value, or a group with its fields.
struct StatDoc {
  std::string name;  // empty for a metric only
  std::string description;
  std::vector<StatDoc> fields;  // empty for a plain value
  Type type = Type::kValue;
  Export metric;
};

// Where a group's walk writes: its key and the label its array's elements carry.
struct Place {
  const char* key;
  const char* label;
};

template <typename Source>
struct Stat {
  const char* key;
  const char* help;
  Type type;
  Export metric;
  Json (*read)(const Source&) = nullptr;
  // A group instead: writes its object, array or null at `place`, and documents its fields.
  void (*walk)(const Source&, Sink&, Place place) = nullptr;
  std::vector<StatDoc> (*fields)() = nullptr;

  StatInfo Info() const { return {key, help, type, &metric}; }
};

template <typename Source>
using Table = std::span<const Stat<Source>>;

template <typename Source>
void Walk(Table<Source> table, const Source& source, Sink& sink) {
  for (const Stat<Source>& e : table) {
    const StatInfo info = e.Info();
    if (!sink.Wants(info)) continue;
    if (e.walk != nullptr) {
      e.walk(source, sink, Place{e.key, e.metric.labels[0].name});
    } else {
      sink.Value(info, e.read(source));
    }
  }
}

// `table` read from `source` as an object at `place` (or as an element with label `label`).
template <typename Source>
void Object(Table<Source> table, const Source& source, Sink& sink, const char* key,
            std::string_view label = {}) {
  sink.BeginObject(key, label);
  Walk(table, source, sink);
  sink.EndObject();
}

template <typename Source>
std::vector<StatDoc> Docs(Table<Source> table) {
  std::vector<StatDoc> out;
  for (const Stat<Source>& e : table) {
    out.push_back({e.key ? e.key : "", e.help, e.fields ? e.fields() : std::vector<StatDoc>(),
                   e.type, e.metric});
  }
  return out;
}

template <typename Source, size_t N>
void Object(const std::array<Stat<Source>, N>& table, const Source& source, Sink& sink,
            const char* key, std::string_view label = {}) {
  Object(Table<Source>(table), source, sink, key, label);
}
template <typename Source, size_t N>
std::vector<StatDoc> Docs(const std::array<Stat<Source>, N>& table) {
  return Docs(Table<Source>(table));
}

// A group of the same source's `Part()` table, as an object.
template <typename Source, Table<Source> (*Part)()>
void WalkPart(const Source& source, Sink& sink, Place place) {
  Object(Part(), source, sink, place.key);
}
template <typename Source, Table<Source> (*Part)()>
std::vector<StatDoc> PartDocs() {
  return Docs(Part());
}

template <typename Source, Table<Source> (*Part)()>
constexpr Stat<Source> Group(const char* key, const char* help, Export metric = kFieldsExported) {
  return {
      key, help, Type::kGroup, metric, nullptr, &WalkPart<Source, Part>, &PartDocs<Source, Part>};
}

}  // namespace peerbloom::daemon::registry

#endif  // PEERBLOOM_DAEMON_OBSERVE_REGISTRY_REGISTRY_H_
