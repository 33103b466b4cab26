// SWIM membership (peerbloom/swim.h) simulated at cluster sizes (tests/support/swim_sim.h:
// 2 ms latency, 1 ms jitter, fake clock, SwimOptions defaults: 1 s probe interval, 500 ms
// probe timeout, 3 indirect probes, suspicion 2 to 6 x log10 N intervals). Per size it prints:
//  - at rest (no loss, nothing fails; 60 s after 20 s): frames and bytes sent per node per
//    second, median and max over the nodes, by kind (ping, ack, ping-req). Bytes are the
//    message body plus the frame header a peerbloom frame carries (a WireHeader with a node
//    id of the cluster's length, an epoch and a heartbeat), not CURVE's 33 bytes per message;
//  - under churn, 5 % of frames lost: one node stopped for 1 s (SIGSTOP) every 2 s, and one
//    killed every 5 s (at most 10, or N / 10): failure detection, the time from a kill until
//    the first live node and until every live node declares it dead (median, p99 over the
//    kills), false deaths (a live node declared dead by some node) and the frames and bytes
//    sent per node per second meanwhile.
// Exit 1 when a false death happened or a killed node is not declared dead everywhere.
//
// Usage: swim_sim_bench [sizes (default 16,100,1000,5000)] [seed (default 1)]
// Environment: SWIM_RETRANSMIT_MULT, SWIM_SUSPICION_MULT, SWIM_MAX_EVENTS override those options;
// SWIM_DEBUG=1 prints each false death; SWIM_WATCH=n12 prints every change about node n12.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "peerbloom/swim.h"
#include "peerbloom/wire.h"
#include "tests/support/swim_sim.h"

