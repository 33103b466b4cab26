// Encode and decode of kImportedDigest bodies (docs/wire-protocol.md, "imported digest").
// The digest bytes are carried as Squid served them; only their length is checked here.
#include <string>

#include "lib/wire/import_body.h"
#include "peerbloom/summary.h"

namespace peerbloom::wire_internal {
namespace {

constexpr uint8_t kImportKnownFlags = kImportHasDigest | kImportWithdrawn;
// origin, importer (>= 2 bytes each), flags, three varints, url (>= 2 bytes).
constexpr size_t kMinEntryBytes = 10;

Status Truncated(std::string_view field) {
  return Status::Corruption("frame truncated in '" + std::string(field) + "'");
}

bool IsImportedId(std::string_view id) {
  return IsValidNodeId(id) && id.size() > kImportedIdPrefix.size() &&
         id.substr(0, kImportedIdPrefix.size()) == kImportedIdPrefix;
}

// The rules both sides apply; empty when the entry is fine.
std::string EntryProblem(const ImportedDigestEntry& e) {
  if (!IsImportedId(e.origin)) return "invalid imported origin";
  if (!IsValidNodeId(e.importer)) return "invalid importer of '" + e.origin + "'";
  if (!IsValidEndpoint(e.source_url)) return "invalid source url of '" + e.origin + "'";
  if ((e.flags & ~kImportKnownFlags) != 0) {
    return "unknown import flags '" + std::to_string(e.flags) + "'";
  }
  const bool has = (e.flags & kImportHasDigest) != 0;
  if (has && (e.flags & kImportWithdrawn) != 0) return "withdrawn import carries a digest";
  if (has && (e.digest.empty() || e.digest.size() > kMaxImportedDigestBytes)) {
    return "imported digest of '" + std::to_string(e.digest.size()) + "' bytes (limit '" +
           std::to_string(kMaxImportedDigestBytes) + "')";
  }
  if (!has && !e.digest.empty()) return "digest bytes without the digest flag";
  if (!e.signature.empty() && e.signature.size() != kWireSignatureBytes) {
    return "import signature of '" + std::to_string(e.signature.size()) + "' bytes";
  }
  if (!e.signature.empty() && (e.flags & kImportKnownFlags) == 0) {
    return "signature on an import announcement";
  }
  return std::string();
}

Status DecodeEntry(ByteReader* r, ImportedDigestEntry* e) {
  if (!r->ReadStr8(&e->origin)) return Truncated("import origin");
  if (!r->ReadStr8(&e->importer)) return Truncated("importer");
  if (!r->ReadU8(&e->flags)) return Truncated("import flags");
  if (!r->ReadVarint(&e->version)) return Truncated("import version");
  if (!r->ReadVarint(&e->fetched_unix_ms)) return Truncated("import fetch time");
  if (!r->ReadVarint(&e->lifetime_ms)) return Truncated("import lifetime");
  if (!r->ReadStr8(&e->source_url)) return Truncated("import source url");
  if ((e->flags & kImportHasDigest) != 0) {
    uint32_t len = 0;
    if (!r->ReadU32(&len)) return Truncated("imported digest length");
    if (len == 0 || len > kMaxImportedDigestBytes) {
      return Status::ResourceExhausted("imported digest of '" + std::to_string(len) +
                                       "' bytes (limit '" +
                                       std::to_string(kMaxImportedDigestBytes) + "')");
    }
    if (!r->ReadBytes(len, &e->digest)) return Truncated("imported digest");
  }
  const std::string problem = EntryProblem(*e);
  if (!problem.empty()) return Status::Corruption(problem);
  return Status::Ok();
}

}  // namespace

Status ValidateImportEntries(const std::vector<ImportedDigestEntry>& entries,
                             const WireLimits& limits) {
  if (entries.empty() || entries.size() > limits.max_entries) {
    return Status::InvalidArgument("imported digest frame of '" + std::to_string(entries.size()) +
                                   "' entries");
  }
  for (const ImportedDigestEntry& e : entries) {
    const std::string problem = EntryProblem(e);
    if (!problem.empty()) return Status::InvalidArgument(problem);
  }
  return Status::Ok();
}

// count:varint, then per entry: origin:str8 importer:str8 flags:u8 version:varint
// fetched_unix_ms:varint lifetime_ms:varint source_url:str8 [digest_len:u32 digest]
void AppendImportBody(const std::vector<ImportedDigestEntry>& entries, uint8_t version,
                      std::string* out) {
  PutVarint(out, entries.size());
  for (const ImportedDigestEntry& e : entries) {
    PutStr8(out, e.origin);
    PutStr8(out, e.importer);
    PutU8(out, e.flags);
    PutVarint(out, e.version);
    PutVarint(out, e.fetched_unix_ms);
    PutVarint(out, e.lifetime_ms);
    PutStr8(out, e.source_url);
    if ((e.flags & kImportHasDigest) != 0) {
      PutU32(out, static_cast<uint32_t>(e.digest.size()));
      out->append(e.digest);
    }
  }
  if (version < 2) return;
  // Version 2: sig_count:varint (index:varint signature[64])*, indexes strictly ascending.
  size_t count = 0;
  for (const ImportedDigestEntry& e : entries) count += e.signature.empty() ? 0 : 1;
  PutVarint(out, count);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].signature.empty()) continue;
    PutVarint(out, i);
    out->append(entries[i].signature);
  }
}

Status DecodeImportSignatures(ByteReader* r, std::vector<ImportedDigestEntry>* out) {
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated("import signature count");
  if (count > out->size()) return Status::Corruption("more import signatures than entries");
  uint64_t next = 0;
  for (uint64_t c = 0; c < count; ++c) {
    uint64_t index = 0;
    if (!r->ReadVarint(&index)) return Truncated("import signature index");
    if (index < next || index >= out->size()) {
      return Status::Corruption("import signature index '" + std::to_string(index) + "'");
    }
    ImportedDigestEntry& e = (*out)[index];
    if (!r->ReadBytes(kWireSignatureBytes, &e.signature)) return Truncated("import signature");
    if ((e.flags & kImportKnownFlags) == 0) {
      return Status::Corruption("signature on an import announcement");
    }
    next = index + 1;
  }
  return Status::Ok();
}

Status DecodeImportBody(ByteReader* r, const WireLimits& limits, uint8_t version,
                        std::vector<ImportedDigestEntry>* out) {
  uint64_t count = 0;
  if (!r->ReadVarint(&count)) return Truncated("import count");
  if (count > limits.max_entries) {
    return Status::ResourceExhausted("import count '" + std::to_string(count) +
                                     "' exceeds the limit '" + std::to_string(limits.max_entries) +
                                     "'");
  }
  if (count == 0) return Status::Corruption("imported digest frame without entries");
  if (count > r->remaining() / kMinEntryBytes) return Truncated("import count");
  out->resize(static_cast<size_t>(count));
  for (ImportedDigestEntry& e : *out) PEERBLOOM_RETURN_IF_ERROR(DecodeEntry(r, &e));
  return version >= 2 ? DecodeImportSignatures(r, out) : Status::Ok();
}

}  // namespace peerbloom::wire_internal
