// Bounded little-endian byte reading and writing for the wire codec.
//
// The reader never reads past its end: every accessor returns false instead, and the caller
// turns that into a Corruption status naming the field.
#ifndef PEERBLOOM_LIB_WIRE_BYTE_IO_H_
#define PEERBLOOM_LIB_WIRE_BYTE_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom::wire_internal {

inline void PutU8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }

inline void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// LEB128: 7 bits per byte, low groups first, high bit set on every byte but the last.
inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// REQUIRES: s.size() <= 255 (checked by the caller's validation).
inline void PutStr8(std::string* out, std::string_view s) {
  PutU8(out, static_cast<uint8_t>(s.size()));
  out->append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }

  bool U8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = static_cast<uint8_t>(bytes_[pos_++]);
    return true;
  }
  bool U32(uint32_t* v) {
    if (remaining() < 4) return false;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) r |= uint32_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    pos_ += 4;
    *v = r;
    return true;
  }
  bool U64(uint64_t* v) {
    if (remaining() < 8) return false;
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    pos_ += 8;
    *v = r;
    return true;
  }
  // Refuses more than 10 bytes, bits beyond 64 and non-minimal encodings (a trailing zero
  // group), so every value has exactly one encoding.
  bool Varint(uint64_t* v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!U8(&b)) return false;
      const uint64_t group = b & 0x7f;
      if (shift == 63 && group > 1) return false;
      r |= group << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return false;
        *v = r;
        return true;
      }
    }
    return false;
  }
  bool Bytes(size_t n, std::string_view* out) {
    if (remaining() < n) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool Str8(std::string* out) {
    uint8_t n = 0;
    std::string_view s;
    if (!U8(&n) || !Bytes(n, &s)) return false;
    out->assign(s);
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace peerbloom::wire_internal

#endif  // PEERBLOOM_LIB_WIRE_BYTE_IO_H_
