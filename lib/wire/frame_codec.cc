// Encode and decode of peer frames. docs/wire-protocol.md is the specification; the layout
// comments below name its fields in order.
#include <algorithm>
#include <string>

#include "lib/wire/import_body.h"
#include "peerbloom/byte_io.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

constexpr uint8_t kEntryAlive = 0x01;
constexpr uint8_t kEntryHasSummary = 0x02;
constexpr uint8_t kEntryHasContact = 0x04;
constexpr uint8_t kEntryKnownFlags = kEntryAlive | kEntryHasSummary | kEntryHasContact;
constexpr uint8_t kDigestKnownFlags = kDigestReplyWanted | kDigestComplete | kDigestChecksum;
// Version 4 entry extension flags.
constexpr uint8_t kEntryProbes = 0x01;
constexpr uint8_t kEntrySuspect = 0x02;
constexpr uint8_t kEntryKnownExtFlags = kEntryProbes | kEntrySuspect;
constexpr uint8_t kProbeKnownFlags = kProbeSuspected;

Status Truncated(std::string_view field) {
  return Status::Corruption("frame truncated in '" + std::string(field) + "'");
}

Status CheckNodeId(std::string_view id, std::string_view field) {
  if (IsValidNodeId(id)) return Status::Ok();
  return Status::InvalidArgument("invalid node id in '" + std::string(field) + "'");
}

// The header flags a frame of `version` may carry (a newer version's frame: every flag this
// reader knows).
uint8_t KnownFlags(uint8_t version) {
  uint8_t known = kWireKnownFlags;
  if (version < 4) known &= ~kWireFlagProbes;
  if (version < 6) known &= ~kWireFlagNoPush;
  return known;
}

Status ValidateHeader(const WireHeader& h) {
  PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(h.sender_id, "sender id"));
  const bool contact = (h.flags & kWireFlagContact) != 0;
  if (contact ? !IsValidEndpoint(h.sender_endpoint) : !h.sender_endpoint.empty()) {
    return Status::InvalidArgument("invalid sender endpoint '" + h.sender_endpoint + "'");
  }
  if (contact ? !IsValidPublicKey(h.sender_public_key) : !h.sender_public_key.empty()) {
    return Status::InvalidArgument("invalid sender public key");
  }
  if ((h.flags & ~KnownFlags(h.version)) != 0) {
    return Status::InvalidArgument("unknown header flags '" + std::to_string(h.flags) + "'");
  }
  return Status::Ok();
}

// magic[4] version min_reader type flags cluster_tag:u64 sender_id:str8 sender_epoch:varint
// sender_heartbeat:varint [endpoint:str8 public_key:str8 when kWireFlagContact]
uint8_t LayoutVersion(const WireHeader& h) {
  return h.version < 1 ? 1 : (h.version > kWireVersion ? kWireVersion : h.version);
}

void AppendHeader(const WireHeader& h, WireType type, std::string* out) {
  out->clear();
  out->append(kWireMagic, sizeof(kWireMagic));
  PutU8(out, LayoutVersion(h));
  PutU8(out, kWireMinReaderVersion);
  PutU8(out, static_cast<uint8_t>(type));
  PutU8(out, h.flags);
  PutU64(out, h.cluster_tag);
  PutStr8(out, h.sender_id);
  PutVarint(out, h.sender_epoch);
  PutVarint(out, h.sender_heartbeat);
  if ((h.flags & kWireFlagContact) != 0) {
    PutStr8(out, h.sender_endpoint);
    PutStr8(out, h.sender_public_key);
  }
}

Status ValidateEntry(const DigestEntry& e) {
  PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(e.origin, "digest origin"));
  if (e.has_contact && (!IsValidEndpoint(e.endpoint) || !IsValidPublicKey(e.public_key))) {
    return Status::InvalidArgument("invalid contact of digest origin '" + e.origin + "'");
  }
  if (!e.epoch_cert.empty() && e.epoch_cert.size() != kWireSignatureBytes) {
    return Status::InvalidArgument("epoch certificate of '" + std::to_string(e.epoch_cert.size()) +
                                   "' bytes");
  }
  if (!e.beat_sig.empty() && e.beat_sig.size() != kWireSignatureBytes) {
    return Status::InvalidArgument("beat signature of '" + std::to_string(e.beat_sig.size()) +
                                   "' bytes");
  }
  return Status::Ok();
}

