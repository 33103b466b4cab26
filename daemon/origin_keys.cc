// Keys are read once at start: the gossip engine's options are fixed for its life, so a new
// node's sign key takes a restart of the nodes that must check it (docs/security.md).
#include "daemon/origin_keys.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

namespace peerbloom::daemon {
namespace {

Status LoadSigner(const Config& config, const client::CurveKeyPair& keys, GossipOptions* o) {
  if (keys.sign_secret_key.empty()) {
    spdlog::warn(
        "key file '{}' has no sign keys: this node's summaries go unsigned "
        "(add them with 'peerbloom keygen --add-sign-key {}')",
        config.key_file, config.key_file);
    return Status::Ok();
  }
  std::string secret;
  PEERBLOOM_RETURN_IF_ERROR(client::Z85Decode32(keys.sign_secret_key, &secret));
  std::unique_ptr<OriginSigner> signer;
  PEERBLOOM_RETURN_IF_ERROR(OriginSigner::Create(secret, &signer));
  o->signer = std::move(signer);
  return Status::Ok();
}

Status LoadRing(const Config& config, const GossipOptions& o, SignKeyRing* ring) {
  if (o.signer != nullptr) {
    PEERBLOOM_RETURN_IF_ERROR(ring->Add(config.node_id, o.signer->public_key()));
  }
  if (config.authorized_keys.empty()) return Status::Ok();
  std::vector<client::AuthorizedKey> listed;
  PEERBLOOM_RETURN_IF_ERROR(client::ReadAuthorizedKeys(config.authorized_keys, &listed));
  for (const client::AuthorizedKey& key : listed) {
    if (key.sign_key.empty()) continue;
    std::string raw;
    Status s = client::Z85Decode32(key.sign_key, &raw);
    if (s.ok()) s = ring->Add(key.node_id, raw);
    if (!s.ok()) {
      return Status::InvalidArgument(config.authorized_keys + ":" + std::to_string(key.line) +
                                     ": bad 'sign' key: " + s.message());
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSigningConfig(const Config& config, const client::CurveKeyPair& keys) {
  if (!config.require_signatures) return Status::Ok();
  if (!config.curve) return Status::InvalidArgument("'require_signatures' needs 'curve = true'");
  if (keys.sign_secret_key.empty()) {
    return Status::InvalidArgument("key file '" + config.key_file +
                                   "' has no sign keys, needed by 'require_signatures' (add "
                                   "them with 'peerbloom keygen --add-sign-key " +
                                   config.key_file + "')");
  }
  return Status::Ok();
}

Status LoadOriginKeys(const Config& config, const client::CurveKeyPair& keys, GossipOptions* o) {
  PEERBLOOM_RETURN_IF_ERROR(CheckSigningConfig(config, keys));
  o->require_signatures = config.require_signatures;
  if (!config.curve) return Status::Ok();
  PEERBLOOM_RETURN_IF_ERROR(LoadSigner(config, keys, o));
  auto ring = std::make_shared<SignKeyRing>();
  PEERBLOOM_RETURN_IF_ERROR(LoadRing(config, *o, ring.get()));
  spdlog::info("signed origins: {}, {} nodes with sign keys, signatures {}",
               o->signer != nullptr ? "signing" : "NOT signing", ring->size(),
               config.require_signatures ? "required" : "required of nodes with sign keys");
  o->sign_keys = std::move(ring);
  return Status::Ok();
}

}  // namespace peerbloom::daemon
