// Simulated clusters of GossipEngines (tests/support/sim_cluster.h: in-memory network,
// 2 ms latency, fake clock, default GossipOptions: 1 s gossip interval, 5 s anti-entropy,
// fanout 4, one seed per node). Prints, per cluster size:
//  - join: simulated time until every node holds every node's current summary;
//  - gossip bytes per second per node over 60 simulated seconds of 1 % churn per minute
//    (every node removes its oldest keys and adds new ones each second and publishes), with
//    the split by frame type;
//  - convergence: an add at a random node at a random moment -> listed by every other node's
//    who-has, in gossip intervals (20 trials; median and max).
// Then a large cluster (default 300 nodes, 100 keys each) joining through three seeds under
// churn (failures, restarts in new epochs, joins) and frame loss (default 5 %), described in
// tests/support/large_sim.h: bytes per node per second (median, p99, max; seeds apart),
// the busiest node over the median, and adds timed to every live node.
// Fails (exit 1) on any false negative found after convergence (or an add that never
// converges). Convergence conditions are checked every 10 ms of simulated time (0.01 interval
// resolution). The large cluster's cost grows with the square of its size (every node hears
// about 40 % of the members' heartbeats each round, on each of its links): 300 nodes take
// about 1.5 minutes of one core, 1000 about 33 minutes and 4.4 GB (with the probe detector:
// 1 minute and 31 minutes, 5.0 GB).
//
// Usage: gossip_sim_bench [keys_per_node_16] [keys_per_node_100] [large_nodes] [large_loss]
//        [heartbeat|probe] [probe_interval_ms] [seed]   (0 skips that size; the next two
//        pick the large cluster's failure detector, docs/gossip.md "Probe failure detection",
//        and its probe interval, 0 for the default; the seed, 1 by default, picks the losses,
//        the churn and the adds: runs of other seeds show how much a figure varies)
// PEERBLOOM_SIM_TRACE=X: for each node that lists a timed add only after X intervals, print
// the frames about the add's origin it sent and received meanwhile (sent, arrived or lost).
// Defaults: 1e6 keys per node at 16 nodes; 1e4 at 100 nodes, because one process simulates
// every node and each holds every other node's summary (100 x 99 summaries) and the run must
// stay under ~2 minutes; the churn bytes scale with the keys, the digest bytes do not.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/params.h"
#include "tests/support/large_sim.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom {
namespace {

using sim::NodeKey;
using sim::NodeSpec;
using sim::SimCluster;

constexpr int64_t kInterval = 1000;

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Window {  // node i holds key ids [lo, hi)
  uint64_t lo = 0, hi = 0;
};

bool VisibleEverywhere(const SimCluster& c, int holder, const KeyHash& h) {
  for (int i = 0; i < static_cast<int>(c.size()); ++i) {
    if (i != holder && !c.WhoHasHash(i, "", h, holder)) return false;
  }
  return true;
}

size_t SampledFalseNegatives(const SimCluster& c, const std::vector<Window>& w,
                             std::mt19937_64* rng) {
  size_t misses = 0;
  for (int h = 0; h < static_cast<int>(c.size()); ++h) {
    for (int s = 0; s < 50; ++s) {
      const uint64_t id = w[h].lo + (*rng)() % (w[h].hi - w[h].lo);
      misses += VisibleEverywhere(c, h, NodeKey(h, id)) ? 0 : 1;
    }
  }
  return misses;
}

// Nodes "node0".."node<n-1>", each seeded with node0 (node0 with node1), filters sized for
// `keys` at 1 %.
void AddNodes(int nodes, const Geometry& g, SimCluster* c) {
  for (int i = 0; i < nodes; ++i) {
    NodeSpec s;
    s.id = "node" + std::to_string(i);
    s.seeds = {i == 0 ? "node1" : "node0"};
    s.log2_counters = g.log2_counters;
    s.k = g.k;
    c->AddNode(s);
  }
}

// Every node adds its first `keys` keys and publishes.
std::vector<Window> FillNodes(int nodes, uint64_t keys, SimCluster* c) {
  std::vector<Window> w(nodes);
  for (int i = 0; i < nodes; ++i) {
    for (; w[i].hi < keys; ++w[i].hi) c->AddHash(i, NodeKey(i, w[i].hi));
    c->Publish(i);
  }
  return w;
}

// Simulated seconds until every node holds every node's current summary.
bool TimeJoin(int nodes, SimCluster* c, double* join_s) {
  const int64_t join_start = c->now();
  if (!c->RunUntilTrue([&] { return c->AllHoldAll(); }, join_start + 600 * kInterval, 10)) {
    std::fprintf(stderr, "gossip_sim_bench: error: %d nodes did not converge\n", nodes);
    return false;
  }
  *join_s = (c->now() - join_start) / 1000.0;
  return true;
}

// Gossip bytes per second per node under churn, in total and by frame type.
struct ChurnBytes {
  uint64_t per_second = 0;                               // keys replaced per node per second
  std::vector<double> rates;                             // per node
  std::vector<double> by_type = std::vector<double>(8);  // mean per node, by WireType
};

// Steady churn: 1 % of the keys per minute, published every interval.
bool MeasureChurn(uint64_t keys, SimCluster* c, std::vector<Window>* w, ChurnBytes* out) {
  const int nodes = static_cast<int>(c->size());
  const uint64_t per_second = std::max<uint64_t>(1, keys / 100 / 60);
  std::vector<uint64_t> bytes0(nodes), by_type0(8);
  for (int i = 0; i < nodes; ++i) {
    bytes0[i] = c->node(i).bytes_sent;
    for (int t = 0; t < 8; ++t) by_type0[t] += c->node(i).bytes_by_type[t];
  }
  const int kSeconds = 60;
  for (int s = 0; s < kSeconds; ++s) {
    for (int i = 0; i < nodes; ++i) {
      for (uint64_t j = 0; j < per_second; ++j) {
        if (!c->RemoveHash(i, NodeKey(i, (*w)[i].lo++))) return false;
        c->AddHash(i, NodeKey(i, (*w)[i].hi++));
      }
      c->Publish(i);
    }
    c->RunFor(kInterval);
  }
  out->per_second = per_second;
  out->rates.assign(nodes, 0);
  for (int i = 0; i < nodes; ++i) {
    out->rates[i] = static_cast<double>(c->node(i).bytes_sent - bytes0[i]) / kSeconds;
    for (int t = 0; t < 8; ++t) out->by_type[t] += c->node(i).bytes_by_type[t];
  }
  for (int t = 0; t < 8; ++t) {
    out->by_type[t] = (out->by_type[t] - by_type0[t]) / nodes / kSeconds;
  }
  return true;
}

// Convergence of single adds: gossip intervals from each add until every other node lists
// it, sorted.
bool TimeAdds(SimCluster* c, std::vector<Window>* w, std::mt19937_64* rng,
              std::vector<double>* intervals) {
  const int nodes = static_cast<int>(c->size());
  for (int trial = 0; trial < 20; ++trial) {
    c->RunFor(static_cast<int64_t>((*rng)() % kInterval));
    const int holder = static_cast<int>((*rng)() % nodes);
    const KeyHash h = NodeKey(holder, (*w)[holder].hi++);
    c->AddHash(holder, h);
    c->Publish(holder);
    const int64_t t0 = c->now();
    if (!c->RunUntilTrue([&] { return VisibleEverywhere(*c, holder, h); }, t0 + 30 * kInterval,
                         10)) {
      std::fprintf(stderr, "gossip_sim_bench: error: add not visible after 30 intervals\n");
      return false;
    }
    intervals->push_back(static_cast<double>(c->now() - t0) / kInterval);
  }
  std::sort(intervals->begin(), intervals->end());
  return true;
}

// What one cluster size prints.
struct ClusterReport {
  int nodes = 0;
  uint64_t keys = 0;
  unsigned k = 0, log2_bits = 0;
  double join_s = 0;
  ChurnBytes churn;
  std::vector<double> intervals;  // sorted
  size_t misses = 0;
  double wall0 = 0;
};

void PrintCluster(const ClusterReport& r) {
  const int nodes = r.nodes;
  const std::vector<double>& rates = r.churn.rates;
  const std::vector<double>& by_type = r.churn.by_type;
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double rate : rates) mean += rate / nodes;
  std::printf(
      "%d nodes, %llu keys/node (k=%u, summary 2^%u bits), churn %llu keys/s/node (1 %%/min)\n"
      "  join: all summaries everywhere after %.1f s simulated\n"
      "  gossip bytes/s per node: median %.0f, mean %.0f, max %.0f (node0, the seed: %.0f)\n"
      "    by type per node: deltas %.0f, digests %.0f, full summaries %.0f, requests %.0f\n"
      "  add -> visible at all %d nodes: median %.2f, max %.2f gossip intervals\n"
      "  false negatives after convergence: %zu of %d sampled (key, node) checks\n"
      "  wall time %.1f s\n",
      nodes, static_cast<unsigned long long>(r.keys), r.k, r.log2_bits,
      static_cast<unsigned long long>(r.churn.per_second), r.join_s, sorted[nodes / 2], mean,
      sorted.back(), rates[0], by_type[static_cast<int>(WireType::kDelta)],
      by_type[static_cast<int>(WireType::kDigest)],
      by_type[static_cast<int>(WireType::kFullSummary)],
      by_type[static_cast<int>(WireType::kRequestFull)], nodes, r.intervals[r.intervals.size() / 2],
      r.intervals.back(), r.misses, nodes * 50 * (nodes - 1), WallSeconds() - r.wall0);
}