// A list of per-entry signatures (version 2: epoch certificates; version 3: beat signatures):
// count:varint (index:varint signature[64])*, indexes strictly ascending.
void AppendEntrySigs(const std::vector<DigestEntry>& entries, std::string DigestEntry::*field,
                     std::string* out) {
  size_t count = 0;
  for (const auto& e : entries) count += (e.*field).empty() ? 0 : 1;
  PutVarint(out, count);
  for (size_t i = 0; i < entries.size(); ++i) {
    if ((entries[i].*field).empty()) continue;
    PutVarint(out, i);
    out->append(entries[i].*field);
  }
}

// `what` names the signature in messages ("epoch certificate", "beat signature").
Status DecodeEntrySigs(ByteReader* r, std::string_view what, std::string DigestEntry::*field,
                       std::vector<DigestEntry>* entries) {
  const std::string name(what);
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated(name + " count");
  if (count > entries->size()) return Status::Corruption("more " + name + "s than entries");
  uint64_t next = 0;  // the smallest index allowed
  for (uint64_t c = 0; c < count; ++c) {
    uint64_t index = 0;
    std::string_view sig;
    if (!r->ReadVarint(&index)) return Truncated(name + " index");
    if (index < next || index >= entries->size()) {
      return Status::Corruption(name + " index '" + std::to_string(index) + "'");
    }
    if (!r->ReadBytes(kWireSignatureBytes, &sig)) return Truncated(name);
    ((*entries)[index].*field).assign(sig);
    next = index + 1;
  }
  return Status::Ok();
}

uint8_t ExtFlagsOf(const DigestEntry& e) {
  return (e.probes ? kEntryProbes : 0) | (e.suspect ? kEntrySuspect : 0);
}

// Version 4: count:varint (index:varint ext_flags:u8)*, indexes strictly ascending, only
// entries with a flag set.
void AppendEntryExt(const std::vector<DigestEntry>& entries, std::string* out) {
  size_t count = 0;
  for (const auto& e : entries) count += ExtFlagsOf(e) != 0 ? 1 : 0;
  PutVarint(out, count);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (ExtFlagsOf(entries[i]) == 0) continue;
    PutVarint(out, i);
    PutU8(out, ExtFlagsOf(entries[i]));
  }
}

Status DecodeEntryExt(ByteReader* r, std::vector<DigestEntry>* entries) {
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated("entry flags count");
  if (count > entries->size()) return Status::Corruption("more entry flags than entries");
  uint64_t next = 0;
  for (uint64_t c = 0; c < count; ++c) {
    uint64_t index = 0;
    uint8_t flags = 0;
    if (!r->ReadVarint(&index)) return Truncated("entry flags index");
    if (index < next || index >= entries->size()) {
      return Status::Corruption("entry flags index '" + std::to_string(index) + "'");
    }
    if (!r->ReadU8(&flags)) return Truncated("entry flags");
    if (flags == 0 || (flags & ~kEntryKnownExtFlags) != 0) {
      return Status::Corruption("entry flags '" + std::to_string(flags) + "'");
    }
    (*entries)[index].probes = (flags & kEntryProbes) != 0;
    (*entries)[index].suspect = (flags & kEntrySuspect) != 0;
    next = index + 1;
  }
  return Status::Ok();
}

// origin:str8 flags:u8 epoch:varint heartbeat:varint
// [version:varint filter_digest:u64] [endpoint:str8 public_key:str8]
void AppendEntry(const DigestEntry& e, std::string* out) {
  PutStr8(out, e.origin);
  uint8_t flags = 0;
  if (e.alive) flags |= kEntryAlive;
  if (e.has_summary) flags |= kEntryHasSummary;
  if (e.has_contact) flags |= kEntryHasContact;
  PutU8(out, flags);
  PutVarint(out, e.epoch);
  PutVarint(out, e.heartbeat);
  if (e.has_summary) {
    PutVarint(out, e.version);
    PutU64(out, e.filter_digest);
  }
  if (e.has_contact) {
    PutStr8(out, e.endpoint);
    PutStr8(out, e.public_key);
  }
}

