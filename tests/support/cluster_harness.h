// Test harness: real peerbloomd processes on 127.0.0.1, each in its own data dir under one
// temporary directory, with fresh CURVE keys. Every daemon binds port 0 and the harness reads
// the port it got (`ping`), so no port is guessed; while a node is down between runs its port
// stays reserved, so that it comes back in place even with other tests running beside it.
// Waits poll with deadlines of tens of seconds: a loaded machine may stall a process for
// seconds, and only a daemon that died makes a wait give up early. Children die with the test
// process (PR_SET_PDEATHSIG) and are killed on teardown.
#ifndef PEERBLOOM_TESTS_SUPPORT_CLUSTER_HARNESS_H_
#define PEERBLOOM_TESTS_SUPPORT_CLUSTER_HARNESS_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "tests/support/wait.h"

namespace peerbloom::testing {

using nlohmann::json;

// The cluster secret every node of a Cluster holds (in its config, or in the file of
// NodeOptions::cluster_secret_file when the test writes one).
inline constexpr char kClusterSecret[] = "integration-secret";

struct NodeOptions {
  int gossip_interval_ms = 200;
  int failure_timeout_ms = 1500;
  int anti_entropy_interval_ms = 500;
  int64_t max_message_bytes = 1 << 20;
  std::string key_scheme = "raw";
  uint64_t capacity = 100000;
  std::string extra;     // more TOML lines
  std::string data_dir;  // the daemon's data_dir; default: the node's directory, which keeps
                         // the config, the control socket and stderr.log in any case
  std::string listen_host = "127.0.0.1";  // the address the daemon listens on
  std::string netns;  // a network namespace file (/run/netns/NAME) to start the daemon in;
                      // default: the test's own. The control socket (ipc) works across them
  // Default: "" (the config holds cluster_secret). A file the config names in
  // cluster_secret_file instead.
  std::string cluster_secret_file;
  // Default: 0 (the test's own limit). The daemon's RLIMIT_NOFILE, soft and hard, set in the
  // child before it execs the daemon (as `prlimit --nofile=N:N` would).
  uint64_t max_open_files = 0;
  // Default: false (the harness writes `require_signatures = false` for a cluster with
  // unsigned keys, as an upgrading cluster sets it). true: no line, the daemon's default.
  bool signatures_default = false;
  // Default: none. A program and its arguments the daemon runs under, as `setpriv
  // --reuid=USER ...` runs it as another user with the capabilities a systemd drop-in gives
  // (the daemon's argv is appended). The node's directory must then be that user's.
  std::vector<std::string> exec_prefix;
  // Default: "" (the peerbloomd built with the tests). Another peerbloomd binary to start, as
  // a rolling-upgrade test starts a build of an older release on the same data dir and ports.
  std::string daemon_binary;
};

class Node {
 public:
  static constexpr std::chrono::seconds kCallTimeout{60};

  Node(std::string name, std::string dir, std::string key_file);
  ~Node();

  // Writes the config with these seeds and starts the daemon, waiting (up to a minute) until
  // it answers. The first run listens on port 0, a later one on the port of the previous run,
  // to come back in place.
  bool Start(const NodeOptions& options, const std::vector<Node*>& seeds);
  // Rewrites the config with these seeds and sends SIGHUP.
  bool Reload(const NodeOptions& options, const std::vector<Node*>& seeds);
  void Kill9();
  bool Stop();  // SIGTERM, then wait for the exit
  bool running() const { return pid_ > 0; }
  // Whether no daemon runs: never started, stopped, or exited on its own since it started.
  bool exited() const { return Exited(); }

  // One control request. Returns false (and fills *error) on a transport problem or a refusal.
  // Waits for the answer as long as the daemon runs, up to kCallTimeout.
  bool Call(const json& request, const std::string& body, json* reply, std::string* reply_body,
            std::string* error = nullptr);
  // Node ids that who-has lists for each key (one entry per key, in order).
  std::vector<std::vector<std::string>> WhoHas(const std::vector<std::string>& keys);
  // The same for key tokens (32 hex digits under squid-md5).
  std::vector<std::vector<std::string>> WhoHasKeys(const std::vector<std::string>& keys);
  json Stats();
  json Peers();
  bool Add(const std::vector<std::string>& keys);
  bool Remove(const std::vector<std::string>& keys);

  const std::string& name() const { return name_; }
  const std::string& endpoint() const { return endpoint_; }
  std::string public_key() const;
  // The key file the next Start uses (a rotated key).
  void set_key_file(std::string key_file) { key_file_ = std::move(key_file); }
  std::string log_tail() const;

 private:
  std::vector<std::vector<std::string>> WhoHasAs(const std::string& input,
                                                 const std::vector<std::string>& keys);
  void ResetSocket();
  std::string WriteConfig(const NodeOptions& options, const std::vector<Node*>& seeds);
  std::string RequireSignaturesLine(const NodeOptions& options) const;
  bool Exited() const;  // whether the daemon has exited (without reaping it)
  void ReapAndReservePort();

  std::string name_;
  std::string dir_;
  std::string key_file_;
  std::string endpoint_;
  int port_ = 0;
  pid_t pid_ = -1;
  int reserved_port_fd_ = -1;  // holds port_ while the node is down; see ReapAndReservePort
  zmq::context_t context_{1};
  std::unique_ptr<zmq::socket_t> socket_;
};

class Cluster {
 public:
  Cluster();
  ~Cluster();

  // Creates a node with a fresh key pair. Keys of every node created are authorized
  // everywhere, so create all nodes before starting any.
  Node* AddNode(const std::string& name);
  // An extra key pair authorized on every node (for a test client). Returns the key file.
  std::string AuthorizeExtraKey(std::string* public_key, std::string* secret_key);
  // Addition: signed origins. A node whose key file holds Ed25519 sign keys, listed with
  // `sign=` in authorized_keys; and an extra key pair with sign keys, authorized as
  // `node_id` (a hostile test client). *sign_secret_key is Z85.
  Node* AddSigningNode(const std::string& name);
  void AuthorizeExtraSigningKey(const std::string& node_id, std::string* public_key,
                                std::string* secret_key, std::string* sign_secret_key);
  // A further key pair for node `name` (key rotation), listed in authorized_keys for it.
  // Returns the key file; *public_key and *secret_key receive the keys.
  std::string AddKeyFor(const std::string& name, std::string* public_key, std::string* secret_key);
  // Removes the authorized_keys line of `public_key` (nodes see it after Reload).
  void RemoveKey(const std::string& public_key);
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<Node>> nodes_;
  int extra_keys_ = 0;
};

// The stats counter group.name of `node` (`stats` answer), 0 when absent.
uint64_t StatsCounter(Node* node, const char* group, const char* name);

// Whether `observer` lists `node_id` as alive.
bool SeesAlive(Node* observer, const std::string& node_id);

// The pid a node's daemon wrote into its lock file (`node_dir`/peerbloomd.lock), 0 when none.
pid_t DaemonPid(const std::string& node_dir);

// A field of /proc/PID/status in bytes ("VmRSS", "VmHWM": the peak of VmRSS), 0 when
// unreadable.
uint64_t ProcStatusBytes(pid_t pid, const std::string& field);

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_CLUSTER_HARNESS_H_
