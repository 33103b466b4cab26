// Sign keys are read at start and at every reload (key_set.h), so a rotated or new `sign=`
// key is checked from the next SIGHUP on (docs/security.md, "Key rotation").
#include "daemon/config/origin_keys.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "peerbloom/escape.h"

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

using Listed = std::vector<client::AuthorizedKey>;

// authorized_keys as parsed; empty when the config names none.
Status ReadListed(const Config& config, Listed* listed) {
  listed->clear();
  if (config.authorized_keys.empty()) return Status::Ok();
  return client::ReadAuthorizedKeys(config.authorized_keys, listed);
}

Status LoadRing(const Config& config, const GossipOptions& o, const Listed& listed,
                SignKeyRing* ring) {
  if (o.signer != nullptr) {
    PEERBLOOM_RETURN_IF_ERROR(ring->Add(config.node_id, o.signer->public_key()));
  }
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

// The node ids of `listed` none of whose lines has a sign key, sorted.
std::vector<std::string> UnsignedNodes(const Listed& listed) {
  std::set<std::string> all;
  std::set<std::string> signed_ids;
  for (const client::AuthorizedKey& key : listed) {
    all.insert(key.node_id);
    if (!key.sign_key.empty()) signed_ids.insert(key.node_id);
  }
  std::vector<std::string> out;
  for (const std::string& id : all) {
    if (!signed_ids.contains(id)) out.push_back(id);
  }
  return out;
}

std::string ListSome(const std::vector<std::string>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 5; ++i) out += (i == 0 ? "" : ", ") + QuoteBytes(ids[i]);
  if (ids.size() > 5) out += ", ... (" + std::to_string(ids.size()) + " in all)";
  return out;
}

// What the default adds to the messages: the way to run without signatures while upgrading.
constexpr char kDefaultNote[] =
    "; 'require_signatures' is on by default with curve: to run a cluster without sign keys "
    "while it is upgraded, set 'require_signatures = false' (docs/security.md, \"Rollout in a "
    "running cluster\")";

// CheckSigningConfig over authorized_keys as read once by the caller.
Status CheckSigning(const Config& config, const client::CurveKeyPair& keys, const Listed& listed) {
  if (!config.require_signatures) return Status::Ok();
  if (!config.curve) return Status::InvalidArgument("'require_signatures' needs 'curve = true'");
  const std::string note = config.require_signatures_set ? "" : kDefaultNote;
  if (keys.sign_secret_key.empty()) {
    return Status::InvalidArgument("key file '" + config.key_file +
                                   "' has no sign keys, needed by 'require_signatures' (add "
                                   "them with 'peerbloom keygen --add-sign-key " +
                                   config.key_file + "')" + note);
  }
  // Set by hand, the operator chose to refuse unsigned nodes (LoadOriginKeys warns). By
  // default, a cluster not ready for it would lose those nodes from who-has: refused here.
  const std::vector<std::string> unsigned_nodes = UnsignedNodes(listed);
  if (!config.require_signatures_set && !unsigned_nodes.empty()) {
    return Status::InvalidArgument(
        "authorized_keys '" + config.authorized_keys + "' lists nodes without a sign key (" +
        ListSome(unsigned_nodes) +
        "): 'require_signatures' would refuse what they send. Give each its sign keys and "
        "its 'sign=' line" +
        note);
  }
  return Status::Ok();
}

}  // namespace

Status CheckSigningConfig(const Config& config, const client::CurveKeyPair& keys) {
  if (!config.require_signatures || !config.curve) return CheckSigning(config, keys, {});
  Listed listed;
  PEERBLOOM_RETURN_IF_ERROR(ReadListed(config, &listed));
  return CheckSigning(config, keys, listed);
}

Status LoadOriginKeys(const Config& config, const client::CurveKeyPair& keys, GossipOptions* o) {
  Listed listed;
  if (config.curve) PEERBLOOM_RETURN_IF_ERROR(ReadListed(config, &listed));
  return OriginKeysOf(config, keys, listed, o);
}

Status OriginKeysOf(const Config& config, const client::CurveKeyPair& keys, const Listed& listed,
                    GossipOptions* o) {
  PEERBLOOM_RETURN_IF_ERROR(CheckSigning(config, keys, config.curve ? listed : Listed{}));
  o->require_signatures = config.require_signatures;
  if (!config.curve) return Status::Ok();
  if (const std::vector<std::string> unsigned_nodes = UnsignedNodes(listed);
      config.require_signatures && !unsigned_nodes.empty()) {
    spdlog::warn(
        "authorized_keys lists nodes without a sign key ({}): with 'require_signatures' nothing "
        "they send is taken",
        ListSome(unsigned_nodes));
  }
  PEERBLOOM_RETURN_IF_ERROR(LoadSigner(config, keys, o));
  auto ring = std::make_shared<SignKeyRing>();
  PEERBLOOM_RETURN_IF_ERROR(LoadRing(config, *o, listed, ring.get()));
  spdlog::info("signed origins: {}, {} nodes with sign keys, signatures {}",
               o->signer != nullptr ? "signing" : "NOT signing", ring->size(),
               config.require_signatures ? "required" : "required of nodes with sign keys");
  o->sign_keys = std::move(ring);
  return Status::Ok();
}

}  // namespace peerbloom::daemon
