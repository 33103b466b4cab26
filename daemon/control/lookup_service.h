// LookupService: the local endpoints and what they answer. It owns the control endpoint
// (ControlServer) with its table of operations (ControlOps), the who-has line socket and the
// Squid helpers' reports that arrive on it, and serves who-has, add and remove over the
// node's store and the gossip engine's summaries. The loop puts its poll items in the poll,
// lets it serve what is ready first in a turn (and between peer frames), and polls through it
// so that the busy-poll window after a request is kept.
//
// Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_CONTROL_LOOKUP_SERVICE_H_
#define PEERBLOOM_DAEMON_CONTROL_LOOKUP_SERVICE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "daemon/config/config.h"
#include "daemon/control/control_ops.h"
#include "daemon/control/control_server.h"
#include "daemon/control/descriptors.h"
#include "daemon/control/nginx_routes.h"
#include "daemon/control/who_has_socket.h"
#include "daemon/loop/clock.h"
#include "daemon/observe/helper_reports.h"
#include "daemon/observe/loop_metrics.h"
#include "daemon/relay/relay_service.h"
#include "daemon/store/store_service.h"
#include "peerbloom/gossip.h"
#include "peerbloom/who_has_batch.h"

namespace peerbloom::daemon {

class LookupService {
 public:
  // Every argument must outlive the service.
  LookupService(const Config& config, const Clock& clock, zmq::context_t* context,
                ListenerLimits limits);
  LookupService(const LookupService&) = delete;
  LookupService& operator=(const LookupService&) = delete;

  // Binds the control endpoint (its socket directory checked, a tcp endpoint's token made)
  // and the who-has socket.
  Status Start();
  // The operations read `parts` and `stats`, change `store` and broadcast through `relay`;
  // who-has latencies go to `metrics`. Call once every part exists, before serving.
  void Wire(const DaemonParts& parts, StoreService* store, const StatsReport& stats,
            RelayService* relay, LoopMetrics* metrics);

  // Appends the control endpoint's and the who-has socket's poll items to `items` and
  // remembers where they start.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items);
  // zmq::poll over `items`, without sleeping while the busy-poll window after the last
  // request lasts (control_busy_poll), then waiting up to `wait_ms`.
  int Poll(std::vector<zmq::pollitem_t>* items, int64_t wait_ms);
  // Serves what the poll found on the items AppendPollItems added to `items`.
  void Serve(const std::vector<zmq::pollitem_t>& items, int64_t now);
  // Serves the who-has lines waiting now, without a poll: the loop calls it between peer
  // frames, so a lookup never waits for more than one frame's handling.
  void ServeNow();

  const ListenerLimits& limits() const { return limits_; }
  const ControlServer& control() const { return *control_; }
  const std::unique_ptr<WhoHasSocket>& who_has_socket() const { return who_has_socket_; }
  // Null without `nginx_route_socket`.
  const std::unique_ptr<WhoHasSocket>& route_socket() const { return route_socket_; }
  // Null without `nginx_route_socket`.
  const NginxRoutes* nginx_routes() const { return routes_.get(); }
  const HelperReports& helpers() const { return helper_reports_; }

 private:
  Status SecureControl();
  Status WhoHas(const ControlCall& call);
  Status Change(bool add, const ControlCall& call);
  // Answers the who-has socket's lines (node ids per line) and takes helpers' reports.
  void WhoHasLines(std::string_view lines, std::string* out);
  void WhoHasLookups(std::string_view lines, std::string* out);
  // Looks up each line of `body` (URLs, or key tokens when `keys`), answers in order to `sink`.
  void RunWhoHas(std::string_view body, bool keys, const WhoHasBatch::Sink& sink);
  void ServedRequests(size_t count);

  const Config& config_;
  const Clock& clock_;
  ListenerLimits limits_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<WhoHasSocket> who_has_socket_;  // null when `who_has_socket` is ""
  std::unique_ptr<WhoHasSocket> route_socket_;    // null when `nginx_route_socket` is ""
  std::unique_ptr<NginxRoutes> routes_;
  std::unique_ptr<ControlOps> ops_;
  HelperReports helper_reports_;
  StoreService* store_ = nullptr;
  const GossipEngine* engine_ = nullptr;
  std::string endpoint_;  // the advertised peer endpoint, named in who-has replies
  LoopMetrics* metrics_ = nullptr;
  size_t control_at_ = 0, socket_at_ = 0, socket_end_ = 0, route_end_ = 0;  // poll items
  // Until when (steady clock) Poll does not sleep: control_busy_poll after the last request.
  std::chrono::steady_clock::time_point busy_poll_until_{};
  std::string key_scratch_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_LOOKUP_SERVICE_H_
