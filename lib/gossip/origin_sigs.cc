// Signing and checking of origin signatures for the gossip engine.
#include "lib/gossip/origin_sigs.h"

#include <iterator>
#include <memory>
#include <string>

#include "peerbloom/byte_io.h"

namespace peerbloom {
namespace {

OriginClaim StateClaim(const Summary& s) {
  OriginClaim c;
  c.kind = SignedKind::kSummaryState;
  c.origin = s.origin;
  c.epoch = s.epoch;
  c.version = s.version;
  c.body_hash = StateHash(s);
  return c;
}

OriginClaim DeltaClaim(const SummaryDelta& d, std::string_view codec_bytes,
                       std::string_view state_sig) {
  OriginClaim c;
  c.kind = SignedKind::kDelta;
  c.origin = d.origin;
  c.epoch = d.epoch;
  c.base_version = d.base_version;
  c.version = d.version;
  std::string body(codec_bytes);
  body.append(state_sig);
  c.body_hash = Sha256(body);
  return c;
}

OriginClaim EpochClaim(std::string_view origin, uint64_t epoch) {
  OriginClaim c;
  c.kind = SignedKind::kEpoch;
  c.origin = origin;
  c.epoch = epoch;
  return c;
}

OriginClaim BeatClaimOf(std::string_view origin, uint64_t epoch, uint64_t heartbeat) {
  OriginClaim c;
  c.kind = SignedKind::kBeat;
  c.origin = origin;
  c.epoch = epoch;
  c.version = heartbeat;
  return c;
}

// Import: SHA-256(origin str8 | source_url str8 | fetched_unix_ms u64 | digest bytes).
// Withdrawal: SHA-256(origin str8). The lifetime is left out: relays send what is left of it.
OriginClaim ImportClaim(const ImportedDigestEntry& e) {
  OriginClaim c;
  const bool withdrawn = (e.flags & kImportWithdrawn) != 0;
  c.kind = withdrawn ? SignedKind::kImportWithdrawn : SignedKind::kImport;
  c.origin = e.importer;
  c.version = e.version;
  std::string body;
  PutStr8(&body, e.origin);
  if (!withdrawn) {
    PutStr8(&body, e.source_url);
    PutU64(&body, e.fetched_unix_ms);
    body.append(e.digest);
  }
  c.body_hash = Sha256(body);
  return c;
}

}  // namespace

std::string SignImportWith(const OriginSigner* signer, uint64_t cluster_tag,
                           const ImportedDigestEntry& entry) {
  std::string sig;
  if (signer != nullptr) (void)signer->Sign(cluster_tag, ImportClaim(entry), &sig);
  return sig;
}

Status OriginSigs::CheckImport(const ImportedDigestEntry& e) {
  if ((e.flags & (kImportHasDigest | kImportWithdrawn)) == 0) return Status::Ok();
  if ((keys_ == nullptr || !keys_->Has(e.importer)) && !require_) return Status::Ok();
  const OriginClaim claim = ImportClaim(e);
  return Check(claim, e.signature,
               "import of '" + e.origin + "' version '" + std::to_string(e.version) + "' by '" +
                   e.importer + "'");
}

OriginSigs::OriginSigs(const GossipOptions& options, GossipStats* stats)
    : cluster_tag_(options.cluster_tag),
      keys_(options.sign_keys),
      require_(options.require_signatures),
      stats_(stats) {}

std::string SignStateWith(const OriginSigner* signer, uint64_t cluster_tag, const Summary& s) {
  std::string sig;
  if (signer != nullptr) (void)signer->Sign(cluster_tag, StateClaim(s), &sig);
  return sig;
}

std::string SignDeltaWith(const OriginSigner* signer, uint64_t cluster_tag,
                          const SummaryDelta& delta, std::string_view codec_bytes,
                          std::string_view state_sig) {
  std::string sig;
  if (signer != nullptr) {
    (void)signer->Sign(cluster_tag, DeltaClaim(delta, codec_bytes, state_sig), &sig);
  }
  return sig;
}

std::string SignEpochWith(const OriginSigner* signer, uint64_t cluster_tag, std::string_view origin,
                          uint64_t epoch) {
  std::string sig;
  if (signer != nullptr) (void)signer->Sign(cluster_tag, EpochClaim(origin, epoch), &sig);
  return sig;
}

std::string SignBeatWith(const OriginSigner* signer, uint64_t cluster_tag, std::string_view origin,
                         uint64_t epoch, uint64_t heartbeat) {
  std::string sig;
  if (signer != nullptr) {
    (void)signer->Sign(cluster_tag, BeatClaimOf(origin, epoch, heartbeat), &sig);
  }
  return sig;
}

bool OriginSigs::Signs(std::string_view origin) const {
  return require_ || (keys_ != nullptr && keys_->Has(origin));
}

bool OriginSigs::VerifyBeat(std::string_view origin, uint64_t epoch, uint64_t heartbeat,
                            std::string_view sig) {
  if (keys_ == nullptr || sig.empty()) return false;
  if (keys_->Verify(cluster_tag_, BeatClaimOf(origin, epoch, heartbeat), sig) !=
      SigVerdict::kValid) {
    return false;
  }
  ++stats_->signatures_verified;
  return true;
}

bool OriginSigs::ProvesEpoch(std::string_view origin, uint64_t epoch, std::string_view cert,
                             uint64_t heartbeat, std::string_view beat_sig) {
  if (keys_ != nullptr && !cert.empty() &&
      keys_->Verify(cluster_tag_, EpochClaim(origin, epoch), cert) == SigVerdict::kValid) {
    ++stats_->signatures_verified;
    return true;
  }
  return VerifyBeat(origin, epoch, heartbeat, beat_sig);
}

Status OriginSigs::Check(const OriginClaim& claim, std::string_view sig, std::string_view subject) {
  SigVerdict v = SigVerdict::kNoKey;
  if (keys_ != nullptr) v = keys_->Verify(cluster_tag_, claim, sig);
  if (v == SigVerdict::kValid) {
    ++stats_->signatures_verified;
    return Status::Ok();
  }
  if (v == SigVerdict::kNoKey && !require_) return Status::Ok();
  ++stats_->signatures_refused;
  return Status::InvalidArgument(std::string(subject) + ": " + std::string(SigVerdictName(v)));
}

std::string OriginSigs::Subject(std::string_view what, const OriginClaim& claim) {
  return std::string(what) + " of '" + std::string(claim.origin) + "' epoch '" +
         std::to_string(claim.epoch) + "' version '" + std::to_string(claim.version) + "'";
}

Status OriginSigs::CheckFull(const Summary& summary, std::string_view state_sig) {
  // Hashing the state costs O(filter): skip it when the verdict cannot depend on it.
  if ((keys_ == nullptr || !keys_->Has(summary.origin)) && !require_) return Status::Ok();
  const OriginClaim claim = StateClaim(summary);
  return Check(claim, state_sig, Subject("full summary", claim));
}

Status OriginSigs::CheckDelta(const SummaryDelta& delta, std::string_view codec_bytes,
                              std::string_view state_sig, std::string_view delta_sig) {
  if ((keys_ == nullptr || !keys_->Has(delta.origin)) && !require_) return Status::Ok();
  const OriginClaim claim = DeltaClaim(delta, codec_bytes, state_sig);
  return Check(claim, delta_sig, Subject("delta", claim));
}

bool OriginSigs::AdmitEpoch(std::string_view origin, uint64_t epoch, std::string_view cert) {
  auto it = certs_.find(origin);
  if (it != certs_.end() && it->second.epoch == epoch && it->second.sig == cert) return true;
  SigVerdict v = SigVerdict::kNoKey;
  if (keys_ != nullptr) v = keys_->Verify(cluster_tag_, EpochClaim(origin, epoch), cert);
  if (v == SigVerdict::kNoKey && !require_) return true;
  if (v != SigVerdict::kValid) {
    ++stats_->epochs_refused;
    return false;
  }
  ++stats_->signatures_verified;
  if (it == certs_.end() || it->second.epoch < epoch) {
    certs_[std::string(origin)] = Cert{epoch, std::string(cert)};
  }
  return true;
}

void OriginSigs::SetKeys(std::shared_ptr<const SignKeyRing> keys) {
  keys_ = std::move(keys);
  for (auto it = certs_.begin(); it != certs_.end();) {
    SigVerdict v = SigVerdict::kNoKey;
    if (keys_ != nullptr) {
      v = keys_->Verify(cluster_tag_, EpochClaim(it->first, it->second.epoch), it->second.sig);
    }
    const bool admitted = v == SigVerdict::kValid || (v == SigVerdict::kNoKey && !require_);
    it = admitted ? std::next(it) : certs_.erase(it);
  }
}

std::string_view OriginSigs::EpochCert(std::string_view origin, uint64_t epoch) const {
  auto it = certs_.find(origin);
  if (it == certs_.end() || it->second.epoch != epoch) return {};
  return it->second.sig;
}

}  // namespace peerbloom
