// ParseHttpRequestHead: the request line and the headers a small HTTP/1.x server needs, from
// a request head (everything before the blank line), for the /metrics endpoint.
//
// Bytes come from anyone who reaches metrics_listen: every length is checked, nothing is
// assumed about what follows what. Only what the endpoint uses is read: the method, the path
// (the query dropped), the version, Connection, Content-Length, and X-Peerbloom-Key for the nginx
// route socket; Transfer-Encoding is refused (no client of either sends a body). Thread-safety: a
// pure function.
#ifndef PEERBLOOM_DAEMON_OBSERVE_HTTP_HEAD_H_
#define PEERBLOOM_DAEMON_OBSERVE_HTTP_HEAD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct HttpRequestHead {
  std::string method;
  std::string path;         // the target without its query; an absolute-form URL's path
  bool keep_alive = false;  // HTTP/1.1 unless "Connection: close"; HTTP/1.0 with keep-alive
  uint64_t content_length = 0;
  std::string peerbloom_key;  // X-Peerbloom-Key: the cache key nginx asks the route socket
  bool has_peerbloom_key = false;
};

// `head` is the text before "\r\n\r\n" (lines end in "\r\n"; a bare "\n" is taken too).
// InvalidArgument for a malformed line, another protocol than HTTP/1.0 or 1.1, a bad or
// repeated Content-Length, or a Transfer-Encoding.
Status ParseHttpRequestHead(std::string_view head, HttpRequestHead* out);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_HTTP_HEAD_H_
