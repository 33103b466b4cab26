// HttpGet: one bounded HTTP GET through cpp-httplib, for fetching Squid Cache Digests.
//
// One request per connection (no keep-alive), no redirects, no TLS, no content decoding (the
// digest is taken as served). Content-Length, close-delimited and chunked bodies are read.
// Every wait and every byte of the body is bounded: connect by connect_timeout_ms, each read
// by read_timeout_ms, the whole response by total_timeout_ms, the body by max_body_bytes.
// cpp-httplib bounds each header line (8 KiB) but not the count of lines; total_timeout_ms
// ends a head that never stops. A set `stop` ends a transfer within kStopPollMs.
//
// Thread-safety: functions only; each call owns its connection and a watchdog thread that
// ends the transfer at the total deadline or on `stop`. Blocking: HttpGet blocks the calling
// thread for at most connect_timeout_ms + total_timeout_ms.
#ifndef PEERBLOOM_DAEMON_DIGESTS_HTTP_CLIENT_H_
#define PEERBLOOM_DAEMON_DIGESTS_HTTP_CLIENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct HttpRequest {
  std::string method = "GET";  // Default: GET. Any method without a request body (PURGE)
  std::string host;            // name or address; also sent as Host: HOST:PORT
  uint16_t port = 80;
  std::string path;    // absolute path, sent as is
  std::string accept;  // the Accept header's value
};

struct HttpGetLimits {
  int64_t connect_timeout_ms = 0;
  int64_t read_timeout_ms = 0;
  int64_t total_timeout_ms = 0;
  size_t max_body_bytes = 0;
};

struct HttpResponse {
  int status = 0;
  std::string date;     // the Date header, "" when absent
  std::string expires;  // the Expires header, "" when absent
  std::string body;     // empty unless status is 200
};

inline constexpr int64_t kStopPollMs = 50;

// Ok with res->status set once a head arrived (the body is read only for status 200);
// IOError for connect, send and receive failures (a malformed or cut-short response reads
// as one), timeouts and `stop`; ResourceExhausted for a body over max_body_bytes.
Status HttpGet(const HttpRequest& request, const HttpGetLimits& limits,
               const std::atomic<bool>& stop, HttpResponse* res);

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 IMF-fixdate) as Unix milliseconds; nullopt for
// anything else (the obsolete RFC 850 and asctime forms read as absent).
std::optional<int64_t> ParseHttpDate(std::string_view text);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_DIGESTS_HTTP_CLIENT_H_