Status DecodeHeader(ByteReader* r, WireHeader* h) {
  std::string_view magic;
  if (!r->ReadBytes(sizeof(kWireMagic), &magic)) return Truncated("magic");
  if (magic != std::string_view(kWireMagic, sizeof(kWireMagic))) {
    return Status::Corruption("bad frame magic");
  }
  uint8_t type = 0;
  if (!r->ReadU8(&h->version) || !r->ReadU8(&h->min_reader_version)) return Truncated("version");
  // Writers of versions 1 and 2 write minimum reader 1: any other value is not theirs.
  const bool known_version = h->version <= kWireVersion;
  if (h->min_reader_version == 0 || h->min_reader_version > h->version ||
      (known_version && h->min_reader_version != kWireMinReaderVersion)) {
    return Status::Corruption("bad frame version '" + std::to_string(h->version) +
                              "' with minimum reader '" + std::to_string(h->min_reader_version) +
                              "'");
  }
  if (h->min_reader_version > kWireVersion) {
    return Status::NotSupported("frame needs reader version '" +
                                std::to_string(h->min_reader_version) + "', this is '" +
                                std::to_string(kWireVersion) + "'");
  }
  if (!r->ReadU8(&type) || !r->ReadU8(&h->flags)) return Truncated("type");
  h->type = static_cast<WireType>(type);
  if (!r->ReadU64(&h->cluster_tag)) return Truncated("cluster tag");
  if (!r->ReadStr8(&h->sender_id)) return Truncated("sender id");
  if (!r->ReadVarint(&h->sender_epoch)) return Truncated("sender epoch");
  if (!r->ReadVarint(&h->sender_heartbeat)) return Truncated("sender heartbeat");
  const bool contact = (h->flags & kWireFlagContact) != 0;
  if (contact && !r->ReadStr8(&h->sender_endpoint)) return Truncated("sender endpoint");
  if (contact && !r->ReadStr8(&h->sender_public_key)) return Truncated("sender public key");
  // A newer writer may define more flags; this version's writers must not set them.
  if (h->version <= kWireVersion && (h->flags & ~KnownFlags(h->version)) != 0) {
    return Status::Corruption("unknown header flags '" + std::to_string(h->flags) + "'");
  }
  if (!IsValidNodeId(h->sender_id)) return Status::Corruption("invalid sender id");
  if (contact && !IsValidEndpoint(h->sender_endpoint)) {
    return Status::Corruption("invalid sender endpoint");
  }
  if (contact && !IsValidPublicKey(h->sender_public_key)) {
    return Status::Corruption("invalid sender public key");
  }
  return Status::Ok();
}

Status DecodeEntry(ByteReader* r, DigestEntry* e) {
  uint8_t flags = 0;
  if (!r->ReadStr8(&e->origin)) return Truncated("digest origin");
  if (!IsValidNodeId(e->origin)) return Status::Corruption("invalid digest origin");
  if (!r->ReadU8(&flags)) return Truncated("digest entry flags");
  if ((flags & ~kEntryKnownFlags) != 0) {
    return Status::Corruption("unknown digest entry flags '" + std::to_string(flags) + "'");
  }
  e->alive = (flags & kEntryAlive) != 0;
  e->has_summary = (flags & kEntryHasSummary) != 0;
  e->has_contact = (flags & kEntryHasContact) != 0;
  if (!r->ReadVarint(&e->epoch)) return Truncated("digest epoch");
  if (!r->ReadVarint(&e->heartbeat)) return Truncated("digest heartbeat");
  if (e->has_summary) {
    if (!r->ReadVarint(&e->version)) return Truncated("digest version");
    if (!r->ReadU64(&e->filter_digest)) return Truncated("digest filter digest");
  }
  if (e->has_contact) {
    if (!r->ReadStr8(&e->endpoint)) return Truncated("digest endpoint");
    if (!r->ReadStr8(&e->public_key)) return Truncated("digest public key");
    if (!IsValidEndpoint(e->endpoint) || !IsValidPublicKey(e->public_key)) {
      return Status::Corruption("invalid contact of digest origin '" + e->origin + "'");
    }
  }
  return Status::Ok();
}

