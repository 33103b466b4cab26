#include "lib/squid/url_text.h"

#include "peerbloom/hex.h"

namespace peerbloom {
namespace squid_url {
namespace {

// rfc1738_escape_unescaped(): everything but letters, digits, '%' and the RFC 1738 "safe"
// punctuation becomes %XX. Squid copies the result back into an 8192-byte buffer.
void AppendEncodedPath(bool slash, std::string_view path, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  const size_t start = out->size();
  if (slash) out->push_back('/');
  for (char c : path) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f || IsOneOf(c, "<>\"#{}|\\^~[]`'")) {
      out->push_back('%');
      out->push_back(kDigits[b >> 4]);
      out->push_back(kDigits[b & 0xf]);
    } else {
      out->push_back(c);
    }
  }
  if (out->size() - start > kSquidMaxUrlBytes) out->resize(start + kSquidMaxUrlBytes);
}

}  // namespace

int32_t Atoi(std::string_view text) noexcept {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  constexpr uint64_t kLongMax = uint64_t{1} << 63;  // one past LONG_MAX
  uint64_t v = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    const unsigned d = static_cast<unsigned>(text[i] - '0');
    v = v > (kLongMax - d) / 10 ? kLongMax : v * 10 + d;  // saturated: more digits only grow it
  }
  // The long's two's-complement bits: LONG_MAX, LONG_MIN or the value.
  const uint64_t as_long =
      negative ? (v >= kLongMax ? kLongMax : 0 - v) : (v >= kLongMax ? kLongMax - 1 : v);
  return static_cast<int32_t>(static_cast<uint32_t>(as_long));
}

// Squid escapes a byte from a signed char, so a byte >= 0x80 comes out as "%FFFFFFxx".
void AppendUserInfo(std::string_view login, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  for (size_t j = 0; j < login.size(); ++j) {
    char c = login[j];
    const int hi = j + 1 < login.size() ? HexDigitValue(login[j + 1]) : -1;
    const int lo = j + 2 < login.size() ? HexDigitValue(login[j + 2]) : -1;
    if (c == '%' && j + 1 < login.size() && login[j + 1] == '%') {
      ++j;                                                          // "%%" decodes to '%'
    } else if (c == '%' && hi >= 0 && lo >= 0 && (hi | lo) != 0) {  // "%00" stays as is
      c = static_cast<char>(hi << 4 | lo);
      j += 2;
    }
    if (IsAlpha(c) || IsDigit(c) || IsOneOf(c, ":-._~!$&'()*+,;=")) {
      out->push_back(c);
      continue;
    }
    const auto b = static_cast<unsigned char>(c);
    out->append(b >= 0x80 ? "%FFFFFF" : "%");
    out->push_back(kDigits[b >> 4]);
    out->push_back(kDigits[b & 0xf]);
  }
  out->push_back('@');
}

Status AppendPath(bool slash, std::string_view path, bool maybe_whitespace, UriWhitespace policy,
                  std::string* out) {
  bool has_whitespace = false;
  if (maybe_whitespace) {
    for (char c : path) has_whitespace = has_whitespace || IsWSpace(c);
  }
  if (!has_whitespace || policy == UriWhitespace::kAllow) {
    if (slash) out->push_back('/');
    out->append(path);
    return Status::Ok();
  }
  switch (policy) {
    case UriWhitespace::kDeny:
      return Status::InvalidArgument("whitespace in the url path and uri_whitespace is 'deny'");
    case UriWhitespace::kEncode:
      AppendEncodedPath(slash, path, out);
      return Status::Ok();
    case UriWhitespace::kChop: {
      if (slash) out->push_back('/');
      size_t end = 0;
      while (end < path.size() && !IsWSpace(path[end])) ++end;
      out->append(path.substr(0, end));
      return Status::Ok();
    }
    case UriWhitespace::kStrip:
    case UriWhitespace::kAllow:
      break;
  }
  if (slash) out->push_back('/');
  for (char c : path) {
    if (!IsSpace(c)) out->push_back(c);
  }
  return Status::Ok();
}

}  // namespace squid_url

std::string_view UriWhitespaceName(UriWhitespace policy) noexcept {
  switch (policy) {
    case UriWhitespace::kStrip:
      return "strip";
    case UriWhitespace::kAllow:
      return "allow";
    case UriWhitespace::kEncode:
      return "encode";
    case UriWhitespace::kChop:
      return "chop";
    case UriWhitespace::kDeny:
      return "deny";
  }
  return "unknown";
}

std::optional<UriWhitespace> ParseUriWhitespace(std::string_view name) noexcept {
  for (auto p : {UriWhitespace::kStrip, UriWhitespace::kAllow, UriWhitespace::kEncode,
                 UriWhitespace::kChop, UriWhitespace::kDeny}) {
    if (name == UriWhitespaceName(p)) return p;
  }
  return std::nullopt;
}

}  // namespace peerbloom
