#include "daemon/observe/registry/metric_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace peerbloom::daemon {

std::string MetricWriter::Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

void MetricWriter::Sample(const MetricLabels& labels, const nlohmann::json& value) {
  if (value.is_boolean()) {
    Line(name_, labels, value.get<bool>() ? "1" : "0");
  } else if (value.is_number_float()) {
    Line(name_, labels, Number(value.get<double>()));
  } else if (value.is_number()) {
    Line(name_, labels, value.dump());
  }
}

void MetricWriter::Histogram(const LatencyHistogram& h) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.kBounds.size(); ++i) {
    cumulative += h.buckets[i];
    Line(name_ + "_bucket", {{"le", Number(h.kBounds[i])}}, std::to_string(cumulative));
  }
  Line(name_ + "_bucket", {{"le", "+Inf"}}, std::to_string(h.count));
  Line(name_ + "_sum", {}, Number(h.sum));
  Line(name_ + "_count", {}, std::to_string(h.count));
}

void MetricWriter::Line(std::string_view name, const MetricLabels& labels,
                        const std::string& value) {
  *out_ += name;
  if (!labels.empty()) {
    *out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) *out_ += ',';
      *out_ += labels[i].first;
      *out_ += "=\"" + EscapeLabelValue(labels[i].second) + '"';
    }
    *out_ += '}';
  }
  *out_ += ' ' + value + '\n';
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char ch : value) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '"') {
      out += "\\\"";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace peerbloom::daemon
