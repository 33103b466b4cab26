// StatsReport: the `stats` and `peers` answers of the control protocol, every counter the
// daemon keeps, grouped by part, rendered as JSON from the registry (daemon/observe/registry/) that
// /metrics renders from too. docs/operations.md, "Stats and what to watch", lists them; a
// test checks that list against StatsReference().
//
// Reads the daemon's parts through references it is given once they exist (after Start);
// it owns nothing and changes nothing. Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_OBSERVE_STATS_REPORT_H_
#define PEERBLOOM_DAEMON_OBSERVE_STATS_REPORT_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/control/control_server.h"
#include "daemon/control/nginx_routes.h"
#include "daemon/control/who_has_socket.h"
#include "daemon/digests/digest_importer.h"
#include "daemon/observe/daemon_parts.h"
#include "daemon/observe/metrics_server.h"
#include "daemon/observe/registry/registry.h"
#include "daemon/relay/relay_service.h"
#include "daemon/store/store_service.h"
#include "daemon/transport/transport.h"
#include "peerbloom/gossip.h"

namespace peerbloom::daemon {

using registry::StatDoc;

// Faults the daemon noticed (the injected ones are counted by the transport).
struct FaultStats {
  uint64_t clock_jumps = 0;        // wall clock steps of more than kClockJumpMs
  int64_t last_clock_jump_ms = 0;  // the last step, negative when the clock went back
};

// What the report reads. Every reference must outlive the report.
struct StatsSources {
  DaemonParts parts;
  const int64_t& start_ms;
  const Transport& transport;
  const ControlServer& control;
  const DigestImporter& digests;
  const PublishStats& publish;
  const SnapshotStats& snapshot;
  const std::string& snapshot_path;
  const uint64_t& reloads;
  const RelayService& relay;
  const FaultStats& faults;
  const std::unique_ptr<WhoHasSocket>& who_has_socket;   // null when off
  const std::unique_ptr<MetricsServer>& metrics_server;  // null without metrics_listen
  const std::unique_ptr<WhoHasSocket>& route_socket;     // null without nginx_route_socket
  const NginxRoutes* nginx_routes;                       // null without nginx_route_socket
};

class StatsReport {
 public:
  explicit StatsReport(StatsSources sources) : s_(sources) {}

  nlohmann::json Stats(int64_t now) const;
  nlohmann::json Peers(int64_t now) const;

 private:
  StatsSources s_;
};

// Every name of the `stats` answer with its description: the groups, their entries, and
// the fields of the arrays (feeds[], squid_digests.sources[], ...). Metrics only are left out.
std::vector<StatDoc> StatsReference();
// Every field of a `peers` answer's entries with its description.
std::vector<StatDoc> PeersReference();

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_STATS_REPORT_H_