namespace peerbloom {
namespace {

using sim::SwimNet;
using sim::SwimSim;

// The bytes a peerbloom frame adds to a body: its header, for a node id as long as the
// cluster's longest, a wall-clock epoch and a heartbeat in the millions.
size_t FrameOverhead(size_t n) {
  WireHeader h;
  h.cluster_tag = ClusterTag("sim");
  h.sender_id = "node-" + std::to_string(n);
  h.sender_epoch = 1764150000000;
  h.sender_heartbeat = 5000000;
  std::string frame;
  if (!EncodeBroadcastFrame(h, "x", &frame).ok()) std::abort();
  return frame.size() - 1;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1);
  return v[p <= 0 ? 0 : i];
}

struct Counters {
  std::vector<uint64_t> frames[3], bytes[3];
};

Counters Take(SwimSim& c) {
  Counters out;
  for (size_t k = 0; k < 3; ++k) {
    for (size_t i = 0; i < c.size(); ++i) {
      out.frames[k].push_back(c.node(i).sent[k]);
      out.bytes[k].push_back(c.node(i).sent_bytes[k]);
    }
  }
  return out;
}

// Per node per second between two takes, over the nodes that ran throughout.
void PrintRates(const char* what, const Counters& a, const Counters& b, double seconds,
                size_t overhead, const std::set<size_t>& skip) {
  std::vector<double> frames, bytes;
  std::vector<double> by_kind[3];
  for (size_t i = 0; i < a.frames[0].size(); ++i) {
    if (skip.contains(i)) continue;
    double f = 0, by = 0;
    for (size_t k = 0; k < 3; ++k) {
      const double fk = static_cast<double>(b.frames[k][i] - a.frames[k][i]);
      f += fk;
      by += static_cast<double>(b.bytes[k][i] - a.bytes[k][i]) + fk * overhead;
      by_kind[k].push_back(fk / seconds);
    }
    frames.push_back(f / seconds);
    bytes.push_back(by / seconds);
  }
  std::printf(
      "  %-6s frames/s per node: median %.2f, max %.2f (ping %.2f, ack %.2f, "
      "ping-req %.2f); bytes/s: median %.0f, max %.0f\n",
      what, Percentile(frames, 0.5), Percentile(frames, 1.0), Percentile(by_kind[0], 0.5),
      Percentile(by_kind[1], 0.5), Percentile(by_kind[2], 0.5), Percentile(bytes, 0.5),
      Percentile(bytes, 1.0));
}

struct Churn {
  std::map<size_t, int64_t> killed_at;
  std::map<size_t, std::set<size_t>> declared;   // killed node -> observers that declared it
  std::map<size_t, std::vector<int64_t>> times;  // killed node -> when each observer did
  uint64_t false_deaths = 0;
  uint64_t stalls = 0;
};

// The churn phase: stalls every 2 s, a kill every 5 s, 5 % loss; returns false on failure.
bool RunChurn(SwimSim& c, Churn* churn, int64_t seconds, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t kills = std::min<size_t>(10, std::max<size_t>(1, c.size() / 10));
  const int64_t start = c.now();
  for (int64_t t = start; t < start + seconds * 1000; t += 1000) {
    c.RunUntil(t);
    const size_t victim = rng() % c.size();
    if (((t - start) / 1000) % 5 == 0 && churn->killed_at.size() < kills &&
        !churn->killed_at.contains(victim)) {
      c.Kill(victim);
      churn->killed_at[victim] = t;
    } else if (((t - start) / 1000) % 2 == 0 && !churn->killed_at.contains(victim)) {
      c.Stall(victim, 1000);
      ++churn->stalls;
    }
  }
  c.RunUntil(start + seconds * 1000);
  return churn->false_deaths == 0;
}

// Detection times over the kills; whether every live node declared every kill dead.
bool PrintDetection(Churn& churn, size_t n) {
  std::vector<double> first, all;
  bool everywhere = true;
  for (const auto& [who, at] : churn.killed_at) {
    const std::vector<int64_t>& t = churn.times[who];
    if (churn.declared[who].size() + churn.killed_at.size() < n) everywhere = false;
    if (t.empty()) continue;
    first.push_back(*std::min_element(t.begin(), t.end()) / 1000.0);
    all.push_back(*std::max_element(t.begin(), t.end()) / 1000.0);
  }
  std::printf(
      "  detect %zu kills under 5 %% loss and %llu 1 s stalls: first node median %.1f s, "
      "every node median %.1f s, p99 %.1f s; false deaths %llu; %s\n",
      churn.killed_at.size(), static_cast<unsigned long long>(churn.stalls), Percentile(first, 0.5),
      Percentile(all, 0.5), Percentile(all, 0.99),
      static_cast<unsigned long long>(churn.false_deaths),
      everywhere ? "every kill seen by every live node" : "SOME KILL NOT SEEN EVERYWHERE");
  return everywhere;
}

int RunSize(size_t n, uint64_t seed) {
  const double wall0 =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  SwimSim c(n, SwimNet{seed, 2, 1, 0.0}, [](SwimOptions* o) {
    if (const char* r = std::getenv("SWIM_RETRANSMIT_MULT")) o->retransmit_mult = std::atoi(r);
    if (const char* r = std::getenv("SWIM_SUSPICION_MULT")) o->suspicion_mult = std::atof(r);
    if (const char* r = std::getenv("SWIM_MAX_EVENTS")) o->max_events_per_message = std::atoi(r);
  });
  Churn churn;
  c.OnChange([&](size_t at, const SwimEvent& e) {
    if (const char* w = std::getenv("SWIM_WATCH"); w != nullptr && e.node == w) {
      std::printf("    t=%lld at %s: %s state %d inc %llu by %s\n", static_cast<long long>(c.now()),
                  SwimSim::Id(at).c_str(), e.node.c_str(), static_cast<int>(e.state),
                  static_cast<unsigned long long>(e.incarnation), e.by.c_str());
    }
    if (e.state != SwimState::kDead) return;
    const size_t who = static_cast<size_t>(std::stoul(e.node.substr(1)));
    const auto killed = churn.killed_at.find(who);
    if (killed == churn.killed_at.end()) {
      ++churn.false_deaths;
      if (std::getenv("SWIM_DEBUG") != nullptr) {
        std::printf("  false death of %s at %s, t=%lld ms, inc %llu\n", e.node.c_str(),
                    SwimSim::Id(at).c_str(), static_cast<long long>(c.now()),
                    static_cast<unsigned long long>(e.incarnation));
      }
    } else if (churn.declared[who].insert(at).second) {
      churn.times[who].push_back(c.now() - killed->second);
    }
  });
  const size_t overhead = FrameOverhead(n);
  std::printf("N = %zu (frame header %zu bytes)\n", n, overhead);
  c.RunUntil(20000);
  const Counters rest0 = Take(c);
  c.RunUntil(80000);
  const Counters rest1 = Take(c);
  PrintRates("rest", rest0, rest1, 60.0, overhead, {});

  c.set_loss(0.05);
  const int64_t churn_seconds = 60;
  const bool no_false = RunChurn(c, &churn, churn_seconds, seed);
  c.RunFor(60000);  // the last kill's detection
  const Counters churn1 = Take(c);
  std::set<size_t> killed;
  for (const auto& [who, at] : churn.killed_at) killed.insert(who);
  PrintRates("churn", rest1, churn1, churn_seconds + 60.0, overhead, killed);

  const bool everywhere = PrintDetection(churn, n);
  const double wall1 =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::printf("  (%.1f s of wall time)\n", wall1 - wall0);
  return no_false && everywhere ? 0 : 1;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {16, 100, 1000, 5000};
  if (argc > 1) {
    sizes.clear();
    for (std::string s = argv[1]; !s.empty();) {
      const size_t comma = s.find(',');
      sizes.push_back(std::stoul(s.substr(0, comma)));
      s = comma == std::string::npos ? "" : s.substr(comma + 1);
    }
  }
  const uint64_t seed = argc > 2 ? std::stoull(argv[2]) : 1;
  int rc = 0;
  for (size_t n : sizes) rc |= peerbloom::RunSize(n, seed);
  return rc;
}
