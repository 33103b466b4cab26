// ControlOps: the operations of the control protocol (docs/control-protocol.md) as a table of
// {name, one-line description, handler}. ControlServer owns the envelope; Handle picks the
// operation by name, and an unknown name is answered with the list the table holds.
//
// The operations that read or change the daemon's core (who-has, add, remove, snapshot) are
// the daemon's own and reach this table as callbacks; the rest read the parts they need
// through the references in ControlContext. Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_CONTROL_CONTROL_OPS_H_
#define PEERBLOOM_DAEMON_CONTROL_CONTROL_OPS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/loop/clock.h"
#include "daemon/observe/daemon_parts.h"
#include "daemon/observe/stats_report.h"
#include "peerbloom/gossip.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// One request as an operation sees it.
struct ControlCall {
  const nlohmann::json& request;
  std::string_view body;
  int64_t now;
  nlohmann::json* reply;
  std::string* reply_body;
};

using ControlHandler = std::function<Status(const ControlCall&)>;

class RelayService;

// What the operations reach. Every reference must outlive the ControlOps.
struct ControlContext {
  DaemonParts parts;
  const Clock& clock;
  const StatsReport& stats;
  // The operations LookupService owns (on the store and the engine) and the store's
  // synchronous snapshot.
  ControlHandler who_has;
  std::function<Status(bool add, const ControlCall&)> change;
  std::function<Status()> write_snapshot;
  RelayService& relay;  // broadcast, listen (relay_ops.cc)
};

class ControlOps {
 public:
  struct Op {
    std::string_view name;
    std::string_view description;  // one line, as docs/control-protocol.md lists it
    Status (ControlOps::*handler)(const ControlCall&);
  };
  // Every operation, in the order the unknown-op message lists them.
  static const std::vector<Op>& Table();

  explicit ControlOps(ControlContext context) : c_(std::move(context)) {}
  ControlOps(const ControlOps&) = delete;
  ControlOps& operator=(const ControlOps&) = delete;

  // Runs the operation named by request["op"] (REQUIRES: a string). A missing or mistyped
  // field of the request is InvalidArgument "bad request field: ..."; an unknown op is
  // InvalidArgument naming every op of the table.
  Status Handle(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                std::string* reply_body);

 private:
  Status WhoHas(const ControlCall& call);
  Status Add(const ControlCall& call);
  Status Remove(const ControlCall& call);
  Status Stats(const ControlCall& call);
  Status Peers(const ControlCall& call);
  Status Summary(const ControlCall& call);
  Status Ping(const ControlCall& call);
  Status Snapshot(const ControlCall& call);
  Status Rebuild(const ControlCall& call);
  Status Report(const ControlCall& call);
  Status LogLevel(const ControlCall& call);
  Status Broadcast(const ControlCall& call);  // relay_ops.cc
  Status Listen(const ControlCall& call);     // relay_ops.cc
  Status Purge(const ControlCall& call);      // relay_ops.cc

  ControlContext c_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_CONTROL_OPS_H_
