// The route log's fields are split on spaces; a URL with spaces (uri_whitespace allow) is
// the last field and never read.
#include "peerbloom/squid_route_log.h"

#include <charconv>

namespace peerbloom {
namespace {

std::string_view Field(std::string_view* line) {
  const size_t start = line->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *line = {};
    return {};
  }
  line->remove_prefix(start);
  const size_t end = line->find(' ');
  const std::string_view field = line->substr(0, end);
  line->remove_prefix(end == std::string_view::npos ? line->size() : end);
  return field;
}

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// "1795327317.643" -> 1795327317643; 0 when it is not seconds.millis.
int64_t UnixMs(std::string_view text) {
  const size_t dot = text.find('.');
  int64_t seconds = 0;
  int64_t millis = 0;
  const std::string_view whole = text.substr(0, dot);
  auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
  if (ec != std::errc() || end != whole.data() + whole.size() || seconds < 0) return 0;
  if (dot != std::string_view::npos) {
    const std::string_view frac = text.substr(dot + 1, 3);
    auto [fend, fec] = std::from_chars(frac.data(), frac.data() + frac.size(), millis);
    if (fec != std::errc() || fend != frac.data() + frac.size()) return 0;
    for (size_t i = frac.size(); i < 3; ++i) millis *= 10;
  }
  return seconds > INT64_MAX / 1000 - 1 ? 0 : seconds * 1000 + millis;
}

}  // namespace

RouteLogEntry ParseRouteLogLine(std::string_view line) {
  RouteLogEntry e;
  e.unix_ms = UnixMs(Field(&line));
  const std::string_view note = Field(&line);
  Field(&line);  // Squid status / HTTP status
  const std::string_view hier = Field(&line);
  if (note.empty() || note == "-" || hier.empty()) return e;
  const std::string_view code = hier.substr(0, hier.find('/'));
  // Several values of one note are logged ","-separated: the helper sends one.
  const std::string peer(note.substr(0, note.find(',')));
  if (EndsWith(code, "_PARENT") || EndsWith(code, "_SIBLING") || EndsWith(code, "PARENT_HIT") ||
      EndsWith(code, "SIBLING_HIT")) {
    e.outcome = RouteLogOutcome::kPeer;
  } else if (code == "HIER_DIRECT") {
    e.outcome = RouteLogOutcome::kDirect;
  } else {
    return e;
  }
  e.peer = peer;
  return e;
}

}  // namespace peerbloom
