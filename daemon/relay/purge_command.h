// The purge command hook: runs the operator's program for one URL without a shell, bounded in
// time (docs/relay.md, "Cluster-wide purge"). `purge_command` is an argv array; the URL is
// appended as its last argument, so no quoting or word splitting ever touches it.
//
// The program gets /dev/null as stdin, the daemon's stdout and stderr (the journal under
// systemd), the daemon's environment, and no other open descriptors. It runs in a process
// group of its own: on a timeout (or when the daemon stops) the whole group is killed with
// SIGKILL, so a script's own children do not outlive it.
//
// Blocking: waits for the program. Call it from a worker thread, never from the event loop.
// Thread-safety: reentrant.
#ifndef PEERBLOOM_DAEMON_RELAY_PURGE_COMMAND_H_
#define PEERBLOOM_DAEMON_RELAY_PURGE_COMMAND_H_

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace peerbloom::daemon {

// The environment variable that holds the URL for the purge command.
inline constexpr char kPurgeUrlVariable[] = "PEERBLOOM_PURGE_URL";

// Runs `argv` + "--" + `url`, with `url` also in PEERBLOOM_PURGE_URL, kills it after `timeout_ms`
// or once `stop` is set, and records the outcome in *result: "exit_status" (when it exited),
// "signal" (when a signal ended it), "timed_out", "purged" (exit status 0) and "error" (it did not
// start, or was killed; a URL holding a NUL byte is not passed at all). REQUIRES: !argv.empty(),
// argv[0] an absolute path.
void RunPurgeCommand(const std::vector<std::string>& argv, std::string_view url, int64_t timeout_ms,
                     const std::atomic<bool>& stop, nlohmann::json* result);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_PURGE_COMMAND_H_