Status DecodeCount(ByteReader* r, const WireLimits& limits, std::string_view field, size_t* n) {
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated(field);
  if (count > limits.max_entries) {
    return Status::ResourceExhausted(std::string(field) + " '" + std::to_string(count) +
                                     "' exceeds the limit '" + std::to_string(limits.max_entries) +
                                     "'");
  }
  // Each entry takes at least 2 bytes: a count larger than the rest is a lie.
  if (count > r->remaining() / 2) return Truncated(field);
  *n = static_cast<size_t>(count);
  return Status::Ok();
}

Status DecodeDigestBody(ByteReader* r, const WireLimits& limits, uint8_t version,
                        DigestBody* body) {
  if (!r->ReadU8(&body->flags)) return Truncated("digest flags");
  const uint8_t known = version >= 4 ? kDigestKnownFlags : kDigestKnownFlags & ~kDigestChecksum;
  if ((body->flags & ~known) != 0) {
    return Status::Corruption("unknown digest flags '" + std::to_string(body->flags) + "'");
  }
  size_t n = 0;
  PEERBLOOM_RETURN_IF_ERROR(DecodeCount(r, limits, "digest entry count", &n));
  body->entries.resize(n);
  for (auto& e : body->entries) PEERBLOOM_RETURN_IF_ERROR(DecodeEntry(r, &e));
  if (version >= 2) {
    PEERBLOOM_RETURN_IF_ERROR(
        DecodeEntrySigs(r, "epoch certificate", &DigestEntry::epoch_cert, &body->entries));
  }
  if (version >= 3) {
    PEERBLOOM_RETURN_IF_ERROR(
        DecodeEntrySigs(r, "beat signature", &DigestEntry::beat_sig, &body->entries));
  }
  if (version >= 4) PEERBLOOM_RETURN_IF_ERROR(DecodeEntryExt(r, &body->entries));
  if ((body->flags & kDigestChecksum) != 0 && !r->ReadU64(&body->checksum)) {
    return Truncated("digest checksum");
  }
  return Status::Ok();
}

// count:varint (origin:str8 epoch:varint version:varint [filter_digest:u64])*. The version 4
// list carries each digest; the relayed list of version 7 (`relayed_by`: the sender) carries
// none and never names the sender.
Status DecodeVersions(ByteReader* r, const WireLimits& limits, const std::string* relayed_by,
                      std::vector<VersionAnnouncement>* out) {
  const bool relayed = relayed_by != nullptr;
  size_t n = 0;
  PEERBLOOM_RETURN_IF_ERROR(
      DecodeCount(r, limits, relayed ? "relayed announcement count" : "announcement count", &n));
  out->resize(n);
  for (VersionAnnouncement& a : *out) {
    if (!r->ReadStr8(&a.origin)) return Truncated(relayed ? "relayed origin" : "announced origin");
    if (!IsValidNodeId(a.origin)) {
      return Status::Corruption(relayed ? "invalid relayed origin" : "invalid announced origin");
    }
    if (relayed && a.origin == *relayed_by) {
      return Status::Corruption("relayed announcement of the sender's own version");
    }
    if (!r->ReadVarint(&a.epoch) || !r->ReadVarint(&a.version) ||
        (!relayed && !r->ReadU64(&a.filter_digest))) {
      return Truncated(relayed ? "relayed version" : "announced version");
    }
  }
  return Status::Ok();
}

