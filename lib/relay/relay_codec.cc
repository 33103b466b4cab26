// Relay packet encoding and decoding (docs/relay.md). Every length is checked before use;
// decoding allocates at most the payload and filter caps plus the refs cap.
#include <string>
#include <string_view>

#include "peerbloom/byte_io.h"
#include "peerbloom/relay_message.h"
#include "peerbloom/summary.h"

namespace peerbloom {
namespace {

Status Truncated(std::string_view field) {
  return Status::Corruption("relay packet truncated in '" + std::string(field) + "'");
}

Status CheckData(const RelayData& d, const RelayLimits& limits) {
  if (!IsValidNodeId(d.origin)) return Status::InvalidArgument("invalid relay origin");
  if (d.hop_limit == 0 || d.hop_limit > kMaxRelayHopLimit) {
    return Status::InvalidArgument("relay hop limit '" + std::to_string(d.hop_limit) +
                                   "' out of range");
  }
  if (d.hops > d.hop_limit) {
    return Status::InvalidArgument("relay hops '" + std::to_string(d.hops) +
                                   "' exceed the hop limit");
  }
  if (d.filter_k == 0 || d.filter_k > kMaxRelayFilterHashes) {
    return Status::InvalidArgument("relay filter hashes '" + std::to_string(d.filter_k) +
                                   "' out of range");
  }
  if (d.filter.empty() || d.filter.size() > kMaxRelayFilterBytes) {
    return Status::InvalidArgument("relay filter size '" + std::to_string(d.filter.size()) +
                                   "' out of range");
  }
  if (d.payload.size() > limits.max_payload_bytes) {
    return Status::InvalidArgument("relay payload of '" + std::to_string(d.payload.size()) +
                                   "' bytes exceeds the limit");
  }
  if ((d.flags & ~kRelayKnownFlags) != 0) return Status::InvalidArgument("unknown relay flags");
  const size_t want = (d.flags & kRelayFlagSigned) != 0 ? kRelaySignatureBytes : 0;
  if (d.signature.size() != want) return Status::InvalidArgument("relay signature size");
  return Status::Ok();
}

void PutData(const RelayData& d, std::string* out) {
  PutStr8(out, d.origin);
  PutVarint(out, d.id);
  PutVarint(out, d.hop_limit);
  PutVarint(out, d.hops);
  PutU8(out, d.filter_k);
  PutVarint(out, d.filter.size());
  out->append(d.filter);
  PutVarint(out, d.payload.size());
  out->append(d.payload);
  out->append(d.signature);
}

Status ReadData(ByteReader* r, const RelayLimits& limits, uint8_t flags, RelayData* d) {
  d->flags = flags;
  uint64_t hop_limit = 0, hops = 0, filter_len = 0, payload_len = 0;
  if (!r->ReadStr8(&d->origin)) return Truncated("origin");
  if (!IsValidNodeId(d->origin)) return Status::Corruption("invalid relay origin");
  if (!r->ReadVarint(&d->id)) return Truncated("id");
  if (!r->ReadVarint(&hop_limit) || !r->ReadVarint(&hops)) return Truncated("hops");
  if (hop_limit == 0 || hop_limit > kMaxRelayHopLimit || hops > hop_limit) {
    return Status::Corruption("relay hops '" + std::to_string(hops) + "' of hop limit '" +
                              std::to_string(hop_limit) + "' out of range");
  }
  d->hop_limit = static_cast<uint32_t>(hop_limit);
  d->hops = static_cast<uint32_t>(hops);
  if (!r->ReadU8(&d->filter_k)) return Truncated("filter");
  if (d->filter_k == 0 || d->filter_k > kMaxRelayFilterHashes) {
    return Status::Corruption("relay filter hashes '" + std::to_string(d->filter_k) +
                              "' out of range");
  }
  if (!r->ReadVarint(&filter_len)) return Truncated("filter");
  if (filter_len == 0 || filter_len > kMaxRelayFilterBytes) {
    return Status::Corruption("relay filter size '" + std::to_string(filter_len) +
                              "' out of range");
  }
  std::string_view view;
  if (!r->ReadBytes(filter_len, &view)) return Truncated("filter");
  d->filter.assign(view);
  if (!r->ReadVarint(&payload_len)) return Truncated("payload");
  if (payload_len > limits.max_payload_bytes) {
    return Status::ResourceExhausted("relay payload of '" + std::to_string(payload_len) +
                                     "' bytes exceeds the limit '" +
                                     std::to_string(limits.max_payload_bytes) + "'");
  }
  if (!r->ReadBytes(payload_len, &view)) return Truncated("payload");
  d->payload.assign(view);
  if ((flags & kRelayFlagSigned) != 0) {
    if (!r->ReadBytes(kRelaySignatureBytes, &view)) return Truncated("signature");
    d->signature.assign(view);
  }
  return Status::Ok();
}

Status ReadRefs(ByteReader* r, const RelayLimits& limits, bool with_hops,
                std::vector<RelayRef>* refs) {
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated("count");
  if (count > limits.max_refs) {
    return Status::ResourceExhausted("relay entry count '" + std::to_string(count) +
                                     "' exceeds the limit '" + std::to_string(limits.max_refs) +
                                     "'");
  }
  // Each entry takes at least 3 bytes (a 1-byte origin, an id, hops or not).
  if (count > r->remaining() / 3) return Status::Corruption("relay entry count exceeds the packet");
  refs->resize(count);
  for (RelayRef& ref : *refs) {
    uint64_t hops = 0;
    if (!r->ReadStr8(&ref.origin)) return Truncated("origin");
    if (!IsValidNodeId(ref.origin)) return Status::Corruption("invalid relay origin");
    if (!r->ReadVarint(&ref.id)) return Truncated("id");
    if (with_hops && !r->ReadVarint(&hops)) return Truncated("hops");
    if (hops > kMaxRelayHopLimit) return Status::Corruption("relay hops out of range");
    ref.hops = static_cast<uint32_t>(hops);
  }
  return Status::Ok();
}

}  // namespace

Status EncodeRelayPacket(const RelayPacket& p, const RelayLimits& limits, std::string* out) {
  std::string bytes;
  PutU8(&bytes, kRelayVersion);
  PutU8(&bytes, kRelayMinReaderVersion);
  PutU8(&bytes, static_cast<uint8_t>(p.kind));
  switch (p.kind) {
    case RelayKind::kData:
      PEERBLOOM_RETURN_IF_ERROR(CheckData(p.data, limits));
      PutU8(&bytes, p.data.flags);
      PutData(p.data, &bytes);
      break;
    case RelayKind::kIHave:
    case RelayKind::kGraft: {
      PutU8(&bytes, 0);
      // A GRAFT without entries only puts the link on the tree.
      const bool empty_ok = p.kind == RelayKind::kGraft;
      if ((p.refs.empty() && !empty_ok) || p.refs.size() > limits.max_refs) {
        return Status::InvalidArgument("relay entry count out of range");
      }
      PutVarint(&bytes, p.refs.size());
      for (const RelayRef& ref : p.refs) {
        if (!IsValidNodeId(ref.origin)) return Status::InvalidArgument("invalid relay origin");
        if (ref.hops > kMaxRelayHopLimit) return Status::InvalidArgument("relay hops out of range");
        PutStr8(&bytes, ref.origin);
        PutVarint(&bytes, ref.id);
        if (p.kind == RelayKind::kIHave) PutVarint(&bytes, ref.hops);
      }
      break;
    }
    case RelayKind::kPrune:
      PutU8(&bytes, 0);
      break;
    default:
      return Status::InvalidArgument("unknown relay packet kind");
  }
  *out = std::move(bytes);
  return Status::Ok();
}

Status DecodeRelayPacket(std::string_view bytes, const RelayLimits& limits, RelayPacket* out) {
  ByteReader r(bytes);
  uint8_t version = 0, min_reader = 0, kind = 0, flags = 0;
  if (!r.ReadU8(&version) || !r.ReadU8(&min_reader)) return Truncated("version");
  if (min_reader == 0 || min_reader > version) {
    return Status::Corruption("relay packet version '" + std::to_string(version) +
                              "' with minimum reader '" + std::to_string(min_reader) + "'");
  }
  if (min_reader > kRelayVersion) {
    return Status::NotSupported("relay packet needs reader version '" + std::to_string(min_reader) +
                                "', this is '" + std::to_string(kRelayVersion) + "'");
  }
  if (!r.ReadU8(&kind) || !r.ReadU8(&flags)) return Truncated("kind");
  const bool newer = version > kRelayVersion;
  RelayPacket p;
  p.kind = static_cast<RelayKind>(kind);
  switch (p.kind) {
    case RelayKind::kData:
      // A newer writer may set flags this reader does not know; it skips what they add.
      if (!newer && (flags & ~kRelayKnownFlags) != 0) {
        return Status::Corruption("unknown relay flags '" + std::to_string(flags) + "'");
      }
      PEERBLOOM_RETURN_IF_ERROR(ReadData(&r, limits, flags & kRelayKnownFlags, &p.data));
      break;
    case RelayKind::kIHave:
    case RelayKind::kGraft:
      if (!newer && flags != 0) return Status::Corruption("relay flags on a non-data packet");
      PEERBLOOM_RETURN_IF_ERROR(ReadRefs(&r, limits, p.kind == RelayKind::kIHave, &p.refs));
      if (p.refs.empty() && p.kind == RelayKind::kIHave) {
        return Status::Corruption("relay announcement without entries");
      }
      break;
    case RelayKind::kPrune:
      if (!newer && flags != 0) return Status::Corruption("relay flags on a non-data packet");
      break;
    default:
      return Status::NotSupported("unknown relay packet kind '" + std::to_string(kind) + "'");
  }
  if (!newer && r.remaining() != 0) {
    return Status::Corruption("'" + std::to_string(r.remaining()) +
                              "' trailing bytes after the relay packet");
  }
  *out = std::move(p);
  return Status::Ok();
}

Status RelaySignedBytes(const RelayData& data, std::string* out) {
  RelayPacket p;
  p.data = data;
  p.data.hops = 0;
  p.data.filter.assign(data.filter.size(), '\0');
  p.data.flags &= static_cast<uint8_t>(~kRelayFlagSigned);
  p.data.signature.clear();
  RelayLimits limits;
  limits.max_payload_bytes = data.payload.size();
  return EncodeRelayPacket(p, limits, out);
}

}  // namespace peerbloom
