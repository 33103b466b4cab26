// The control endpoint and the local listeners: the who-has socket and /metrics.
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

constexpr char kControlConnections[] = "peerbloom_control_connections_total";
constexpr char kWhoHasConnections[] = "peerbloom_who_has_socket_connections_total";
constexpr char kMetricsConnections[] = "peerbloom_metrics_connections_total";
constexpr Label kAccepted{"result", "accepted"};
constexpr Label kEvicted{"result", "evicted"};
constexpr Label kShed{"result", "shed"};

constexpr std::array<Stat<Context>, 11> kControl = {{
    {"requests", "control requests served", kCounter, Metric("peerbloom_control_requests_total"),
     [](const Context& c) -> Json { return c.s.control.stats().requests; }},
    {"errors", "control replies with \"ok\": false", kCounter,
     Metric("peerbloom_control_errors_total"),
     [](const Context& c) -> Json { return c.s.control.stats().errors; }},
    {"malformed", "bad envelopes or headers", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return c.s.control.stats().malformed; }},
    {"internal_errors", "operations that threw", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return c.s.control.stats().internal_errors; }},
    {"unauthorized", "control requests without the control token or with a wrong one", kCounter,
     Metric("peerbloom_control_unauthorized_total"),
     [](const Context& c) -> Json { return c.s.control.stats().unauthorized; }},
    {"connections", "tcp connections accepted", kCounter, Metric(kControlConnections, kAccepted),
     [](const Context& c) -> Json { return c.s.control.tcp_stats().connections; }},
    {"open", "tcp connections open", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.s.control.open_connections(); }},
    {"max_connections", "tcp connections held at most (0 for ipc)", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.s.control.max_connections(); }},
    {"evicted", "tcp connections closed to make room for a new one", kCounter,
     Metric(kControlConnections, kEvicted),
     [](const Context& c) -> Json { return c.s.control.tcp_stats().evicted; }},
    {"shed", "tcp connections closed at once: no descriptor left", kCounter,
     Metric(kControlConnections, kShed),
     [](const Context& c) -> Json { return c.s.control.tcp_stats().shed; }},
    {"dropped_bytes", "bytes of refused tcp control requests read and dropped, never held",
     kCounter, Metric("peerbloom_control_dropped_bytes_total"),
     [](const Context& c) -> Json { return c.s.control.tcp_stats().dropped_bytes; }},
}};

// Read only when the socket is on: the group is null otherwise (top.cc).
const WhoHasSocket& W(const Context& c) { return *c.s.who_has_socket; }

constexpr std::array<Stat<Context>, 8> kWhoHasSocket = {{
    {"connections", "connections accepted", kCounter, Metric(kWhoHasConnections, kAccepted),
     [](const Context& c) -> Json { return W(c).stats().connections; }},
    {"open", "connections open", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return W(c).open_connections(); }},
    {"max_connections", "connections held at most", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return W(c).max_connections(); }},
    {"evicted", "connections closed to make room for a new one", kCounter,
     Metric(kWhoHasConnections, kEvicted),
     [](const Context& c) -> Json { return W(c).stats().evicted; }},
    {"shed", "connections closed at once: no descriptor left", kCounter,
     Metric(kWhoHasConnections, kShed), [](const Context& c) -> Json { return W(c).stats().shed; }},
    {"requests", "lines answered", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return W(c).stats().requests; }},
    {"overlong", "connections closed for a line over 64 KiB", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return W(c).stats().overlong; }},
    {"output_bytes", "who-has answers written and not yet read by their clients", kGauge,
     Metric("peerbloom_who_has_socket_output_bytes"),
     [](const Context& c) -> Json { return W(c).output_bytes(); }},
}};

// Read only with metrics_listen: the group is null otherwise (top.cc).
MetricsServerStats M(const Context& c) { return c.s.metrics_server->stats(); }

constexpr std::array<Stat<Context>, 8> kMetricsEndpoint = {{
    {"scrapes", "answers to GET /metrics", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return M(c).scrapes; }},
    {"connections", "connections accepted", kCounter, Metric(kMetricsConnections, kAccepted),
     [](const Context& c) -> Json { return M(c).connections; }},
    {"open", "connections open", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return M(c).open; }},
    {"max_connections", "connections held at most", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.s.metrics_server->max_connections(); }},
    {"evicted", "connections closed to make room for a new one", kCounter,
     Metric(kMetricsConnections, kEvicted), [](const Context& c) -> Json { return M(c).evicted; }},
    {"timed_out", "connections closed: no whole request, or the answer not taken, in 5 s", kCounter,
     Metric(kMetricsConnections, {"result", "timed_out"}),
     [](const Context& c) -> Json { return M(c).timed_out; }},
    {"shed", "connections closed at once: no descriptor left", kCounter,
     Metric(kMetricsConnections, kShed), [](const Context& c) -> Json { return M(c).shed; }},
    {"bad_requests", "requests answered 400, 405, 413 or 431", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return M(c).bad_requests; }},
}};

constexpr std::array<Family, 3> kFamilies = {{
    {kControlConnections,
     "tcp control connections accepted, closed to make room for a new one, or closed at once "
     "for want of a descriptor"},
    {kWhoHasConnections,
     "who-has socket connections accepted, closed to make room for a new one, or closed at "
     "once for want of a descriptor"},
    {kMetricsConnections,
     "/metrics connections accepted, closed to make room for a new one, closed for no whole "
     "request or an answer not taken in time, or closed at once for want of a descriptor"},
}};

}  // namespace

Table<Context> ControlTable() { return kControl; }
Table<Context> WhoHasSocketTable() { return kWhoHasSocket; }
Table<Context> MetricsEndpointTable() { return kMetricsEndpoint; }
std::span<const Family> EndpointFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
