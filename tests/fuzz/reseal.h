// Shared by the summary and delta fuzz targets: a copy of an input with its trailing
// checksum recomputed, so mutations reach the body decoders instead of stopping at the
// checksum. Empty when the input is too short to hold a header.
#ifndef PEERBLOOM_TESTS_FUZZ_RESEAL_H_
#define PEERBLOOM_TESTS_FUZZ_RESEAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lib/summary/format.h"

namespace peerbloom::fuzz {

inline std::optional<std::string> Resealed(std::string_view bytes) {
  if (bytes.size() < summary_internal::kFixedHeaderBytes) return std::nullopt;
  std::string sealed(bytes);
  const size_t covered = sealed.size() - summary_internal::kChecksumBytes;
  const uint64_t sum =
      summary_internal::MessageChecksum(std::string_view(sealed).substr(0, covered));
  for (size_t i = 0; i < 8; ++i) sealed[covered + i] = static_cast<char>(sum >> (8 * i));
  return sealed;
}

}  // namespace peerbloom::fuzz

#endif  // PEERBLOOM_TESTS_FUZZ_RESEAL_H_
