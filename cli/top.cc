// `peerbloom top`: the daemon's activity as rates, refreshed every interval.
//
// Each refresh asks for `stats` and `peers`; a counter's rate is its change divided by the
// change of the daemon's own uptime_ms between two answers, so the rate does not depend on
// how long the request took. A counter that went down (the daemon restarted) shows no rate
// for that refresh.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.h"
#include "cli/online.h"
#include "cli/table.h"
#include "peerbloom/client/control_protocol.h"

namespace peerbloom::cli {
namespace {

using nlohmann::json;

// One line of the display: a value of `stats` (a path; '*' sums over an array's elements).
struct TopRow {
  const char* what;
  const char* path;
  Unit unit;
  bool counter;  // true: show the rate; false: a level, shown as it is
};

// The lines, in display order. Add one here to show another value.
constexpr TopRow kRows[] = {
    {"keys held", "filter/items", Unit::kPlain, false},
    {"adds", "filter/adds", Unit::kPlain, true},
    {"removes", "filter/removes", Unit::kPlain, true},
    {"refused removes", "filter/refused_removes", Unit::kPlain, true},
    {"feed lines", "feeds/*/lines", Unit::kPlain, true},
    {"feed lines malformed", "feeds/*/malformed", Unit::kPlain, true},
    {"feed lag", "feeds/*/lag_bytes", Unit::kBytes, false},
    {"control requests", "control/requests", Unit::kPlain, true},
    {"summary fpr (estimated)", "summary/estimated_fpr", Unit::kRatio, false},
    {"deltas published", "summary/published_deltas", Unit::kPlain, true},
    {"full summaries published", "summary/published_full", Unit::kPlain, true},
    {"members alive", "gossip/members_alive", Unit::kPlain, false},
    {"members known", "gossip/members_known", Unit::kPlain, false},
    {"gossip messages in", "gossip/messages_in", Unit::kPlain, true},
    {"gossip messages out", "gossip/messages_out", Unit::kPlain, true},
    {"gossip bytes in", "gossip/bytes_in", Unit::kBytes, true},
    {"gossip bytes out", "gossip/bytes_out", Unit::kBytes, true},
    {"resyncs requested", "gossip/resyncs_requested", Unit::kPlain, true},
    {"malformed messages in", "gossip/malformed_in", Unit::kPlain, true},
    {"queue drops", "gossip/queue_dropped", Unit::kPlain, true},
    {"handshakes refused", "transport/zap_denied", Unit::kPlain, true},
    {"routed to peers: hits", "routing/hits", Unit::kPlain, true},
    {"routed to peers: false hits", "routing/false_hits", Unit::kPlain, true},
    {"routed to peers: unreachable", "routing/unreachable", Unit::kPlain, true},
    {"squid helper: peer named", "routing/helper/answered_peer", Unit::kPlain, true},
    {"squid helper: no peer", "routing/helper/answered_none", Unit::kPlain, true},
    {"squid helper: errors", "routing/helper/errors", Unit::kPlain, true},
};

// The value at `path` (components split by '/'), summed over arrays at '*'; null when absent.
json Lookup(const json& at, std::string_view path) {
  if (path.empty()) return at;
  const size_t slash = path.find('/');
  const std::string head(path.substr(0, slash));
  const std::string_view rest = slash == std::string_view::npos ? "" : path.substr(slash + 1);
  if (head == "*") {
    if (!at.is_array()) return nullptr;
    double sum = 0;
    for (const json& e : at) {
      const json v = Lookup(e, rest);
      if (v.is_number()) sum += v.get<double>();
    }
    return sum;
  }
  if (!at.is_object() || !at.contains(head)) return nullptr;
  return Lookup(at[head], rest);
}

struct Sample {
  json stats;
  json peers;
};

Status Take(client::ControlClient* control, Sample* s) {
  json reply;
  std::string body;
  PEERBLOOM_RETURN_IF_ERROR(control->Call({{"op", client::kOpStats}}, "", &reply, &body));
  s->stats = reply["stats"];
  PEERBLOOM_RETURN_IF_ERROR(control->Call({{"op", client::kOpPeers}}, "", &reply, &body));
  s->peers = reply["peers"];
  return Status::Ok();
}

// Per second from `before` to `now`, or a negative number when there is no rate.
double RateOf(const TopRow& row, const Sample& before, const Sample& now) {
  const json a = Lookup(before.stats, row.path);
  const json b = Lookup(now.stats, row.path);
  const json ta = Lookup(before.stats, "uptime_ms");
  const json tb = Lookup(now.stats, "uptime_ms");
  if (!a.is_number() || !b.is_number() || !ta.is_number() || !tb.is_number()) return -1;
  const double dt = (tb.get<double>() - ta.get<double>()) / 1000;
  const double dv = b.get<double>() - a.get<double>();
  return dt > 0 && dv >= 0 ? dv / dt : -1;
}

std::string FormatRate(double rate, Unit unit) {
  if (rate < 0) return "-";
  if (unit == Unit::kBytes) return FormatBytes(rate) + "/s";
  char buf[32];
  std::snprintf(buf, sizeof(buf), rate < 10 ? "%.2f/s" : "%.1f/s", rate);
  return buf;
}

std::string Frame(const Sample& before, const Sample& now, int interval_ms) {
  const json& st = now.stats;
  std::string out = "peerbloom top: " + st.value("node_id", std::string("?")) + " " +
                    st.value("endpoint", std::string()) + ", up " +
                    FormatMs(Lookup(st, "uptime_ms").get<double>()) + ", every " +
                    FormatMs(interval_ms) + "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const TopRow& row : kRows) {
    const json v = Lookup(st, row.path);
    if (v.is_null()) continue;
    rows.push_back({row.what, FormatValue(v, row.unit),
                    row.counter ? FormatRate(RateOf(row, before, now), row.unit) : ""});
  }
  out += AlignColumns({"", "TOTAL", "PER SECOND"}, rows, {false, true, true});
  out += "\n" + RenderPeers(now.peers);
  return out;
}

json JsonFrame(const Sample& before, const Sample& now) {
  json rows = json::array();
  for (const TopRow& row : kRows) {
    const json v = Lookup(now.stats, row.path);
    if (v.is_null()) continue;
    json r = {{"name", row.path}, {"value", v}};
    if (row.counter) {
      const double rate = RateOf(row, before, now);
      r["per_second"] = rate < 0 ? json(nullptr) : json(rate);
    }
    rows.push_back(r);
  }
  return {{"node_id", now.stats.value("node_id", std::string())},
          {"uptime_ms", Lookup(now.stats, "uptime_ms")},
          {"rows", rows}};
}

struct TopArgs {
  int interval_ms = 1000;
  int count = 0;  // refreshes, 0 for no end
};

int RunTop(const GlobalOptions& g, const TopArgs& a) {
  std::unique_ptr<client::ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  // On a terminal each refresh replaces the screen; elsewhere frames follow each other.
  const bool tty = !g.json && ::isatty(STDOUT_FILENO) == 1;
  Sample before;
  s = Take(control.get(), &before);
  if (!s.ok()) return Error(s);
  auto next = std::chrono::steady_clock::now();
  for (int n = 0; a.count == 0 || n < a.count; ++n) {
    next += std::chrono::milliseconds(a.interval_ms);
    std::this_thread::sleep_until(next);
    Sample now;
    s = Take(control.get(), &now);
    if (!s.ok()) return Error(s);
    std::string text;
    if (g.json) {
      text = JsonFrame(before, now).dump() + "\n";
    } else {
      text = (tty ? "\x1b[H\x1b[2J" : (n > 0 ? "\n" : "")) + Frame(before, now, a.interval_ms);
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    before = std::move(now);
  }
  return 0;
}

}  // namespace

Runner SetUpTop(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<TopArgs>();
  sub->add_option("-i,--interval", a->interval_ms, "milliseconds between refreshes (default 1000)")
      ->check(CLI::Range(100, 3600000));
  sub->add_option("-n,--count", a->count, "stop after this many refreshes (default: never)")
      ->check(CLI::Range(0, 1000000000));
  return [g, a] { return RunTop(*g, *a); };
}

}  // namespace peerbloom::cli
