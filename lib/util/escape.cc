#include "peerbloom/escape.h"

#include <cstdint>

namespace peerbloom {
namespace {

bool InRange(uint8_t b, uint8_t lo, uint8_t hi) noexcept { return b >= lo && b <= hi; }

// Length of the well-formed UTF-8 sequence starting at s[i], 0 when s[i] does not begin one.
// The second byte's range depends on the first (Unicode 15, table 3-7): E0 needs A0-BF
// (shorter forms are overlong), ED needs 80-9F (A0-BF would encode U+D800-U+DFFF, the
// surrogates), F0 needs 90-BF (overlong), F4 needs 80-8F (above U+10FFFF). C0, C1 and F5-FF
// never begin a sequence: C0/C1 can only encode overlong ASCII.
size_t SequenceLength(std::string_view s, size_t i) noexcept {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  uint8_t lo = 0x80, hi = 0xbf;
  if (InRange(b0, 0xc2, 0xdf)) {
    length = 2;
  } else if (InRange(b0, 0xe0, 0xef)) {
    length = 3;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (InRange(b0, 0xf0, 0xf4)) {
    length = 4;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() - i < length) return 0;
  if (!InRange(static_cast<uint8_t>(s[i + 1]), lo, hi)) return 0;
  for (size_t j = 2; j < length; ++j) {
    if (!InRange(static_cast<uint8_t>(s[i + j]), 0x80, 0xbf)) return 0;
  }
  return length;
}

void AppendHexByte(const char* prefix, uint8_t b, std::string* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out->append(prefix);
  out->push_back(kDigits[b >> 4]);
  out->push_back(kDigits[b & 0xf]);
}

// Escapes at most `max_bytes` bytes of input, stopping before a character that would cross it.
void AppendEscaped(std::string_view s, size_t max_bytes, std::string* out) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t length = SequenceLength(s, i);
    if (i + (length == 0 ? 1 : length) > max_bytes) return;
    const auto b0 = static_cast<uint8_t>(s[i]);
    if (length == 0) {
      AppendHexByte("\\x", b0, out);
      i += 1;
      continue;
    }
    if (b0 == '\\') {
      out->append("\\\\");
    } else if (b0 < 0x20 || b0 == 0x7f) {
      AppendHexByte("\\x", b0, out);
    } else if (b0 == 0xc2 && static_cast<uint8_t>(s[i + 1]) < 0xa0) {
      // U+0080-U+009F: the second byte is the code point.
      AppendHexByte("\\u00", static_cast<uint8_t>(s[i + 1]), out);
    } else {
      out->append(s.substr(i, length));
    }
    i += length;
  }
}

}  // namespace

bool IsValidUtf8(std::string_view bytes) noexcept {
  size_t i = 0;
  while (i < bytes.size()) {
    // ASCII runs are the common case: skip them a byte at a time without the table.
    if (static_cast<uint8_t>(bytes[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = SequenceLength(bytes, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string EscapeBytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  AppendEscaped(bytes, bytes.size(), &out);
  return out;
}

std::string QuoteBytes(std::string_view bytes, size_t max_bytes) {
  std::string out = "'";
  AppendEscaped(bytes, max_bytes, &out);
  out.push_back('\'');
  return out;
}

}  // namespace peerbloom
