// Summary values: names, node ids, digests, and deltas between two summaries.
#include "peerbloom/summary.h"

#include "lib/util/splitmix64.h"

#include <bit>
#include <string>

namespace peerbloom {
namespace {

std::string Quote(uint64_t value) { return "'" + std::to_string(value) + "'"; }

bool IsNodeIdChar(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

Status CheckSameStream(const Summary& from, const Summary& to) {
  if (from.origin != to.origin || from.epoch != to.epoch) {
    return Status::InvalidArgument("delta between different origins or epochs");
  }
  if (from.key_scheme != to.key_scheme || from.hash_scheme != to.hash_scheme ||
      !from.filter.SameGeometry(to.filter)) {
    return Status::InvalidArgument("delta between summaries of different schemes or geometry");
  }
  if (from.version >= to.version) {
    return Status::InvalidArgument("delta from version " + Quote(from.version) + " to version " +
                                   Quote(to.version) + " does not go forward");
  }
  return Status::Ok();
}

// OutOfRange unless `delta` was computed against exactly this base.
Status CheckBase(const SummaryDelta& delta, const Summary& base) {
  if (delta.origin != base.origin || delta.epoch != base.epoch ||
      delta.base_version != base.version) {
    return Status::OutOfRange("delta from '" + delta.origin + "' epoch " + Quote(delta.epoch) +
                              " version " + Quote(delta.base_version) + " does not apply to '" +
                              base.origin + "' epoch " + Quote(base.epoch) + " version " +
                              Quote(base.version));
  }
  if (delta.key_scheme != base.key_scheme || delta.hash_scheme != base.hash_scheme ||
      delta.k != base.filter.k() || delta.log2_bits != base.filter.log2_bits() ||
      delta.multiplier != base.filter.multiplier()) {
    return Status::OutOfRange("delta geometry or schemes differ from the summary held for '" +
                              base.origin + "'");
  }
  return Status::Ok();
}

Status CheckPositions(const SummaryDelta& delta) {
  const uint64_t universe =
      delta.log2_bits >= 58 ? 0 : uint64_t{delta.multiplier} << delta.log2_bits;
  for (size_t i = 0; i < delta.flipped.size(); ++i) {
    if (delta.flipped[i] >= universe || (i > 0 && delta.flipped[i] <= delta.flipped[i - 1])) {
      return Status::InvalidArgument("delta positions are not strictly ascending below " +
                                     SizeText(delta.log2_bits, delta.multiplier));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view BodyEncodingName(BodyEncoding encoding) noexcept {
  switch (encoding) {
    case BodyEncoding::kRaw:
      return "raw";
    case BodyEncoding::kZstd:
      return "zstd";
    case BodyEncoding::kGolombRice:
      return "golomb-rice";
  }
  return "unknown";
}

std::optional<BodyEncoding> ParseBodyEncoding(std::string_view name) noexcept {
  for (BodyEncoding e : {BodyEncoding::kRaw, BodyEncoding::kZstd, BodyEncoding::kGolombRice}) {
    if (name == BodyEncodingName(e)) return e;
  }
  return std::nullopt;
}

bool IsValidNodeId(std::string_view id) noexcept {
  if (id.empty() || id.size() > kMaxNodeIdBytes) return false;
  for (char c : id) {
    if (!IsNodeIdChar(c)) return false;
  }
  return true;
}

// SplitMix64 of the position (lib/util/splitmix64.h): a bijection on 64 bits, so distinct
// positions never share a term.
uint64_t PositionDigest(uint64_t position) noexcept { return SplitMix64(position); }

uint64_t FilterDigest(const BloomFilter& filter) noexcept {
  uint64_t digest = 0;
  const std::vector<uint64_t>& words = filter.words();
  for (size_t w = 0; w < words.size(); ++w) {
    for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      digest ^= PositionDigest(uint64_t{w} * 64 + static_cast<unsigned>(std::countr_zero(bits)));
    }
  }
  return digest;
}

Status ComputeDelta(const Summary& from, const Summary& to, SummaryDelta* out) {
  PEERBLOOM_RETURN_IF_ERROR(CheckSameStream(from, to));
  SummaryDelta delta;
  delta.origin = to.origin;
  delta.epoch = to.epoch;
  delta.base_version = from.version;
  delta.version = to.version;
  delta.key_scheme = to.key_scheme;
  delta.hash_scheme = to.hash_scheme;
  delta.k = to.filter.k();
  delta.log2_bits = to.filter.log2_bits();
  delta.multiplier = to.filter.multiplier();
  delta.estimated_items = to.estimated_items;
  const std::vector<uint64_t>& a = from.filter.words();
  const std::vector<uint64_t>& b = to.filter.words();
  for (size_t w = 0; w < a.size(); ++w) {
    for (uint64_t bits = a[w] ^ b[w]; bits != 0; bits &= bits - 1) {
      delta.flipped.push_back(uint64_t{w} * 64 + static_cast<unsigned>(std::countr_zero(bits)));
    }
  }
  delta.result_digest = FilterDigest(to.filter);
  *out = std::move(delta);
  return Status::Ok();
}

Status ApplyDelta(const SummaryDelta& delta, Summary* base) {
  uint64_t digest = FilterDigest(base->filter);
  return ApplyDelta(delta, base, &digest);
}

Status ApplyDelta(const SummaryDelta& delta, Summary* base, uint64_t* base_digest) {
  PEERBLOOM_RETURN_IF_ERROR(CheckBase(delta, *base));
  PEERBLOOM_RETURN_IF_ERROR(CheckPositions(delta));
  uint64_t digest = *base_digest;
  for (uint64_t pos : delta.flipped) digest ^= PositionDigest(pos);
  if (digest != delta.result_digest) {
    return Status::Corruption("delta from '" + delta.origin + "' version " + Quote(delta.version) +
                              " does not reproduce its digest");
  }
  for (uint64_t pos : delta.flipped) base->filter.FlipBit(pos);
  base->version = delta.version;
  base->estimated_items = delta.estimated_items;
  *base_digest = digest;
  return Status::Ok();
}

}  // namespace peerbloom
