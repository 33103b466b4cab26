// Imported Squid Cache Digests. A daemon fetches the digest of a Squid node that runs no
// peerbloomd and gossips it; every daemon answers who-has for it with Squid's own hashing
// (MD5 store key words modulo the mask bits), through a ForeignSummary slot of the PeerIndex.
#include "lib/gossip/imports.h"

#include <algorithm>
#include <memory>
#include <utility>

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

Status CheckImportRequest(const DigestImport& in, const std::string& id) {
  if (!IsValidNodeId(id)) {
    return Status::InvalidArgument("invalid import source '" + in.source + "'");
  }
  if (!IsValidEndpoint(in.source_url)) {
    return Status::InvalidArgument("invalid import url '" + in.source_url + "'");
  }
  if (in.valid_for_ms < 0) return Status::InvalidArgument("negative import validity");
  if (in.digest_bytes.size() > kMaxImportedDigestBytes) {
    return Status::ResourceExhausted("digest of '" + std::to_string(in.digest_bytes.size()) +
                                     "' bytes exceeds the import limit '" +
                                     std::to_string(kMaxImportedDigestBytes) + "'");
  }
  return Status::Ok();
}

}  // namespace

std::string ImportedNodeId(std::string_view source) {
  return std::string(kImportedIdPrefix) + std::string(source);
}

Imports::Imports(const GossipOptions& options, const Membership& members, PeerSummaries* slots,
                 Outbox* outbox, GossipStats* stats, OriginSigs* sigs)
    : node_id_(options.node_id),
      key_scheme_(options.key_scheme),
      failure_timeout_ms_(options.failure_timeout_ms),
      retry_ms_(2 * options.gossip_interval_ms),
      max_entries_(options.wire_limits.max_entries),
      max_per_importer_(options.max_imports_per_importer),
      max_bytes_per_importer_(options.max_import_bytes_per_importer),
      members_(members),
      slots_(slots),
      outbox_(outbox),
      stats_(stats),
      sigs_(sigs),
      signer_(options.signer),
      cluster_tag_(options.cluster_tag) {}

bool Imports::Live(const HeldImport& imp, int64_t now_ms) const {
  if (imp.withdrawn || imp.slot == PeerIndex::kNoSlot || now_ms > imp.expires_ms) return false;
  if (imp.importer == node_id_) return true;
  const Member* m = members_.Find(imp.importer);
  return m == nullptr || members_.Alive(*m, now_ms);  // an importer not heard of is not dead
}

Status Imports::Import(const DigestImport& in, int64_t now_ms) {
  if (key_scheme_ != KeyScheme::kSquidMd5) {
    return Status::InvalidArgument("digest imports need key scheme 'squid-md5', not '" +
                                   std::string(KeySchemeName(key_scheme_)) + "'");
  }
  const std::string id = ImportedNodeId(in.source);
  PEERBLOOM_RETURN_IF_ERROR(CheckImportRequest(in, id));
  CacheDigest digest;
  PEERBLOOM_RETURN_IF_ERROR(CacheDigest::Parse(in.digest_bytes, &digest));
  ImportedDigestEntry e;
  e.origin = id;
  e.importer = node_id_;
  auto held = imports_.find(id);
  e.version =
      std::max<uint64_t>(in.fetched_unix_ms, held != imports_.end() ? held->second.version + 1 : 1);
  e.fetched_unix_ms = in.fetched_unix_ms;
  e.lifetime_ms =
      static_cast<uint64_t>(std::min(in.valid_for_ms, kMaxImportLifetimeMs) + failure_timeout_ms_);
  e.source_url = in.source_url;
  e.flags = kImportHasDigest;
  e.digest = in.digest_bytes;
  PEERBLOOM_RETURN_IF_ERROR(CheckQuota({e}));
  const std::string signature = SignImportWith(signer_.get(), cluster_tag_, e);
  e.signature = signature;
  Store(e, std::move(digest), now_ms);
  Spread(imports_.find(id)->second, node_id_, node_id_, now_ms);
  return Status::Ok();
}

