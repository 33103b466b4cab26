// Report lines are parsed in place; a bad one changes nothing.
#include "daemon/observe/helper_reports.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace peerbloom::daemon {
namespace {

// Counters are capped so that the sum over kMaxHelpers processes and the retired ones can
// never wrap, whatever a client sends.
constexpr uint64_t kMaxCount = uint64_t{1} << 53;

bool ParseCount(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  *out = std::min(v, kMaxCount);
  return true;
}

uint64_t* Field(HelperCounts* c, std::string_view key) {
  if (key == "peer") return &c->peer;
  if (key == "none") return &c->none;
  if (key == "invalid") return &c->invalid;
  if (key == "no_socket") return &c->no_socket;
  if (key == "denied") return &c->denied;
  if (key == "refused") return &c->refused;
  if (key == "timeout") return &c->timeout;
  if (key == "other") return &c->other;
  return nullptr;
}

uint64_t Saturating(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

}  // namespace

void HelperCounts::Add(const HelperCounts& o) {
  peer = Saturating(peer, o.peer);
  none = Saturating(none, o.none);
  invalid = Saturating(invalid, o.invalid);
  no_socket = Saturating(no_socket, o.no_socket);
  denied = Saturating(denied, o.denied);
  refused = Saturating(refused, o.refused);
  timeout = Saturating(timeout, o.timeout);
  other = Saturating(other, o.other);
}

bool HelperReports::Report(std::string_view line, int64_t now_ms) {
  if (line.substr(0, kHelperReportPrefix.size()) != kHelperReportPrefix) return false;
  line.remove_prefix(kHelperReportPrefix.size());
  HelperCounts counts;
  uint64_t pid = 0;
  bool has_pid = false;
  while (!line.empty()) {
    const size_t end = line.find(' ');
    const std::string_view item = line.substr(0, end);
    line.remove_prefix(end == std::string_view::npos ? line.size() : end + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = item.substr(0, eq);
    uint64_t value = 0;
    if (!ParseCount(item.substr(eq + 1), &value)) {
      ++malformed_;
      return false;
    }
    if (key == "pid") {
      pid = value;
      has_pid = true;
    } else if (uint64_t* field = Field(&counts, key)) {
      *field = value;
    }
  }
  if (!has_pid) {
    ++malformed_;
    return false;
  }
  if (helpers_.find(pid) == helpers_.end() && helpers_.size() >= kMaxHelpers) {
    auto oldest = std::min_element(
        helpers_.begin(), helpers_.end(),
        [](const auto& a, const auto& b) { return a.second.last_ms < b.second.last_ms; });
    retired_.Add(oldest->second.counts);
    helpers_.erase(oldest);
  }
  Helper& h = helpers_[pid];
  // Counters of one process only grow: lower ones are a new process that got the same pid.
  const HelperCounts& was = h.counts;
  if (counts.peer < was.peer || counts.none < was.none || counts.invalid < was.invalid ||
      counts.no_socket < was.no_socket || counts.denied < was.denied ||
      counts.refused < was.refused || counts.timeout < was.timeout || counts.other < was.other) {
    retired_.Add(was);
  }
  h.counts = counts;
  h.last_ms = now_ms;
  last_report_ms_ = now_ms;
  ++reports_;
  return true;
}

HelperCounts HelperReports::Totals() const {
  HelperCounts total = retired_;
  for (const auto& [pid, h] : helpers_) total.Add(h.counts);
  return total;
}

size_t HelperReports::Active(int64_t now_ms, int64_t window_ms) const {
  return static_cast<size_t>(std::count_if(helpers_.begin(), helpers_.end(), [&](const auto& e) {
    return now_ms - e.second.last_ms <= window_ms;
  }));
}

}  // namespace peerbloom::daemon
