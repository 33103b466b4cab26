// Encode and decode of summary messages: the only place that turns summaries into bytes and
// back (docs/summary-format.md). Headers are framed in format.cc, bodies coded in body.cc.
#include "peerbloom/summary.h"

#include <array>
#include <string>

#include "lib/summary/body.h"
#include "lib/summary/format.h"
#include "peerbloom/bloom_probe.h"

namespace peerbloom {
namespace {

using summary_internal::MessageFields;

std::string Quote(uint64_t value) { return "'" + std::to_string(value) + "'"; }

Status CheckOrigin(std::string_view origin) {
  if (!IsValidNodeId(origin)) {
    return Status::InvalidArgument("origin '" + std::string(origin.substr(0, kMaxNodeIdBytes)) +
                                   "' is not a node id (1-64 of [A-Za-z0-9._:-])");
  }
  return Status::Ok();
}

Status CheckFilter(const BloomFilter& filter) {
  BloomFilter probe;  // reuses the filter's own range checks and messages
  PEERBLOOM_RETURN_IF_ERROR(
      BloomFilter::Create(filter.log2_bits(), filter.k(), filter.multiplier(), &probe));
  if (filter.words().size() * 64 != filter.bits()) {
    return Status::InvalidArgument("filter holds " + Quote(filter.words().size()) + " words for " +
                                   SizeText(filter.log2_bits(), filter.multiplier()) + " bits");
  }
  return Status::Ok();
}

MessageFields SummaryHeader(const Summary& s) {
  MessageFields h;
  h.kind = MessageKind::kFullSummary;
  h.key_scheme = s.key_scheme;
  h.hash_scheme = s.hash_scheme;
  h.k = s.filter.k();
  h.log2_bits = s.filter.log2_bits();
  h.multiplier = s.filter.multiplier();
  h.origin = s.origin;
  h.epoch = s.epoch;
  h.version = s.version;
  h.estimated_items = s.estimated_items;
  h.digest = FilterDigest(s.filter);
  return h;
}

Status EncodeBody(const BloomFilter& filter, BodyEncoding encoding, std::string* body) {
  switch (encoding) {
    case BodyEncoding::kRaw:
      summary_internal::EncodeRawBody(filter, body);
      return Status::Ok();
    case BodyEncoding::kZstd:
      return summary_internal::EncodeZstdBody(filter, body);
    case BodyEncoding::kGolombRice:
      summary_internal::EncodeGolombFilterBody(filter, body);
      return Status::Ok();
  }
  return Status::InvalidArgument("unknown body encoding");
}

// The smallest body of all encodings; on a tie the earlier of gap-coded, raw, zstd.
Status EncodeSmallestBody(const BloomFilter& filter, BodyEncoding* chosen, std::string* body) {
  constexpr std::array<BodyEncoding, 3> kOrder = {BodyEncoding::kGolombRice, BodyEncoding::kRaw,
                                                  BodyEncoding::kZstd};
  bool have = false;
  for (BodyEncoding encoding : kOrder) {
    std::string candidate;
    PEERBLOOM_RETURN_IF_ERROR(EncodeBody(filter, encoding, &candidate));
    if (!have || candidate.size() < body->size()) {
      *body = std::move(candidate);
      *chosen = encoding;
      have = true;
    }
  }
  return Status::Ok();
}

Status CheckDelta(const SummaryDelta& d) {
  PEERBLOOM_RETURN_IF_ERROR(CheckOrigin(d.origin));
  BloomFilter probe;
  PEERBLOOM_RETURN_IF_ERROR(BloomFilter::Create(d.log2_bits, d.k, d.multiplier, &probe));
  if (d.base_version >= d.version) {
    return Status::InvalidArgument("delta base version " + Quote(d.base_version) +
                                   " is not below its version " + Quote(d.version));
  }
  const uint64_t universe = uint64_t{d.multiplier} << d.log2_bits;
  for (size_t i = 0; i < d.flipped.size(); ++i) {
    if (d.flipped[i] >= universe || (i > 0 && d.flipped[i] <= d.flipped[i - 1])) {
      return Status::InvalidArgument("delta positions are not strictly ascending below " +
                                     SizeText(d.log2_bits, d.multiplier));
    }
  }
  return Status::Ok();
}

}  // namespace

Status EncodeSummary(const Summary& summary, std::string* out, std::optional<BodyEncoding> force) {
  PEERBLOOM_RETURN_IF_ERROR(CheckOrigin(summary.origin));
  PEERBLOOM_RETURN_IF_ERROR(CheckFilter(summary.filter));
  MessageFields header = SummaryHeader(summary);
  std::string body;
  if (force.has_value()) {
    header.body_encoding = *force;
    PEERBLOOM_RETURN_IF_ERROR(EncodeBody(summary.filter, *force, &body));
  } else {
    PEERBLOOM_RETURN_IF_ERROR(EncodeSmallestBody(summary.filter, &header.body_encoding, &body));
  }
  out->clear();
  summary_internal::WriteMessage(header, body, out);
  return Status::Ok();
}

Status DecodeSummary(std::string_view bytes, const DecodeLimits& limits, Summary* out) {
  MessageFields h;
  std::string_view body;
  PEERBLOOM_RETURN_IF_ERROR(summary_internal::ParseMessage(bytes, limits, &h, &body));
  if (h.kind != MessageKind::kFullSummary) {
    return Status::InvalidArgument("message is a delta, not a full summary");
  }
  Summary s;
  PEERBLOOM_RETURN_IF_ERROR(
      summary_internal::DecodeFilterBody(h.body_encoding, body, SizeOf(h), h.k, &s.filter));
  if (FilterDigest(s.filter) != h.digest) {
    return Status::Corruption("summary from '" + std::string(h.origin) + "' version " +
                              Quote(h.version) + " does not match its digest");
  }
  s.origin = std::string(h.origin);
  s.epoch = h.epoch;
  s.version = h.version;
  s.key_scheme = h.key_scheme;
  s.hash_scheme = h.hash_scheme;
  s.estimated_items = h.estimated_items;
  *out = std::move(s);
  return Status::Ok();
}

Status EncodeDelta(const SummaryDelta& delta, std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(CheckDelta(delta));
  MessageFields h;
  h.kind = MessageKind::kDelta;
  h.key_scheme = delta.key_scheme;
  h.hash_scheme = delta.hash_scheme;
  h.k = delta.k;
  h.log2_bits = delta.log2_bits;
  h.multiplier = delta.multiplier;
  h.body_encoding = BodyEncoding::kGolombRice;
  h.origin = delta.origin;
  h.epoch = delta.epoch;
  h.version = delta.version;
  h.base_version = delta.base_version;
  h.estimated_items = delta.estimated_items;
  h.digest = delta.result_digest;
  std::string body;
  summary_internal::EncodePositionsBody(delta.flipped,
                                        uint64_t{delta.multiplier} << delta.log2_bits, &body);
  out->clear();
  summary_internal::WriteMessage(h, body, out);
  return Status::Ok();
}

Status DecodeDelta(std::string_view bytes, const DecodeLimits& limits, SummaryDelta* out) {
  MessageFields h;
  std::string_view body;
  PEERBLOOM_RETURN_IF_ERROR(summary_internal::ParseMessage(bytes, limits, &h, &body));
  if (h.kind != MessageKind::kDelta) {
    return Status::InvalidArgument("message is a full summary, not a delta");
  }
  SummaryDelta d;
  PEERBLOOM_RETURN_IF_ERROR(summary_internal::DecodePositionsBody(
      body, SizeOf(h).bits(), limits.max_delta_positions, &d.flipped));
  d.origin = std::string(h.origin);
  d.epoch = h.epoch;
  d.base_version = h.base_version;
  d.version = h.version;
  d.key_scheme = h.key_scheme;
  d.hash_scheme = h.hash_scheme;
  d.k = h.k;
  d.log2_bits = h.log2_bits;
  d.multiplier = h.multiplier;
  d.estimated_items = h.estimated_items;
  d.result_digest = h.digest;
  *out = std::move(d);
  return Status::Ok();
}

Status PeekHeader(std::string_view bytes, const DecodeLimits& limits, MessageHeader* out) {
  MessageFields h;
  std::string_view body;
  PEERBLOOM_RETURN_IF_ERROR(summary_internal::ParseMessage(bytes, limits, &h, &body));
  MessageHeader m;
  m.kind = h.kind;
  m.format_version = h.format_version;
  m.origin = std::string(h.origin);
  m.epoch = h.epoch;
  m.version = h.version;
  m.base_version = h.base_version;
  m.k = h.k;
  m.log2_bits = h.log2_bits;
  m.multiplier = h.multiplier;
  m.body_encoding = h.body_encoding;
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace peerbloom
