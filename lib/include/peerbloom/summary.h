// Summaries: what a node tells its peers about its cache, as full snapshots and deltas.
//
// A summary is a plain Bloom filter (the projection of the node's counting filter onto the
// smallest size that divides it and meets the false-positive target) plus who made it and
// which version it is. Versions count up within an epoch; a node that restarts without its
// state, or changes its filter geometry, starts a new epoch. Receivers keep, per origin, the
// summary of the highest (epoch, version) they have seen.
//
// The byte format is specified in docs/summary-format.md; encode/decode live in
// lib/summary/codec.cc and nowhere else.
#ifndef PEERBLOOM_SUMMARY_H_
#define PEERBLOOM_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom {

// How the filter bits are carried. Frozen numbering. Never renumber.
enum class BodyEncoding : uint8_t {
  kRaw = 0,         // the bit array as little-endian 64-bit words
  kZstd = 1,        // the raw body compressed with zstd
  kGolombRice = 2,  // gaps between set (or flipped) positions, Golomb-Rice coded
};
// "raw", "zstd", "golomb-rice"; parsing accepts exactly these names.
std::string_view BodyEncodingName(BodyEncoding encoding) noexcept;
std::optional<BodyEncoding> ParseBodyEncoding(std::string_view name) noexcept;

// Node ids: 1..64 bytes of [A-Za-z0-9._:-]. They travel on the wire and appear in answers.
inline constexpr size_t kMaxNodeIdBytes = 64;
bool IsValidNodeId(std::string_view id) noexcept;

struct Summary {
  std::string origin;  // node id of the node whose cache this describes
  uint64_t epoch = 0;
  uint64_t version = 0;
  KeyScheme key_scheme = KeyScheme::kRaw;
  HashScheme hash_scheme = HashScheme::kSipHash13x2;
  uint64_t estimated_items = 0;  // the origin's own count of keys it holds
  BloomFilter filter;            // carries k and the size
};

// The exact change from version base_version to version of the same (origin, epoch) and the
// same geometry: the positions whose bit differs. Applying it to any other base is an error.
struct SummaryDelta {
  std::string origin;
  uint64_t epoch = 0;
  uint64_t base_version = 0;
  uint64_t version = 0;
  KeyScheme key_scheme = KeyScheme::kRaw;
  HashScheme hash_scheme = HashScheme::kSipHash13x2;
  unsigned k = 1;
  unsigned log2_bits = kMinLog2Bits;
  unsigned multiplier = 1;  // the filter has multiplier * 2^log2_bits bits
  uint64_t estimated_items = 0;
  std::vector<uint64_t> flipped;  // strictly ascending positions below the size
  uint64_t result_digest = 0;     // FilterDigest() of the filter after applying the delta
};

// An order-independent digest of a filter's set positions: XOR over set positions p of
// SplitMix64(p). A flipped position toggles its term, so deltas update it in O(flips) and a
// receiver can check that applying a delta reproduced the sender's filter exactly.
uint64_t FilterDigest(const BloomFilter& filter) noexcept;
uint64_t PositionDigest(uint64_t position) noexcept;

// Caps that bound decoding of untrusted bytes in memory and time.
struct DecodeLimits {
  // Largest filter accepted. Default: 2^32 bits (512 MiB).
  unsigned max_log2_bits = 32;
  // Largest encoded message accepted. Default: 64 MiB.
  size_t max_encoded_bytes = size_t{64} << 20;
  // Most flipped positions a delta may carry. Default: 2^24.
  size_t max_delta_positions = size_t{1} << 24;
};

enum class MessageKind : uint8_t { kFullSummary = 1, kDelta = 2 };

// Encodes with the given body encoding, or with the smallest of all when none is given
// (replacing *out). InvalidArgument when the origin is not a node id or the filter's words do
// not match its size.
Status EncodeSummary(const Summary& summary, std::string* out,
                     std::optional<BodyEncoding> force = std::nullopt);
// Decodes untrusted bytes within `limits`. NotSupported: a newer format this reader may not
// read, or an unknown scheme or encoding (never treat that peer's keys as absent);
// ResourceExhausted: beyond a limit; Corruption: anything else that is not a message this
// codec would write, including a filter that does not match its digest; InvalidArgument: a
// delta. *out is written only on success.
Status DecodeSummary(std::string_view bytes, const DecodeLimits& limits, Summary* out);

// The delta from `from` to `to`. InvalidArgument unless both share origin, epoch, schemes and
// geometry and from.version < to.version.
Status ComputeDelta(const Summary& from, const Summary& to, SummaryDelta* out);
// InvalidArgument for a bad origin or geometry, base_version >= version, or positions that
// are not strictly ascending below the size.
Status EncodeDelta(const SummaryDelta& delta, std::string* out);
// As DecodeSummary; the digest is checked when the delta is applied. InvalidArgument: a full
// summary.
Status DecodeDelta(std::string_view bytes, const DecodeLimits& limits, SummaryDelta* out);
// Applies a delta to its base. OutOfRange (ask the origin for a full summary) when the base
// is not (origin, epoch, base_version) with the same geometry and schemes; InvalidArgument
// when the positions are not strictly ascending below the size; Corruption when the result's
// digest differs. The base is left unchanged on any error. Costs O(filter) for the digest of
// the base.
Status ApplyDelta(const SummaryDelta& delta, Summary* base);
// The same in O(flips): `base_digest` holds FilterDigest(base->filter) on entry and the
// digest of the result on success. A wrong digest on entry fails as Corruption, never
// silently.
Status ApplyDelta(const SummaryDelta& delta, Summary* base, uint64_t* base_digest);

// Reads just enough of an encoded message to tell what it is, without decoding the body. The
// header is checked as by DecodeSummary, the checksum included (the body is hashed, not
// decoded).
struct MessageHeader {
  MessageKind kind = MessageKind::kFullSummary;
  uint8_t format_version = 0;
  std::string origin;
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t base_version = 0;  // deltas only
  unsigned k = 0;
  unsigned log2_bits = 0;
  unsigned multiplier = 1;
  BodyEncoding body_encoding = BodyEncoding::kRaw;
};
Status PeekHeader(std::string_view bytes, const DecodeLimits& limits, MessageHeader* out);

}  // namespace peerbloom

#endif  // PEERBLOOM_SUMMARY_H_
