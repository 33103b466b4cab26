#include "lib/summary/format.h"

#include <xxhash.h>

#include <algorithm>
#include <string>

#include "peerbloom/bloom_probe.h"
#include "peerbloom/byte_io.h"

namespace peerbloom::summary_internal {
namespace {

std::string Quote(uint64_t value) { return "'" + std::to_string(value) + "'"; }

// The bytes at offsets 8..63, in order.
struct FixedFields {
  uint8_t kind = 0, key_scheme = 0, hash_scheme = 0, k = 0, log2_bits = 0, body_encoding = 0;
  uint8_t origin_length = 0, multiplier = 0;  // byte 15: reserved (0) in format 1
  uint64_t epoch = 0, version = 0, base_version = 0, estimated_items = 0, digest = 0;
  uint64_t body_length = 0;
};

bool ReadFixed(ByteReader* in, FixedFields* f) {
  return in->ReadU8(&f->kind) && in->ReadU8(&f->key_scheme) && in->ReadU8(&f->hash_scheme) &&
         in->ReadU8(&f->k) && in->ReadU8(&f->log2_bits) && in->ReadU8(&f->body_encoding) &&
         in->ReadU8(&f->origin_length) && in->ReadU8(&f->multiplier) && in->ReadU64(&f->epoch) &&
         in->ReadU64(&f->version) && in->ReadU64(&f->base_version) &&
         in->ReadU64(&f->estimated_items) && in->ReadU64(&f->digest) &&
         in->ReadU64(&f->body_length);
}

// Magic and versions: what decides whether this reader may go on at all.
Status CheckPrefix(std::string_view bytes, const DecodeLimits& limits, MessageFields* h) {
  if (bytes.size() > limits.max_encoded_bytes) {
    return Status::ResourceExhausted("summary message of " + Quote(bytes.size()) +
                                     " bytes exceeds the limit of " +
                                     Quote(limits.max_encoded_bytes));
  }
  if (bytes.size() < kPrefixBytes) {
    return Status::Corruption("summary message of " + Quote(bytes.size()) +
                              " bytes is shorter than its prefix");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return Status::Corruption("not a summary message (bad magic)");
  }
  h->format_version = static_cast<uint8_t>(bytes[4]);
  h->min_reader_version = static_cast<uint8_t>(bytes[5]);
  if (h->min_reader_version > kReaderVersion) {
    return Status::NotSupported("summary format version " + Quote(h->format_version) +
                                " needs reader version " + Quote(h->min_reader_version) +
                                ", this reader is version " + Quote(kReaderVersion));
  }
  if (h->min_reader_version == 0 || h->format_version < h->min_reader_version) {
    return Status::Corruption("summary format version " + Quote(h->format_version) +
                              " is below its minimum reader version " +
                              Quote(h->min_reader_version));
  }
  return Status::Ok();
}

// Lengths and the checksum: whether the bytes are what the writer sent.
Status CheckFraming(std::string_view bytes, uint16_t header_length, const FixedFields& f) {
  if (f.origin_length == 0 || f.origin_length > kMaxNodeIdBytes ||
      kFixedHeaderBytes + f.origin_length > header_length) {
    return Status::Corruption("summary origin length " + Quote(f.origin_length) +
                              " does not fit header length " + Quote(header_length));
  }
  const uint64_t expected = bytes.size() - header_length - kChecksumBytes;
  if (f.body_length != expected) {
    return Status::Corruption("summary body length " + Quote(f.body_length) + " but " +
                              Quote(expected) + " bytes follow the header");
  }
  const size_t covered = bytes.size() - kChecksumBytes;
  if (LoadFixed(bytes.data() + covered, kChecksumBytes) !=
      MessageChecksum(bytes.substr(0, covered))) {
    return Status::Corruption("summary checksum mismatch");
  }
  return Status::Ok();
}

Status CheckEnums(const FixedFields& f, MessageFields* h) {
  if (f.kind != static_cast<uint8_t>(MessageKind::kFullSummary) &&
      f.kind != static_cast<uint8_t>(MessageKind::kDelta)) {
    return Status::NotSupported("unknown summary message kind " + Quote(f.kind));
  }
  if (f.key_scheme > static_cast<uint8_t>(kLastKeyScheme)) {
    return Status::NotSupported("unknown key scheme " + Quote(f.key_scheme));
  }
  if (f.hash_scheme != static_cast<uint8_t>(HashScheme::kSipHash13x2) &&
      f.hash_scheme != static_cast<uint8_t>(HashScheme::kSquidDigest)) {
    return Status::NotSupported("unknown hash scheme " + Quote(f.hash_scheme));
  }
  if (f.body_encoding > static_cast<uint8_t>(BodyEncoding::kGolombRice)) {
    return Status::NotSupported("unknown summary body encoding " + Quote(f.body_encoding));
  }
  h->kind = static_cast<MessageKind>(f.kind);
  h->key_scheme = static_cast<KeyScheme>(f.key_scheme);
  h->hash_scheme = static_cast<HashScheme>(f.hash_scheme);
  h->body_encoding = static_cast<BodyEncoding>(f.body_encoding);
  return Status::Ok();
}

// Format 1 wrote 0 and readers ignored the byte; from format 2 on 0 still means 1.
Status ReadMultiplier(const FixedFields& f, const MessageFields& h, unsigned* multiplier) {
  *multiplier = 1;
  if (h.format_version < kMultiplierFormatVersion || f.multiplier == 0) return Status::Ok();
  if (!IsValidSizeMultiplier(f.multiplier)) {
    return Status::Corruption("summary size multiplier " + Quote(f.multiplier) +
                              " is not odd in [1, " + std::to_string(kMaxSizeMultiplier) + "]");
  }
  *multiplier = f.multiplier;
  return Status::Ok();
}

Status CheckGeometry(const FixedFields& f, unsigned multiplier, const DecodeLimits& limits) {
  if (f.k < 1 || f.k > kMaxHashes) {
    return Status::Corruption("summary hash count " + Quote(f.k) + " is outside [1, " +
                              std::to_string(kMaxHashes) + "]");
  }
  if (f.log2_bits < kMinLog2Bits || f.log2_bits > kMaxLog2Bits) {
    return Status::Corruption("summary log2 of bits " + Quote(f.log2_bits) + " is outside [" +
                              std::to_string(kMinLog2Bits) + ", " + std::to_string(kMaxLog2Bits) +
                              "]");
  }
  // Compared as bit counts: c * 2^j may pass the limit with j below it.
  if (limits.max_log2_bits < 64 &&
      (uint64_t{multiplier} << f.log2_bits) > (uint64_t{1} << limits.max_log2_bits)) {
    return Status::ResourceExhausted("summary of " + SizeText(f.log2_bits, multiplier) +
                                     " bits exceeds the limit of 2^" +
                                     std::to_string(limits.max_log2_bits));
  }
  return Status::Ok();
}

Status CheckVersions(const MessageFields& h) {
  if (h.kind == MessageKind::kFullSummary && h.base_version != 0) {
    return Status::Corruption("full summary carries base version " + Quote(h.base_version));
  }
  if (h.kind == MessageKind::kDelta) {
    if (h.base_version >= h.version) {
      return Status::Corruption("delta base version " + Quote(h.base_version) +
                                " is not below its version " + Quote(h.version));
    }
    if (h.body_encoding != BodyEncoding::kGolombRice) {
      return Status::Corruption("delta body encoding " +
                                std::string(BodyEncodingName(h.body_encoding)) +
                                " is not golomb-rice");
    }
  }
  return Status::Ok();
}

}  // namespace

uint64_t MessageChecksum(std::string_view bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

void WriteMessage(const MessageFields& h, std::string_view body, std::string* out) {
  const size_t start = out->size();
  out->append(kMagic);
  const bool power_of_two = h.multiplier == 1;
  PutU8(out, power_of_two ? kPowerOfTwoFormatVersion : kFormatVersion);
  PutU8(out, power_of_two ? kPowerOfTwoFormatVersion : kMinReaderVersion);
  PutU16(out, static_cast<uint16_t>(kFixedHeaderBytes + h.origin.size()));
  for (unsigned byte : {static_cast<unsigned>(h.kind), static_cast<unsigned>(h.key_scheme),
                        static_cast<unsigned>(h.hash_scheme), h.k, h.log2_bits,
                        static_cast<unsigned>(h.body_encoding),
                        static_cast<unsigned>(h.origin.size()), power_of_two ? 0u : h.multiplier}) {
    PutU8(out, static_cast<uint8_t>(byte));
  }
  for (uint64_t word :
       {h.epoch, h.version, h.base_version, h.estimated_items, h.digest, uint64_t{body.size()}}) {
    PutU64(out, word);
  }
  out->append(h.origin);
  out->append(body);
  PutU64(out, MessageChecksum(std::string_view(*out).substr(start)));
}

Status ParseMessage(std::string_view bytes, const DecodeLimits& limits, MessageFields* header,
                    std::string_view* body) {
  MessageFields h;
  PEERBLOOM_RETURN_IF_ERROR(CheckPrefix(bytes, limits, &h));
  const auto header_length = static_cast<uint16_t>(LoadFixed(bytes.data() + 6, 2));
  if (header_length < kFixedHeaderBytes || bytes.size() < size_t{header_length} + kChecksumBytes) {
    return Status::Corruption("summary message of " + Quote(bytes.size()) +
                              " bytes is truncated (header length " + Quote(header_length) + ")");
  }
  ByteReader in(bytes.substr(kPrefixBytes, header_length - kPrefixBytes));
  FixedFields f;
  if (!ReadFixed(&in, &f)) return Status::Corruption("summary header is truncated");
  PEERBLOOM_RETURN_IF_ERROR(CheckFraming(bytes, header_length, f));
  PEERBLOOM_RETURN_IF_ERROR(CheckEnums(f, &h));
  h.origin = bytes.substr(kFixedHeaderBytes, f.origin_length);
  if (!IsValidNodeId(h.origin)) return Status::Corruption("summary origin is not a node id");
  PEERBLOOM_RETURN_IF_ERROR(ReadMultiplier(f, h, &h.multiplier));
  PEERBLOOM_RETURN_IF_ERROR(CheckGeometry(f, h.multiplier, limits));
  h.k = f.k;
  h.log2_bits = f.log2_bits;
  h.epoch = f.epoch;
  h.version = f.version;
  h.base_version = f.base_version;
  h.estimated_items = f.estimated_items;
  h.digest = f.digest;
  PEERBLOOM_RETURN_IF_ERROR(CheckVersions(h));
  *header = h;
  *body = bytes.substr(header_length, f.body_length);
  return Status::Ok();
}

}  // namespace peerbloom::summary_internal
