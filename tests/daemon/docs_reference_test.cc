// The docs are checked against the tables the code runs on: the config keys
// (docs/config.md), the stats answer (docs/operations.md, "Stats and what to watch"), the
// exported metrics (docs/operations.md, "Metrics"), the
// control operations and the peers answer (docs/control-protocol.md). A failure names what
// one side has and the other lacks.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/control/control_ops.h"
#include "daemon/observe/metrics_report.h"
#include "daemon/observe/stats_report.h"
#include "peerbloom/client/control_protocol.h"

namespace peerbloom::daemon {
namespace {

std::string ReadDoc(const std::string& name) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/docs/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The text after the line `heading` up to the next heading of the same or a higher level.
std::string Section(const std::string& doc, const std::string& heading) {
  const size_t at = doc.find("\n" + heading + "\n");
  EXPECT_NE(at, std::string::npos) << heading;
  if (at == std::string::npos) return "";
  const std::string level = heading.substr(0, heading.find(' ') + 1);
  size_t end = at + heading.size() + 2;
  for (;;) {
    end = doc.find("\n#", end);
    if (end == std::string::npos) break;
    const size_t hashes = doc.find_first_not_of('#', end + 1) - end - 1;
    if (hashes <= level.size() - 1) break;
    ++end;
  }
  const size_t body = at + heading.size() + 2;
  return end == std::string::npos ? doc.substr(body) : doc.substr(body, end - body);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The cells of a markdown table row, trimmed; empty for any other line.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line[0] != '|') return cells;
  size_t at = 1;
  for (size_t bar; (bar = line.find('|', at)) != std::string::npos; at = bar + 1) {
    std::string cell = line.substr(at, bar - at);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
  }
  return cells;
}

// Every `name` in backticks that looks like a field name: [a-z0-9_], a trailing [] dropped.
std::set<std::string> Names(const std::string& text) {
  static const std::regex kName("`([a-z][a-z0-9_]*)(\\[\\])?`");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kName), end; it != end; ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

std::string Unquote(std::string s) {
  std::string out;
  for (char c : s) {
    if (c != '`') out.push_back(c);
  }
  return out;
}

void Flatten(const std::vector<StatDoc>& docs, std::set<std::string>* out) {
  for (const StatDoc& d : docs) {
    out->insert(d.name);
    Flatten(d.fields, out);
  }
}

TEST(DocsReference, ConfigMdDocumentsExactlyTheParsersKeys) {
  std::map<std::string, std::string> documented;  // key -> default cell
  for (const std::string& line : Lines(ReadDoc("config.md"))) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() < 3 || cells[0].empty() || cells[0][0] != '`') continue;
    std::string key = Unquote(cells[0]);
    if (key.rfind("[[", 0) == 0) key = key.substr(2, key.size() - 4);
    EXPECT_TRUE(documented.emplace(key, Unquote(cells[1])).second) << "twice: " << key;
  }
  std::map<std::string, std::string> parsed;
  for (const ConfigKeyInfo& k : ConfigReference()) {
    parsed.emplace(std::string(k.key), Unquote(std::string(k.default_value)));
  }
  EXPECT_EQ(documented, parsed);
}

TEST(DocsReference, OperationsMdListsEveryStat) {
  const std::string section = Section(ReadDoc("operations.md"), "## Stats and what to watch");
  std::map<std::string, std::set<std::string>> documented;  // group ("" = top level) -> names
  for (const std::string& line : Lines(section)) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() < 2 || cells[0] == "group" || cells[0].rfind("---", 0) == 0) continue;
    const std::set<std::string> group = Names(cells[0]);
    ASSERT_LE(group.size(), 1u) << line;
    documented[group.empty() ? "" : *group.begin()] = Names(cells[1]);
  }
  std::map<std::string, std::set<std::string>> answered;
  for (const StatDoc& top : StatsReference()) {
    if (top.fields.empty()) {
      answered[""].insert(top.name);
    } else {
      Flatten(top.fields, &answered[top.name]);
    }
  }
  EXPECT_EQ(documented, answered);
}

// Each row `| `name` | type | `label` (values); ... | meaning |` against the metric table.
TEST(DocsReference, OperationsMdListsEveryMetric) {
  const std::string section = Section(ReadDoc("operations.md"), "## Metrics");
  std::map<std::string, std::pair<std::string, std::set<std::string>>> documented;
  for (const std::string& line : Lines(section)) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() < 4 || cells[0].rfind("`peerbloom_", 0) != 0) continue;
    const bool fresh =
        documented.emplace(Unquote(cells[0]), std::make_pair(cells[1], Names(cells[2]))).second;
    EXPECT_TRUE(fresh) << "twice: " << cells[0];
  }
  std::map<std::string, std::pair<std::string, std::set<std::string>>> exported;
  for (const MetricDoc& m : MetricsReference()) {
    std::set<std::string> labels;
    std::istringstream in(m.labels);
    for (std::string label; std::getline(in, label, ',');) {
      label = label.substr(label.find_first_not_of(' '));
      labels.insert(label.substr(0, label.find('=')));
    }
    exported[m.name] = {m.type, labels};
  }
  EXPECT_EQ(documented, exported);
}

TEST(DocsReference, ControlProtocolMdListsEveryOperation) {
  const std::string section = Section(ReadDoc("control-protocol.md"), "## Operations");
  std::vector<std::pair<std::string, std::string>> table;
  std::set<std::string> headed;
  for (const std::string& line : Lines(section)) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() == 2 && !cells[0].empty() && cells[0][0] == '`') {
      table.emplace_back(Unquote(cells[0]), cells[1]);
    }
    if (line.rfind("### ", 0) == 0) {
      static const std::regex kOp("`([a-z-]+)`");
      for (std::sregex_iterator it(line.begin(), line.end(), kOp), end; it != end; ++it) {
        headed.insert((*it)[1]);
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> ops;
  std::set<std::string> names;
  for (const ControlOps::Op& op : ControlOps::Table()) {
    ops.emplace_back(std::string(op.name), std::string(op.description));
    names.insert(std::string(op.name));
  }
  EXPECT_EQ(table, ops);
  EXPECT_EQ(headed, names);
}

// The daemon serves exactly the operations the client library names, in the same order.
TEST(DocsReference, TheOperationTableIsTheProtocolsOperationList) {
  std::vector<std::string_view> served;
  for (const ControlOps::Op& op : ControlOps::Table()) served.push_back(op.name);
  const std::vector<std::string_view> named(client::kControlOps.begin(), client::kControlOps.end());
  EXPECT_EQ(served, named);
}

TEST(DocsReference, ControlProtocolMdListsEveryPeerField) {
  const std::string section = Section(ReadDoc("control-protocol.md"), "### `peers`");
  std::set<std::string> fields;
  Flatten(PeersReference(), &fields);
  EXPECT_EQ(Names(section), fields);
}

}  // namespace
}  // namespace peerbloom::daemon
