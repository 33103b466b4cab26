// Fuzzes the Cache Digest decoder: any bytes either parse into a digest whose lookups stay
// inside the mask, or are refused with a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "peerbloom/squid_digest.h"
#include "tests/fuzz/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  peerbloom::CacheDigestLimits limits;
  limits.max_mask_bytes = 1 << 20;
  peerbloom::CacheDigestHeader header;
  const peerbloom::Status header_status =
      peerbloom::CacheDigest::ParseHeader(bytes, &header, limits);
  peerbloom::CacheDigest digest;
  const peerbloom::Status s = peerbloom::CacheDigest::Parse(bytes, &digest, limits);
  peerbloom::fuzz::ReportVerdict(s.ok());
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  if (!header_status.ok() || digest.mask().size() != header.mask_size) std::abort();
  if (digest.fill() > 0.66 || digest.EstimatedFalsePositiveRate() > 1.0) std::abort();
  // Keys taken from the input itself, then every 16-byte window of it.
  for (size_t off = 0; off + 16 <= size && off < 4096; off += 7) {
    peerbloom::SquidKey key;
    for (size_t i = 0; i < 16; ++i) key[i] = data[off + i];
    (void)digest.MayContain(key);
  }
  return 0;
}
