// Squid's native access.log format (logformat "squid", the default), one request a line:
//
//   time.ms elapsed client code/status bytes method URL user hierarchy/peer type
//   1795327317.645      4 127.0.0.1 TCP_MISS/200 1705 GET http://h/o - HIER_DIRECT/h text/plain
//
// Fields are separated by runs of spaces (elapsed is right-aligned). Squid writes 10 fields;
// the user and content type may be "-", and a line with an extra trailing field (logformat
// additions) is accepted: only the first seven are needed. Anything else is malformed and
// the caller counts it; one bad line never stops a replay.
#ifndef PEERBLOOM_BENCH_SUMMARY_CACHE_ACCESS_LOG_H_
#define PEERBLOOM_BENCH_SUMMARY_CACHE_ACCESS_LOG_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom::sim {

struct AccessLogRecord {
  int64_t time_ms = 0;  // Unix time of the reply, in milliseconds
  int64_t elapsed_ms = 0;
  std::string_view client;
  std::string_view code;  // e.g. TCP_MISS
  int status = 0;         // HTTP status, 0 when Squid logged none (e.g. TCP_MISS/000)
  uint64_t bytes = 0;
  std::string_view method;
  std::string_view url;
};

inline std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "1795327317.645" -> 1795327317645. Squid prints exactly three decimals; fewer are accepted.
inline bool ParseLogTime(std::string_view s, int64_t* ms) {
  const size_t dot = s.find('.');
  int64_t sec = 0;
  if (!ParseNumber(s.substr(0, dot), &sec) || sec < 0) return false;
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    std::string_view f = s.substr(dot + 1);
    if (f.empty() || f.size() > 3 || !ParseNumber(f, &frac)) return false;
    for (size_t i = f.size(); i < 3; ++i) frac *= 10;
  }
  *ms = sec * 1000 + frac;
  return true;
}

// Parses one line (without its newline). InvalidArgument naming what is wrong; *out points
// into `line` and is valid only while it lives.
inline Status ParseAccessLogLine(std::string_view line, AccessLogRecord* out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::vector<std::string_view> f = SplitFields(line);
  if (f.size() < 7) {
    return Status::InvalidArgument("expected at least 7 fields, got '" + std::to_string(f.size()) +
                                   "'");
  }
  AccessLogRecord r;
  if (!ParseLogTime(f[0], &r.time_ms)) {
    return Status::InvalidArgument("bad time '" + std::string(f[0]) + "'");
  }
  if (!ParseNumber(f[1], &r.elapsed_ms) || r.elapsed_ms < 0) {
    return Status::InvalidArgument("bad elapsed time '" + std::string(f[1]) + "'");
  }
  r.client = f[2];
  const size_t slash = f[3].find('/');
  if (slash == std::string_view::npos || slash == 0 ||
      !ParseNumber(f[3].substr(slash + 1), &r.status)) {
    return Status::InvalidArgument("bad code/status '" + std::string(f[3]) + "'");
  }
  r.code = f[3].substr(0, slash);
  if (!ParseNumber(f[4], &r.bytes)) {
    return Status::InvalidArgument("bad size '" + std::string(f[4]) + "'");
  }
  r.method = f[5];
  r.url = f[6];
  *out = r;
  return Status::Ok();
}

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_BENCH_SUMMARY_CACHE_ACCESS_LOG_H_
