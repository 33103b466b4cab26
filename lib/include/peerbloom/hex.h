// Hex digits: the MD5 keys store.log prints (upper case) and nginx names its cache files by
// (lower case), and the %XX escapes of URLs.
#ifndef PEERBLOOM_HEX_H_
#define PEERBLOOM_HEX_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom {

// The value of a hex digit, or -1. `lower_only` refuses A-F.
constexpr int HexDigitValue(char c, bool lower_only = false) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (!lower_only && c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly 2 x N hex digits into N bytes; *out is written only on success.
template <size_t N>
bool ParseHexBytes(std::string_view hex, std::array<uint8_t, N>* out,
                   bool lower_only = false) noexcept {
  if (hex.size() != 2 * N) return false;
  std::array<uint8_t, N> bytes;
  for (size_t i = 0; i < N; ++i) {
    const int hi = HexDigitValue(hex[2 * i], lower_only);
    const int lo = HexDigitValue(hex[2 * i + 1], lower_only);
    if (hi < 0 || lo < 0) return false;
    bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  *out = bytes;
  return true;
}

template <size_t N>
std::string HexBytes(const std::array<uint8_t, N>& bytes, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string hex(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    hex[2 * i] = digits[bytes[i] >> 4];
    hex[2 * i + 1] = digits[bytes[i] & 0xf];
  }
  return hex;
}

}  // namespace peerbloom

#endif  // PEERBLOOM_HEX_H_
