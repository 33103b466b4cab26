// Byte-level pieces of Squid's URL handling shared by lib/squid/canonical_url.cc: character
// classes as Squid's C code sees them (C locale), the byte-class table the scans use, Squid's
// atoi() port reading, and the path and userinfo rewriting (uri_whitespace, RFC 1738 escapes).
//
// Internal to lib/. Pure. Thread-safety: reentrant.
#ifndef PEERBLOOM_LIB_SQUID_URL_TEXT_H_
#define PEERBLOOM_LIB_SQUID_URL_TEXT_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/squid_url.h"
#include "peerbloom/status.h"

namespace peerbloom::squid_url {

inline bool IsAlpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }
inline char Lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
// isspace() in the C locale.
inline bool IsSpace(char c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }
// Squid's w_space: what makes a path "have whitespace" and where `chop` cuts.
inline bool IsWSpace(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
// The relaxed request-line parser's delimiters: SP, HT, VT, FF and CR.
inline bool IsDelimiter(char c) noexcept {
  return c == ' ' || c == '\t' || (c >= '\v' && c <= '\r');
}
inline bool IsOneOf(char c, std::string_view set) noexcept {
  return set.find(c) != std::string_view::npos;
}
// Byte classes for the scans every URL goes through: one table load per byte, no branches on
// character lists (a memchr per byte over "/?#" cost more than the MD5 that follows).
enum ByteClass : uint16_t {
  kRefused = 1,        // control bytes the request parser refuses: all but HT, VT, FF, CR; DEL
  kWSpace = 2,         // SP, HT: Squid's w_space as it can occur in a path
  kCr = 4,             // ends the path
  kEndsHost = 8,       // '/', '?', '#' and isspace()
  kSchemeChar = 16,    // letters, digits, "+-._"
  kAt = 32,            // '@': there is userinfo
  kColon = 64,         // ':': there is a port or an IPv6 address
  kDot = 128,          // '.'
  kUpper = 256,        // 'A'-'Z'
  kDotAfterDot = 512,  // not a byte's class: ".." seen (accumulated in the authority scan)
};

constexpr std::array<uint16_t, 256> MakeByteClasses() {
  std::array<uint16_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    const bool space = c == ' ' || (c >= '\t' && c <= '\r');
    uint16_t k = 0;
    if ((c < 0x20 && c != '\t' && c != '\v' && c != '\f' && c != '\r') || c == 0x7f) k |= kRefused;
    if (c == ' ' || c == '\t') k |= kWSpace;
    if (c == '\r') k |= kCr;
    if (c == '/' || c == '?' || c == '#' || space) k |= kEndsHost;
    if (alnum || c == '+' || c == '-' || c == '.' || c == '_') k |= kSchemeChar;
    if (c == '@') k |= kAt;
    if (c == ':') k |= kColon;
    if (c == '.') k |= kDot;
    if (c >= 'A' && c <= 'Z') k |= kUpper;
    t[static_cast<size_t>(c)] = k;
  }
  return t;
}
inline constexpr std::array<uint16_t, 256> kByteClasses = MakeByteClasses();
inline uint16_t ClassOf(char c) noexcept { return kByteClasses[static_cast<unsigned char>(c)]; }

// atoi(): optional sign and decimal digits, saturating at the bounds of a 64-bit long, then
// truncated to a 32-bit int. So ":4294967376" is port 80, as Squid reads it.
int32_t Atoi(std::string_view text) noexcept;

// rfc1738_unescape() then Uri::Encode() with the userinfo characters other than '%', then
// '@': the userinfo Squid keeps for ftp and unknown schemes, appended to *out.
void AppendUserInfo(std::string_view login, std::string* out);

// The path after uri_whitespace, appended to *out. `slash` prefixes the "/" Squid inserts
// when the host is followed by something other than '/'. `maybe_whitespace`: whether the URL
// holds SP or HT at all (false skips the search). InvalidArgument under kDeny.
Status AppendPath(bool slash, std::string_view path, bool maybe_whitespace, UriWhitespace policy,
                  std::string* out);

}  // namespace peerbloom::squid_url

#endif  // PEERBLOOM_LIB_SQUID_URL_TEXT_H_
