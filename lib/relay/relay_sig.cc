// Origin signatures of broadcast messages (relay.h, docs/relay.md "Origin signatures").
#include <string>

#include "peerbloom/relay.h"

namespace peerbloom {

OriginClaim RelayClaim(const RelayData& data) {
  OriginClaim claim;
  claim.kind = SignedKind::kBroadcast;
  claim.origin = data.origin;
  claim.version = data.id;
  std::string covered;
  if (RelaySignedBytes(data, &covered).ok()) {
    claim.body_hash = Sha256(covered);
  } else {
    // A message that does not encode is never signed (SignRelayData fails on it): an all-ones
    // hash stands for it.
    claim.body_hash.fill(0xff);
  }
  return claim;
}

Status SignRelayData(const OriginSigner& signer, uint64_t cluster_tag, RelayData* data) {
  std::string covered;
  PEERBLOOM_RETURN_IF_ERROR(RelaySignedBytes(*data, &covered));
  OriginClaim claim;
  claim.kind = SignedKind::kBroadcast;
  claim.origin = data->origin;
  claim.version = data->id;
  claim.body_hash = Sha256(covered);
  std::string sig;
  PEERBLOOM_RETURN_IF_ERROR(signer.Sign(cluster_tag, claim, &sig));
  data->flags |= kRelayFlagSigned;
  data->signature = std::move(sig);
  return Status::Ok();
}

SigVerdict VerifyRelayData(const SignKeyRing& keys, uint64_t cluster_tag, const RelayData& data) {
  const bool signed_flag = (data.flags & kRelayFlagSigned) != 0;
  return keys.Verify(cluster_tag, RelayClaim(data),
                     signed_flag ? std::string_view(data.signature) : std::string_view());
}

}  // namespace peerbloom
