// HttpGet: a minimal HTTP/1.0 GET on POSIX sockets, for fetching Squid Cache Digests.
//
// Squid answers HTTP/1.0 requests without chunked encoding, with the body ending at
// Content-Length or at the close, so this client speaks only that: one request per
// connection ("Connection: close"), no redirects, no TLS, and a chunked response is refused.
// Every wait and every byte is bounded: connect by connect_timeout_ms, each read by
// read_timeout_ms, the whole response by total_timeout_ms, the head by 64 KiB and the body by
// max_body_bytes. A set `stop` ends a transfer between reads.
//
// Thread-safety: functions only; each call owns its socket. Blocking: HttpGet blocks the
// calling thread for at most connect_timeout_ms + total_timeout_ms.
#ifndef PEERBLOOM_DAEMON_HTTP_CLIENT_H_
#define PEERBLOOM_DAEMON_HTTP_CLIENT_H_

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

// Ok with res->status set once a head arrived (the body is read only for status 200);
// IOError for resolve, connect, send, receive failures, timeouts and `stop`;
// ResourceExhausted for a head or body over its limit; Corruption for a malformed head or a
// body shorter or longer than its Content-Length; NotSupported for a chunked body.
Status HttpGet(const HttpRequest& request, const HttpGetLimits& limits,
               const std::atomic<bool>& stop, HttpResponse* res);

// Parses a response head (status line and headers, without the blank line) into res->status,
// res->date and res->expires. *content_length is -1 when absent.
Status ParseHttpHead(std::string_view head, HttpResponse* res, int64_t* content_length);

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 IMF-fixdate) as Unix milliseconds; nullopt for
// anything else (the obsolete RFC 850 and asctime forms read as absent).
std::optional<int64_t> ParseHttpDate(std::string_view text);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_HTTP_CLIENT_H_
