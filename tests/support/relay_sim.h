// A discrete-event simulator of the broadcast relay: the real RelayNode state machine of every
// node, wired over a generated topology by a simulated network (random latency, message
// loss, failed nodes), no sockets. Used by bench/relay_sim_bench.cc (figures, up to 10,000
// nodes) and tests/unit/relay/relay_sim_test.cc (the targets at smaller sizes).
//
// Next to the relay it runs two baselines over the same graph, origins, failures and loss:
// naive flooding with a seen set (every node pushes its first copy to every neighbour), and
// flooding bounded only by the hop limit (every copy is pushed on, counted by dynamic
// programming over the hops because its copies grow exponentially). It also floods with the
// visited filter alone (no seen set, no announcements, no loss) once with the Bloom filter
// and once with the exact path, to count the deliveries a filter false positive would cost
// without repair.
#ifndef PEERBLOOM_TESTS_SUPPORT_RELAY_SIM_H_
#define PEERBLOOM_TESTS_SUPPORT_RELAY_SIM_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "peerbloom/relay.h"

namespace peerbloom::relay_sim {

enum class Topology { kRing, kGrid, kRandomRegular, kScaleFree };

inline const char* TopologyName(Topology t) {
  switch (t) {
    case Topology::kRing:
      return "ring";
    case Topology::kGrid:
      return "grid";
    case Topology::kRandomRegular:
      return "random-regular";
    case Topology::kScaleFree:
      return "scale-free";
  }
  return "?";
}

using Graph = std::vector<std::vector<uint32_t>>;

inline void AddEdge(Graph* g, uint32_t a, uint32_t b) {
  (*g)[a].push_back(b);
  (*g)[b].push_back(a);
}

inline bool HasEdge(const Graph& g, uint32_t a, uint32_t b) {
  return std::find(g[a].begin(), g[a].end(), b) != g[a].end();
}

// Random regular graph by the configuration model: stubs are shuffled and paired; a pair that
// would make a loop or a double edge is retried against a random later stub, and the few
// stubs left unpaired at the end are dropped (degrees then differ by one at a handful of
// nodes).
inline Graph RandomRegular(size_t n, unsigned degree, std::mt19937_64* rng) {
  Graph g(n);
  std::vector<uint32_t> stubs;
  for (uint32_t v = 0; v < n; ++v) stubs.insert(stubs.end(), degree, v);
  std::shuffle(stubs.begin(), stubs.end(), *rng);
  for (size_t i = 0; i + 1 < stubs.size(); i += 2) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      const uint32_t a = stubs[i], b = stubs[i + 1];
      if (a != b && !HasEdge(g, a, b)) {
        AddEdge(&g, a, b);
        break;
      }
      std::uniform_int_distribution<size_t> pick(i + 1, stubs.size() - 1);
      std::swap(stubs[i + 1], stubs[pick(*rng)]);
    }
  }
  return g;
}

// Barabasi-Albert preferential attachment: each new node links to degree / 2 distinct nodes
// picked with probability proportional to their degree.
inline Graph ScaleFree(size_t n, unsigned degree, std::mt19937_64* rng) {
  const uint32_t m = std::max(1u, degree / 2);
  Graph g(n);
  std::vector<uint32_t> ends;  // every edge end once: a degree-weighted urn
  for (uint32_t a = 0; a <= m && a < n; ++a) {
    for (uint32_t b = 0; b < a; ++b) {
      AddEdge(&g, a, b);
      ends.push_back(a);
      ends.push_back(b);
    }
  }
  for (uint32_t v = m + 1; v < n; ++v) {
    std::vector<uint32_t> targets;
    while (targets.size() < m) {
      std::uniform_int_distribution<size_t> pick(0, ends.size() - 1);
      const uint32_t t = ends[pick(*rng)];
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    }
    for (uint32_t t : targets) {
      AddEdge(&g, v, t);
      ends.push_back(v);
      ends.push_back(t);
    }
  }
  return g;
}

