// Fuzzes DecodeDelta with arbitrary bytes. Whatever decodes must re-encode and decode to the
// same delta, and applying it to a base of its identity must either succeed with the digest
// it promised or fail as Corruption with the base untouched. Each input is also tried with its
// checksum resealed, so mutations reach the position decoder.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "peerbloom/summary.h"
#include "tests/fuzz/reseal.h"
#include "tests/fuzz/verdict.h"

namespace {

using peerbloom::DecodeLimits;
using peerbloom::Summary;
using peerbloom::SummaryDelta;

void Require(bool condition) {
  if (!condition) std::abort();
}

bool Same(const SummaryDelta& a, const SummaryDelta& b) {
  return a.origin == b.origin && a.epoch == b.epoch && a.base_version == b.base_version &&
         a.version == b.version && a.key_scheme == b.key_scheme && a.hash_scheme == b.hash_scheme &&
         a.k == b.k && a.log2_bits == b.log2_bits && a.estimated_items == b.estimated_items &&
         a.flipped == b.flipped && a.result_digest == b.result_digest;
}

void CheckApply(const SummaryDelta& d) {
  Summary base;
  base.origin = d.origin;
  base.epoch = d.epoch;
  base.version = d.base_version;
  base.key_scheme = d.key_scheme;
  base.hash_scheme = d.hash_scheme;
  base.filter = peerbloom::BloomFilter(d.log2_bits, d.k);
  const peerbloom::Status st = peerbloom::ApplyDelta(d, &base);
  if (st.ok()) {
    Require(base.filter.PopCount() == d.flipped.size());
    Require(peerbloom::FilterDigest(base.filter) == d.result_digest);
    Require(base.version == d.version);
  } else {
    Require(st.IsCorruption());
    Require(base.filter.PopCount() == 0 && base.version == d.base_version);
  }
}

// Returns whether the bytes decode.
bool Check(std::string_view bytes, const DecodeLimits& limits) {
  SummaryDelta d;
  if (!peerbloom::DecodeDelta(bytes, limits, &d).ok()) return false;
  std::string again;
  Require(peerbloom::EncodeDelta(d, &again).ok());
  SummaryDelta back;
  Require(peerbloom::DecodeDelta(again, limits, &back).ok());
  Require(Same(d, back));
  CheckApply(d);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  DecodeLimits limits;
  limits.max_log2_bits = 20;
  limits.max_encoded_bytes = size_t{1} << 20;
  limits.max_delta_positions = size_t{1} << 16;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  peerbloom::fuzz::ReportVerdict(Check(bytes, limits));
  if (const auto sealed = peerbloom::fuzz::Resealed(bytes)) (void)Check(*sealed, limits);
  return 0;
}
