// NginxRoutes: the answers of the nginx route socket (`nginx_route_socket`, docs/nginx.md).
//
// nginx's miss router asks it per cache miss, through auth_request, which peer to fetch the
// object from: `GET /route` with the request's cache key in X-Peerbloom-Key (the text of its
// proxy_cache_key). The answer is always `204 No Content` (auth_request lets the request
// through on any 2xx), with `X-Peerbloom-Peer: HOST:PORT` (the sibling server of
// `nginx_siblings`) and `X-Peerbloom-Node: ID` when a live peer's summary holds the key, and
// without them when none does: the miss goes to the origin. Among several holders the one
// chosen is the same for a key while the holders stay (highest random weight), so repeated
// misses of one URL across the cluster land on one sibling.
//
// Malformed heads get 400 and the connection is closed (a body cannot be framed), other paths
// 404, other methods 405: nginx then serves the request from the origin (docs/nginx.md).
//
// Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_CONTROL_NGINX_ROUTES_H_
#define PEERBLOOM_DAEMON_CONTROL_NGINX_ROUTES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/nginx_cache.h"
#include "peerbloom/peer_match.h"

namespace peerbloom::daemon {

struct NginxRouteStats {
  uint64_t requests = 0;      // route requests answered
  uint64_t to_peer = 0;       // answered with a peer's sibling
  uint64_t no_holder = 0;     // no live peer's summary holds the key: the origin
  uint64_t no_sibling = 0;    // holders, none with an `nginx_siblings` address: the origin
  uint64_t bad_requests = 0;  // answered 400, 404 or 405
};

class NginxRoutes {
 public:
  // Appends the live peers whose summaries may hold the 16-byte key to *peers.
  using Lookup = std::function<void(std::string_view key_bytes, std::vector<PeerMatch>* peers)>;

  // `siblings`: node id -> "HOST:PORT" of its nginx sibling server.
  NginxRoutes(std::map<std::string, std::string> siblings, Lookup lookup);

  // Answers every complete request head of `heads` (each ends in a blank line), appending one
  // HTTP answer each to *out. False when the connection is to be closed after the answers.
  bool Answer(std::string_view heads, std::string* out);

  const NginxRouteStats& stats() const { return stats_; }

 private:
  bool AnswerOne(std::string_view head, std::string* out);

  std::map<std::string, std::string> siblings_;
  Lookup lookup_;
  std::vector<PeerMatch> peers_;
  NginxRouteStats stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_NGINX_ROUTES_H_
