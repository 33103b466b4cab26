// Squid's canonical URL: the exact bytes Squid 5.7 hashes into an object's public store key.
//
// Squid does not key a cached object by the URL as the client typed it. It parses the
// request-target (AnyP::Uri::parse) and keys MD5(method || Uri::absolute()), the URL rebuilt
// from its parts. `HTTP://Example.COM:80/a` and `http://example.com/a` are one object, while
// `/%7e` and `/%7E` are two. CanonicalSquidUrl() rebuilds a URL the same way, so a who-has of
// any spelling meets the key store.log reported. The rules, in the order Squid applies them
// (docs/squid.md, "Canonical URLs"; pinned by tests/data/squid/canonical_keys.tsv, keys
// recorded from a real Squid):
//
//  - the relaxed HTTP parser's delimiters (SP, HT, VT, FF, CR) around the URL are dropped;
//    other control bytes and DEL make Squid refuse the request
//  - scheme: case-insensitive; known schemes are rebuilt in lower case, others as typed
//  - host: ends at '/', '?', '#' or whitespace; the text before its last '@' is userinfo,
//    kept (unescaped, then re-escaped) only for ftp and unknown schemes; lower-cased;
//    `append_domain` added to a name without '.' or ':'; trailing dots removed; numeric
//    addresses (every form inet_aton takes, and IPv6 with an optional zone) re-rendered:
//    dotted quad, `[inet_ntop form]`, IPv4-mapped IPv6 as IPv4; 0.0.0.0 and :: stay as typed
//  - port: atoi() of the text after ':' (so ":080" and ":80x" are 80); dropped when it is the
//    scheme's default (http 80, https 443, ftp 21, coap/coaps 5683, wais 210, whois 43,
//    cache_object 3128); schemes without a default need one
//  - path, query and fragment: byte for byte (escapes keep their case, raw UTF-8 stays raw),
//    cut at CR; "/" when empty, also when '?' or '#' follows the host directly; whitespace
//    (SP or HT present) handled by `uri_whitespace`
//  - `urn:NID:rest` is kept as is after a lower-case "urn:"
//
// Gopher is an unknown scheme, as in Debian's build of 5.7, which removed Gopher support
// (upstream 5.7 knows it, with default port 70).
//
// Pure: no I/O, no DNS. Thread-safety: the functions are reentrant.
#ifndef PEERBLOOM_SQUID_URL_H_
#define PEERBLOOM_SQUID_URL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom {

// squid.conf `uri_whitespace`: what Squid does with SP or HT in a URL's path.
enum class UriWhitespace : uint8_t {
  kStrip,   // remove every whitespace byte (Squid's default)
  kAllow,   // keep it
  kEncode,  // escape the whole path as RFC 1738 "unsafe" (space, controls, <>"#{}|\^~[]`',
            // bytes >= 0x80), leaving '%' alone
  kChop,    // cut the path at the first SP or HT
  kDeny,    // refuse the request
};

// "strip", "allow", "encode", "chop", "deny"; parsing accepts exactly these names.
std::string_view UriWhitespaceName(UriWhitespace policy) noexcept;
std::optional<UriWhitespace> ParseUriWhitespace(std::string_view name) noexcept;

// The squid.conf settings the canonical URL depends on. They must match the Squid whose
// store keys are looked up.
struct SquidUrlOptions {
  // Default: kStrip (squid.conf `uri_whitespace`).
  UriWhitespace uri_whitespace = UriWhitespace::kStrip;
  // Default: "" (none). squid.conf `append_domain`, e.g. ".example.com": appended to a host
  // name without a dot. Squid requires the leading '.'.
  std::string append_domain;
};

// InvalidArgument unless append_domain is empty or a '.' followed by at most 253 bytes of
// letters, digits, '-', '.' and '_'.
Status ValidateSquidUrlOptions(const SquidUrlOptions& options);

// Squid's longest URL (MAX_URL - 1); a longer one (counting append_domain) is refused.
inline constexpr size_t kSquidMaxUrlBytes = 8191;

// Writes the URL Squid would key `url` under (a GET, in a forward proxy, no store_id
// rewriting) to *out. InvalidArgument, with the reason, for a URL Squid refuses (no scheme,
// no host, a port outside 1-65535, an empty host label, whitespace under kDeny, control bytes,
// too long); *out is then unspecified. REQUIRES: ValidateSquidUrlOptions(options) is ok.
// *out keeps its capacity between calls, so a reused string makes the call allocation-free.
Status CanonicalSquidUrl(std::string_view url, const SquidUrlOptions& options, std::string* out);

// Whether `url` is an absolute URL as Squid's parser reads one, the only kind a store key is
// made of: after the delimiters CanonicalSquidUrl drops, a scheme (a letter, then up to 15
// letters, digits or "+-._") and ':', then "//" and a host (what follows does not start with
// '/', '?', '#' or whitespace), or "urn:". "127.0.0.1/x", "example.com", "http:/x" and
// "http:///x" are not. An absolute URL that CanonicalSquidUrl refuses (a bad port, a control
// byte) is still one: Squid refuses it, it does not read it as something else.
bool IsAbsoluteUrl(std::string_view url) noexcept;

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_URL_H_
