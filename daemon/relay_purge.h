// Cluster-wide purge at one node: the action a delivered purge runs (docs/relay.md,
// "Cluster-wide purge"). The node checks its own counting filter; where it may hold the URL
// and `purge_squid` is set, it sends an HTTP PURGE for the URL to that Squid. The JSON it
// returns is what the node reports (broadcast back as a purge result).
//
// Blocking: the PURGE blocks the caller (the event loop) for at most 2.5 s; purges are rare
// operator actions sent to a Squid on the same host.
#ifndef PEERBLOOM_DAEMON_RELAY_PURGE_H_
#define PEERBLOOM_DAEMON_RELAY_PURGE_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "daemon/config.h"
#include "daemon/local_store.h"

namespace peerbloom::daemon {

// {"node", "url", "may_hold", "action": "skipped"|"none"|"squid", and for "squid":
// "status" (the HTTP status, 0 when none came), "purged" (status 200), "error" (on failure)}.
nlohmann::json RunPurge(const Config& config, LocalStore* store, std::string_view url);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_PURGE_H_
