#include "peerbloom/squid_digest.h"

#include <algorithm>
#include <bit>
#include <string>

namespace peerbloom {
namespace {

constexpr size_t kReservedOffset = 22;
// Squid counts mask bits in a uint32_t, so no mask may reach 2^32 bits (512 MiB).
constexpr uint32_t kHardMaxMaskBytes = (uint32_t{1} << 29) - 1;

uint16_t GetBe16(const char* p) noexcept {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) << 8 | static_cast<uint8_t>(p[1]));
}

uint32_t GetBe32(const char* p) noexcept {
  return uint32_t{static_cast<uint8_t>(p[0])} << 24 | uint32_t{static_cast<uint8_t>(p[1])} << 16 |
         uint32_t{static_cast<uint8_t>(p[2])} << 8 | uint32_t{static_cast<uint8_t>(p[3])};
}

std::string Q(uint64_t v) { return "'" + std::to_string(v) + "'"; }

CacheDigestHeader ReadHeader(const char* p) noexcept {
  CacheDigestHeader h;
  h.version_current = GetBe16(p);
  h.version_required = GetBe16(p + 2);
  h.capacity = GetBe32(p + 4);
  h.count = GetBe32(p + 8);
  h.del_count = GetBe32(p + 12);
  h.mask_size = GetBe32(p + 16);
  h.bits_per_entry = static_cast<uint8_t>(p[20]);
  h.hash_functions = static_cast<uint8_t>(p[21]);
  return h;
}

// Squid's two-way version handshake (peerDigestSetCBlock).
Status CheckVersions(const CacheDigestHeader& h) {
  if (h.version_required > kCacheDigestVersionCurrent) {
    return Status::NotSupported("cache digest requires version " + Q(h.version_required) +
                                "; this reader has " + Q(kCacheDigestVersionCurrent));
  }
  if (h.version_current < kCacheDigestVersionRequired) {
    return Status::NotSupported("cache digest is version " + Q(h.version_current) +
                                "; this reader requires at least " +
                                Q(kCacheDigestVersionRequired));
  }
  if (h.version_required > h.version_current) {
    return Status::Corruption("cache digest requires version " + Q(h.version_required) +
                              " above its own version " + Q(h.version_current));
  }
  return Status::Ok();
}

Status CheckGeometry(const CacheDigestHeader& h) {
  if (h.capacity == 0) return Status::Corruption("cache digest capacity is zero");
  if (h.bits_per_entry == 0) return Status::Corruption("cache digest bits per entry is zero");
  if (h.hash_functions == 0) return Status::Corruption("cache digest hash function count is zero");
  const uint64_t expected = (uint64_t{h.capacity} * h.bits_per_entry + 7) / 8;
  if (h.mask_size != expected) {
    return Status::Corruption("cache digest mask size " + Q(h.mask_size) +
                              " does not match capacity " + Q(h.capacity) + " at " +
                              Q(h.bits_per_entry) + " bits per entry (" + Q(expected) + " bytes)");
  }
  if (h.hash_functions != kCacheDigestHashFunctions) {
    return Status::NotSupported("cache digest uses " + Q(h.hash_functions) +
                                " hash functions; only " + Q(kCacheDigestHashFunctions) +
                                " is supported");
  }
  return Status::Ok();
}

// Version 5 leaves bytes 22..127 zero. A newer minor version (current > 5 but required
// <= 5) may put something there that we can ignore, so only version 5 is held to it.
Status CheckReserved(const CacheDigestHeader& h, std::string_view bytes) {
  if (h.version_current != kCacheDigestVersionCurrent) return Status::Ok();
  for (size_t i = kReservedOffset; i < kCacheDigestHeaderBytes; ++i) {
    if (bytes[i] != 0) {
      return Status::Corruption("cache digest reserved byte at offset " + Q(i) + " is not zero");
    }
  }
  return Status::Ok();
}

uint64_t CountBits(const std::vector<uint8_t>& mask) noexcept {
  uint64_t n = 0;
  for (uint8_t b : mask) n += static_cast<uint64_t>(std::popcount(b));
  return n;
}

}  // namespace

Status CacheDigest::ParseHeader(std::string_view bytes, CacheDigestHeader* out,
                                const CacheDigestLimits& limits) {
  if (bytes.size() < kCacheDigestHeaderBytes) {
    return Status::Corruption("cache digest of " + Q(bytes.size()) + " bytes is shorter than its " +
                              Q(kCacheDigestHeaderBytes) + "-byte header");
  }
  const CacheDigestHeader h = ReadHeader(bytes.data());
  PEERBLOOM_RETURN_IF_ERROR(CheckVersions(h));
  PEERBLOOM_RETURN_IF_ERROR(CheckGeometry(h));
  PEERBLOOM_RETURN_IF_ERROR(CheckReserved(h, bytes));
  const uint32_t limit = std::min(limits.max_mask_bytes, kHardMaxMaskBytes);
  if (h.mask_size > limit) {
    return Status::ResourceExhausted("cache digest mask of " + Q(h.mask_size) +
                                     " bytes exceeds the limit of " + Q(limit));
  }
  *out = h;
  return Status::Ok();
}

Status CacheDigest::Parse(std::string_view bytes, CacheDigest* out,
                          const CacheDigestLimits& limits) {
  CacheDigestHeader h;
  PEERBLOOM_RETURN_IF_ERROR(ParseHeader(bytes, &h, limits));
  const size_t body = bytes.size() - kCacheDigestHeaderBytes;
  if (body != h.mask_size) {
    return Status::Corruption("cache digest mask has " + Q(body) + " bytes, header says " +
                              Q(h.mask_size));
  }
  CacheDigest d;
  d.header_ = h;
  d.mask_.assign(bytes.begin() + kCacheDigestHeaderBytes, bytes.end());
  d.bit_count_ = h.mask_size * 8;  // < 2^32: kHardMaxMaskBytes
  d.bits_set_ = CountBits(d.mask_);
  const uint64_t percent = d.bits_set_ * 100 / d.bit_count_;  // truncated, as Squid does
  if (percent > kCacheDigestMaxFillPercent) {
    return Status::Corruption("cache digest has too many bits on (" + Q(percent) + " %, limit " +
                              Q(kCacheDigestMaxFillPercent) + " %)");
  }
  *out = std::move(d);
  return Status::Ok();
}

double CacheDigest::EstimatedFalsePositiveRate() const noexcept {
  const double f = fill();
  return f * f * f * f;
}

}  // namespace peerbloom