inline Graph MakeGraph(Topology t, size_t n, unsigned degree, std::mt19937_64* rng) {
  Graph g(n);
  switch (t) {
    case Topology::kRing:
      for (uint32_t v = 0; v < n && n > 1; ++v) AddEdge(&g, v, static_cast<uint32_t>((v + 1) % n));
      return g;
    case Topology::kGrid: {
      const auto side = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(n))));
      for (uint32_t v = 0; v < n; ++v) {
        if ((v + 1) % side != 0 && v + 1 < n) AddEdge(&g, v, v + 1);
        if (v + side < n) AddEdge(&g, v, v + side);
      }
      return g;
    }
    case Topology::kRandomRegular:
      return RandomRegular(n, degree, rng);
    case Topology::kScaleFree:
      return ScaleFree(n, degree, rng);
  }
  return g;
}

// Hop distances from `from` over the nodes with alive[v] (max: unreachable).
inline std::vector<uint32_t> Distances(const Graph& g, const std::vector<bool>& alive,
                                       uint32_t from) {
  std::vector<uint32_t> dist(g.size(), std::numeric_limits<uint32_t>::max());
  std::vector<uint32_t> queue{from};
  dist[from] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    for (uint32_t w : g[queue[i]]) {
      if (alive[w] && dist[w] == std::numeric_limits<uint32_t>::max()) {
        dist[w] = dist[queue[i]] + 1;
        queue.push_back(w);
      }
    }
  }
  return dist;
}

struct Config {
  Topology topology = Topology::kRandomRegular;
  size_t nodes = 1000;
  unsigned degree = 6;      // random regular and scale-free
  double failed = 0.10;     // share of nodes failed before the first broadcast
  size_t detect_after = 2;  // broadcasts before neighbours see the failures as link-down
  double loss = 0.05;       // each packet (any kind) is lost with this probability
  size_t broadcasts = 20;
  size_t warmup = 5;       // broadcasts before "steady state" figures are taken
  uint32_t hop_limit = 0;  // 0: 1.5 x the eccentricity of node 0, plus 2
  double fp_rate = 0.01;
  size_t payload_bytes = 100;
  uint64_t tick_ms = 50;
  uint64_t seed = 1;
  bool baselines = true;
  RelayOptions relay;  // node_id, hop_limit, filter_fp_rate and flow are set per node
};

struct Result {
  size_t live = 0;
  uint32_t hop_limit = 0;
  size_t filter_bytes = 0;  // visited filter per DATA packet
  size_t packet_bytes = 0;  // a whole DATA packet with the payload
  uint64_t reachable = 0;   // sum over broadcasts of live nodes reachable from the origin
  uint64_t delivered = 0;   // sum over broadcasts of live nodes that delivered it
  uint64_t duplicate_deliveries = 0;
  double steady_payloads = 0;       // payload transmissions per broadcast after warmup
  double all_payloads = 0;          // ... over all broadcasts
  double steady_control = 0;        // IHAVE + GRAFT + PRUNE packets per broadcast after warmup
  double steady_announcements = 0;  // IHAVE entries per broadcast after warmup
  double grafts = 0;                // GRAFT entries per broadcast
  uint32_t max_last_hops = 0;       // hops of the last delivery, worst broadcast
  double mean_last_hops = 0;
  double mean_last_ms = 0;    // time to the last delivery
  uint64_t filter_skips = 0;  // eager pushes the filter turned into announcements
  RelayStats totals;
  // Baselines.
  double flood_payloads = 0;  // flooding with a seen set, per broadcast
  double flood_delivery = 0;
  uint32_t flood_last_hops = 0;
  double hop_flood_payloads = 0;  // flooding bounded by the hop limit only (one origin)
  double hop_flood_delivery = 0;
  // Visited filter alone, no repair, no loss: deliveries lost to false positives.
  uint64_t filter_only_bloom = 0;  // nodes reached with the Bloom filter
  uint64_t filter_only_exact = 0;  // nodes reached with the exact path
  uint64_t filter_probes = 0;      // (node, neighbour off the path) tests
  uint64_t filter_false_hits = 0;  // of which the filter named the neighbour
  double delivery() const {
    return reachable == 0 ? 1.0 : static_cast<double>(delivered) / static_cast<double>(reachable);
  }
};

