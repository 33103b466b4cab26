// /metrics: a walk of the registry through a sink that writes each exported stat as a sample
// of its family, after the families the loop writes itself. Samples are gathered per family,
// so a family several parts make (gossip_signature_refusals_total) is still one block.
#include "daemon/observe/metrics_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon {
namespace {

using Json = nlohmann::json;
using registry::Context;
using registry::Family;
using registry::StatDoc;
using registry::StatInfo;
using registry::Type;

// A family's label names in the order first seen, with the fixed values its stats give.
struct LabelSet {
  struct One {
    std::string name;
    std::vector<std::string> values;
    bool open = false;  // values come from the data (a peer, a feed, a reason)
  };
  std::vector<One> labels;

  One& Of(std::string_view name) {
    for (One& l : labels) {
      if (l.name == name) return l;
    }
    return labels.emplace_back(One{std::string(name), {}, false});
  }
  void Add(std::string_view name, const char* value) {
    One& l = Of(name);
    if (value == nullptr) {
      l.open = true;
    } else if (std::find(l.values.begin(), l.values.end(), value) == l.values.end()) {
      l.values.emplace_back(value);
    }
  }
  // "peer, outcome=hit|false_hit|unreachable"
  std::string Text() const {
    std::string out;
    for (const One& l : labels) {
      if (!out.empty()) out += ", ";
      out += l.name;
      for (size_t i = 0; !l.open && i < l.values.size(); ++i)
        out += (i == 0 ? "=" : "|") + l.values[i];
    }
    return out;
  }
};

const char* TypeName(Type t) { return t == Type::kCounter ? "counter" : "gauge"; }

// The families in rendering order, and where each one is.
class Reference {
 public:
  Reference() {
    const std::vector<Family> families = registry::AllFamilies();
    for (const Family& f : families) {
      if (f.write != nullptr) AddWritten(f);
    }
    AddStats(registry::Docs(registry::TopTable()), {}, families);
    AddStats(registry::Docs(registry::PeersTable()), {}, families);
    for (size_t i = 0; i < docs_.size(); ++i) docs_[i].labels = labels_[i].Text();
  }

  const std::vector<MetricDoc>& docs() const { return docs_; }
  size_t IndexOf(std::string_view family) const { return index_.find(family)->second; }

 private:
  void AddWritten(const Family& f) {
    Add(f.name, f.type, f.help);
    for (std::string_view rest = f.labels; !rest.empty();) {
      const size_t comma = rest.find(", ");
      const std::string_view label = rest.substr(0, comma);
      labels_.back().Add(label.substr(0, label.find('=')), nullptr);
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 2);
    }
  }

  // The exported stats of `docs`, inside arrays labelled by `outer`.
  void AddStats(const std::vector<StatDoc>& docs, std::vector<const char*> outer,
                const std::vector<Family>& families) {
    for (const StatDoc& d : docs) {
      if (d.type == Type::kGroup) {
        if (!d.metric.fields_exported) continue;
        std::vector<const char*> inner = outer;
        if (d.metric.labels[0].name != nullptr) inner.push_back(d.metric.labels[0].name);
        AddStats(d.fields, inner, families);
        continue;
      }
      if (d.metric.family == nullptr) continue;
      const auto shared = std::find_if(families.begin(), families.end(), [&d](const Family& f) {
        return std::string_view(f.name) == d.metric.family;
      });
      const size_t i = Add(d.metric.family, TypeName(d.type),
                           shared != families.end() ? shared->help : d.description);
      for (const char* label : outer) labels_[i].Add(label, nullptr);
      for (const registry::Label& l : d.metric.labels) {
        if (l.name != nullptr) labels_[i].Add(l.name, l.value);
      }
    }
  }

  size_t Add(std::string_view name, std::string_view type, std::string_view help) {
    const auto [it, fresh] = index_.emplace(std::string(name), docs_.size());
    if (fresh) {
      docs_.push_back({std::string(name), std::string(type), "", std::string(help)});
      labels_.emplace_back();
    }
    return it->second;
  }

  std::vector<MetricDoc> docs_;
  std::vector<LabelSet> labels_;
  std::map<std::string, size_t, std::less<>> index_;
};

const Reference& TheReference() {
  static const Reference* const kReference = new Reference();
  return *kReference;
}

// Writes each exported stat of a walk into its family's block of `blocks`.
class MetricsSink : public registry::Sink {
 public:
  MetricsSink(const Reference& ref, std::vector<std::string>* blocks)
      : ref_(ref), blocks_(blocks) {}

  bool Wants(const StatInfo& stat) const override {
    return stat.type == Type::kGroup ? stat.metric->fields_exported
                                     : stat.metric->family != nullptr;
  }
  void Value(const StatInfo& stat, const Json& value) override;
  // An element of an array (no key) adds its label while the walk is in it.
  void BeginObject(const char* key, std::string_view label) override {
    const bool labelled = key == nullptr && !arrays_.empty() && arrays_.back() != nullptr;
    pushed_.push_back(labelled);
    if (labelled) labels_.emplace_back(arrays_.back(), std::string(label));
  }
  void EndObject() override {
    if (pushed_.back()) labels_.pop_back();
    pushed_.pop_back();
  }
  void BeginArray(const char*, const char* label) override { arrays_.push_back(label); }
  void EndArray() override { arrays_.pop_back(); }
  void Null(const char*) override {}

 private:
  const Reference& ref_;
  std::vector<std::string>* blocks_;
  MetricLabels labels_;              // of the array elements the walk is in
  std::vector<const char*> arrays_;  // each open array's element label, null for none
  std::vector<bool> pushed_;         // per open object: whether it added a label
};

void MetricsSink::Value(const StatInfo& stat, const Json& value) {
  const registry::Export& e = *stat.metric;
  MetricLabels labels = labels_;
  for (const registry::Label& l : e.labels) {
    if (l.name != nullptr) labels.emplace_back(l.name, l.value);
  }
  MetricWriter w(&(*blocks_)[ref_.IndexOf(e.family)], e.family);
  if (e.unit == registry::Unit::kMsToSeconds) {
    if (value.is_number() && value.get<double>() >= 0)
      w.Sample(labels, value.get<double>() / 1000.0);
    return;
  }
  w.Sample(labels, value);
}

}  // namespace

std::string MetricsReport::Render(int64_t now, int64_t now_unix_ms) const {
  const Context c{s_,
                  &loop_,
                  now,
                  now_unix_ms,
                  s_.parts.store.builder()->current(),
                  s_.parts.engine.Peers(now)};
  const Reference& ref = TheReference();
  std::vector<std::string> blocks(ref.docs().size());
  for (const Family& f : registry::LoopFamilies()) {
    MetricWriter w(&blocks[ref.IndexOf(f.name)], f.name);
    f.write(c, w);
  }
  MetricsSink sink(ref, &blocks);
  registry::Walk(registry::TopTable(), c, sink);
  registry::Walk(registry::PeersTable(), c, sink);
  std::string out;
  out.reserve(16 << 10);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const MetricDoc& m = ref.docs()[i];
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", m.name, m.help, m.name, m.type);
    out += blocks[i];
  }
  return out;
}

std::vector<MetricDoc> MetricsReference() { return TheReference().docs(); }

}  // namespace peerbloom::daemon
