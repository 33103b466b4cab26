// The summary wire format's frozen constants and its header, in one place.
//
// docs/summary-format.md is the specification, with the byte layout. Everything here is
// frozen: never renumber, never move a field. A change that an older reader can skip (a new
// header field appended after the origin) bumps kFormatVersion only; a change an older reader
// would misread bumps kMinReaderVersion as well.
#ifndef PEERBLOOM_LIB_SUMMARY_FORMAT_H_
#define PEERBLOOM_LIB_SUMMARY_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/params.h"
#include "peerbloom/status.h"
#include "peerbloom/summary.h"

namespace peerbloom::summary_internal {

inline constexpr std::string_view kMagic = "PBSM";
// Format 2 gives byte 15 (reserved in format 1) a meaning: the odd size multiplier c of a
// filter of c * 2^lg2m bits. A format 1 reader would take such a filter for 2^lg2m bits and
// misplace every position, so format 2 messages need reader 2. Writers still write format 1,
// byte for byte as before, when the size is a power of two (c = 1), so readers of format 1
// keep reading those; they refuse the others by their minimum reader version, cleanly.
// The version this code writes for a size that is not a power of two.
inline constexpr uint8_t kFormatVersion = 2;
// The oldest reader that can read those.
inline constexpr uint8_t kMinReaderVersion = 2;
// The version and minimum reader written for power-of-two sizes.
inline constexpr uint8_t kPowerOfTwoFormatVersion = 1;
// The newest format this code can read (messages may be newer if their minimum allows it).
inline constexpr uint8_t kReaderVersion = 2;
// The first format whose byte 15 is the size multiplier (0 there reads as 1).
inline constexpr uint8_t kMultiplierFormatVersion = 2;

inline constexpr size_t kPrefixBytes = 8;        // magic, versions, header length
inline constexpr size_t kFixedHeaderBytes = 64;  // everything before the origin
inline constexpr size_t kChecksumBytes = 8;      // XXH3-64 (seed 0) trailer

// zstd bodies: writers never use a window above 2^kZstdMaxWindowLog bytes nor above the raw
// body's size rounded up to a power of two; readers accept windows up to that raw size.
inline constexpr unsigned kZstdMaxWindowLog = 23;
inline constexpr unsigned kZstdMinWindowLog = 10;
// The largest raw body (2^kMaxLog2Bits bits) is 2^31 bytes, zstd's 64-bit window maximum.
inline constexpr unsigned kZstdReaderMaxWindowLog = 31;
inline constexpr int kZstdLevel = 3;

// Gap-coded bodies start with count (u64) and divisor (u64).
inline constexpr size_t kGolombBodyPrefixBytes = 16;

// A summary message's header fields as they travel (peerbloom::MessageHeader is what
// PeekHeader tells callers; the gossip frame's header is peerbloom::WireHeader).
// `origin` and `body` view the message's bytes.
// WriteMessage picks the two versions from the multiplier; ParseMessage reports them.
struct MessageFields {
  uint8_t format_version = kPowerOfTwoFormatVersion;
  uint8_t min_reader_version = kPowerOfTwoFormatVersion;
  MessageKind kind = MessageKind::kFullSummary;
  KeyScheme key_scheme = KeyScheme::kRaw;
  HashScheme hash_scheme = HashScheme::kSipHash13x2;
  unsigned k = 1;
  unsigned log2_bits = 0;
  unsigned multiplier = 1;  // the filter has multiplier * 2^log2_bits bits
  BodyEncoding body_encoding = BodyEncoding::kRaw;
  std::string_view origin;
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t base_version = 0;
  uint64_t estimated_items = 0;
  uint64_t digest = 0;  // FilterDigest of the filter described (after the delta, for deltas)
};

// The filter size a header describes.
inline FilterSize SizeOf(const MessageFields& h) noexcept { return {h.log2_bits, h.multiplier}; }

// XXH3-64 with seed 0 of every byte before the checksum.
uint64_t MessageChecksum(std::string_view bytes) noexcept;

// Appends header, body and checksum. REQUIRES: a valid origin (at most kMaxNodeIdBytes).
void WriteMessage(const MessageFields& header, std::string_view body, std::string* out);

// Checks everything but the body's contents: size and limits, magic, versions, lengths,
// checksum, known schemes and encoding, node id, geometry, versions. On success `header`
// and `body` view `bytes`.
Status ParseMessage(std::string_view bytes, const DecodeLimits& limits, MessageFields* header,
                    std::string_view* body);

}  // namespace peerbloom::summary_internal

#endif  // PEERBLOOM_LIB_SUMMARY_FORMAT_H_
