// MetricsReport: every metric of /metrics in the Prometheus text format (version 0.0.4),
// read from the same parts as StatsReport plus the loop's own counters (LoopMetrics).
//
// The metrics are a table {name, type, help, write}: the text is built by walking it and
// docs/operations.md ("Metrics") is checked against MetricsReference(), so neither can name a
// metric the other lacks. Names follow Prometheus conventions: a `peerbloom_` prefix, base
// units (seconds, bytes, ratios), `_total` for counters, no "summary" (a Prometheus type) in a
// name: the local summary is `published_*`, a peer's `peer_filter_*`; labels for peers, feeds,
// digest sources, directions, message types and reasons.
//
// Thread-safety: none (the loop's thread); the text it renders is handed to the HTTP thread.
#ifndef PEERBLOOM_DAEMON_METRICS_REPORT_H_
#define PEERBLOOM_DAEMON_METRICS_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/loop_metrics.h"
#include "daemon/stats_report.h"

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

std::vector<MetricDoc> MetricsReference();

// A label value as the text format wants it: backslash, double quote and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_METRICS_REPORT_H_
