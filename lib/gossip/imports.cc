// Imported Squid Cache Digests (docs/gossip.md, "Imported digests"). A daemon fetches the
// digest of a Squid node that runs no peerbloomd and gossips it, marked imported; every
// daemon answers who-has for it with Squid's own hashing (MD5 store key words modulo the mask
// bits), through a ForeignSummary slot of the PeerIndex.
#include <algorithm>
#include <memory>
#include <utility>

#include "lib/gossip/engine.h"

namespace peerbloom {
namespace {

// Lifetimes announced by peers are clamped to this, so a bad one cannot pin an import.
constexpr int64_t kMaxImportLifetimeMs = int64_t{7} * 24 * 3600 * 1000;

class SquidDigestSummary : public ForeignSummary {
 public:
  explicit SquidDigestSummary(CacheDigest digest) : digest_(std::move(digest)) {}
  // Keys other than 16-byte MD5 store keys never match: imports exist only in squid-md5
  // clusters, where every key is one.
  bool MayContain(std::string_view key_bytes, const KeyHash&) const noexcept override {
    if (key_bytes.size() != 16) return false;
    SquidKey key;
    std::copy(key_bytes.begin(), key_bytes.end(), key.begin());
    return digest_.MayContain(key);
  }
  size_t memory_bytes() const noexcept override { return digest_.mask().size(); }

