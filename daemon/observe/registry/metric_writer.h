// MetricWriter: the sample lines of one /metrics family in the Prometheus text format
// (version 0.0.4): `name{label="value",...} value`. The HELP and TYPE lines are the
// renderer's (metrics_report.cc), which writes each family once.
#ifndef PEERBLOOM_DAEMON_OBSERVE_REGISTRY_METRIC_WRITER_H_
#define PEERBLOOM_DAEMON_OBSERVE_REGISTRY_METRIC_WRITER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/observe/loop_metrics.h"

namespace peerbloom::daemon {

using MetricLabels = std::vector<std::pair<std::string_view, std::string>>;

class MetricWriter {
 public:
  // Appends to `*out`, which must outlive the writer.
  MetricWriter(std::string* out, std::string_view name) : out_(out), name_(name) {}

  void Sample(const MetricLabels& labels, double value) { Line(name_, labels, Number(value)); }
  void Sample(const MetricLabels& labels, uint64_t value) {
    Line(name_, labels, std::to_string(value));
  }
  void Sample(double value) { Sample(MetricLabels{}, value); }
  void Sample(uint64_t value) { Sample(MetricLabels{}, value); }
  // A JSON number or flag (true is 1); anything else is no sample.
  void Sample(const MetricLabels& labels, const nlohmann::json& value);
  // The _bucket, _sum and _count series of a histogram.
  void Histogram(const LatencyHistogram& h);

  // A value as the text format writes it: shortest round trip, NaN, +Inf, -Inf.
  static std::string Number(double v);

 private:
  void Line(std::string_view name, const MetricLabels& labels, const std::string& value);

  std::string* out_;
  std::string name_;
};

// A label value as the text format wants it: backslash, double quote and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_REGISTRY_METRIC_WRITER_H_