void Imports::Forget(std::string_view source, int64_t now_ms) {
  auto it = imports_.find(ImportedNodeId(source));
  if (it == imports_.end() || it->second.importer != node_id_ || it->second.withdrawn) return;
  HeldImport& imp = it->second;
  DropSlot(&imp);
  imp.withdrawn = true;
  ++imp.version;
  imp.signature = SignImportWith(signer_.get(), cluster_tag_, EntryOf(imp, false, now_ms));
  // Keep the tombstone while older copies may still circulate.
  imp.expires_ms = std::max(imp.expires_ms, now_ms + failure_timeout_ms_);
  Spread(imp, node_id_, node_id_, now_ms);
}

Status Imports::Check(const WireFrame& frame, std::vector<CacheDigest>* out) {
  if (key_scheme_ != KeyScheme::kSquidMd5) {
    return Status::NotSupported("imported digests in a cluster of key scheme '" +
                                std::string(KeySchemeName(key_scheme_)) + "'");
  }
  PEERBLOOM_RETURN_IF_ERROR(CheckQuota(frame.imports));
  out->resize(frame.imports.size());
  for (size_t i = 0; i < frame.imports.size(); ++i) {
    const ImportedDigestEntry& e = frame.imports[i];
    PEERBLOOM_RETURN_IF_ERROR(sigs_->CheckImport(e));
    if ((e.flags & kImportHasDigest) == 0) continue;
    Status s = CacheDigest::Parse(e.digest, &(*out)[i]);
    if (!s.ok()) {
      ++stats_->imports_refused;
      return Status::Corruption("imported digest of '" + e.origin + "': " + s.message());
    }
  }
  return Status::Ok();
}

void Imports::OnFrame(const WireFrame& frame, std::vector<CacheDigest>* digests,
                      const Member& sender, int64_t now_ms) {
  std::vector<FullRequest> requests;
  for (size_t i = 0; i < frame.imports.size(); ++i) {
    const ImportedDigestEntry& e = frame.imports[i];
    auto it = imports_.find(e.origin);
    HeldImport* held = it == imports_.end() ? nullptr : &it->second;
    if (held != nullptr && e.version <= held->version) {
      if ((e.flags & kImportHasDigest) != 0) ++stats_->stale_dropped;
      continue;
    }
    if ((e.flags & (kImportHasDigest | kImportWithdrawn)) != 0) {
      Apply(e, &(*digests)[i], sender, now_ms);
    } else if (held == nullptr || now_ms - held->requested_ms >= retry_ms_) {
      // An announcement of a version we lack: ask the announcer for it.
      if (held != nullptr) held->requested_ms = now_ms;
      requests.push_back(FullRequest{e.origin, 0, held ? held->version : 0});
    }
  }
  outbox_->SendRequests(sender.endpoint, sender.public_key, requests);
}

void Imports::Apply(const ImportedDigestEntry& e, CacheDigest* digest, const Member& sender,
                    int64_t now_ms) {
  ++stats_->imports_in;
  if ((e.flags & kImportHasDigest) != 0) {
    Store(e, std::move(*digest), now_ms);
  } else {
    Withdraw(e, now_ms);
  }
  Spread(imports_.find(e.origin)->second, sender.id, e.importer, now_ms);
}

void Imports::Store(const ImportedDigestEntry& e, CacheDigest digest, int64_t now_ms) {
  HeldImport& imp = Replace(e, now_ms);
  imp.fetched_unix_ms = e.fetched_unix_ms;
  const uint64_t lifetime = std::min<uint64_t>(e.lifetime_ms, kMaxImportLifetimeMs);
  imp.expires_ms = now_ms + static_cast<int64_t>(lifetime);
  imp.withdrawn = false;
  imp.bytes.assign(e.digest);
  imp.header = digest.header();
  imp.fill = digest.fill();
  imp.fpr = digest.EstimatedFalsePositiveRate();
  imp.requested_ms = kNeverMs;
  imp.slot = slots_->InsertForeign(imp.id, std::make_unique<SquidDigestSummary>(std::move(digest)));
}

