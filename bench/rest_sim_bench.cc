// The cost of staying in sync at rest, simulated (tests/support/sim_cluster.h: the real
// GossipEngines on an in-memory network, 2 ms latency, fake clock, default GossipOptions), for
// cluster sizes real daemons cannot reach on one machine.
//
// For each N: N nodes, each listing the same three seeds, join over 5 s with 100 keys each;
// once every node holds every summary and 60 s more have passed, nothing changes for the
// measured 60 s. Prints per node and second (median and max over the nodes): frames and bytes
// sent (frame headers included; CURVE would add 33 bytes a frame), bytes by kind, and false
// deaths (an observer holding a live node dead at any of the window's samples, every second).
// Then failure detection with 5 % of frames lost: 5 nodes killed one after another, each timed
// until every other node's who-has stops listing its keys (median and p99 over every
// (kill, observer), at 10 ms resolution); then 10 nodes stopped for 1 s each (their frames
// lost both ways), counting the observers that stop listing one meanwhile or in the 20 s
// after (false deaths). Above 300 nodes the detection is not run: its checks would take hours.
//
// Usage: rest_sim_bench [sizes, default 4,16,100,1000] [heartbeat|probe, default probe]
// The heartbeat detector's cost grows with N squared in one process: 1,000 nodes take about
// 20 minutes of one core with it, under a minute with probes. Prints figures; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "peerbloom/gossip.h"
#include "peerbloom/wire.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom {
namespace {

using sim::NodeSpec;
using sim::SimCluster;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

bool AllHoldVersions(SimCluster& c) {
  for (size_t a = 0; a < c.size(); ++a) {
    size_t held = 0;
    for (const PeerInfo& p : c.engine(static_cast<int>(a)).Peers(c.now())) {
      held += p.alive && p.version > 0 ? 1 : 0;
    }
    if (held + 1 < c.size()) return false;
  }
  return true;
}

// Whether node `at` lists `holder` for the holder's first key (who-has: the cheap check).
bool Lists(SimCluster& c, int at, int holder) {
  return c.WhoHasHash(at, "", sim::NodeKey(static_cast<uint64_t>(holder), 0), holder);
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

// Kills, then 1 s stops, with 5 % of frames lost; prints the detection and false deaths cells.
void Detect(SimCluster* c, int n) {
  sim::NetOptions lossy;
  lossy.seed = 7;
  lossy.drop = 0.05;
  c->set_net(lossy);
  std::vector<double> seconds;
  std::vector<bool> live(n, true);
  int missed = 0;
  for (int k = 0; k < 5 && k + 3 < n; ++k) {
    const int victim = 3 + k * (n - 3) / 5;  // never a seed
    c->node(victim).up = false;
    live[victim] = false;
    const int64_t t0 = c->now();
    std::vector<bool> seen(n, false);
    int waiting = 0;
    for (int i = 0; i < n; ++i) waiting += live[i] ? 1 : 0;
    while (waiting > 0 && c->now() < t0 + 60000) {
      c->RunFor(10);
      for (int i = 0; i < n; ++i) {
        if (!live[i] || seen[i] || Lists(*c, i, victim)) continue;
        seen[i] = true;
        --waiting;
        seconds.push_back(static_cast<double>(c->now() - t0) / 1000);
      }
    }
    missed += waiting;
  }
  size_t false_deaths = 0;
  for (int s = 0; s < 10; ++s) {
    int stalled = (s * 7919) % n;
    while (!live[stalled]) stalled = (stalled + 1) % n;
    std::vector<bool> lost(n, false);
    auto check = [&] {
      for (int i = 0; i < n; ++i) {
        if (live[i] && i != stalled && !lost[i] && !Lists(*c, i, stalled)) {
          lost[i] = true;
          ++false_deaths;
        }
      }
    };
    c->node(stalled).up = false;
    for (int t = 0; t < 10; ++t) {
      c->RunFor(100);
      check();
    }
    c->node(stalled).up = true;
    for (int t = 0; t < 40; ++t) {
      c->RunFor(500);
      check();
    }
  }
  std::printf("%.1f / %.1f s%s | %zu | ", Quantile(seconds, 0.5), Quantile(seconds, 0.99),
              missed > 0 ? (" (" + std::to_string(missed) + " never)").c_str() : "", false_deaths);
}

void Run(int n, FailureDetector detector) {
  const auto wall0 = std::chrono::steady_clock::now();
  GossipOptions base = SimCluster::DefaultOptions();
  base.failure_detector = detector;
  SimCluster c(sim::NetOptions(), base);
  for (int i = 0; i < n; ++i) {
    c.RunUntil(5000LL * i / n);
    NodeSpec s;
    s.id = "node" + std::to_string(i);
    for (int seed = 0; seed < 3 && seed < n; ++seed) {
      if (seed != i) s.seeds.push_back("node" + std::to_string(seed));
    }
    s.log2_counters = 9;
    const int node = c.AddNode(s);
    for (uint64_t k = 0; k < 100; ++k)
      c.AddHash(node, sim::NodeKey(static_cast<uint64_t>(node), k));
    c.Publish(node);
  }
  const bool joined = c.RunUntilTrue([&] { return AllHoldVersions(c); }, 300000, 1000);
  const double join_s = static_cast<double>(c.now()) / 1000;
  c.RunFor(60000);
  std::vector<uint64_t> frames0, bytes0;
  std::vector<std::vector<uint64_t>> types0;
  for (int i = 0; i < n; ++i) {
    frames0.push_back(c.node(i).frames_sent);
    bytes0.push_back(c.node(i).bytes_sent);
    types0.emplace_back(c.node(i).bytes_by_type, c.node(i).bytes_by_type + 16);
  }
  std::set<std::pair<int, int>> false_deaths;
  std::map<std::string, int> index;
  for (int i = 0; i < n; ++i) index[c.node(i).spec.id] = i;
  const int64_t window_ms = 60000;
  for (int64_t t = 0; t < window_ms; t += 1000) {
    c.RunFor(1000);
    for (int a = 0; a < n; ++a) {
      for (const PeerInfo& p : c.engine(a).Peers(c.now())) {
        if (!p.alive) false_deaths.emplace(a, index[p.node_id]);
      }
    }
  }
  const double secs = window_ms / 1000.0;
  std::vector<double> frames, bytes;
  double by_type[16] = {};
  for (int i = 0; i < n; ++i) {
    frames.push_back(static_cast<double>(c.node(i).frames_sent - frames0[i]) / secs);
    bytes.push_back(static_cast<double>(c.node(i).bytes_sent - bytes0[i]) / secs);
    for (int t = 0; t < 16; ++t) {
      by_type[t] += static_cast<double>(c.node(i).bytes_by_type[t] - types0[i][t]) / secs / n;
    }
  }
  std::printf("| %d | %s | %.2f / %.2f | %.0f / %.0f | %.0f | %.0f | %.0f | %zu | %.1f s%s | ", n,
              detector == FailureDetector::kProbe ? "probe" : "heartbeat", Median(frames),
              Max(frames), Median(bytes), Max(bytes), by_type[static_cast<int>(WireType::kDigest)],
              by_type[static_cast<int>(WireType::kProbe)],
              by_type[static_cast<int>(WireType::kDelta)] +
                  by_type[static_cast<int>(WireType::kFullSummary)] +
                  by_type[static_cast<int>(WireType::kRequestFull)],
              false_deaths.size(), join_s, joined ? "" : " (not joined)");
  if (n <= 300) {
    Detect(&c, n);
  } else {
    std::printf("not run (over 300 nodes) | | ");  // a check per observer every 10 ms
  }
  std::printf("%.0f s |\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count());
  std::fflush(stdout);
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  std::vector<int> sizes;
  std::stringstream list(argc > 1 ? argv[1] : "4,16,100,1000");
  for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::atoi(item.c_str()));
  const std::string detector = argc > 2 ? argv[2] : "probe";
  if (detector != "probe" && detector != "heartbeat") {
    std::fprintf(stderr, "usage: rest_sim_bench [sizes] [heartbeat|probe]\n");
    return 2;
  }
  for (int n : sizes) {
    if (n < 2 || n > 5000) {
      std::fprintf(stderr, "rest_sim_bench: sizes must be in [2, 5000]\n");
      return 2;
    }
  }
  std::printf(
      "At rest, simulated: 100 keys per node, nothing changing, 60 s measured after every node "
      "held every summary and 60 s more. Per node and second, median / max over the nodes; "
      "bytes by kind are means.\n"
      "| N | detector | frames/s | bytes/s | digests B/s | probes B/s | summaries B/s | false "
      "deaths | joined after | killed -> dead everywhere: median / p99 | false deaths, 10 "
      "stops of 1 s | wall |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int n : sizes) {
    peerbloom::Run(n, detector == "probe" ? peerbloom::FailureDetector::kProbe
                                          : peerbloom::FailureDetector::kHeartbeat);
  }
  return 0;
}
