// Little-endian fixed-width integers in byte strings, with bounds-checked reads.
//
// Writers append to a std::string. Readers never read past the end of their view: a read
// that does not fit returns false and leaves the cursor where it was, so a decoder turns it
// into a Status without touching memory it does not own.
#ifndef PEERBLOOM_LIB_SUMMARY_BYTE_IO_H_
#define PEERBLOOM_LIB_SUMMARY_BYTE_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom::summary_internal {

inline void PutFixed(std::string* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}
inline void PutU8(std::string* out, uint8_t value) { PutFixed(out, value, 1); }
inline void PutU16(std::string* out, uint16_t value) { PutFixed(out, value, 2); }
inline void PutU32(std::string* out, uint32_t value) { PutFixed(out, value, 4); }
inline void PutU64(std::string* out, uint64_t value) { PutFixed(out, value, 8); }

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
  bool ReadBytes(size_t n, std::string_view* out) noexcept {
    if (n > remaining()) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
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

}  // namespace peerbloom::summary_internal

#endif  // PEERBLOOM_LIB_SUMMARY_BYTE_IO_H_
