// MetricsReport: every metric of /metrics in the Prometheus text format (version 0.0.4),
// rendered from the registry (daemon/observe/registry/) that the `stats` answer renders from too,
// plus the families only the loop counts (LoopMetrics).
//
// A stat the registry exports is a sample of its family; docs/operations.md ("Metrics") is
// checked against MetricsReference(), so neither can name a metric the other lacks. Names
// follow Prometheus conventions: a `peerbloom_` prefix, base units (seconds, bytes, ratios),
// `_total` for counters, no "summary" (a Prometheus type) in a name: the local summary is
// `published_*`, a peer's `peer_filter_*`; labels for peers, feeds, digest sources,
// directions, message types and reasons.
//
// Thread-safety: none (the loop's thread); the text it renders is handed to the HTTP thread.
#ifndef PEERBLOOM_DAEMON_OBSERVE_METRICS_REPORT_H_
#define PEERBLOOM_DAEMON_OBSERVE_METRICS_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/observe/loop_metrics.h"
#include "daemon/observe/registry/metric_writer.h"
#include "daemon/observe/stats_report.h"

namespace peerbloom::daemon {

struct MetricDoc {
  std::string name;
  std::string type;  // counter, gauge, histogram
  std::string labels;
  std::string help;
};

class MetricsReport {
 public:
  // Every reference must outlive the report.
  MetricsReport(StatsSources sources, const LoopMetrics& loop) : s_(sources), loop_(loop) {}

  // `now` is the loop's clock, `now_unix_ms` the wall clock (snapshot age).
  std::string Render(int64_t now, int64_t now_unix_ms) const;

 private:
  StatsSources s_;
  const LoopMetrics& loop_;
};

// Every family, in the order Render writes them. `labels` lists the label names with their
// fixed values, as in "kind=full|delta, direction=in|out".
std::vector<MetricDoc> MetricsReference();

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_METRICS_REPORT_H_
