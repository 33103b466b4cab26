#include "cli/squid_outcomes.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/tool_util.h"
#include "peerbloom/squid_route_log.h"

namespace peerbloom::cli {
RouteOutcome ParseOutcomeLine(std::string_view line, std::string* peer) {
  RouteLogEntry e = ParseRouteLogLine(line);
  switch (e.outcome) {
    case RouteLogOutcome::kPeer:
      *peer = std::move(e.peer);
      return RouteOutcome::kHit;
    case RouteLogOutcome::kDirect:
      *peer = std::move(e.peer);
      return RouteOutcome::kFalseHit;
    default:
      return RouteOutcome::kNotRouted;
  }
}

bool OutcomeTally::Add(std::string_view line) {
  std::string peer;
  const RouteOutcome outcome = ParseOutcomeLine(line, &peer);
  if (outcome == RouteOutcome::kNotRouted) return false;
  PeerOutcomes& p = by_peer[peer];
  ++(outcome == RouteOutcome::kHit ? p.hits : p.false_hits);
  return true;
}

Status OutcomeLogReader::ReadAvailable(const std::function<void(std::string_view)>& fn) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    return Status::IOError("cannot read " + QuotePath(path_) + ": " + std::strerror(errno));
  }
  if (st.st_ino != inode_ || static_cast<uint64_t>(st.st_size) < offset_) {
    inode_ = st.st_ino;
    offset_ = 0;
    partial_.clear();
  }
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + QuotePath(path_));
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(1 << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    offset_ += got;
    partial_.append(chunk.data(), got);
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      fn(std::string_view(partial_).substr(start, nl - start));
    }
    partial_.erase(0, start);
  }
  return Status::Ok();
}

}  // namespace peerbloom::cli
