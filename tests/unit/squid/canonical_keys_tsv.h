// The format of tests/data/squid/canonical_keys.tsv: URL spellings with the store key a real
// Squid gave each. One row per line, four tab-separated fields:
//
//   settings  "default", or the squid.conf settings of that Squid as space-separated
//             name=value: "uri_whitespace=encode append_domain=.lab"
//   spelling  the request-target as sent
//   canonical what CanonicalSquidUrl makes of it, or "-" when Squid refused the URL
//   key       the KEY of the SWAPOUT line in Squid's store.log, or "status=NNN", Squid's
//             answer to a URL it refused
//
// spelling and canonical write every byte outside 0x21-0x7e, and '\', as \xHH (two lower-case
// hex digits), so the file is plain ASCII and its whitespace is only the separators. Lines
// starting with '#' are comments. Written by the integration test, read by the unit test.
#ifndef PEERBLOOM_TESTS_UNIT_SQUID_CANONICAL_KEYS_TSV_H_
#define PEERBLOOM_TESTS_UNIT_SQUID_CANONICAL_KEYS_TSV_H_

#include <sstream>
#include <string>
#include <string_view>

#include "peerbloom/squid_url.h"

namespace peerbloom::squid_keys_tsv {

struct Row {
  std::string settings, spelling, canonical, key;
};

inline std::string Escape(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c > 0x20 && c < 0x7f && c != '\\') {
      out.push_back(ch);
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

inline bool Unescape(std::string_view text, std::string* out) {
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out->push_back(text[i]);
      continue;
    }
    if (i + 3 >= text.size()) return false;
    if (text[i + 1] != 'x' || hex(text[i + 2]) < 0 || hex(text[i + 3]) < 0) return false;
    out->push_back(static_cast<char>(hex(text[i + 2]) << 4 | hex(text[i + 3])));
    i += 3;
  }
  return true;
}

inline std::string FormatRow(const Row& row) {
  return row.settings + "\t" + Escape(row.spelling) + "\t" +
         (row.canonical == "-" ? "-" : Escape(row.canonical)) + "\t" + row.key + "\n";
}

// False on a malformed line.
inline bool ParseRow(std::string_view line, Row* row) {
  std::string fields[4];
  for (int i = 0; i < 4; ++i) {
    const size_t tab = line.find('\t');
    if ((tab == std::string_view::npos) != (i == 3)) return false;
    fields[i] = std::string(line.substr(0, tab));
    line.remove_prefix(tab == std::string_view::npos ? line.size() : tab + 1);
  }
  row->settings = fields[0];
  row->key = fields[3];
  if (!Unescape(fields[1], &row->spelling)) return false;
  if (fields[2] == "-") {
    row->canonical = "-";
    return true;
  }
  return Unescape(fields[2], &row->canonical);
}

// The options a settings field stands for; false on an unknown setting.
inline bool ParseSettings(const std::string& settings, SquidUrlOptions* options) {
  *options = SquidUrlOptions();
  if (settings == "default") return true;
  std::istringstream words(settings);
  for (std::string word; words >> word;) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) return false;
    const std::string name = word.substr(0, eq), value = word.substr(eq + 1);
    if (name == "uri_whitespace") {
      const auto policy = ParseUriWhitespace(value);
      if (!policy) return false;
      options->uri_whitespace = *policy;
    } else if (name == "append_domain") {
      options->append_domain = value;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace peerbloom::squid_keys_tsv

#endif  // PEERBLOOM_TESTS_UNIT_SQUID_CANONICAL_KEYS_TSV_H_
