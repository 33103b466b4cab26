// Editing encoded summary messages in tests: change bytes, then re-seal the checksum so the
// decoder gets past it and meets the change itself.
#ifndef PEERBLOOM_TESTS_UNIT_SUMMARY_MESSAGE_EDIT_H_
#define PEERBLOOM_TESTS_UNIT_SUMMARY_MESSAGE_EDIT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/byte_io.h"
#include "lib/summary/format.h"

namespace peerbloom::testing_util {

inline constexpr size_t kHeaderLengthOffset = 6;
inline constexpr size_t kBodyLengthOffset = 56;

inline void StoreFixed(std::string* bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) (*bytes)[offset + i] = static_cast<char>(value >> (8 * i));
}

// Recomputes the trailing XXH3-64 over everything before it.
inline void Reseal(std::string* msg) {
  const size_t covered = msg->size() - summary_internal::kChecksumBytes;
  StoreFixed(msg, covered,
             summary_internal::MessageChecksum(std::string_view(*msg).substr(0, covered)), 8);
}

inline size_t HeaderLength(std::string_view msg) {
  return LoadFixed(msg.data() + kHeaderLengthOffset, 2);
}

inline std::string_view Body(std::string_view msg) {
  const size_t header = HeaderLength(msg);
  return msg.substr(header, msg.size() - header - summary_internal::kChecksumBytes);
}

// The same message with another body, lengths and checksum made consistent.
inline std::string WithBody(std::string_view msg, std::string_view body) {
  std::string out(msg.substr(0, HeaderLength(msg)));
  out.append(body);
  out.append(summary_internal::kChecksumBytes, '\0');
  StoreFixed(&out, kBodyLengthOffset, body.size(), 8);
  Reseal(&out);
  return out;
}

}  // namespace peerbloom::testing_util

#endif  // PEERBLOOM_TESTS_UNIT_SUMMARY_MESSAGE_EDIT_H_
