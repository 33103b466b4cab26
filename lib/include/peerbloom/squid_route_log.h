// The route log: a Squid access log in the `peerbloom` logformat, which says what became of
// each request the helper routed to a peer (configs/squid/peerbloom-routing.conf,
// docs/squid.md, "What became of routed requests"):
//
//   logformat peerbloom %ts.%03tu %{peer}note %Ss/%03>Hs %Sh/%<A %>ru
//
// A line whose `peer` note is "-" was not routed. Otherwise the hierarchy code says how the
// request was served: by a parent or sibling (FIRSTUP_PARENT, ANY_OLD_PARENT, ...) it was a
// hit at the peer; HIER_DIRECT means it went to the origin after all: the peer did not hold it
// (a false hit) or could not be reached (the daemon tells the two apart by whether the peer
// was alive, daemon/observe/route_outcomes.h); HIER_NONE (a local hit, or refused before
// forwarding) it was not routed at all.
//
// Thread-safety: pure functions.
#ifndef PEERBLOOM_SQUID_ROUTE_LOG_H_
#define PEERBLOOM_SQUID_ROUTE_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom {

enum class RouteLogOutcome {
  kNotRouted,  // no peer note, a local answer, or not a route log line
  kPeer,       // served by the peer it was routed to
  kDirect,     // routed, then fetched from the origin: a false hit or an unreachable peer
};

struct RouteLogEntry {
  int64_t unix_ms = 0;  // the request's end, from %ts.%03tu (0 when the field is not a time)
  std::string peer;     // the cache_peer name the helper routed it to
  RouteLogOutcome outcome = RouteLogOutcome::kNotRouted;
};

// Reads one line; every field but the note and hierarchy may be missing or odd (then 0).
RouteLogEntry ParseRouteLogLine(std::string_view line);

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_ROUTE_LOG_H_