// Version 4: kind:u8 seq:varint [target:str8 (ping-req, ack)] [flags:u8 (ping)] versions;
// version 7 appends relayed versions.
Status DecodeProbe(ByteReader* r, const WireLimits& limits, const WireHeader& h, ProbeBody* p) {
  uint8_t kind = 0;
  if (!r->ReadU8(&kind)) return Truncated("probe kind");
  if (kind > static_cast<uint8_t>(ProbeKind::kPingReq)) {
    return Status::Corruption("probe kind '" + std::to_string(kind) + "'");
  }
  p->kind = static_cast<ProbeKind>(kind);
  if (!r->ReadVarint(&p->seq)) return Truncated("probe sequence number");
  if (p->kind != ProbeKind::kPing) {
    if (!r->ReadStr8(&p->target)) return Truncated("probe target");
    const bool needed = p->kind == ProbeKind::kPingReq;
    if ((needed || !p->target.empty()) && !IsValidNodeId(p->target)) {
      return Status::Corruption("invalid probe target");
    }
  } else {
    if (!r->ReadU8(&p->flags)) return Truncated("probe flags");
    if ((p->flags & ~kProbeKnownFlags) != 0) {
      return Status::Corruption("probe flags '" + std::to_string(p->flags) + "'");
    }
  }
  PEERBLOOM_RETURN_IF_ERROR(DecodeVersions(r, limits, nullptr, &p->versions));
  if (h.version < 7) return Status::Ok();
  return DecodeVersions(r, limits, &h.sender_id, &p->relayed_versions);
}

// Version 2: sig_flags:u8 [state_sig[64]] [delta_sig[64]].
Status DecodeSummarySigs(ByteReader* r, WireFrame* out) {
  uint8_t flags = 0;
  if (!r->ReadU8(&flags)) return Truncated("signature flags");
  const uint8_t known =
      out->header.type == WireType::kDelta ? (kSigHasState | kSigHasDelta) : kSigHasState;
  if ((flags & ~known) != 0) {
    return Status::Corruption("unknown signature flags '" + std::to_string(flags) + "'");
  }
  if ((flags & kSigHasState) != 0 && !r->ReadBytes(kWireSignatureBytes, &out->state_sig)) {
    return Truncated("state signature");
  }
  if ((flags & kSigHasDelta) != 0 && !r->ReadBytes(kWireSignatureBytes, &out->delta_sig)) {
    return Truncated("delta signature");
  }
  return Status::Ok();
}

Status DecodeRequests(ByteReader* r, const WireLimits& limits, std::vector<FullRequest>* out) {
  size_t n = 0;
  PEERBLOOM_RETURN_IF_ERROR(DecodeCount(r, limits, "request count", &n));
  out->resize(n);
  for (auto& q : *out) {
    if (!r->ReadStr8(&q.origin)) return Truncated("request origin");
    if (!IsValidNodeId(q.origin)) return Status::Corruption("invalid request origin");
    if (!r->ReadVarint(&q.epoch)) return Truncated("request epoch");
    if (!r->ReadVarint(&q.have_version)) return Truncated("request version held");
  }
  return Status::Ok();
}

// Version 5: count:varint seq:varint...
Status DecodeResend(ByteReader* r, std::vector<uint64_t>* seqs) {
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated("resend count");
  if (count == 0 || count > kMaxResendSeqs) {
    return Status::Corruption("resend count '" + std::to_string(count) + "' outside 1.." +
                              std::to_string(kMaxResendSeqs));
  }
  seqs->resize(static_cast<size_t>(count));
  for (uint64_t& seq : *seqs) {
    if (!r->ReadVarint(&seq)) return Truncated("resend sequence number");
    if (seq == 0) return Status::Corruption("resend sequence number 0");
  }
  return Status::Ok();
}

Status DecodeOrigins(ByteReader* r, const WireLimits& limits, std::vector<std::string>* out) {
  size_t n = 0;
  PEERBLOOM_RETURN_IF_ERROR(DecodeCount(r, limits, "origin count", &n));
  out->resize(n);
  for (std::string& origin : *out) {
    if (!r->ReadStr8(&origin)) return Truncated("origin");
    if (!IsValidNodeId(origin)) return Status::Corruption("invalid origin");
  }
  return Status::Ok();
}

