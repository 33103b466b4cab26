// KeySet: every key a running daemon uses, read together at start and at each reload: this
// node's key file and authorized_keys, the latter read once, and handed as one set to the
// transport (which CURVE key speaks for which node), the gossip engine (the listed nodes, the
// sign keys) and the relay (the sign keys). docs/security.md.
#ifndef PEERBLOOM_DAEMON_LOOP_KEY_SET_H_
#define PEERBLOOM_DAEMON_LOOP_KEY_SET_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/gossip.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct KeySet {
  client::CurveKeyPair own;                       // this node's key file (CURVE on)
  std::map<std::string, std::string> authorized;  // CURVE public key -> node id
  std::vector<ListedNode> listed;                 // the allow-list's nodes, in file order
  std::shared_ptr<const OriginSigner> signer;     // null: this node does not sign
  std::shared_ptr<const SignKeyRing> sign_keys;   // every node's `sign=` key, this node's too
};

// Resolves the seeds' key files into config->seeds and reads the key file and
// authorized_keys into *keys. CURVE off: *keys stays empty (a warning says what that means),
// and require_signatures is refused. Every error names the file and the line.
Status LoadKeySet(Config* config, KeySet* keys);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_LOOP_KEY_SET_H_
