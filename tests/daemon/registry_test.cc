// The registry declares each counter once (daemon/observe/registry/); these tests hold the two
// renderers to it: every exported stat is in the `stats` answer at its place and in /metrics
// under its family and labels, and /metrics holds no family the registry does not declare.
// The daemon runs in-process with a fake clock; /metrics is fetched from 127.0.0.1 on the
// port the OS picked.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/loop/clock.h"
#include "daemon/loop/daemon.h"
#include "daemon/observe/metrics_report.h"
#include "daemon/observe/registry/parts.h"
#include "tests/daemon/control_ask.h"

namespace peerbloom::daemon::registry {
namespace {

// An exported stat and where the answer has it: `array` is the path of the array whose
// elements hold it (empty for none) and `label` the label they give, `path` its place in the
// answer or in an element.
struct Exported {
  std::vector<std::string> array;
  const char* label;
  std::vector<std::string> path;
  StatDoc doc;
};

void Collect(const std::vector<StatDoc>& docs, const Exported& at, std::vector<Exported>* out) {
  for (const StatDoc& d : docs) {
    Exported here = at;
    here.path.push_back(d.name);
    here.doc = d;
    if (d.type == Type::kGroup) {
      if (!d.metric.fields_exported) continue;
      if (d.metric.labels[0].name != nullptr) here = {here.path, d.metric.labels[0].name, {}, d};
      Collect(d.fields, here, out);
    } else if (d.metric.family != nullptr) {
      out->push_back(here);
    }
  }
}

std::vector<Exported> AllExported() {
  std::vector<Exported> out;
  Collect(Docs(TopTable()), Exported{}, &out);
  Collect(Docs(PeersTable()), Exported{}, &out);
  return out;
}

// The exported stats under groups /metrics does not walk: each must be exported through
// another place too (the `peers` answer's `routing` shows stats routing.peers[] exports),
// else /metrics would silently lack it.
void CollectUnwalked(const std::vector<StatDoc>& docs, bool walked, std::vector<StatDoc>* out) {
  for (const StatDoc& d : docs) {
    if (d.type == Type::kGroup) {
      CollectUnwalked(d.fields, walked && d.metric.fields_exported, out);
    } else if (!walked && d.metric.family != nullptr) {
      out->push_back(d);
    }
  }
}

std::string SeriesKey(const Export& e) {
  std::string key = e.family;
  for (const Label& l : e.labels) {
    if (l.name != nullptr) key += std::string(",") + l.name + "=" + l.value;
  }
  return key;
}

TEST(Registry, EveryExportedStatIsReachedByTheMetricsWalk) {
  std::vector<StatDoc> unwalked;
  CollectUnwalked(Docs(TopTable()), true, &unwalked);
  CollectUnwalked(Docs(PeersTable()), true, &unwalked);
  std::set<std::string> walked;
  for (const Exported& e : AllExported()) walked.insert(SeriesKey(e.doc.metric));
  for (const StatDoc& d : unwalked) {
    EXPECT_TRUE(walked.count(SeriesKey(d.metric))) << d.name << " is in a stats-only group";
  }
}

// A family of several stats has its help declared once as a Family; a family of one stat
// takes that stat's help; every member of a family has the family's type.
TEST(Registry, EachFamilyIsDeclaredOnceWithOneType) {
  std::map<std::string, std::vector<const Exported*>> members;
  const std::vector<Exported> exported = AllExported();
  for (const Exported& e : exported) members[e.doc.metric.family].push_back(&e);
  std::map<std::string, const Family*> declared;
  for (const Family& f : AllFamilies()) {
    EXPECT_TRUE(declared.emplace(f.name, &f).second) << "twice: " << f.name;
    if (f.write == nullptr) {
      EXPECT_TRUE(members.count(f.name)) << "no stat makes " << f.name;
    }
  }
  std::map<std::string, std::string> types;
  for (const MetricDoc& m : MetricsReference()) types[m.name] = m.type;
  for (const auto& [family, stats] : members) {
    SCOPED_TRACE(family);
    const bool labelled = stats.front()->doc.metric.labels[0].name != nullptr;
    EXPECT_EQ(declared.count(family) == 1, stats.size() > 1 || labelled);
    for (const Exported* e : stats) {
      EXPECT_TRUE(e->doc.type == Type::kCounter || e->doc.type == Type::kGauge);
      EXPECT_EQ(types[family], e->doc.type == Type::kCounter ? "counter" : "gauge");
    }
  }
}

class RegistryRendering : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbregistry.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::string text = "node_id = \"solo\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \"" +
                             dir_ +
                             "/data\"\ncurve = false\nkey_scheme = \"raw\"\ncapacity = 10000\n"
                             "metrics_listen = \"127.0.0.1:0\"\nnginx_route_socket = \"" +
                             dir_ + "/route.sock\"\n[[feeds]]\npath = \"" + dir_ + "/feed\"\n";
    ASSERT_TRUE(ParseConfig(text, "registry.toml", &config_).ok());
    std::ofstream(dir_ + "/feed") << "+key-1\n+key-2\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Scrape() {
    std::ifstream in(dir_ + "/data/metrics.endpoint");
    std::string bound((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bound = bound.substr(0, bound.find('\n'));
    httplib::Client c("127.0.0.1", std::stoi(bound.substr(bound.rfind(':') + 1)));
    c.set_connection_timeout(std::chrono::seconds(30));
    c.set_read_timeout(std::chrono::seconds(30));
    const httplib::Result r = c.Get("/metrics");
    return r && r->status == 200 ? r->body : "";
  }

  std::string dir_;
  Config config_;
  FakeClock clock_;
  zmq::context_t context_{1};
};

// `family{labels}` as the text writes the series of `e`, its element's label first.
std::string Series(const Exported& e, const std::string& element_label) {
  std::string labels = element_label;
  for (const Label& l : e.doc.metric.labels) {
    if (l.name == nullptr) continue;
    if (!labels.empty()) labels += ',';
    labels += std::string(l.name) + "=\"" + l.value + "\"";
  }
  return std::string(e.doc.metric.family) + (labels.empty() ? "" : "{" + labels + "}") + " ";
}

bool HasLine(const std::string& text, const std::string& prefix) {
  return text.find("\n" + prefix) != std::string::npos || text.rfind(prefix, 0) == 0;
}

// Whether the stat's value in `object` is one /metrics shows (null and negative times are no
// sample), after checking the answer has it at all.
bool Shown(const nlohmann::json& object, const Exported& e) {
  const nlohmann::json* v = &object;
  for (const std::string& key : e.path) {
    EXPECT_TRUE(v->is_object() && v->contains(key))
        << "stats lacks " << key << " of " << e.doc.metric.family;
    if (!v->is_object() || !v->contains(key)) return false;
    v = &(*v)[key];
  }
  if (v->is_null()) return false;
  return e.doc.metric.unit != Unit::kMsToSeconds || v->get<double>() >= 0;
}

// The field of an element that holds its label's value.
std::string LabelField(const std::string& label) {
  if (label == "feed") return "path";
  return label == "source" ? "source" : "node_id";
}

void ExpectSamples(const nlohmann::json& answer, const std::string& text, const Exported& e) {
  if (e.array.empty()) {
    if (!e.doc.name.empty() && !Shown(answer, e)) return;
    // A metric only in seconds may have no sample yet (no snapshot written).
    if (e.doc.name.empty() && e.doc.metric.unit == Unit::kMsToSeconds) return;
    EXPECT_TRUE(HasLine(text, Series(e, ""))) << Series(e, "");
    return;
  }
  const nlohmann::json* elements = &answer;
  for (const std::string& key : e.array) {
    if (!elements->contains(key) || (*elements)[key].is_null()) return;
    elements = &(*elements)[key];
  }
  for (const nlohmann::json& element : *elements) {
    if (!e.doc.name.empty() && !Shown(element, e)) continue;
    const std::string value = element.at(LabelField(e.label)).get<std::string>();
    const std::string label = std::string(e.label) + "=\"" + value + "\"";
    EXPECT_TRUE(HasLine(text, Series(e, label))) << Series(e, label);
  }
}

TEST_F(RegistryRendering, EveryExportedStatIsInStatsAndMetricsAndNothingElse) {
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(1000);
    d.RunOnce(0);
  }
  std::string body;
  nlohmann::json answer = AskDaemon(&context_, config_.control, &d, {{"op", "stats"}}, "", &body);
  ASSERT_TRUE(answer.contains("stats")) << answer;
  nlohmann::json stats = answer["stats"];
  stats["peers"] = AskDaemon(&context_, config_.control, &d, {{"op", "peers"}}, "", &body)["peers"];
  const std::string text = Scrape();
  ASSERT_FALSE(text.empty());

  std::set<std::string> declared;
  for (const MetricDoc& m : MetricsReference()) declared.insert(m.name);
  std::set<std::string> typed;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      typed.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (!typed.count(name) && name.size() > 6 && name.ends_with(suffix)) {
        name = name.substr(0, name.size() - std::string(suffix).size());
      }
    }
    EXPECT_TRUE(typed.count(name)) << "a sample outside a declared family: " << line;
  }
  EXPECT_EQ(typed, declared);
  for (const Exported& e : AllExported()) {
    SCOPED_TRACE(e.doc.metric.family);
    ExpectSamples(stats, text, e);
  }
}

}  // namespace
}  // namespace peerbloom::daemon::registry
