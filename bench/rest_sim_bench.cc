// The cost of staying in sync at rest, simulated (tests/support/sim_cluster.h: the real
// GossipEngines on an in-memory network, 2 ms latency, fake clock, default GossipOptions), for
// cluster sizes real daemons cannot reach on one machine.
//
// For each N: N nodes, each listing the same three seeds, join over 5 s with 100 keys each;
// once every node holds every summary and 60 s more have passed, nothing changes for the
// measured 60 s. Prints per node and second (median and max over the nodes): frames and bytes
// sent (frame headers included; CURVE would add 33 bytes a frame), bytes by kind, and false
// deaths (an observer holding a live node dead at any of the window's samples, every second).
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
  std::printf(
      "| %d | %s | %.2f / %.2f | %.0f / %.0f | %.0f | %.0f | %.0f | %zu | %.1f s%s | %.0f s |\n", n,
      detector == FailureDetector::kProbe ? "probe" : "heartbeat", Median(frames), Max(frames),
      Median(bytes), Max(bytes), by_type[static_cast<int>(WireType::kDigest)],
      by_type[static_cast<int>(WireType::kProbe)],
      by_type[static_cast<int>(WireType::kDelta)] +
          by_type[static_cast<int>(WireType::kFullSummary)] +
          by_type[static_cast<int>(WireType::kRequestFull)],
      false_deaths.size(), join_s, joined ? "" : " (not joined)",
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
      "deaths | joined after | wall |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int n : sizes) {
    peerbloom::Run(n, detector == "probe" ? peerbloom::FailureDetector::kProbe
                                          : peerbloom::FailureDetector::kHeartbeat);
  }
  return 0;
}
