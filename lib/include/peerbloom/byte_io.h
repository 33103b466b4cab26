// Little-endian integers, LEB128 varints and short strings in byte strings: the one byte
// reader and writer of every peerbloom format (summaries, wire frames, imports, key sets,
// snapshots).
//
// Writers append to a std::string. The reader never reads past the end of its view: a read
// that does not fit returns false and leaves the cursor where it was, so a decoder turns it
// into a Status naming the field without touching memory it does not own.
#ifndef PEERBLOOM_BYTE_IO_H_
#define PEERBLOOM_BYTE_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom {

// Appends the low `bytes` (at most 8) bytes of `value`, least significant first.
inline void PutFixed(std::string* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}
inline void PutU8(std::string* out, uint8_t value) { PutFixed(out, value, 1); }
inline void PutU16(std::string* out, uint16_t value) { PutFixed(out, value, 2); }
inline void PutU32(std::string* out, uint32_t value) { PutFixed(out, value, 4); }
inline void PutU64(std::string* out, uint64_t value) { PutFixed(out, value, 8); }

// LEB128: 7 bits per byte, low groups first, high bit set on every byte but the last.
inline void PutVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// A length byte, then the bytes. REQUIRES: s.size() <= 255 (the caller validates).
inline void PutStr8(std::string* out, std::string_view s) {
  PutU8(out, static_cast<uint8_t>(s.size()));
  out->append(s);
}

// Reads `bytes` (at most 8) little-endian bytes at `p`. REQUIRES: p..p+bytes readable.
inline uint64_t LoadFixed(const char* p, size_t bytes) noexcept {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return value;
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) noexcept : bytes_(bytes) {}

  size_t position() const noexcept { return pos_; }
  size_t remaining() const noexcept { return bytes_.size() - pos_; }

  bool ReadU8(uint8_t* out) noexcept { return ReadInto(out, 1); }
  bool ReadU16(uint16_t* out) noexcept { return ReadInto(out, 2); }
  bool ReadU32(uint32_t* out) noexcept { return ReadInto(out, 4); }
  bool ReadU64(uint64_t* out) noexcept { return ReadInto(out, 8); }
  // Refuses more than 10 bytes, bits beyond 64 and non-minimal encodings (a trailing zero
  // group), so every value has exactly one encoding.
  bool ReadVarint(uint64_t* out) noexcept {
    const size_t start = pos_;
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!ReadU8(&b)) break;
      const uint64_t group = b & 0x7f;
      if (shift == 63 && group > 1) break;
      value |= group << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) break;
        *out = value;
        return true;
      }
    }
    pos_ = start;
    return false;
  }
  bool ReadBytes(size_t n, std::string_view* out) noexcept {
    if (n > remaining()) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  // A length byte, then that many bytes.
  bool ReadStr8(std::string* out) {
    const size_t start = pos_;
    uint8_t n = 0;
    std::string_view s;
    if (!ReadU8(&n) || !ReadBytes(n, &s)) {
      pos_ = start;
      return false;
    }
    out->assign(s);
    return true;
  }
  bool Skip(size_t n) noexcept {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  bool ReadInto(T* out, size_t n) noexcept {
    if (n > remaining()) return false;
    *out = static_cast<T>(LoadFixed(bytes_.data() + pos_, n));
    pos_ += n;
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_BYTE_IO_H_