inline std::string NodeName(uint32_t v) { return "n" + std::to_string(v); }

class Simulator {
 public:
  explicit Simulator(const Config& config)
      : config_(config),
        rng_(config.seed),
        graph_(MakeGraph(config.topology, config.nodes, config.degree, &rng_)) {
    alive_.assign(config.nodes, true);
    std::vector<uint32_t> order(config.nodes);
    for (uint32_t v = 0; v < config.nodes; ++v) order[v] = v;
    std::shuffle(order.begin(), order.end(), rng_);
    const auto failures = static_cast<size_t>(config.failed * static_cast<double>(config.nodes));
    for (size_t i = 0; i < failures; ++i) alive_[order[i]] = false;
    hop_limit_ = config.hop_limit;
    if (hop_limit_ == 0) {
      std::vector<bool> all(config.nodes, true);
      uint32_t ecc = 0;
      for (uint32_t d : Distances(graph_, all, 0)) {
        if (d != std::numeric_limits<uint32_t>::max()) ecc = std::max(ecc, d);
      }
      hop_limit_ = std::min<uint32_t>(3 * ecc + 2, kMaxRelayHopLimit);
    }
    for (uint32_t v = 0; v < config.nodes; ++v) {
      RelayOptions o = config.relay;
      o.node_id = NodeName(v);
      o.hop_limit = hop_limit_;
      o.filter_fp_rate = config.fp_rate;
      o.flow.max_per_window = 0;
      nodes_.push_back(std::make_unique<RelayNode>(o));
      std::vector<std::string> links;
      for (uint32_t w : graph_[v]) links.push_back(NodeName(w));
      nodes_.back()->SetLinks(links);
    }
  }

  Result Run() {
    Result r;
    r.hop_limit = hop_limit_;
    r.filter_bytes = nodes_[0]->filter_size().bytes;
    for (bool a : alive_) r.live += a;
    std::vector<uint32_t> live;
    for (uint32_t v = 0; v < alive_.size(); ++v) {
      if (alive_[v]) live.push_back(v);
    }
    std::uniform_int_distribution<size_t> pick(0, live.size() - 1);
    uint64_t steady_payloads = 0, steady_control = 0, steady_ann = 0, all_payloads = 0;
    uint64_t last_hops_sum = 0, last_ms_sum = 0;
    const std::string payload(config_.payload_bytes, 'p');
    for (size_t b = 0; b < config_.broadcasts; ++b) {
      if (b == config_.detect_after) DetectFailures();
      const uint32_t origin = live[pick(rng_)];
      const Counters before = counters_;
      const RelayStats stats_before = Totals();
      Broadcast run = RunBroadcast(origin, payload);
      const std::vector<uint32_t> dist = Distances(graph_, alive_, origin);
      for (uint32_t v : live) {
        if (dist[v] == std::numeric_limits<uint32_t>::max()) continue;
        ++r.reachable;
        r.delivered += run.deliveries[v] > 0;
        r.duplicate_deliveries += run.deliveries[v] > 1 ? run.deliveries[v] - 1 : 0;
      }
      r.max_last_hops = std::max(r.max_last_hops, run.last_hops);
      last_hops_sum += run.last_hops;
      last_ms_sum += run.last_ms;
      const uint64_t payloads = counters_.payloads - before.payloads;
      all_payloads += payloads;
      if (b >= config_.warmup) {
        steady_payloads += payloads;
        steady_control += counters_.control - before.control;
        steady_ann += Totals().announcements_sent - stats_before.announcements_sent;
      }
      if (config_.baselines) Baselines(origin, dist, &r);
    }
    const double n = static_cast<double>(config_.broadcasts);
    const double steady = static_cast<double>(config_.broadcasts - config_.warmup);
    r.all_payloads = static_cast<double>(all_payloads) / n;
    r.steady_payloads = static_cast<double>(steady_payloads) / steady;
    r.steady_control = static_cast<double>(steady_control) / steady;
    r.steady_announcements = static_cast<double>(steady_ann) / steady;
    r.mean_last_hops = static_cast<double>(last_hops_sum) / n;
    r.mean_last_ms = static_cast<double>(last_ms_sum) / n;
    r.totals = Totals();
    r.grafts = static_cast<double>(r.totals.grafts_sent) / n;
    r.filter_skips = r.totals.filter_skips;
    r.packet_bytes = data_packet_bytes_;
    if (config_.baselines) {
      r.flood_payloads /= n;
      r.flood_delivery /= static_cast<double>(std::max<uint64_t>(r.reachable, 1));
      HopFlood(live[0], &r);
    }
    return r;
  }

