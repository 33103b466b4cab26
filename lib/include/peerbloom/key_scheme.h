// Key schemes: how a cache object's identity becomes the key bytes that get hashed.
//
// A cluster uses one scheme everywhere; it travels in every summary header so a receiver
// never mixes schemes. Frozen numbering (docs/summary-format.md). Never renumber.
//
//  kRaw       the bytes as given (a URL, or any opaque id from a non-Squid cache)
//  kSquidMd5  Squid's public store key: MD5(method_id || URL), 16 bytes, where method_id is
//             Squid's HttpRequestMethod byte (GET = 0x01, HEAD = 0x02). store.log reports this
//             key as 32 hex digits rather than a faithful URL, so this scheme lets store.log
//             lines and who-has URL lookups meet on the same bytes. A URL is first rebuilt
//             the way Squid rebuilds it before keying (peerbloom/squid_url.h).
//  kNginxMd5  nginx's proxy cache key: MD5(cache key), 16 bytes, the name nginx gives the
//             cache file (peerbloom/nginx_cache.h). The cache directory feeds it from each
//             file's KEY line; a URL is first turned into the cache key the node's
//             proxy_cache_key template builds (NginxKeyTemplate).
//
// squid-md5 and nginx-md5 keys are both 16-byte MD5 digests, written as 32 hex digits in feeds
// and on the command line (IsMd5KeyScheme); what is Squid's alone (URL canonicalization,
// store.log, Cache Digests) stays squid-md5's.
#ifndef PEERBLOOM_KEY_SCHEME_H_
#define PEERBLOOM_KEY_SCHEME_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "peerbloom/nginx_cache.h"
#include "peerbloom/squid_url.h"
#include "peerbloom/status.h"

namespace peerbloom {

enum class KeyScheme : uint8_t {
  kRaw = 0,
  kSquidMd5 = 1,
  kNginxMd5 = 2,
};
// The highest scheme this build knows: decoders refuse a larger number as unknown.
inline constexpr KeyScheme kLastKeyScheme = KeyScheme::kNginxMd5;

// Whether keys of `scheme` are 16-byte MD5 digests, written as 32 hex digits (squid-md5,
// nginx-md5).
constexpr bool IsMd5KeyScheme(KeyScheme scheme) noexcept {
  return scheme == KeyScheme::kSquidMd5 || scheme == KeyScheme::kNginxMd5;
}

// "raw" / "squid-md5" / "nginx-md5"; parsing accepts exactly these names.
std::string_view KeySchemeName(KeyScheme scheme) noexcept;
std::optional<KeyScheme> ParseKeyScheme(std::string_view name) noexcept;

using SquidKey = std::array<uint8_t, 16>;

// Squid HttpRequestMethod ids used in public store keys.
inline constexpr uint8_t kSquidMethodGet = 0x01;
inline constexpr uint8_t kSquidMethodHead = 0x02;

// Parses the 32-hex-digit store key column of store.log (either case).
// Returns false, leaving *out untouched, on any other length or a non-hex digit.
bool ParseSquidKeyHex(std::string_view hex, SquidKey* out) noexcept;
// Upper-case hex, as store.log prints it.
std::string SquidKeyHex(const SquidKey& key);

// Turns URLs into key bytes (MD5 through peerbloom/md5.h: no OpenSSL dispatch).
// Thread-safety: not thread-safe; one encoder per thread.
// Resource owner: not copyable.
class KeyEncoder {
 public:
  // `squid_url` is used by kSquidMd5 only. REQUIRES: ValidateSquidUrlOptions(squid_url) is ok.
  // `nginx_key` is used by kNginxMd5 only: the node's proxy_cache_key, as
  // NginxKeyTemplate::Parse made it (a default-constructed one keys every URL as given).
  explicit KeyEncoder(KeyScheme scheme, SquidUrlOptions squid_url = {},
                      NginxKeyTemplate nginx_key = {});
  KeyEncoder(const KeyEncoder&) = delete;
  KeyEncoder& operator=(const KeyEncoder&) = delete;

  KeyScheme scheme() const noexcept { return scheme_; }

  // Key bytes for a URL under this scheme. The returned view stays valid until the next
  // call on this encoder. For kSquidMd5: the key of a GET of Squid's canonical form of the
  // URL (CanonicalSquidUrl), so every spelling Squid keys alike gets the same key. A URL Squid
  // refuses is keyed as given: Squid cannot have stored it under any other key. For
  // kNginxMd5: NginxKeyOf(the cache key nginx_key builds for the URL); a URL the template
  // cannot key (NginxKeyTemplate::Build fails) is keyed as given, like Squid's refusals.
  std::string_view FromUrl(std::string_view url) noexcept;

  // Squid's public store key MD5(method_id || url), over exactly the bytes given.
  SquidKey SquidStoreKey(std::string_view url, uint8_t method_id = kSquidMethodGet) noexcept;

 private:
  KeyScheme scheme_;
  SquidUrlOptions squid_url_;
  NginxKeyTemplate nginx_key_;
  std::string canonical_;  // reused, so canonicalizing does not allocate once warm
  SquidKey scratch_{};
};

// Key bytes from a token of a feed or the CLI's `--key` option: for kSquidMd5 and kNginxMd5,
// 32 hex digits (either case); for kRaw, the token itself. Returns InvalidArgument with a reason
// otherwise.
Status KeyBytesFromToken(KeyScheme scheme, std::string_view token, std::string* out);

}  // namespace peerbloom

#endif  // PEERBLOOM_KEY_SCHEME_H_
