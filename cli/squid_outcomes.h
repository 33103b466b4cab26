// `peerbloom squid-outcomes`: counts a route log (peerbloom/squid_route_log.h) and reports
// the outcomes to a daemon with the `report` operation, for a daemon that does not read the
// log itself (its `squid_route_log` setting). A request that went direct counts as a false
// hit here: only a daemon that reads the log can tell an unreachable peer apart.
#ifndef PEERBLOOM_CLI_SQUID_OUTCOMES_H_
#define PEERBLOOM_CLI_SQUID_OUTCOMES_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::cli {

enum class RouteOutcome { kNotRouted, kHit, kFalseHit };

// The outcome of one log line; *peer receives the cache_peer name of a routed line.
RouteOutcome ParseOutcomeLine(std::string_view line, std::string* peer);

struct PeerOutcomes {
  uint64_t hits = 0;
  uint64_t false_hits = 0;
};

// Outcomes counted per cache_peer name since the last clear.
struct OutcomeTally {
  std::map<std::string, PeerOutcomes> by_peer;
  // Counts a line; true when it was routed.
  bool Add(std::string_view line);
};

// Reads a growing log: each call hands every complete new line to `fn`. A file replaced
// (another inode) or cut shorter than what was read is read again from its start.
class OutcomeLogReader {
 public:
  explicit OutcomeLogReader(std::string path) : path_(std::move(path)) {}
  // IOError when the file cannot be opened or read.
  Status ReadAvailable(const std::function<void(std::string_view)>& fn);

 private:
  std::string path_;
  ino_t inode_ = 0;
  uint64_t offset_ = 0;
  std::string partial_;
};

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_SQUID_OUTCOMES_H_
