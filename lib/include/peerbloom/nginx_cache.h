// nginx's proxy cache, as peerbloom reads it (docs/nginx.md).
//
// nginx names each cache file by the hex MD5 of its cache key (`proxy_cache_key`; without
// one, the URL nginx sends upstream: NginxKeyTemplate::kDefault), under `levels`
// sub-directories taken from the end of that hex name, and writes the key itself on a "KEY: "
// line of the file's header (src/http/ngx_http_file_cache.c). Under the key scheme
// "nginx-md5" a filter key is the 16 bytes MD5(cache key): the name of the file for a response
// without Vary. A Vary variant lives under another name but carries the same KEY line, so a
// feed keys every file by its KEY line.
//
// Pure: no I/O except ReadNginxCacheFileKey. Thread-safety: everything here is reentrant; an
// NginxKeyTemplate is immutable once parsed.
#ifndef PEERBLOOM_NGINX_CACHE_H_
#define PEERBLOOM_NGINX_CACHE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom {

using NginxKey = std::array<uint8_t, 16>;  // MD5 of a cache key's text

// MD5 of the cache key's text, as nginx computes a file's name.
NginxKey NginxKeyOf(std::string_view cache_key) noexcept;

// A cache file's name: exactly 32 lower-case hex digits (nginx's ngx_hex_dump). Anything
// else is not a cache file: a temporary file (ten digits under proxy_temp_path, or the final
// name plus ".0000000123" beside it with use_temp_path=off), an editor's backup, upper case.
// Returns false then and leaves *out untouched.
bool ParseNginxCacheFileName(std::string_view name, NginxKey* out) noexcept;
// Lower-case hex, as nginx names the file.
std::string NginxKeyHex(const NginxKey& key);

// `proxy_cache_path ... levels=L1[:L2[:L3]]`: 1 to 3 levels of 1 or 2 hex digits each.
// InvalidArgument, naming the value, otherwise. "" is no levels (files in the root).
Status ParseNginxLevels(std::string_view text, std::vector<int>* levels);
// ROOT/<levels>/<hex>: the path nginx gives the file of `key` (levels taken from the end of
// the hex name: levels 1:2 put 0123...cdef in ROOT/f/de/). A trailing '/' of `root` is
// dropped, as nginx drops it. REQUIRES: `levels` as ParseNginxLevels gives them.
std::string NginxCacheFilePath(std::string_view root, const std::vector<int>& levels,
                               const NginxKey& key);

// A cache file starts with sizeof(ngx_http_file_cache_header_t) = 336 bytes on 64-bit nginx
// (src/http/ngx_http_cache.h: a word, five time_t, then 4 + 3 * 2 + 1 + 128 + 1 + 128 + 16
// bytes, padded to 8), then "\nKEY: " at that offset, the key and "\n"; the header's
// header_start is the offset just past that "\n", where the HTTP response head begins.
inline constexpr uint64_t kNginxCacheVersion = 5;  // NGX_HTTP_CACHE_VERSION
inline constexpr size_t kNginxHeaderBytes = 336;
inline constexpr std::string_view kNginxKeyPrefix = "\nKEY: ";
// Keys longer than this are refused: the header before the KEY line ends is 343 bytes plus
// the key. nginx itself has no limit (its u_short header_start wraps past 64 KiB), and URLs
// in practice stay far below it.
inline constexpr size_t kNginxMaxKeyBytes = 16 * 1024;
// The most ReadNginxCacheFileKey reads: the header and the longest KEY line accepted.
inline constexpr size_t kNginxMaxHeadBytes =
    kNginxHeaderBytes + kNginxKeyPrefix.size() + kNginxMaxKeyBytes + 1;

// The outcome of reading a cache file's header.
enum class NginxFileState : uint8_t {
  kValid,    // a cache file of a known header version whose KEY line was read
  kPartial,  // shorter than its header (being written, or truncated): try again later
  kForeign,  // not an nginx cache file of a version this reads (wrong version, no KEY line)
};

