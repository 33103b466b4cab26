// What became of routed requests, read from a Squid access log in the `peerbloom` logformat
// (configs/squid/peerbloom-routing.conf, docs/squid.md):
//
//   logformat peerbloom %ts.%03tu %{peer}note %Ss/%03>Hs %Sh/%<a %>ru
//
// A line whose `peer` note is "-" was not routed. Otherwise the hierarchy code says how the
// request was served: by a parent or sibling (FIRSTUP_PARENT, ANY_OLD_PARENT, ...) it was a
// hit at the peer; DIRECT after the peer answered that it does not hold the URL (a 504 to
// only-if-cached) it was a false hit; HIER_NONE (a local hit, or refused before forwarding)
// it was not routed at all.
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
