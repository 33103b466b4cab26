// The generic line feed: how a cache that is not Squid (or a script) tells peerbloomd what
// it holds, one line per change. Grammar (docs/squid.md, section "generic feed"):
//
//   line     = *WS [ command / url / comment ] *WS      ; a trailing CR is dropped
//   command  = op 1*WS token
//   op       = "+" / "-" / "+url" / "-url"             ; add / remove a key / a URL
//   url      = scheme "://" 1*VCHAR                    ; a bare URL means "+url URL"
//   comment  = "#" *CHAR
//   token    = 1*VCHAR                                 ; no whitespace
//   WS       = SP / HTAB
//
// For `+` / `-` the token is the key in the cluster's key scheme: 32 hex digits for
// squid-md5 and nginx-md5, the bytes themselves for raw (so raw keys cannot contain
// whitespace: encode such ids before feeding them). For `+url` / `-url` the URL becomes key
// bytes through KeyEncoder (squid-md5: MD5(0x01 || URL), the key of a GET; nginx-md5: MD5 of
// the cache key the node's template builds). Anything else, and anything
// after the token, is malformed and gets a Status saying why.
//
// Pure: no I/O. Thread-safety: the functions are reentrant; a KeyEncoder is not thread-safe.
#ifndef PEERBLOOM_FEED_H_
#define PEERBLOOM_FEED_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom {

// A longer line is refused without being looked at.
inline constexpr size_t kMaxFeedLineBytes = 32 * 1024;

enum class FeedOp : uint8_t {
  kNone,  // a blank line or a comment: nothing to do
  kAdd,
  kRemove,
};

enum class FeedSubject : uint8_t {
  kKey,  // `text` is a key token of the scheme
  kUrl,  // `text` is a URL
};

struct FeedLine {
  FeedOp op = FeedOp::kNone;
  FeedSubject subject = FeedSubject::kKey;
  std::string_view text;  // points into the parsed line
};

// Parses one line (without its '\n'). A key token is checked against `scheme` (so a
// squid-md5 or nginx-md5 feed refuses a key that is not 32 hex digits). InvalidArgument with
// the reason on a malformed line; *out is then unspecified.
Status ParseFeedLine(std::string_view line, KeyScheme scheme, FeedLine* out);

// The key bytes a parsed add/remove line stands for, under encoder->scheme(). The result for
// a URL is a GET's key. REQUIRES: line.op != kNone, and the line was parsed with the
// encoder's scheme.
Status FeedLineKeyBytes(const FeedLine& line, KeyEncoder* encoder, std::string* out);

// Whether `text` has the shape of an absolute URL: scheme "://" and at least one more byte,
// no whitespace or control bytes.
bool LooksLikeUrl(std::string_view text) noexcept;

}  // namespace peerbloom

#endif  // PEERBLOOM_FEED_H_
