// Fuzzes DecodeSummary with arbitrary bytes. Whatever decodes must re-encode (in the same
// body encoding and in the automatic one) and decode again to the same summary. Each input
// is also tried with its checksum resealed, so mutations reach the body decoders instead of
// stopping at the checksum.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "peerbloom/summary.h"
#include "tests/fuzz/reseal.h"
#include "tests/fuzz/verdict.h"

namespace {

using peerbloom::DecodeLimits;
using peerbloom::MessageHeader;
using peerbloom::Summary;

void Require(bool condition) {
  if (!condition) std::abort();
}

bool Same(const Summary& a, const Summary& b) {
  return a.origin == b.origin && a.epoch == b.epoch && a.version == b.version &&
         a.key_scheme == b.key_scheme && a.hash_scheme == b.hash_scheme &&
         a.estimated_items == b.estimated_items && a.filter == b.filter;
}

// Returns whether the bytes decode.
bool Check(std::string_view bytes, const DecodeLimits& limits) {
  Summary s;
  if (!peerbloom::DecodeSummary(bytes, limits, &s).ok()) return false;
  MessageHeader h;
  Require(peerbloom::PeekHeader(bytes, limits, &h).ok());
  for (std::optional<peerbloom::BodyEncoding> force :
       {std::optional(h.body_encoding), std::optional<peerbloom::BodyEncoding>()}) {
    std::string again;
    Require(peerbloom::EncodeSummary(s, &again, force).ok());
    Summary back;
    Require(peerbloom::DecodeSummary(again, limits, &back).ok());
    Require(Same(s, back));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  DecodeLimits limits;
  limits.max_log2_bits = 20;
  limits.max_encoded_bytes = size_t{1} << 20;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  peerbloom::fuzz::ReportVerdict(Check(bytes, limits));
  if (const auto sealed = peerbloom::fuzz::Resealed(bytes)) (void)Check(*sealed, limits);
  return 0;
}
