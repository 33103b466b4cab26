// Cluster-wide purge at one node: the check and the action a delivered purge runs
// (docs/relay.md, "Cluster-wide purge"). The node checks its own counting filter on the event
// loop (CheckPurge); where it may hold the URL, the configured action runs on the purge
// worker (RunPurgeAction, purge_runner.h): an HTTP PURGE for the URL to `purge_squid`, or
// `purge_command` with the URL as its last argument. The JSON is what the node reports
// (broadcast back as a purge result).
#ifndef PEERBLOOM_DAEMON_RELAY_RELAY_PURGE_H_
#define PEERBLOOM_DAEMON_RELAY_RELAY_PURGE_H_

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/store/local_store.h"

namespace peerbloom::daemon {

// The nginx cache files counted under a key (16 bytes, nginx-md5), as paths: the nginx-cache
// feed's (feeds/nginx_cache_feed.h), which the loop hands over.
using NginxPurgeFiles = std::function<std::vector<std::string>(std::string_view key_bytes)>;

// {"node", "url", "may_hold", "action": "skipped"|"none"|"squid"|"command"|"nginx"}; for
// "nginx" also "files", the cache files of the URL's key `nginx_files` names. Reads the
// store: call it on the event loop.
nlohmann::json CheckPurge(const Config& config, LocalStore* store, std::string_view url,
                          const NginxPurgeFiles& nginx_files = nullptr);
// Whether `result` (from CheckPurge) names an action still to run.
bool PurgeActionPending(const nlohmann::json& result);
// Runs the action `result` names and adds its outcome. For "squid": "status" (the HTTP
// status, 0 when none came), "purged" (status 200), "error" (on failure); the PURGE takes at
// most 2.5 s. For "command": see RunPurgeCommand (purge_command.h), at most
// `purge_command_timeout`. For "nginx": each file is deleted ("deleted": how many, "purged":
// whether any was; nginx then misses on the key and fetches it again). Blocking: call it on the
// purge worker. Thread-safety: reads only `config`, which the loop does not change while a worker
// runs.
void RunPurgeAction(const Config& config, const std::atomic<bool>& stop, nlohmann::json* result);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_RELAY_PURGE_H_
