// HelperReports: what Squid's helpers (`peerbloom squid-helper`) answered, as they report it
// over the who-has socket (docs/squid.md, "What the helper answered"). Only the helper sees
// its own timeouts and the times it could not reach the daemon at all; it counts them and
// sends its counters, cumulative since it started, in a report line whenever the daemon
// answers again, so an operator finds them in stats, /metrics and `top` rather than only in
// Squid's cache.log.
//
// A report line (one line of the who-has socket, answered with an empty line):
//   "\x01peerbloom-helper pid=P peer=N none=N invalid=N no_socket=N denied=N refused=N
//    timeout=N other=N"
// Unknown keys are ignored, so a newer helper may add counters. Squid restarts its helpers
// (a reconfigure, a crash): each process reports under its pid, and the totals add the last
// report of every process. At most kMaxHelpers processes are kept one by one; the one heard
// from least recently is folded into the totals of retired ones.
//
// Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_OBSERVE_HELPER_REPORTS_H_
#define PEERBLOOM_DAEMON_OBSERVE_HELPER_REPORTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>

namespace peerbloom::daemon {

// The first bytes of a report line: no URL starts with a control character.
inline constexpr std::string_view kHelperReportPrefix = "\x01peerbloom-helper ";

struct HelperCounts {
  uint64_t peer = 0;     // answered OK peer=NAME
  uint64_t none = 0;     // answered ERR: no peer's summary claims the URL
  uint64_t invalid = 0;  // answered ERR: the line held no URL
  // Answered ERR because the daemon could not be asked, by cause:
  uint64_t no_socket = 0;  // the socket does not exist (daemon not started, wrong path)
  uint64_t denied = 0;     // permission denied (the helper's user may not connect)
  uint64_t refused = 0;    // connection refused (a socket left by a daemon that is gone)
  uint64_t timeout = 0;    // no answer within the helper's --wait-ms
  uint64_t other = 0;      // any other failure, and ERR at once during --retry-ms after one
  uint64_t Errors() const { return no_socket + denied + refused + timeout + other; }
  uint64_t Answers() const { return peer + none + invalid + Errors(); }
  void Add(const HelperCounts& o);
};

class HelperReports {
 public:
  static constexpr size_t kMaxHelpers = 64;

  // One report line (it starts with kHelperReportPrefix). False when it is malformed: no pid,
  // or a value that is not a number; nothing changes then.
  bool Report(std::string_view line, int64_t now_ms);

  // The sum over every helper process that ever reported.
  HelperCounts Totals() const;
  // Processes that reported within `window_ms` of `now_ms`.
  size_t Active(int64_t now_ms, int64_t window_ms) const;
  // When the latest report came (0 before any).
  int64_t last_report_ms() const { return last_report_ms_; }
  uint64_t reports() const { return reports_; }
  uint64_t malformed() const { return malformed_; }

 private:
  struct Helper {
    HelperCounts counts;
    int64_t last_ms = 0;
  };
  std::map<uint64_t, Helper> helpers_;  // by pid
  HelperCounts retired_;
  int64_t last_report_ms_ = 0;
  uint64_t reports_ = 0;
  uint64_t malformed_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_HELPER_REPORTS_H_
