// Units and alignment for `stats`, `peers` and `top`.
#include "cli/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string_view>

namespace peerbloom::cli {
namespace {

using nlohmann::json;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Printf(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Plain(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return d == std::floor(d) && std::fabs(d) < 1e15 ? Printf("%.0f", d) : Printf("%.4g", d);
  }
  return v.dump();
}

struct Cell {
  std::string text;
  bool right = false;
};

void AppendPadded(const Cell& cell, size_t width, std::string* out) {
  const size_t pad = width - std::min(width, cell.text.size());
  if (cell.right) out->append(pad, ' ');
  out->append(cell.text);
  if (!cell.right) out->append(pad, ' ');
}

// Lines of cells, each column as wide as its widest cell; trailing spaces trimmed.
std::string Align(const std::vector<std::vector<Cell>>& lines, const std::string& indent) {
  std::vector<size_t> widths;
  for (const auto& line : lines) {
    widths.resize(std::max(widths.size(), line.size()), 0);
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].text.size());
  }
  std::string out;
  for (const auto& line : lines) {
    std::string text = indent;
    for (size_t i = 0; i < line.size(); ++i) {
      if (i > 0) text += "  ";
      AppendPadded(line[i], widths[i], &text);
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out += text + "\n";
  }
  return out;
}

bool IsObjectArray(const json& v) {
  return v.is_array() && !v.empty() &&
         std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_object(); });
}

void RenderSection(const json& object, const std::string& indent, std::string* out);

// An object's plain values as aligned lines, then its objects and arrays as subsections.
void RenderSection(const json& object, const std::string& indent, std::string* out) {
  std::vector<std::vector<Cell>> lines;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it->is_object() || IsObjectArray(*it)) continue;
    std::string text;
    if (it->is_array()) {
      for (const json& e : *it) text += (text.empty() ? "" : ", ") + Plain(e);
      if (text.empty()) text = "-";
    } else {
      text = FormatValue(*it, UnitOf(it.key()));
    }
    lines.push_back({{it.key()}, {text}});
  }
  *out += Align(lines, indent);
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it->is_object()) {
      *out += indent + it.key() + "\n";
      RenderSection(*it, indent + "  ", out);
    } else if (IsObjectArray(*it)) {
      for (size_t i = 0; i < it->size(); ++i) {
        *out += indent + it.key() + "[" + std::to_string(i) + "]\n";
        RenderSection((*it)[i], indent + "  ", out);
      }
    }
  }
}

std::string PeerState(const json& row) {
  if (!row.contains("alive")) return "";
  return row.value("alive", false) ? "alive" : "dead";
}

}  // namespace

Unit UnitOf(std::string_view field) {
  if (EndsWith(field, "_unix_ms")) return Unit::kUnixMs;
  if (EndsWith(field, "_ms") || EndsWith(field, "_ms_ago")) return Unit::kMs;
  if (field == "bytes" || field.starts_with("bytes_") || EndsWith(field, "_bytes")) {
    return Unit::kBytes;
  }
  if (field == "fill" || EndsWith(field, "_fpr") || EndsWith(field, "_rate")) return Unit::kRatio;
  if (field == "log2_bits") return Unit::kLog2Bits;
  return Unit::kPlain;
}

std::string FormatBytes(double bytes) {
  if (bytes < 1024) return Printf("%.0f B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  bytes /= 1024;
  while (bytes >= 1024 && u + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++u;
  }
  return Printf(bytes < 10 ? "%.2f " : bytes < 100 ? "%.1f " : "%.0f ", bytes) + kUnits[u];
}

std::string FormatMs(double ms) {
  if (ms < 0) return "-";
  if (ms < 1000) return Printf("%.0f ms", ms);
  if (ms < 60'000) return Printf(ms < 10'000 ? "%.2f s" : "%.1f s", ms / 1000);
  const auto s = static_cast<long long>(ms / 1000);
  char buf[64];
  if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm %02llds", s / 60, s % 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%lldh %02lldm", s / 3600, s % 3600 / 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd %02lldh", s / 86400, s % 86400 / 3600);
  }
  return buf;
}