// Parses the first bytes of a cache file (`head`, as many as ReadNginxCacheFileKey reads):
// the binary ngx_http_file_cache_header_t of little-endian 64-bit nginx (x86_64, aarch64;
// header version 5, as nginx 1.11.10 and later write it: files of 1.22.1 read, the struct
// unchanged in the 1.31 source), then "\nKEY: " at offset 336 and the key, which ends where
// the header's header_start says (a key may hold a '\n' that $uri decoded from %0A, so the
// line end is not searched for). On kValid *key holds the key text and *why is cleared; *why
// says what was wrong otherwise. kPartial only while `head` is shorter than the fields it
// needs: every prefix of a valid file is kPartial (or kValid once it holds the whole KEY
// line), never another key.
NginxFileState ParseNginxCacheHeader(std::string_view head, std::string* key, std::string* why);
// Opens (O_NOFOLLOW, O_NONBLOCK) and reads the head of `path` (4 KiB, then up to
// kNginxMaxHeadBytes when the key is longer) and parses it. An I/O error (the file vanished:
// an eviction racing the read) is kPartial with errno's text in *why, and *gone set true
// (false otherwise) when the file no longer exists. A symbolic link or anything but a regular
// file is kForeign: nginx writes neither.
NginxFileState ReadNginxCacheFileKey(const std::string& path, std::string* key, std::string* why,
                                     bool* gone);

// The cache key nginx builds for a request, from a `proxy_cache_key` template, so that
// `who-has URL` can key a URL the way the cache did. Supported variables (nginx's meaning,
// from an absolute http:// or https:// URL as a client would send it):
//   $scheme        "http" or "https"
//   $host          the host, lower-cased, without port or a trailing '.' (nginx: Host header
//                  or request line, ngx_http_validate_host)
//   $http_host     the host as the URL writes it, lower-cased, with ":port" when the URL gives
//                  a port other than the scheme's default (browsers and curl send that
//                  Host; curl keeps the host's case, browsers lower-case it)
//   $server_port   the port: given, else 80 or 443 (nginx: the port that accepted the
//                  connection, which is the URL's behind no port mapping)
//   $request_uri   path and query exactly as the URL writes them ("/" when the path is empty)
//   $uri           the path normalized as nginx does (%XX decoded, "//" merged, "." and ".."
//                  resolved, merge_slashes on), without the query; a path nginx answers
//                  400 ("/..", "%zz", "%00") cannot be built
//   $args, $query_string   the query, without '?'
//   $is_args       "?" when there is a query, else ""
//   $proxy_host    the value configured for it (the upstream name or host:port proxy_pass
//                  names): it comes from nginx's config, not from the URL
// Variables may be written $name or ${name}, their names in any case as nginx allows;
// everything else is literal text. A variable the URL does not carry ($cookie_x,
// $http_user_agent, $remote_addr, ...) is refused by Parse, naming it: a cluster keyed on it
// cannot be asked by URL. A fragment ("#...") is dropped first: a client never sends one.
class NginxKeyTemplate {
 public:
  // The key nginx builds when the location has no proxy_cache_key and `proxy_pass
  // http://NAME` has no URI part. nginx documents "$scheme$proxy_host$request_uri" as the
  // default, but without the directive it keys the URL it sends upstream
  // (ngx_http_proxy_create_key): proxy_pass's scheme with its "://", $proxy_host, and the
  // request's $request_uri. That text written out as a proxy_cache_key keys
  // "http" + host + URI, without "://". Both checked against nginx 1.22.1 (tests/data/nginx).
  static constexpr std::string_view kDefault = "http://$proxy_host$request_uri";

  // InvalidArgument, naming the variable or the position, for an empty template, an
  // unsupported variable, an empty name, an unterminated "${", or $proxy_host used while
  // `proxy_host` is ""; *out is unchanged then.
  static Status Parse(std::string_view text, std::string_view proxy_host, NginxKeyTemplate* out);

  // Builds the key for `url` (absolute, http:// or https://) into *key, replacing what it
  // held (its capacity is reused). InvalidArgument, with the reason, for a URL without a
  // supported scheme or a host, with a bad port, a space or control byte, a host or path
  // nginx answers 400 to (it caches nothing for such a request, whatever the template), or
  // for a template that was never parsed.
  Status Build(std::string_view url, std::string* key) const;

  const std::string& text() const { return text_; }
  bool uses_proxy_host() const;

 private:
  enum class Part : uint8_t {
    kLiteral,
    kScheme,
    kHost,
    kHttpHost,
    kServerPort,
    kRequestUri,
    kUri,
    kArgs,
    kIsArgs,
    kProxyHost,
  };
  struct Piece {
    Part part;
    std::string literal;  // kLiteral only
  };
  // The variable `name` (lower case) stands for, or false for one a URL does not carry.
  static bool PartOf(std::string_view name, Part* part);
  std::string text_;
  std::string proxy_host_;
  std::vector<Piece> pieces_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_NGINX_CACHE_H_