  const Graph& graph() const { return graph_; }

 private:
  struct Event {
    uint64_t t_us;
    uint64_t seq;
    uint32_t to;
    uint32_t from;
    std::string bytes;
    bool operator>(const Event& o) const { return t_us != o.t_us ? t_us > o.t_us : seq > o.seq; }
  };
  struct Counters {
    uint64_t payloads = 0;
    uint64_t control = 0;
  };
  struct Broadcast {
    std::vector<uint32_t> deliveries;
    uint32_t last_hops = 0;
    uint64_t last_ms = 0;
  };

  RelayStats Totals() const {
    RelayStats t;
    for (const auto& n : nodes_) {
      const RelayStats& s = n->stats();
      t.delivered += s.delivered;
      t.duplicates += s.duplicates;
      t.filter_skips += s.filter_skips;
      t.filter_resets += s.filter_resets;
      t.grafts_sent += s.grafts_sent;
      t.grafts_served += s.grafts_served;
      t.grafts_missed += s.grafts_missed;
      t.gave_up += s.gave_up;
      t.prunes_sent += s.prunes_sent;
      t.announcements_sent += s.announcements_sent;
      t.hop_limited += s.hop_limited;
      t.malformed += s.malformed;
    }
    return t;
  }

  // Neighbours learn of the failures (their transport would, by heartbeats).
  void DetectFailures() {
    for (uint32_t v = 0; v < alive_.size(); ++v) {
      if (alive_[v]) continue;
      for (uint32_t w : graph_[v]) nodes_[w]->SetLinkUp(NodeName(v), false);
    }
  }

  void Collect(uint32_t v, Broadcast* run) {
    for (RelaySend& s : nodes_[v]->TakeSends()) {
      if (s.kind == RelayKind::kData) {
        ++counters_.payloads;
        data_packet_bytes_ = s.packet.size();
      } else {
        ++counters_.control;
      }
      const auto to = static_cast<uint32_t>(std::stoul(s.to.substr(1)));
      if (!alive_[to] || loss_(rng_) < config_.loss) continue;
      const uint64_t latency_us = 5000 + latency_(rng_);
      queue_.push({now_us_ + latency_us, seq_++, to, v, std::move(s.packet)});
    }
    for (const RelayDelivery& d : nodes_[v]->TakeDeliveries()) {
      ++run->deliveries[v];
      if (now_us_ / 1000 >= run->last_ms) {
        run->last_ms = now_us_ / 1000;
        run->last_hops = std::max(run->last_hops, d.hops);
      }
    }
    busy_.insert(v);
  }

