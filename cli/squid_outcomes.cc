#include "cli/squid_outcomes.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/tool_util.h"

namespace peerbloom::cli {
namespace {

std::string_view Field(std::string_view* line) {
  const size_t start = line->find_first_not_of(' ');
  if (start == std::string_view::npos) return *line = {}, std::string_view();
  line->remove_prefix(start);
  const size_t end = line->find(' ');
  const std::string_view field = line->substr(0, end);
  line->remove_prefix(end == std::string_view::npos ? line->size() : end);
  return field;
}

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

RouteOutcome ParseOutcomeLine(std::string_view line, std::string* peer) {
  Field(&line);  // time
  const std::string_view note = Field(&line);
  Field(&line);  // Squid status / HTTP status
  const std::string_view hier = Field(&line);
  if (note.empty() || note == "-" || hier.empty()) return RouteOutcome::kNotRouted;
  const std::string_view code = hier.substr(0, hier.find('/'));
  // Several values of one note are logged ","-separated: the helper sends one.
  *peer = std::string(note.substr(0, note.find(',')));
  if (EndsWith(code, "_PARENT") || EndsWith(code, "_SIBLING") || EndsWith(code, "PARENT_HIT") ||
      EndsWith(code, "SIBLING_HIT")) {
    return RouteOutcome::kHit;
  }
  if (code == "HIER_DIRECT") return RouteOutcome::kFalseHit;
  return RouteOutcome::kNotRouted;
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
