#include "peerbloom/key_scheme.h"

#include <utility>

#include "peerbloom/escape.h"
#include "peerbloom/md5.h"

namespace peerbloom {
namespace {

int HexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

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
  if (hex.size() != 2 * SquidKey().size()) return false;
  SquidKey key;  // *out is written only on success
  for (size_t i = 0; i < key.size(); ++i) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    key[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  *out = key;
  return true;
}

std::string SquidKeyHex(const SquidKey& key) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string hex(32, '0');
  for (size_t i = 0; i < key.size(); ++i) {
    hex[2 * i] = kDigits[key[i] >> 4];
    hex[2 * i + 1] = kDigits[key[i] & 0xf];
  }
  return hex;
}

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