std::string FormatValue(const json& value, Unit unit) {
  if (value.is_null()) return "-";
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (!value.is_number()) return Plain(value);
  const double d = value.get<double>();
  switch (unit) {
    case Unit::kBytes:
      return FormatBytes(d);
    case Unit::kMs:
      return FormatMs(d);
    case Unit::kUnixMs: {
      if (d <= 0) return "-";
      const auto t = static_cast<std::time_t>(d / 1000);
      std::tm tm{};
      char buf[64];
      if (::gmtime_r(&t, &tm) == nullptr) return Plain(value);
      std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
      return buf;
    }
    case Unit::kRatio:
      return d < 0 ? "-" : Printf(d * 100 < 0.1 && d > 0 ? "%.2g %%" : "%.2f %%", d * 100);
    case Unit::kLog2Bits:
      return d < 3 || d > 60 ? Plain(value) : FormatBytes(std::ldexp(1.0, static_cast<int>(d) - 3));
    case Unit::kAuto:
    case Unit::kPlain:
      break;
  }
  return Plain(value);
}

namespace {

// The value at `path` in `row`: a field name, or names joined by '/' into nested objects
// ("routing/routed"); null when any step is missing.
const json* Lookup(const json& row, std::string_view path) {
  const json* at = &row;
  while (true) {
    if (!at->is_object()) return nullptr;
    const size_t slash = path.find('/');
    const auto it = at->find(std::string(path.substr(0, slash)));
    if (it == at->end()) return nullptr;
    at = &*it;
    if (slash == std::string_view::npos) return at;
    path.remove_prefix(slash + 1);
  }
}

// The last name of a field path: its unit comes from that name.
std::string_view LastName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string RenderTable(const std::vector<Column>& columns, const json& rows) {
  std::vector<const Column*> shown;
  for (const Column& c : columns) {
    const bool present = std::any_of(
        rows.begin(), rows.end(), [&](const json& row) { return Lookup(row, c.field) != nullptr; });
    if (present) shown.push_back(&c);
  }
  if (shown.empty()) return "";
  // A column is right-aligned, header included, when it holds numbers.
  std::vector<bool> right(shown.size(), false);
  std::vector<std::vector<Cell>> lines(1);
  for (const json& row : rows) {
    std::vector<Cell>& line = lines.emplace_back();
    for (size_t i = 0; i < shown.size(); ++i) {
      const Column& c = *shown[i];
      const json* found = Lookup(row, c.field);
      const json v = found != nullptr ? *found : json();
      if (c.format != nullptr) {
        line.push_back({c.format(row)});
        continue;
      }
      right[i] = right[i] || v.is_number();
      line.push_back({FormatValue(v, c.unit == Unit::kAuto ? UnitOf(LastName(c.field)) : c.unit)});
    }
  }
  for (size_t i = 0; i < shown.size(); ++i) {
    lines[0].push_back({shown[i]->header});
    for (auto& line : lines) line[i].right = right[i];
  }
  return Align(lines, "");
}

std::string AlignColumns(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right) {
  std::vector<std::vector<Cell>> lines;
  auto add = [&](const std::vector<std::string>& texts) {
    std::vector<Cell>& line = lines.emplace_back();
    for (size_t i = 0; i < texts.size(); ++i)
      line.push_back({texts[i], i < right.size() && right[i]});
  };
  add(header);
  for (const auto& row : rows) add(row);
  return Align(lines, "");
}

const std::vector<Column>& PeerColumns() {
  // One line per field; columns no row carries are left out (an older daemon, or fields
  // added later: routing outcomes per peer).
  static const std::vector<Column> kColumns = {
      {"NODE", "node_id"},
      {"ENDPOINT", "endpoint"},
      {"STATE", "alive", Unit::kAuto, PeerState},
      {"VERSION", "version"},
      {"ITEMS", "estimated_items"},
      {"SUMMARY", "log2_bits"},
      {"K", "k"},
      {"SUMMARY AGE", "summary_age_ms"},
      {"HEARD", "last_heard_ms_ago"},
      {"ROUTED", "routing/routed"},
      {"HITS", "routing/hits"},
      {"FALSE HITS", "routing/false_hits"},
      {"UNREACHABLE", "routing/unreachable"},
      {"FALSE-HIT RATE", "routing/false_hit_rate"},
      {"EST. FPR", "routing/estimated_fpr"},
  };
  return kColumns;
}

std::string RenderPeers(const json& peers) {
  const std::string table = RenderTable(PeerColumns(), peers);
  return table.empty() ? "no members known\n" : table;
}

std::string RenderStats(const json& stats) {
  std::string out;
  RenderSection(stats, "", &out);
  return out;
}

}  // namespace peerbloom::cli