Status DecodeBody(ByteReader* r, const WireLimits& limits, WireFrame* out) {
  switch (out->header.type) {
    case WireType::kDigest:
      return DecodeDigestBody(r, limits, out->header.version, &out->digest);
    case WireType::kFullSummary:
    case WireType::kDelta: {
      uint32_t len = 0;
      if (!r->ReadU32(&len)) return Truncated("summary length");
      if (len == 0) return Status::Corruption("empty summary body");
      if (!r->ReadBytes(len, &out->summary_bytes)) return Truncated("summary body");
      if (out->header.version >= 2) PEERBLOOM_RETURN_IF_ERROR(DecodeSummarySigs(r, out));
      if (out->header.version >= 5 && !r->ReadVarint(&out->link_seq)) {
        return Truncated("link sequence number");
      }
      return Status::Ok();
    }
    case WireType::kRequestFull:
      return DecodeRequests(r, limits, &out->requests);
    case WireType::kBroadcast: {
      uint32_t len = 0;
      if (!r->ReadU32(&len)) return Truncated("broadcast length");
      if (len == 0) return Status::Corruption("empty broadcast body");
      if (!r->ReadBytes(len, &out->relay_bytes)) return Truncated("broadcast body");
      return Status::Ok();
    }
    case WireType::kPrune:
    case WireType::kGraft:
      PEERBLOOM_RETURN_IF_ERROR(DecodeOrigins(r, limits, &out->origins));
      if (out->header.version >= 5 && !r->ReadVarint(&out->link_seq)) {
        return Truncated("link sequence number");
      }
      return Status::Ok();
    case WireType::kImportedDigest:
      return wire_internal::DecodeImportBody(r, limits, out->header.version, &out->imports);
    case WireType::kProbe:
      if (out->header.version < 4) return Status::Corruption("probe frame of version below 4");
      return DecodeProbe(r, limits, out->header, &out->probe);
    case WireType::kResend:
      if (out->header.version < 5) return Status::Corruption("resend frame of version below 5");
      return DecodeResend(r, &out->resend_seqs);
  }
  return Status::NotSupported("unknown message type '" +
                              std::to_string(static_cast<unsigned>(out->header.type)) + "'");
}

}  // namespace

std::string_view WireTypeName(WireType type) noexcept {
  switch (type) {
    case WireType::kDigest:
      return "digest";
    case WireType::kFullSummary:
      return "full-summary";
    case WireType::kDelta:
      return "delta";
    case WireType::kRequestFull:
      return "request-full";
    case WireType::kBroadcast:
      return "broadcast";
    case WireType::kPrune:
      return "prune";
    case WireType::kGraft:
      return "graft";
    case WireType::kImportedDigest:
      return "imported-digest";
    case WireType::kProbe:
      return "probe";
    case WireType::kResend:
      return "resend";
  }
  return "unknown";
}

Status EncodeDigestFrame(const WireHeader& header, const DigestBody& body, std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  if ((body.flags & ~kDigestKnownFlags) != 0) {
    return Status::InvalidArgument("unknown digest flags '" + std::to_string(body.flags) + "'");
  }
  const uint8_t version = LayoutVersion(header);
  if ((body.flags & kDigestChecksum) != 0 && version < 4) {
    return Status::InvalidArgument("digest checksum in a version " + std::to_string(version) +
                                   " frame");
  }
  if ((body.flags & kDigestChecksum) == 0 && body.checksum != 0) {
    return Status::InvalidArgument("digest checksum without its flag");
  }
  for (const auto& e : body.entries) {
    PEERBLOOM_RETURN_IF_ERROR(ValidateEntry(e));
    if (version < 2 && !e.epoch_cert.empty()) {
      return Status::InvalidArgument("epoch certificate in a version 1 frame");
    }
    if (version < 3 && !e.beat_sig.empty()) {
      return Status::InvalidArgument("beat signature in a version " + std::to_string(version) +
                                     " frame");
    }
    if (version < 4 && ExtFlagsOf(e) != 0) {
      return Status::InvalidArgument("entry flags in a version " + std::to_string(version) +
                                     " frame");
    }
  }
  AppendHeader(header, WireType::kDigest, out);
  PutU8(out, body.flags);
  PutVarint(out, body.entries.size());
  for (const auto& e : body.entries) AppendEntry(e, out);
  if (version >= 2) AppendEntrySigs(body.entries, &DigestEntry::epoch_cert, out);
  if (version >= 3) AppendEntrySigs(body.entries, &DigestEntry::beat_sig, out);
  if (version >= 4) AppendEntryExt(body.entries, out);
  if ((body.flags & kDigestChecksum) != 0) PutU64(out, body.checksum);
  return Status::Ok();
}

