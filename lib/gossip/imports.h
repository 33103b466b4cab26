// Imports: Squid Cache Digests fetched by some daemon and gossiped, marked imported, to every
// daemon (docs/gossip.md, "Imported digests"). Each is held in a foreign slot of the peer
// index and answers who-has with Squid's own hashing. An import lives for its announced
// lifetime unless refreshed, and only while its importer is alive; a withdrawn one stays as a
// tombstone until then so that older copies stay out.
#ifndef PEERBLOOM_LIB_GOSSIP_IMPORTS_H_
#define PEERBLOOM_LIB_GOSSIP_IMPORTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/gossip/membership.h"
#include "lib/gossip/origin_sigs.h"
#include "lib/gossip/outbox.h"
#include "lib/gossip/peer_summaries.h"
#include "peerbloom/gossip.h"
#include "peerbloom/squid_digest.h"
#include "peerbloom/wire.h"

namespace peerbloom {

// An imported Squid Cache Digest as this node holds it.
struct HeldImport {
  std::string id;
  std::string importer;
  std::string source_url;
  uint64_t version = 0;
  uint64_t fetched_unix_ms = 0;
  int64_t received_ms = 0;
  int64_t expires_ms = 0;  // local time it leaves who-has unless refreshed
  bool withdrawn = false;  // a tombstone kept until expires_ms so older copies stay out
  std::string signature;   // the importer's, of this version (empty: unsigned)
  std::string bytes;       // the digest as served, to pass on; empty when withdrawn
  CacheDigestHeader header;
  double fill = 0.0;
  double fpr = 0.0;
  PeerIndex::Slot slot = PeerIndex::kNoSlot;
  int64_t requested_ms = kNeverMs;  // last request for a newer version
};

class Imports {
 public:
  // Uses node_id, key_scheme, failure_timeout_ms, gossip_interval_ms and wire_limits of
  // `options`. `members` (importers' liveness, links to spread on), `slots`, `outbox` and
  // `stats` must outlive it; of `slots` only the foreign slots are used.
  // Imports and withdrawals are signed with options.signer and checked with `sigs`.
  Imports(const GossipOptions& options, const Membership& members, PeerSummaries* slots,
          Outbox* outbox, GossipStats* stats, OriginSigs* sigs);
  Imports(const Imports&) = delete;
  Imports& operator=(const Imports&) = delete;

  // GossipEngine::ImportDigest and ForgetImport.
  Status Import(const DigestImport& import, int64_t now_ms);
  void Forget(std::string_view source, int64_t now_ms);

  // Parses every digest of a kImportedDigest frame, before anything changes, and applies the
  // importers' quotas (import_quota.cc).
  Status Check(const WireFrame& frame, std::vector<CacheDigest>* digests);
  // Applies a checked frame: newer imports are stored and passed on, announced ones that are
  // missing are asked for.
  void OnFrame(const WireFrame& frame, std::vector<CacheDigest>* digests, const Member& sender,
               int64_t now_ms);
  // Anti-entropy: (origin, version) of every import held, without the bytes.
  void Announce(const std::string& endpoint, const std::string& public_key, bool chosen,
                int64_t now_ms);
  // True when `q` names an import (answered if held); false for members.
  bool Serve(const Member& to, const FullRequest& q, int64_t now_ms);
  // Drops imports past their lifetime.
  void Expire(int64_t now_ms);

  bool Live(const HeldImport& imp, int64_t now_ms) const;
  const HeldImport* FindBySlot(PeerIndex::Slot slot) const;
  // Appends the imports held (tombstones left out) as peers.
  void AddPeers(int64_t now_ms, std::vector<PeerInfo>* out) const;
  bool empty() const { return imports_.empty(); }

 private:
  // ResourceExhausted when holding `entries` (those newer than held) would leave an importer
  // with more imports or digest bytes than its quota, or when an importer is neither this
  // node nor a known member. Counted in imports_over_quota.
  Status CheckQuota(const std::vector<ImportedDigestEntry>& entries) const;
  void Apply(const ImportedDigestEntry& e, CacheDigest* digest, const Member& sender,
             int64_t now_ms);
  void Store(const ImportedDigestEntry& e, CacheDigest digest, int64_t now_ms);
  void Withdraw(const ImportedDigestEntry& e, int64_t now_ms);
  // The held import of e.origin with its slot dropped and e's identity and version set.
  HeldImport& Replace(const ImportedDigestEntry& e, int64_t now_ms);
  void DropSlot(HeldImport* imp);
  ImportedDigestEntry EntryOf(const HeldImport& imp, bool with_digest, int64_t now_ms) const;
  // Sends an import to every live linked member but `skip_a` and `skip_b`.
  void Spread(const HeldImport& imp, std::string_view skip_a, std::string_view skip_b,
              int64_t now_ms);

  const std::string node_id_;
  const KeyScheme key_scheme_;
  const int64_t failure_timeout_ms_;
  const int64_t retry_ms_;
  const size_t max_entries_;
  const size_t max_per_importer_;
  const size_t max_bytes_per_importer_;
  const Membership& members_;
  PeerSummaries* const slots_;
  Outbox* const outbox_;
  GossipStats* const stats_;
  OriginSigs* const sigs_;
  const std::shared_ptr<const OriginSigner> signer_;
  const uint64_t cluster_tag_;
  std::map<std::string, HeldImport, std::less<>> imports_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_IMPORTS_H_
