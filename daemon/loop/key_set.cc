#include "daemon/loop/key_set.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "daemon/config/allow_list.h"
#include "daemon/config/origin_keys.h"
#include "daemon/store/local_files.h"

namespace peerbloom::daemon {

Status LoadKeySet(Config* config, KeySet* keys) {
  *keys = KeySet{};
  std::vector<client::AuthorizedKey> lines;
  if (config->curve) {
    PEERBLOOM_RETURN_IF_ERROR(ResolveSeedKeys(config));
    PEERBLOOM_RETURN_IF_ERROR(ReadNodeKeyFile(config->key_file, &keys->own));
    if (!config->authorized_keys.empty()) {
      PEERBLOOM_RETURN_IF_ERROR(client::ReadAuthorizedKeys(config->authorized_keys, &lines));
    }
    PEERBLOOM_RETURN_IF_ERROR(AllowListOf(*config, lines, &keys->authorized, &keys->listed));
  } else {
    spdlog::warn("curve = false: peer traffic is neither encrypted nor authenticated");
  }
  // Without CURVE this only checks that require_signatures is not asked for.
  GossipOptions signing;
  PEERBLOOM_RETURN_IF_ERROR(OriginKeysOf(*config, keys->own, lines, &signing));
  keys->signer = std::move(signing.signer);
  keys->sign_keys = std::move(signing.sign_keys);
  return Status::Ok();
}

}  // namespace peerbloom::daemon
