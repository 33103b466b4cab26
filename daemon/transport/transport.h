// Transport: the only code that touches peer sockets.
//
//  - one ROUTER bound on `listen` receives from every peer (CURVE server; a ZAP handler on
//    inproc://zeromq.zap.01, installed before the bind, admits only authorized public keys);
//    each frame goes to the handler with the node id the allow-list binds to the key of the
//    link it came on, looked up in the current allow-list, so a key removed by a reload
//    delivers nothing more (counted in frames_revoked);
//  - one DEALER per outgoing endpoint sends (CURVE client, the server key learned for it);
//  - every peer message is exactly one frame (docs/wire-protocol.md; the frame names its
//    cluster by a tag the gossip engine checks); anything else is refused, drained, counted;
//  - sends never block: ZMQ_DONTWAIT against a bounded queue (ZMQ_SNDHWM), drops counted.
//
// A socket monitor on the ROUTER counts accepted, dropped and failed-handshake links (libzmq
// closes a link that sends a frame above ZMQ_MAXMSGSIZE; that shows up as a disconnect) and
// tracks the accepted connections' fds, so a reload that removes a key can shut them down.
//
// Thread-safety: none; the daemon's event loop owns it. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_TRANSPORT_TRANSPORT_H_
#define PEERBLOOM_DAEMON_TRANSPORT_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "daemon/observe/log_limiter.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/gossip.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// Faults injected into outgoing peer messages, for tests only (config keys test_fault_*,
// docs/config.md): each message is dropped, sent twice, or held back and sent after the
// next message to the same endpoint, with these probabilities; messages to a blocked
// endpoint are all dropped (both halves of a cluster blocking each other make a partition).
struct FaultInjection {
  double drop = 0;                // Default: 0.
  double duplicate = 0;           // Default: 0.
  double reorder = 0;             // Default: 0.
  std::set<std::string> blocked;  // Default: none.
  bool any() const { return drop > 0 || duplicate > 0 || reorder > 0 || !blocked.empty(); }
};

struct TransportOptions {
  std::string listen;  // "tcp://HOST:PORT", port 0 for any
  bool curve = true;
  client::CurveKeyPair keys;  // required when curve
  // Z85 public key -> the node id it speaks for: the keys admitted by the ZAP handler.
  std::map<std::string, std::string> authorized;
  int64_t max_message_bytes = int64_t{64} << 20;
  int send_queue_limit = 1000;
  int heartbeat_interval_ms = 1000;  // 0: no ZMTP heartbeats
  int heartbeat_timeout_ms = 5000;
  size_t max_links = 1024;  // outgoing DEALER links at most; more are refused and counted
  FaultInjection faults;    // tests only
};

struct TransportStats {
  uint64_t messages_in = 0;
  uint64_t bytes_in = 0;
  uint64_t messages_out = 0;
  uint64_t bytes_out = 0;
  uint64_t send_dropped = 0;       // queue full (SNDHWM) or link refused
  uint64_t send_no_key = 0;        // CURVE on, no public key known for the endpoint
  uint64_t refused_frames = 0;     // not exactly one frame
  uint64_t refused_by_gossip = 0;  // the gossip engine refused the frame (malformed,
                                   // another cluster's tag, unknown type, ...)
  uint64_t zap_allowed = 0;
  uint64_t zap_denied = 0;  // unauthorized CURVE keys
  uint64_t links_accepted = 0;
  uint64_t links_disconnected = 0;  // includes links closed for oversized frames
  uint64_t handshakes_failed = 0;
  uint64_t links_open = 0;      // outgoing DEALERs (a gauge)
  uint64_t frames_revoked = 0;  // frames on a link whose key the allow-list no longer names
  uint64_t links_revoked = 0;   // outgoing links closed because their key was delisted
  uint64_t inbound_closed = 0;  // inbound connections shut down when a key was delisted
  uint64_t links_refused = 0;   // outgoing links refused at max_links
  uint64_t send_unlisted = 0;   // sends to a key the allow-list does not name
  uint64_t fault_dropped = 0;   // injected faults (tests only)
  uint64_t fault_duplicated = 0;
  uint64_t fault_reordered = 0;
};

class Transport {
 public:
  // `link_node` is the node id bound to the link's CURVE key ("" with CURVE off).
  using Handler = std::function<Status(std::string_view payload, const std::string& link_node)>;

  Transport(zmq::context_t* context, TransportOptions options);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Installs the ZAP handler (when CURVE is on), then binds. *bound receives the endpoint
  // actually bound (the OS-chosen port when the port was 0).
  Status Start(std::string* bound);

  // The sockets to poll for reading, appended to `items`; remember the first index.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items);
  // After zmq::poll: serves the ready sockets among this transport's items (starting at
  // `first`). Each valid payload goes to `handler`; a non-OK result counts as refused.
  void Process(const zmq::pollitem_t* items, int64_t now_ms, const Handler& handler);

  // Queues one message. Never blocks.
  void Send(const Outgoing& out, int64_t now_ms);
  // Closes the link to an endpoint, if any. Messages already queued on it are still sent for
  // up to kCloseLingerMs (the context's shutdown waits for them that long at most).
  void Close(const std::string& endpoint);
  static constexpr int kCloseLingerMs = 1000;
  // Replaces the allow-list (SIGHUP). Outgoing links to a key no longer listed are closed;
  // when a key was removed, every inbound connection is shut down too (libzmq cannot drop one
  // peer of a ROUTER): honest peers reconnect and pass ZAP again, the removed key does not.
  void SetAuthorized(std::map<std::string, std::string> keys);
  // Replaces the injected faults (SIGHUP; tests only).
  void SetFaults(FaultInjection faults) { options_.faults = std::move(faults); }

  const TransportStats& stats() const { return stats_; }

 private:
  struct Link {
    zmq::socket_t socket;
    std::string public_key;
  };

  void ReceivePeerMessages(int64_t now_ms, const Handler& handler);
  bool ReceiveOne(int64_t now_ms, const Handler& handler);
  void ServeZap(int64_t now_ms);
  void ReadMonitor();
  // Shuts down every open inbound connection (SHUT_RDWR; libzmq keeps owning the fds).
  void CloseInbound();
  Link* LinkFor(const Outgoing& out, int64_t now_ms);
  void Refused(int64_t now_ms, const std::string& why);
  // Send's path when faults are injected: decides the message's fate, then sends it.
  void SendWithFaults(const Outgoing& out, int64_t now_ms);
  void SendNow(const Outgoing& out, int64_t now_ms);

  zmq::context_t* context_;
  TransportOptions options_;
  zmq::socket_t router_;
  zmq::socket_t zap_;
  zmq::socket_t monitor_;
  std::map<std::string, Link> links_;
  std::set<int> inbound_fds_;  // accepted connections, from the monitor's events
  int listen_port_ = 0;        // the ROUTER's bound TCP port (0: not TCP)
  TransportStats stats_;
  LogLimiter refused_log_;
  LogLimiter send_log_;
  std::mt19937_64 fault_rng_{std::random_device{}()};
  std::map<std::string, Outgoing> held_;  // reordered messages, one per endpoint
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_TRANSPORT_TRANSPORT_H_
