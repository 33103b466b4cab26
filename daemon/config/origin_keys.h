// Signed origins in the daemon: this node's Ed25519 signer from its key file and every
// node's sign keys from authorized_keys, handed to the gossip engine (docs/security.md,
// "Signed origins").
#ifndef PEERBLOOM_DAEMON_CONFIG_ORIGIN_KEYS_H_
#define PEERBLOOM_DAEMON_CONFIG_ORIGIN_KEYS_H_

#include <vector>

#include "daemon/config/config.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/gossip.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// Sets o->signer (when the key file has sign keys), o->sign_keys (the `sign=` keys of
// authorized_keys, and this node's own) and o->require_signatures. InvalidArgument when
// require_signatures cannot be met: CURVE off, or a key file without sign keys.
Status LoadOriginKeys(const Config& config, const client::CurveKeyPair& keys, GossipOptions* o);
// The same from the lines of authorized_keys as read (client::ReadAuthorizedKeys).
Status OriginKeysOf(const Config& config, const client::CurveKeyPair& keys,
                    const std::vector<client::AuthorizedKey>& lines, GossipOptions* o);
// The checks of LoadOriginKeys that can fail, without loading or logging (--check-config).
Status CheckSigningConfig(const Config& config, const client::CurveKeyPair& keys);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONFIG_ORIGIN_KEYS_H_
