#include "peerbloom/key_scheme.h"

#include <utility>

#include "peerbloom/escape.h"
#include "peerbloom/hex.h"
#include "peerbloom/md5.h"

namespace peerbloom {

std::string_view KeySchemeName(KeyScheme scheme) noexcept {
  switch (scheme) {
    case KeyScheme::kRaw:
      return "raw";
    case KeyScheme::kSquidMd5:
      return "squid-md5";
    case KeyScheme::kNginxMd5:
      return "nginx-md5";
  }
  return "unknown";
}

std::optional<KeyScheme> ParseKeyScheme(std::string_view name) noexcept {
  if (name == "raw") return KeyScheme::kRaw;
  if (name == "squid-md5") return KeyScheme::kSquidMd5;
  if (name == "nginx-md5") return KeyScheme::kNginxMd5;
  return std::nullopt;
}

bool ParseSquidKeyHex(std::string_view hex, SquidKey* out) noexcept {
  return ParseHexBytes(hex, out);
}

std::string SquidKeyHex(const SquidKey& key) { return HexBytes(key, /*upper=*/true); }

KeyEncoder::KeyEncoder(KeyScheme scheme, SquidUrlOptions squid_url, NginxKeyTemplate nginx_key)
    : scheme_(scheme), squid_url_(std::move(squid_url)), nginx_key_(std::move(nginx_key)) {}

SquidKey KeyEncoder::SquidStoreKey(std::string_view url, uint8_t method_id) noexcept {
  return Md5WithPrefix(method_id, url);
}

std::string_view KeyEncoder::FromUrl(std::string_view url) noexcept {
  switch (scheme_) {
    case KeyScheme::kRaw:
      return url;
    case KeyScheme::kSquidMd5: {
      const bool canonical = CanonicalSquidUrl(url, squid_url_, &canonical_).ok();
      scratch_ = SquidStoreKey(canonical ? std::string_view(canonical_) : url);
      break;
    }
    case KeyScheme::kNginxMd5: {
      // An unparsed template fails to build too: the URL is then keyed as given.
      const bool built = nginx_key_.Build(url, &canonical_).ok();
      scratch_ = NginxKeyOf(built ? std::string_view(canonical_) : url);
      break;
    }
  }
  return {reinterpret_cast<const char*>(scratch_.data()), scratch_.size()};
}

Status KeyBytesFromToken(KeyScheme scheme, std::string_view token, std::string* out) {
  if (token.empty()) return Status::InvalidArgument("empty key");
  if (scheme == KeyScheme::kRaw) {
    out->assign(token);
    return Status::Ok();
  }
  SquidKey key;  // an nginx-md5 key has the same 16 bytes and the same hex
  if (!ParseSquidKeyHex(token, &key)) {
    return Status::InvalidArgument("key " + QuoteBytes(token) + " is not 32 hex digits");
  }
  out->assign(reinterpret_cast<const char*>(key.data()), key.size());
  return Status::Ok();
}

}  // namespace peerbloom