  Broadcast RunBroadcast(uint32_t origin, const std::string& payload) {
    Broadcast run;
    run.deliveries.assign(nodes_.size(), 0);
    const uint64_t start_ms = now_us_ / 1000;
    (void)nodes_[origin]->Broadcast(payload, now_us_ / 1000);
    Collect(origin, &run);
    const uint64_t tick_us = config_.tick_ms * 1000;
    while (!queue_.empty() || !busy_.empty()) {
      const uint64_t next_tick = (now_us_ / tick_us + 1) * tick_us;
      while (!queue_.empty() && queue_.top().t_us <= next_tick) {
        Event e = queue_.top();
        queue_.pop();
        now_us_ = e.t_us;
        nodes_[e.to]->OnPacket(NodeName(e.from), e.bytes, now_us_ / 1000);
        Collect(e.to, &run);
      }
      now_us_ = next_tick;
      std::vector<uint32_t> busy(busy_.begin(), busy_.end());
      std::sort(busy.begin(), busy.end());  // deterministic order
      busy_.clear();
      for (uint32_t v : busy) {
        nodes_[v]->OnTick(now_us_ / 1000);
        Collect(v, &run);
        if (nodes_[v]->Idle()) busy_.erase(v);
      }
    }
    run.last_ms -= std::min(run.last_ms, start_ms);
    now_us_ += 1000 * 1000;  // a second between broadcasts
    return run;
  }

  // Flooding with a seen set: each live node pushes its first copy to every neighbour but the
  // one it came from, with the same latency and loss.
  void Baselines(uint32_t origin, const std::vector<uint32_t>& dist, Result* r) {
    std::vector<uint8_t> got(nodes_.size(), 0);
    std::vector<uint32_t> hops(nodes_.size(), 0);
    using Item = std::tuple<uint64_t, uint32_t, uint32_t, uint32_t>;  // t, to, from, hops
    std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
    q.emplace(0, origin, origin, 0);
    uint64_t sends = 0;
    while (!q.empty()) {
      auto [t, v, from, h] = q.top();
      q.pop();
      if (got[v]) continue;
      got[v] = 1;
      hops[v] = h;
      for (uint32_t w : graph_[v]) {
        if (w == from && v != origin) continue;
        ++sends;
        if (!alive_[w] || loss_(rng_) < config_.loss) continue;
        q.emplace(t + 5000 + latency_(rng_), w, v, h + 1);
      }
    }
    r->flood_payloads += static_cast<double>(sends);
    for (uint32_t v = 0; v < nodes_.size(); ++v) {
      if (!alive_[v] || dist[v] == std::numeric_limits<uint32_t>::max()) continue;
      r->flood_delivery += got[v];
      if (got[v]) r->flood_last_hops = std::max(r->flood_last_hops, hops[v]);
    }
    FilterOnly(origin, true, &r->filter_only_bloom, r);
    FilterOnly(origin, false, &r->filter_only_exact, nullptr);
  }

  // Flooding that relies on the visited filter alone (breadth first, no loss): a node pushes
  // its first copy to each neighbour the filter does not name. With exact = !bloom the filter
  // is the path itself. Counts the nodes reached; with `r`, also the filter's false hits.
  void FilterOnly(uint32_t origin, bool bloom, uint64_t* reached, Result* r) {
    const SipKey key{};
    const IndexHasher hasher(key);
    const VisitedFilterSize size = nodes_[0]->filter_size();
    const uint64_t salt = VisitedFilterSalt(key, NodeName(origin), ++filter_only_id_);
    std::vector<int64_t> parent(nodes_.size(), -2);
    std::vector<std::string> filter(nodes_.size());
    std::vector<uint32_t> depth(nodes_.size(), 0);
    std::vector<uint32_t> queue{origin};
    parent[origin] = -1;
    filter[origin].assign(size.bytes, '\0');
    VisitedFilterAdd(hasher.Hash(NodeName(origin)), salt, size.k, &filter[origin]);
    auto on_path = [&](uint32_t v, uint32_t w) {
      for (int64_t u = v; u >= 0; u = parent[u]) {
        if (u == w) return true;
      }
      return false;
    };
    for (size_t i = 0; i < queue.size(); ++i) {
      const uint32_t v = queue[i];
      ++*reached;
      if (depth[v] >= hop_limit_) continue;
      for (uint32_t w : graph_[v]) {
        if (!alive_[w] || static_cast<int64_t>(w) == parent[v]) continue;
        const bool truly = on_path(v, w);
        const bool named =
            bloom ? VisitedFilterMayContain(hasher.Hash(NodeName(w)), salt, size.k, filter[v])
                  : truly;
        if (r != nullptr && !truly) {
          ++r->filter_probes;
          r->filter_false_hits += named;
        }
        if (named || parent[w] != -2) continue;
        parent[w] = v;
        depth[w] = depth[v] + 1;
        filter[w] = filter[v];
        VisitedFilterAdd(hasher.Hash(NodeName(w)), salt, size.k, &filter[w]);
        queue.push_back(w);
      }
    }
  }