HeldImport& Imports::Replace(const ImportedDigestEntry& e, int64_t now_ms) {
  HeldImport& imp = imports_[e.origin];
  DropSlot(&imp);
  imp.id = e.origin;
  imp.importer = e.importer;
  imp.source_url = e.source_url;
  imp.version = e.version;
  imp.received_ms = now_ms;
  imp.signature.assign(e.signature);
  return imp;
}

void Imports::Withdraw(const ImportedDigestEntry& e, int64_t now_ms) {
  HeldImport& imp = Replace(e, now_ms);
  imp.withdrawn = true;
  const uint64_t lifetime = std::min<uint64_t>(e.lifetime_ms, INT64_MAX / 4);
  imp.expires_ms = now_ms + std::min(static_cast<int64_t>(lifetime), kMaxImportLifetimeMs);
}

void Imports::DropSlot(HeldImport* imp) {
  slots_->EraseSlot(imp->slot);
  imp->slot = PeerIndex::kNoSlot;
  imp->bytes.clear();
}

ImportedDigestEntry Imports::EntryOf(const HeldImport& imp, bool with_digest,
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
  if (e.flags != 0) e.signature = imp.signature;
  return e;
}

void Imports::Spread(const HeldImport& imp, std::string_view skip_a, std::string_view skip_b,
                     int64_t now_ms) {
  if (!imp.withdrawn && !Live(imp, now_ms)) return;
  const std::vector<ImportedDigestEntry> entries{EntryOf(imp, true, now_ms)};
  for (const LinkTarget& t : members_.Targets(now_ms)) {
    if (t.member_id == skip_a || t.member_id == skip_b) continue;
    outbox_->SendImports(t.endpoint, t.public_key, t.chosen, entries);
  }
}

void Imports::Announce(const std::string& endpoint, const std::string& public_key, bool chosen,
                       int64_t now_ms) {
  std::vector<ImportedDigestEntry> entries;
  for (const auto& [id, imp] : imports_) {
    if (entries.size() + 1 >= max_entries_) break;
    if (imp.withdrawn ? now_ms <= imp.expires_ms : Live(imp, now_ms)) {
      entries.push_back(EntryOf(imp, false, now_ms));
    }
  }
  if (!entries.empty()) outbox_->SendImports(endpoint, public_key, chosen, entries);
}

bool Imports::Serve(const Member& to, const FullRequest& q, int64_t now_ms) {
  if (q.origin.compare(0, kImportedIdPrefix.size(), kImportedIdPrefix) != 0) return false;
  auto it = imports_.find(q.origin);
  if (it == imports_.end() || it->second.version <= q.have_version) return true;
  const HeldImport& imp = it->second;
  if (!imp.withdrawn && !Live(imp, now_ms)) return true;
  outbox_->SendImports(to.endpoint, to.public_key, false, {EntryOf(imp, true, now_ms)});
  return true;
}

void Imports::Expire(int64_t now_ms) {
  for (auto it = imports_.begin(); it != imports_.end();) {
    if (now_ms <= it->second.expires_ms) {
      ++it;
      continue;
    }
    if (!it->second.withdrawn) ++stats_->imports_expired;
    DropSlot(&it->second);
    it = imports_.erase(it);
  }
}

const HeldImport* Imports::FindBySlot(PeerIndex::Slot slot) const {
  auto it = imports_.find(slots_->Owner(slot));
  return it == imports_.end() || it->second.slot != slot ? nullptr : &it->second;
}

void Imports::AddPeers(int64_t now_ms, std::vector<PeerInfo>* out) const {
  for (const auto& [id, imp] : imports_) {
    if (imp.withdrawn) continue;
    PeerInfo p;
    p.node_id = id;
    p.endpoint = imp.source_url;
    p.alive = Live(imp, now_ms);
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
