// OriginSigs: the engine's side of signed origins (docs/security.md, "Signed origins"). It
// signs what this node originates (summary states, deltas, its epoch certificate) and checks
// what arrives about other origins before anything changes, by the policy of GossipOptions:
// an origin with listed sign keys must sign; one without is taken unsigned unless
// require_signatures.
//
// Cost: one Ed25519 verification per summary or delta received (tens of microseconds, see
// bench/sign_bench.cc), and per relayed epoch only when it is newer than the one known; an
// epoch certificate verified once is remembered per origin, so digests repeating it cost a
// comparison.
#ifndef PEERBLOOM_LIB_GOSSIP_ORIGIN_SIGS_H_
#define PEERBLOOM_LIB_GOSSIP_ORIGIN_SIGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "peerbloom/gossip.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/summary.h"

namespace peerbloom {

// Signatures by `signer` (empty when it is null) in cluster `cluster_tag`. The delta's
// signature also covers the state signature that travels with it.
std::string SignStateWith(const OriginSigner* signer, uint64_t cluster_tag, const Summary& s);
std::string SignDeltaWith(const OriginSigner* signer, uint64_t cluster_tag,
                          const SummaryDelta& delta, std::string_view codec_bytes,
                          std::string_view state_sig);
std::string SignEpochWith(const OriginSigner* signer, uint64_t cluster_tag, std::string_view origin,
                          uint64_t epoch);
// A beat signature: `origin` is alive in `epoch` at `heartbeat`.
std::string SignBeatWith(const OriginSigner* signer, uint64_t cluster_tag, std::string_view origin,
                         uint64_t epoch, uint64_t heartbeat);
// The importer's signature of an import (kImportHasDigest) or withdrawal (kImportWithdrawn).
std::string SignImportWith(const OriginSigner* signer, uint64_t cluster_tag,
                           const ImportedDigestEntry& entry);

class OriginSigs {
 public:
  // Uses cluster_tag, signer, sign_keys and require_signatures of `options`.
  OriginSigs(const GossipOptions& options, GossipStats* stats);
  OriginSigs(const OriginSigs&) = delete;
  OriginSigs& operator=(const OriginSigs&) = delete;

  // Ok, or InvalidArgument naming the origin and what is wrong; counted.
  Status CheckFull(const Summary& summary, std::string_view state_sig);
  Status CheckDelta(const SummaryDelta& delta, std::string_view codec_bytes,
                    std::string_view state_sig, std::string_view delta_sig);
  // An imported digest or withdrawal, signed by its importer; announcements pass.
  Status CheckImport(const ImportedDigestEntry& entry);
  // Whether a relayed `epoch` of `origin`, newer than the one known, may be adopted: a valid
  // certificate (remembered), or an origin without keys in a cluster that does not require
  // signatures. Counted when refused.
  bool AdmitEpoch(std::string_view origin, uint64_t epoch, std::string_view cert);
  // Whether what `origin` originates must carry its signature: it has sign keys here, or
  // signatures are required.
  bool Signs(std::string_view origin) const;
  // Whether `sig` is `origin`'s valid beat signature of (epoch, heartbeat). Valid ones count in
  // signatures_verified; the caller counts refusals.
  bool VerifyBeat(std::string_view origin, uint64_t epoch, uint64_t heartbeat,
                  std::string_view sig);
  // Whether `cert` (an epoch certificate) or `beat_sig` (of `heartbeat`) is `origin`'s valid
  // signature in `epoch`.
  bool ProvesEpoch(std::string_view origin, uint64_t epoch, std::string_view cert,
                   uint64_t heartbeat, std::string_view beat_sig);
  // The certificate known for (origin, epoch), or empty.
  std::string_view EpochCert(std::string_view origin, uint64_t epoch) const;
  // Replaces the members' sign keys (authorized_keys re-read): what arrives from now on is
  // checked against `keys`; remembered epoch certificates they no longer admit are forgotten.
  void SetKeys(std::shared_ptr<const SignKeyRing> keys);

 private:
  struct Cert {
    uint64_t epoch = 0;
    std::string sig;
  };
  // Ok for a valid signature or an origin that may go unsigned.
  // `subject` names the message in the refusal: "<subject>: <verdict>".
  Status Check(const OriginClaim& claim, std::string_view sig, std::string_view subject);
  static std::string Subject(std::string_view what, const OriginClaim& claim);

  const uint64_t cluster_tag_;
  std::shared_ptr<const SignKeyRing> keys_;
  const bool require_;
  GossipStats* const stats_;
  std::map<std::string, Cert, std::less<>> certs_;  // verified, one per origin (the newest)
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_ORIGIN_SIGS_H_