Status EncodeProbeFrame(const WireHeader& header, const ProbeBody& probe, std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  if (LayoutVersion(header) < 4) {
    return Status::InvalidArgument("probe frame of version " +
                                   std::to_string(LayoutVersion(header)));
  }
  const bool ping = probe.kind == ProbeKind::kPing;
  if (static_cast<uint8_t>(probe.kind) > static_cast<uint8_t>(ProbeKind::kPingReq) ||
      (probe.kind == ProbeKind::kPingReq && probe.target.empty()) ||
      (ping && !probe.target.empty()) || (!ping && probe.flags != 0) ||
      (probe.flags & ~kProbeKnownFlags) != 0) {
    return Status::InvalidArgument("invalid probe body");
  }
  if (!probe.target.empty()) PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(probe.target, "probe target"));
  for (const VersionAnnouncement& a : probe.versions) {
    PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(a.origin, "announced origin"));
  }
  const bool v7 = LayoutVersion(header) >= 7;
  if (!probe.relayed_versions.empty() && !v7) {
    return Status::InvalidArgument("relayed versions in a version '" +
                                   std::to_string(LayoutVersion(header)) + "' frame");
  }
  for (const VersionAnnouncement& a : probe.relayed_versions) {
    PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(a.origin, "relayed origin"));
    if (a.origin == header.sender_id || a.filter_digest != 0) {
      return Status::InvalidArgument("relayed version of '" + a.origin +
                                     "': the sender's own, or with a filter digest");
    }
  }
  AppendHeader(header, WireType::kProbe, out);
  PutU8(out, static_cast<uint8_t>(probe.kind));
  PutVarint(out, probe.seq);
  if (ping) {
    PutU8(out, probe.flags);
  } else {
    PutStr8(out, probe.target);
  }
  PutVarint(out, probe.versions.size());
  for (const VersionAnnouncement& a : probe.versions) {
    PutStr8(out, a.origin);
    PutVarint(out, a.epoch);
    PutVarint(out, a.version);
    PutU64(out, a.filter_digest);
  }
  if (!v7) return Status::Ok();
  PutVarint(out, probe.relayed_versions.size());
  for (const VersionAnnouncement& a : probe.relayed_versions) {
    PutStr8(out, a.origin);
    PutVarint(out, a.epoch);
    PutVarint(out, a.version);
  }
  return Status::Ok();
}

Status EncodeSummaryFrame(const WireHeader& header, WireType type, std::string_view codec_bytes,
                          std::string* out, std::string_view state_sig, std::string_view delta_sig,
                          uint64_t link_seq) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  if (type != WireType::kFullSummary && type != WireType::kDelta) {
    return Status::InvalidArgument("summary frame of type '" + std::string(WireTypeName(type)) +
                                   "'");
  }
  if (codec_bytes.empty() || codec_bytes.size() > UINT32_MAX) {
    return Status::InvalidArgument("summary body of '" + std::to_string(codec_bytes.size()) +
                                   "' bytes");
  }
  const bool v2 = LayoutVersion(header) >= 2;
  for (std::string_view sig : {state_sig, delta_sig}) {
    if (!sig.empty() && (sig.size() != kWireSignatureBytes || !v2)) {
      return Status::InvalidArgument("summary signature of '" + std::to_string(sig.size()) +
                                     "' bytes in a version '" +
                                     std::to_string(LayoutVersion(header)) + "' frame");
    }
  }
  if (type == WireType::kFullSummary && !delta_sig.empty()) {
    return Status::InvalidArgument("delta signature on a full summary");
  }
  const bool v5 = LayoutVersion(header) >= 5;
  if (link_seq != 0 && !v5) {
    return Status::InvalidArgument("link sequence number in a version '" +
                                   std::to_string(LayoutVersion(header)) + "' frame");
  }
  AppendHeader(header, type, out);
  PutU32(out, static_cast<uint32_t>(codec_bytes.size()));
  out->append(codec_bytes);
  if (!v2) return Status::Ok();
  PutU8(out, (state_sig.empty() ? 0 : kSigHasState) | (delta_sig.empty() ? 0 : kSigHasDelta));
  out->append(state_sig);
  out->append(delta_sig);
  if (v5) PutVarint(out, link_seq);
  return Status::Ok();
}