 private:
  CacheDigest digest_;
};

}  // namespace

std::string ImportedNodeId(std::string_view source) {
  return std::string(kImportedIdPrefix) + std::string(source);
}

bool GossipEngine::Impl::ImportLive(const Import& imp, int64_t now_ms) const {
  if (imp.withdrawn || imp.slot == PeerIndex::kNoSlot || now_ms > imp.expires_ms) return false;
  if (imp.importer == opt_.node_id) return true;
  const Member* m = Find(imp.importer);
  return m == nullptr || Alive(*m, now_ms);  // an importer not heard of yet is not dead
}

Status GossipEngine::Impl::ImportDigest(const DigestImport& in, int64_t now_ms) {
  if (!started_) Start(now_ms);
  if (opt_.key_scheme != KeyScheme::kSquidMd5) {
    return Status::InvalidArgument("digest imports need key scheme 'squid-md5', not '" +
                                   std::string(KeySchemeName(opt_.key_scheme)) + "'");
  }
  const std::string id = ImportedNodeId(in.source);
  if (!IsValidNodeId(id))
    return Status::InvalidArgument("invalid import source '" + in.source + "'");
  if (!IsValidEndpoint(in.source_url)) {
    return Status::InvalidArgument("invalid import url '" + in.source_url + "'");
  }
  if (in.valid_for_ms < 0) return Status::InvalidArgument("negative import validity");
  if (in.digest_bytes.size() > kMaxImportedDigestBytes) {
    return Status::ResourceExhausted("digest of '" + std::to_string(in.digest_bytes.size()) +
                                     "' bytes exceeds the import limit '" +
                                     std::to_string(kMaxImportedDigestBytes) + "'");
  }
  CacheDigest digest;
  PEERBLOOM_RETURN_IF_ERROR(CacheDigest::Parse(in.digest_bytes, &digest));
  ImportedDigestEntry e;
  e.origin = id;
  e.importer = opt_.node_id;
  const Import* held = imports_.count(id) ? &imports_.find(id)->second : nullptr;
  e.version = std::max<uint64_t>(in.fetched_unix_ms, held ? held->version + 1 : 1);
  e.fetched_unix_ms = in.fetched_unix_ms;
  e.lifetime_ms = static_cast<uint64_t>(std::min(in.valid_for_ms, kMaxImportLifetimeMs) +
                                        opt_.failure_timeout_ms);
  e.source_url = in.source_url;
  e.flags = kImportHasDigest;
  e.digest = in.digest_bytes;
  StoreImport(e, std::move(digest), now_ms);
  SpreadImport(imports_.find(id)->second, opt_.node_id, opt_.node_id, now_ms);
  return Status::Ok();
}

void GossipEngine::Impl::ForgetImport(std::string_view source, int64_t now_ms) {
  auto it = imports_.find(ImportedNodeId(source));
  if (it == imports_.end() || it->second.importer != opt_.node_id || it->second.withdrawn) return;
  Import& imp = it->second;
  DropImportSlot(&imp);
  imp.withdrawn = true;
  ++imp.version;
  // Keep the tombstone while older copies may still circulate.
  imp.expires_ms = std::max(imp.expires_ms, now_ms + opt_.failure_timeout_ms);
  SpreadImport(imp, opt_.node_id, opt_.node_id, now_ms);
}

Status GossipEngine::Impl::CheckImports(const WireFrame& frame, std::vector<CacheDigest>* out) {
  if (opt_.key_scheme != KeyScheme::kSquidMd5) {
    return Status::NotSupported("imported digests in a cluster of key scheme '" +
                                std::string(KeySchemeName(opt_.key_scheme)) + "'");
  }
  out->resize(frame.imports.size());
  for (size_t i = 0; i < frame.imports.size(); ++i) {
    const ImportedDigestEntry& e = frame.imports[i];
    if ((e.flags & kImportHasDigest) == 0) continue;
    Status s = CacheDigest::Parse(e.digest, &(*out)[i]);
    if (!s.ok()) {
      ++stats_.imports_refused;
      return Status::Corruption("imported digest of '" + e.origin + "': " + s.message());
    }
  }
  return Status::Ok();
}

void GossipEngine::Impl::OnImports(const WireFrame& frame, std::vector<CacheDigest>* digests,
                                   Member* sender, int64_t now_ms) {
  std::vector<FullRequest> requests;
  for (size_t i = 0; i < frame.imports.size(); ++i) {
    const ImportedDigestEntry& e = frame.imports[i];
    auto it = imports_.find(e.origin);
    Import* held = it == imports_.end() ? nullptr : &it->second;
    if (held != nullptr && e.version <= held->version) {
      if ((e.flags & kImportHasDigest) != 0) ++stats_.stale_dropped;
      continue;
    }
    if ((e.flags & (kImportHasDigest | kImportWithdrawn)) != 0) {
      ApplyImport(e, &(*digests)[i], sender, now_ms);
    } else if (held == nullptr || now_ms - held->requested_ms >= 2 * opt_.gossip_interval_ms) {
      // An announcement of a version we lack: ask the announcer for it.
      if (held != nullptr) held->requested_ms = now_ms;
      requests.push_back(FullRequest{e.origin, 0, held ? held->version : 0});
    }
  }
  SendRequests(*sender, requests);
}

void GossipEngine::Impl::ApplyImport(const ImportedDigestEntry& e, CacheDigest* digest,
                                     Member* sender, int64_t now_ms) {
  ++stats_.imports_in;
  if ((e.flags & kImportHasDigest) != 0) {
    StoreImport(e, std::move(*digest), now_ms);
  } else {
    Import& imp = imports_[e.origin];
    DropImportSlot(&imp);
    imp.id = e.origin;
    imp.importer = e.importer;
    imp.source_url = e.source_url;
    imp.version = e.version;
    imp.withdrawn = true;
    imp.received_ms = now_ms;
    imp.expires_ms =
        now_ms + std::min(static_cast<int64_t>(std::min<uint64_t>(e.lifetime_ms, INT64_MAX / 4)),
                          kMaxImportLifetimeMs);
  }
  SpreadImport(imports_.find(e.origin)->second, sender->id, e.importer, now_ms);
}

void GossipEngine::Impl::StoreImport(const ImportedDigestEntry& e, CacheDigest digest,
                                     int64_t now_ms) {
  Import& imp = imports_[e.origin];
  DropImportSlot(&imp);
  imp.id = e.origin;
  imp.importer = e.importer;
  imp.source_url = e.source_url;
  imp.version = e.version;
  imp.fetched_unix_ms = e.fetched_unix_ms;
  imp.received_ms = now_ms;
  const uint64_t lifetime = std::min<uint64_t>(e.lifetime_ms, kMaxImportLifetimeMs);
  imp.expires_ms = now_ms + static_cast<int64_t>(lifetime);
  imp.withdrawn = false;
  imp.bytes.assign(e.digest);
  imp.header = digest.header();
  imp.fill = digest.fill();
  imp.fpr = digest.EstimatedFalsePositiveRate();
  imp.requested_ms = kNeverMs;
  imp.slot = index_.InsertForeign(std::make_unique<SquidDigestSummary>(std::move(digest)));
  if (slot_owner_.size() <= imp.slot) slot_owner_.resize(imp.slot + 1);
  slot_owner_[imp.slot] = imp.id;
}

void GossipEngine::Impl::DropImportSlot(Import* imp) {
  if (imp->slot != PeerIndex::kNoSlot) {
    index_.Erase(imp->slot);
    slot_owner_[imp->slot].clear();
  }
  imp->slot = PeerIndex::kNoSlot;
  imp->bytes.clear();
}

ImportedDigestEntry GossipEngine::Impl::EntryOf(const Import& imp, bool with_digest,
                                                int64_t now_ms) const {
  ImportedDigestEntry e;
  e.origin = imp.id;
  e.importer = imp.importer;
  e.version = imp.version;
  e.fetched_unix_ms = imp.fetched_unix_ms;
  // What is left of its lifetime: passing it on never extends it.
  e.lifetime_ms = static_cast<uint64_t>(std::max<int64_t>(imp.expires_ms - now_ms, 0));
  e.source_url = imp.source_url;
  if (imp.withdrawn) {
    e.flags = kImportWithdrawn;
  } else if (with_digest) {
    e.flags = kImportHasDigest;
    e.digest = imp.bytes;
  }
  return e;
}

void GossipEngine::Impl::SpreadImport(const Import& imp, std::string_view skip_a,
                                      std::string_view skip_b, int64_t now_ms) {
  if (!imp.withdrawn && !ImportLive(imp, now_ms)) return;
  const std::vector<ImportedDigestEntry> entries{EntryOf(imp, true, now_ms)};
  for (const LinkTarget& t : Targets(now_ms)) {
    if (t.member_id == skip_a || t.member_id == skip_b) continue;
    SendImports(t.endpoint, t.public_key, t.chosen, entries);
  }
}

void GossipEngine::Impl::SendImports(const std::string& endpoint, const std::string& public_key,
                                     bool chosen, const std::vector<ImportedDigestEntry>& entries) {
  std::string payload;
  if (!EncodeImportedDigestFrame(Header(chosen, true), entries, &payload).ok()) return;
  ++stats_.imports_out;
  Send(endpoint, public_key, std::move(payload), WireType::kImportedDigest);
}

void GossipEngine::Impl::AnnounceImports(const std::string& endpoint, const std::string& public_key,
                                         bool chosen, int64_t now_ms) {
  std::vector<ImportedDigestEntry> entries;
  for (const auto& [id, imp] : imports_) {
    if (entries.size() + 1 >= opt_.wire_limits.max_entries) break;
    if (imp.withdrawn ? now_ms <= imp.expires_ms : ImportLive(imp, now_ms)) {
      entries.push_back(EntryOf(imp, false, now_ms));
    }
  }
  if (!entries.empty()) SendImports(endpoint, public_key, chosen, entries);
}

bool GossipEngine::Impl::ServeImport(const Member& to, const FullRequest& q, int64_t now_ms) {
  if (q.origin.compare(0, kImportedIdPrefix.size(), kImportedIdPrefix) != 0) return false;
  auto it = imports_.find(q.origin);
  if (it == imports_.end() || it->second.version <= q.have_version) return true;
  const Import& imp = it->second;
  if (!imp.withdrawn && !ImportLive(imp, now_ms)) return true;
  SendImports(to.endpoint, to.public_key, false, {EntryOf(imp, true, now_ms)});
  return true;
}

void GossipEngine::Impl::ExpireImports(int64_t now_ms) {
  for (auto it = imports_.begin(); it != imports_.end();) {
    if (now_ms <= it->second.expires_ms) {
      ++it;
      continue;
    }
    if (!it->second.withdrawn) ++stats_.imports_expired;
    DropImportSlot(&it->second);
    it = imports_.erase(it);
  }
}

const Import* GossipEngine::Impl::FindImportBySlot(PeerIndex::Slot slot) const {
  if (slot >= slot_owner_.size()) return nullptr;
  auto it = imports_.find(slot_owner_[slot]);
  return it == imports_.end() || it->second.slot != slot ? nullptr : &it->second;
}

void GossipEngine::Impl::AddImportPeers(int64_t now_ms, std::vector<PeerInfo>* out) const {
  for (const auto& [id, imp] : imports_) {
    if (imp.withdrawn) continue;
    PeerInfo p;
    p.node_id = id;
    p.endpoint = imp.source_url;
    p.alive = ImportLive(imp, now_ms);
    p.imported = true;
    p.version = imp.version;
    p.estimated_items = imp.header.count;
    p.k = imp.header.hash_functions;
    p.last_heard_ms = imp.received_ms;
    p.summary_received_ms = imp.received_ms;
    p.imported_by = imp.importer;
    p.digest_capacity = imp.header.capacity;
    p.digest_fill = imp.fill;
    p.digest_fpr = imp.fpr;
    out->push_back(std::move(p));
  }
}

}  // namespace peerbloom
