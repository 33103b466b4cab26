// A URL taken apart the way nginx sees the request a client makes for it, for
// NginxKeyTemplate::Build (peerbloom/nginx_cache.h): the pieces its variables read, and the
// $uri normalization of src/http/ngx_http_parse.c (ngx_http_parse_complex_uri).
//
// Internal to lib/. Pure. Thread-safety: reentrant.
#ifndef PEERBLOOM_LIB_NGINX_URL_PARTS_H_
#define PEERBLOOM_LIB_NGINX_URL_PARTS_H_

#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::nginx {

// Views into the URL given to SplitUrl, except where a client would send something else.
struct UrlParts {
  bool https = false;
  std::string_view host;         // as written: case kept, no userinfo, no port
  unsigned port = 0;             // the URL's port, else the scheme's default
  bool default_port = true;      // no port, an empty one, or the scheme's default
  std::string_view request_uri;  // path and query as written (the path may be empty)
  std::string_view path;         // request_uri up to '?' ("" for an empty path)
  std::string_view args;         // after the first '?', "" without one
};

// Splits an absolute http:// or https:// URL (scheme in any case) after dropping its fragment
// and userinfo. InvalidArgument, quoting the URL, for another scheme, no host, a port that is
// not 1-65535, or a byte nginx refuses in a request line (a space, a control byte).
Status SplitUrl(std::string_view url, UrlParts* out);

// `text` with A-Z lower-cased (nginx's ngx_strlow).
std::string AsciiLower(std::string_view text);

// $host: `host` lower-cased without one trailing '.'. False where ngx_http_validate_host
// refuses the Host (empty, "..", '/').
bool NginxHost(std::string_view host, std::string* out);

// $uri of `path` (as written, without the query; "" stands for "/"): %XX decoded, "//"
// merged, "." and ".." segments resolved, in one pass as nginx does it (a decoded "/" or "."
// counts as written; a decoded '%', '?' or '#' is kept as a plain byte). Appends to *out. False
// where nginx answers 400: a bad or incomplete escape, "%00", ".." above the root.
bool NormalizeUri(std::string_view path, std::string* out);

}  // namespace peerbloom::nginx

#endif  // PEERBLOOM_LIB_NGINX_URL_PARTS_H_