Status EncodeResendFrame(const WireHeader& header, const std::vector<uint64_t>& seqs,
                         std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  if (LayoutVersion(header) < 5) {
    return Status::InvalidArgument("resend frame of version " +
                                   std::to_string(LayoutVersion(header)));
  }
  if (seqs.empty() || seqs.size() > kMaxResendSeqs ||
      std::find(seqs.begin(), seqs.end(), 0) != seqs.end()) {
    return Status::InvalidArgument("invalid resend body");
  }
  AppendHeader(header, WireType::kResend, out);
  PutVarint(out, seqs.size());
  for (uint64_t seq : seqs) PutVarint(out, seq);
  return Status::Ok();
}

Status EncodeBroadcastFrame(const WireHeader& header, std::string_view relay_packet,
                            std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  if (relay_packet.empty() || relay_packet.size() > UINT32_MAX) {
    return Status::InvalidArgument("broadcast body of '" + std::to_string(relay_packet.size()) +
                                   "' bytes");
  }
  AppendHeader(header, WireType::kBroadcast, out);
  PutU32(out, static_cast<uint32_t>(relay_packet.size()));
  out->append(relay_packet);
  return Status::Ok();
}

Status EncodeRequestFullFrame(const WireHeader& header, const std::vector<FullRequest>& requests,
                              std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  for (const auto& q : requests) PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(q.origin, "request"));
  AppendHeader(header, WireType::kRequestFull, out);
  PutVarint(out, requests.size());
  for (const auto& q : requests) {
    PutStr8(out, q.origin);
    PutVarint(out, q.epoch);
    PutVarint(out, q.have_version);
  }
  return Status::Ok();
}

Status EncodeOriginsFrame(const WireHeader& header, WireType type,
                          const std::vector<std::string>& origins, std::string* out,
                          uint64_t link_seq) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  if (type != WireType::kPrune && type != WireType::kGraft) {
    return Status::InvalidArgument("origins frame of type '" + std::string(WireTypeName(type)) +
                                   "'");
  }
  const bool v5 = LayoutVersion(header) >= 5;
  if (link_seq != 0 && !v5) {
    return Status::InvalidArgument("link sequence number in a version '" +
                                   std::to_string(LayoutVersion(header)) + "' frame");
  }
  for (const auto& o : origins) PEERBLOOM_RETURN_IF_ERROR(CheckNodeId(o, "origin"));
  AppendHeader(header, type, out);
  PutVarint(out, origins.size());
  for (const auto& o : origins) PutStr8(out, o);
  if (v5) PutVarint(out, link_seq);
  return Status::Ok();
}

Status EncodeImportedDigestFrame(const WireHeader& header,
                                 const std::vector<ImportedDigestEntry>& entries,
                                 std::string* out) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateHeader(header));
  PEERBLOOM_RETURN_IF_ERROR(wire_internal::ValidateImportEntries(entries, WireLimits()));
  for (const ImportedDigestEntry& e : entries) {
    if (LayoutVersion(header) < 2 && !e.signature.empty()) {
      return Status::InvalidArgument("import signature in a version 1 frame");
    }
  }
  AppendHeader(header, WireType::kImportedDigest, out);
  wire_internal::AppendImportBody(entries, LayoutVersion(header), out);
  return Status::Ok();
}

Status DecodeFrame(std::string_view frame, const WireLimits& limits, WireFrame* out) {
  if (frame.size() > limits.max_frame_bytes) {
    return Status::ResourceExhausted("frame of '" + std::to_string(frame.size()) +
                                     "' bytes exceeds the limit '" +
                                     std::to_string(limits.max_frame_bytes) + "'");
  }
  *out = WireFrame();
  ByteReader r(frame);
  PEERBLOOM_RETURN_IF_ERROR(DecodeHeader(&r, &out->header));
  PEERBLOOM_RETURN_IF_ERROR(DecodeBody(&r, limits, out));
  if (r.remaining() != 0 && out->header.version <= kWireVersion) {
    return Status::Corruption("'" + std::to_string(r.remaining()) +
                              "' trailing bytes after the frame body");
  }
  return Status::Ok();
}

}  // namespace peerbloom
