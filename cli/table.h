// Readable output of the daemon's JSON answers: values with units and aligned tables.
//
// Everything is driven by the JSON itself: a value's unit comes from its field name (UnitOf),
// `stats` is rendered by walking its objects, and a table of rows (`peers`) is a list of
// columns naming JSON fields. A column whose field no row carries is left out, so a field the
// daemon starts to send shows up by adding one line to a column list, and an older daemon
// that lacks it gets no empty column.
#ifndef PEERBLOOM_CLI_TABLE_H_
#define PEERBLOOM_CLI_TABLE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace peerbloom::cli {

enum class Unit {
  kAuto,      // from the field name (UnitOf)
  kPlain,     // as it is: numbers in digits, strings as they are
  kBytes,     // 1536 -> "1.5 KiB"
  kMs,        // milliseconds: 850 -> "850 ms", 95000 -> "1m 35s"; negative -> "-"
  kUnixMs,    // wall time in ms since 1970: "2026-11-23 14:50:01 UTC"; 0 or less -> "-"
  kRatio,     // 0.0123 -> "1.23 %"
  kLog2Bits,  // log2 of a bit count: 20 -> "128 KiB"
};

// The unit a field's name implies: `*_unix_ms` is a wall time, `*_ms` and `*_ms_ago` are
// durations, `bytes`, `bytes_*` and `*_bytes` sizes, `fill`, `*_fpr` and `*_rate` ratios,
// `log2_bits` a size; everything else is plain.
Unit UnitOf(std::string_view field);

// One value for a person: null -> "-", booleans "yes"/"no", numbers with the unit.
std::string FormatValue(const nlohmann::json& value, Unit unit);
std::string FormatBytes(double bytes);
std::string FormatMs(double ms);

struct Column {
  const char* header;
  const char* field;
  Unit unit = Unit::kAuto;
  // Overrides the field's value (e.g. a state word from a boolean); null when the row lacks it.
  std::string (*format)(const nlohmann::json& row) = nullptr;
};

// Text cells as an aligned table: the header line, then the rows; `right[i]` right-aligns
// column i (header included). Two spaces between columns, no trailing spaces.
std::string AlignColumns(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right);

// Rows (JSON objects) as an aligned table: a header line, then one line a row; numbers
// right-aligned, text left-aligned, two spaces between columns, no trailing spaces. Empty
// when there are no rows.
std::string RenderTable(const std::vector<Column>& columns, const nlohmann::json& rows);

// The `peers` answer as a table.
const std::vector<Column>& PeerColumns();
// The peers table, or "no members known" when there are none.
std::string RenderPeers(const nlohmann::json& peers);

// The `stats` answer: the top-level values first, then each object as an indented section of
// aligned "name  value" lines; an array of objects gives one subsection per element.
std::string RenderStats(const nlohmann::json& stats);

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_TABLE_H_