bool Run(int nodes, uint64_t keys) {
  Geometry g;
  if (!ChooseGeometry(Profile::kBalanced, keys, 0.01, &g).ok()) return false;
  ClusterReport r;
  r.nodes = nodes;
  r.keys = keys;
  r.k = g.k;
  r.wall0 = WallSeconds();
  SimCluster c;
  AddNodes(nodes, g, &c);
  std::vector<Window> w = FillNodes(nodes, keys, &c);
  if (!TimeJoin(nodes, &c, &r.join_s)) return false;
  Summary any;
  (void)c.engine(1).GetSummary("node0", &any);
  r.log2_bits = any.filter.log2_bits();
  if (!MeasureChurn(keys, &c, &w, &r.churn)) return false;
  std::mt19937_64 rng(99);
  if (!TimeAdds(&c, &w, &rng, &r.intervals)) return false;
  if (!c.RunUntilTrue([&] { return c.AllHoldAll(); }, c.now() + 60 * kInterval, 10)) {
    return false;
  }
  r.misses = SampledFalseNegatives(c, w, &rng);
  PrintCluster(r);
  return r.misses == 0;
}

// The large cluster under churn, loss and failures (tests/support/large_sim.h).
bool RunLarge(int nodes, double drop, FailureDetector detector, int64_t probe_interval_ms,
              uint64_t net_seed) {
  sim::LargeSimOptions o;
  o.nodes = nodes;
  o.drop = drop;
  o.detector = detector;
  o.probe_interval_ms = probe_interval_ms;
  o.net_seed = net_seed;
  if (const char* trace = std::getenv("PEERBLOOM_SIM_TRACE"))
    o.trace_slower_than = std::atof(trace);
  const double wall0 = WallSeconds();
  sim::LargeSim run(o);
  const sim::LargeSimResult r = run.Run();
  const sim::Distribution& b = r.bytes_per_s;
  const sim::Distribution& s = r.seed_bytes_per_s;
  auto at = [&](size_t q) { return r.add_intervals.empty() ? -1.0 : r.add_intervals[q]; };
  double total = 0;
  for (double v : r.by_type) total += v;
  const double membership = r.by_type[static_cast<int>(WireType::kDigest)] +
                            r.by_type[static_cast<int>(WireType::kProbe)];
  std::printf(
      "%d nodes (%d seeds listed by all), %s detector, %llu keys/node, %.0f %% frames lost; "
      "churn: a "
      "failure, a restart (new epoch) or a join every %.1f s (%d, %d, %d); one key replaced "
      "per node every %lld s\n"
      "  join: every node holds every current summary %.1f s after the first start\n"
      "  bytes/s per node over %lld s (%zu non-seed nodes up throughout): median %.0f, p99 "
      "%.0f, max %.0f, mean %.0f\n"
      "    seeds: median %.0f, max %.0f; busiest node %s: %.2f x the median, busiest seed "
      "%.2f x\n"
      "    by type per node: deltas %.0f, digests %.0f, full summaries %.0f, requests %.0f, "
      "prune/graft %.0f, probes %.0f\n"
      "    frames/s per node: deltas %.1f, digests %.1f, full summaries %.2f, requests %.2f, "
      "prune/graft %.1f, probes %.1f\n"
      "    membership and version traffic (digests, probes): %.1f %% of the bytes\n"
      "  add -> visible at every live node: median %.2f, p90 %.2f, max %.2f gossip intervals "
      "(%d of %d converged)\n"
      "  settled after churn: %s; false negatives: %zu of %zu sampled (key, node) checks at "
      "%d live nodes\n"
      "  false deaths (a node up through the window held dead, sampled every 5 s): %zu\n"
      "  totals of the nodes up at the end: links fallen quiet %llu, grafts %llu, prunes %llu, "
      "cuts told %llu, resyncs asked %llu, tail marks %llu\n"
      "  wall time %.1f s\n",
      r.nodes_total, o.seeds, detector == FailureDetector::kProbe ? "probe" : "heartbeat",
      static_cast<unsigned long long>(o.keys), drop * 100,
      static_cast<double>(o.churn_every_ms) / 1000, r.failures, r.restarts, r.joins,
      static_cast<long long>(o.publish_every_s), r.join_s, static_cast<long long>(o.measure_s),
      b.count, b.median, b.p99, b.max, b.mean, s.median, s.max, r.busiest.c_str(),
      r.busiest_over_median, r.seed_over_median, r.by_type[static_cast<int>(WireType::kDelta)],
      r.by_type[static_cast<int>(WireType::kDigest)],
      r.by_type[static_cast<int>(WireType::kFullSummary)],
      r.by_type[static_cast<int>(WireType::kRequestFull)],
      r.by_type[static_cast<int>(WireType::kPrune)] + r.by_type[static_cast<int>(WireType::kGraft)],
      r.by_type[static_cast<int>(WireType::kProbe)],
      r.frames_by_type[static_cast<int>(WireType::kDelta)],
      r.frames_by_type[static_cast<int>(WireType::kDigest)],
      r.frames_by_type[static_cast<int>(WireType::kFullSummary)],
      r.frames_by_type[static_cast<int>(WireType::kRequestFull)],
      r.frames_by_type[static_cast<int>(WireType::kPrune)] +
          r.frames_by_type[static_cast<int>(WireType::kGraft)],
      r.frames_by_type[static_cast<int>(WireType::kProbe)], 100 * membership / std::max(1.0, total),
      at(r.add_intervals.size() / 2), at(r.add_intervals.size() * 9 / 10),
      r.add_intervals.empty() ? -1.0 : r.add_intervals.back(), r.adds_converged, r.adds,
      r.settled ? "yes" : "NO", r.false_negatives, r.checks, r.live_at_end, r.false_deaths,
      static_cast<unsigned long long>(r.links_quiet), static_cast<unsigned long long>(r.grafts),
      static_cast<unsigned long long>(r.prunes), static_cast<unsigned long long>(r.cuts_told),
      static_cast<unsigned long long>(r.resyncs), static_cast<unsigned long long>(r.tail_marks),
      WallSeconds() - wall0);
  return r.settled && r.false_negatives == 0 && r.adds_converged == r.adds;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  const uint64_t keys16 = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const uint64_t keys100 = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000;
  const int large = argc > 3 ? std::atoi(argv[3]) : 300;
  const double drop = argc > 4 ? std::atof(argv[4]) : 0.05;
  const std::string detector = argc > 5 ? argv[5] : "heartbeat";
  const int64_t probe_ms = argc > 6 ? std::atoll(argv[6]) : 0;
  const uint64_t net_seed = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 1;
  if ((keys16 != 0 && keys16 < 100) || (keys100 != 0 && keys100 < 100) || large < 0 ||
      large > 1000 || drop < 0 || drop >= 1 || (detector != "heartbeat" && detector != "probe") ||
      probe_ms < 0) {
    std::fprintf(stderr,
                 "usage: gossip_sim_bench [keys_per_node_16>=100 or 0] [keys_per_node_100>=100 "
                 "or 0] [large_nodes<=1000 or 0] [large_loss in [0, 1)] [heartbeat|probe] "
                 "[probe_interval_ms, 0: the default] [seed of the network and the churn, 1: the "
                 "default]\n");
    return 2;
  }
  bool ok = keys16 == 0 || peerbloom::Run(16, keys16);
  std::fflush(stdout);
  ok = (keys100 == 0 || peerbloom::Run(100, keys100)) && ok;
  std::fflush(stdout);
  const auto kind = detector == "probe" ? peerbloom::FailureDetector::kProbe
                                        : peerbloom::FailureDetector::kHeartbeat;
  ok = (large == 0 || peerbloom::RunLarge(large, drop, kind, probe_ms, net_seed)) && ok;
  return ok ? 0 : 1;
}
