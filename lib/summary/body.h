// Summary bodies: the filter bits (raw, zstd, gap-coded) and delta positions (gap-coded).
//
// Encoders append to a string. Decoders take untrusted bytes whose header already passed
// ParseMessage, check every length against the geometry before allocating, and return
// Corruption for anything that is not exactly what an encoder would have written.
#ifndef PEERBLOOM_LIB_SUMMARY_BODY_H_
#define PEERBLOOM_LIB_SUMMARY_BODY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/params.h"
#include "peerbloom/status.h"
#include "peerbloom/summary.h"

namespace peerbloom::summary_internal {

// The filter's words, little-endian.
void EncodeRawBody(const BloomFilter& filter, std::string* out);
// The raw body as one zstd frame that declares its content size.
Status EncodeZstdBody(const BloomFilter& filter, std::string* out);
// count, divisor, then the Golomb-coded gaps between set positions.
void EncodeGolombFilterBody(const BloomFilter& filter, std::string* out);
// The same layout for strictly ascending positions.
void EncodePositionsBody(const std::vector<uint64_t>& positions, uint64_t universe,
                         std::string* out);

// Decodes a body into a new filter of size.bits() bits and k probes.
Status DecodeFilterBody(BodyEncoding encoding, std::string_view body, FilterSize size, unsigned k,
                        BloomFilter* out);
// Decodes strictly ascending positions below `universe`, at most `max_count` of them.
Status DecodePositionsBody(std::string_view body, uint64_t universe, uint64_t max_count,
                           std::vector<uint64_t>* out);

}  // namespace peerbloom::summary_internal

#endif  // PEERBLOOM_LIB_SUMMARY_BODY_H_
