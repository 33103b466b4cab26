// The allow-list (authorized_keys) as the daemon uses it: which CURVE key speaks for which
// node id (the transport's ZAP handler and link binding), and the listed nodes with their
// keys and contact endpoints (the gossip engine's membership). docs/security.md.
#ifndef PEERBLOOM_DAEMON_CONFIG_ALLOW_LIST_H_
#define PEERBLOOM_DAEMON_CONFIG_ALLOW_LIST_H_

#include <map>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/gossip.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// Reads config.authorized_keys (nothing when empty) into key -> node id and the listed
// nodes (in file order, one per node id, each with all its keys). Every seed key (resolved:
// ResolveSeedKeys) must be listed; a node id given two different endpoints is an error.
Status LoadAllowList(const Config& config, std::map<std::string, std::string>* authorized,
                     std::vector<ListedNode>* listed);
// The same from the lines of authorized_keys as read (client::ReadAuthorizedKeys).
Status AllowListOf(const Config& config, const std::vector<client::AuthorizedKey>& lines,
                   std::map<std::string, std::string>* authorized, std::vector<ListedNode>* listed);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONFIG_ALLOW_LIST_H_