  // Flooding bounded only by the hop limit: copies on each directed link per hop, counted
  // in expectation (loss thins every step), capped where doubles overflow.
  void HopFlood(uint32_t origin, Result* r) {
    const size_t n = graph_.size();
    // Directed edges: for node v, edge index offset[v] + i is v -> graph_[v][i].
    std::vector<size_t> offset(n + 1, 0);
    for (size_t v = 0; v < n; ++v) offset[v + 1] = offset[v] + graph_[v].size();
    std::vector<double> cur(offset[n], 0), next(offset[n], 0);
    std::vector<double> arrived(n, 0);
    double sends = 0;
    const double keep = 1 - config_.loss;
    for (size_t i = 0; i < graph_[origin].size(); ++i) cur[offset[origin] + i] = 1;
    for (uint32_t h = 1; h <= hop_limit_ && sends < 1e300; ++h) {
      std::fill(next.begin(), next.end(), 0);
      double moving = 0;
      for (uint32_t v = 0; v < n; ++v) {
        for (size_t i = 0; i < graph_[v].size(); ++i) {
          const double c = cur[offset[v] + i];
          if (c == 0) continue;
          sends += c;
          const uint32_t w = graph_[v][i];
          if (!alive_[w]) continue;
          arrived[w] += c * keep;
          if (h == hop_limit_) continue;
          for (size_t j = 0; j < graph_[w].size(); ++j) {
            if (graph_[w][j] == v) continue;
            next[offset[w] + j] += c * keep;
            moving += c * keep;
          }
        }
      }
      std::swap(cur, next);
      if (moving == 0) break;
    }
    r->hop_flood_payloads = sends;
    const std::vector<uint32_t> dist = Distances(graph_, alive_, origin);
    double reachable = 0, reached = 0;
    for (uint32_t v = 0; v < n; ++v) {
      if (!alive_[v] || dist[v] == std::numeric_limits<uint32_t>::max() || v == origin) continue;
      ++reachable;
      reached += arrived[v] > 0;
    }
    r->hop_flood_delivery = reachable == 0 ? 1 : (reached + 0) / reachable;
  }

  Config config_;
  std::mt19937_64 rng_;
  Graph graph_;
  std::vector<bool> alive_;
  uint32_t hop_limit_ = 0;
  std::vector<std::unique_ptr<RelayNode>> nodes_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::unordered_set<uint32_t> busy_;
  uint64_t now_us_ = 1000000;
  uint64_t seq_ = 0;
  uint64_t filter_only_id_ = 0;
  size_t data_packet_bytes_ = 0;
  Counters counters_;
  std::uniform_real_distribution<double> loss_{0.0, 1.0};
  std::uniform_int_distribution<uint64_t> latency_{0, 10000};
};

}  // namespace peerbloom::relay_sim

#endif  // PEERBLOOM_TESTS_SUPPORT_RELAY_SIM_H_
