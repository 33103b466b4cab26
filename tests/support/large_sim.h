// A large simulated cluster under churn (sim_cluster.h: the real GossipEngines, no sockets),
// shared by bench/gossip_sim_bench.cc and tests/unit/gossip/large_cluster_test.cc.
//
// The scenario: `nodes` nodes, every one listing the same `seeds` seed nodes, join over the
// first `join_spread_s` seconds; then, for `warmup_s` + `measure_s` seconds, every node
// replaces one of its keys every `publish_every_s` seconds (staggered) and publishes (and
// flushes, as the daemon does with every publication: docs/config.md, publish_batch), the
// network loses `drop` of all frames, and every `churn_every_ms` one churn event hits a
// random non-seed node, in turn: a failure (it falls silent for good), a restart in a new
// epoch from its content (a clean stop and start), a new node joining through the seeds.
// During the measure window an add is published at a random live node every
// `add_every_ms`, and timed until every node that was live when it was published (and stays
// live, without restarting) lists it in who-has. At the end the churn stops, the cluster
// settles, and sampled keys of every live node are checked at every other live node.
//
// Bytes are everything a node sends (frame headers included), per second of the measure
// window, for the nodes up through all of it.
#ifndef PEERBLOOM_TESTS_SUPPORT_LARGE_SIM_H_
#define PEERBLOOM_TESTS_SUPPORT_LARGE_SIM_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/sim_cluster.h"

namespace peerbloom::sim {

struct LargeSimOptions {
  int nodes = 1000;
  int seeds = 3;               // node0 .. node{seeds-1}, listed by every node
  uint64_t keys = 100;         // per node
  unsigned log2_counters = 9;  // counting filter size (summary 2^10 bits at least)
  double drop = 0.05;
  uint64_t net_seed = 1;
  int64_t join_spread_s = 5;
  int64_t warmup_s = 15;
  int64_t measure_s = 30;
  int64_t publish_every_s = 5;
  int64_t churn_every_ms = 2000;  // 0: no churn
  int64_t add_every_ms = 1000;
  int64_t settle_limit_s = 120;
  int samples_per_node = 5;  // keys checked per live node at the end
  FailureDetector detector = FailureDetector::kHeartbeat;
  int64_t probe_interval_ms = 0;  // 0: the default (GossipOptions::probe_interval_ms)
  // Prints, for each node that lists an add only after this many intervals, the frames it
  // sent and received about the add's origin while it waited (0: no trace).
  double trace_slower_than = 0;
};

struct Distribution {
  double median = 0, p99 = 0, max = 0, mean = 0;
  size_t count = 0;
};

struct LargeSimResult {
  int nodes_total = 0;  // including joiners
  int live_at_end = 0;
  // Totals of the engines up at the end (restarted ones count from their restart).
  uint64_t links_quiet = 0, grafts = 0, prunes = 0, cuts_told = 0, resyncs = 0, tail_marks = 0;
  int failures = 0, restarts = 0, joins = 0;
  double join_s = -1;                 // all initial nodes hold every summary (versions)
  Distribution bytes_per_s;           // non-seed nodes up through the window
  Distribution seed_bytes_per_s;      // seeds
  double busiest_over_median = 0;     // any node (seeds included) / non-seed median
  double seed_over_median = 0;        // busiest seed / non-seed median
  std::string busiest;                // its id
  double by_type[16] = {};            // bytes/s per node by WireType, all nodes in the window
  double frames_by_type[16] = {};     // frames/s per node, likewise
  std::vector<double> add_intervals;  // sorted, in gossip intervals
  int adds = 0, adds_converged = 0;
  bool settled = false;
  size_t checks = 0, false_negatives = 0;
  // (observer, node) pairs where a node up through the window was held dead, sampled every
  // 5 s of the window.
  size_t false_deaths = 0;
  double wall_s = 0;
};

inline Distribution Summarize(std::vector<double> v) {
  Distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.median = v[v.size() / 2];
  d.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  d.max = v.back();
  for (double x : v) d.mean += x / static_cast<double>(v.size());
  return d;
}

class LargeSim {
 public:
  explicit LargeSim(LargeSimOptions o) : o_(o), c_(Net(o), Base(o)), rng_(o.net_seed * 7919 + 1) {
    if (o_.trace_slower_than > 0) {
      c_.SetFilter([this](const Frame& f) {
        Trace(f, false);
        return false;
      });
      c_.SetDeliverHook([this](const Frame& f) { Trace(f, true); });
    }
  }

  LargeSimResult Run() {
    LargeSimResult r;
    const int64_t interval = c_.DefaultOptions().gossip_interval_ms;
    Join(interval, &r);
    WindowStart w;
    RunChurn(interval, &w, &r);
    MeasureLoads(w, &r);
    // Settle and check.
    r.settled = c_.RunUntilTrue([&] { return VersionsEverywhere(); },
                                c_.now() + o_.settle_limit_s * 1000, 500);
    r.false_negatives = SampledFalseNegatives(&r.checks);
    r.nodes_total = static_cast<int>(c_.size());
    for (size_t i = 0; i < c_.size(); ++i) {
      if (!c_.node(static_cast<int>(i)).up) continue;
      ++r.live_at_end;
      const GossipStats& st = c_.engine(static_cast<int>(i)).stats();
      r.links_quiet += st.links_quiet;
      r.grafts += st.grafts;
      r.prunes += st.prunes;
      r.cuts_told += st.cuts_told;
      r.tail_marks += st.tail_marks;
      r.resyncs += st.resyncs_requested;
    }
    return r;
  }

  SimCluster& cluster() { return c_; }

 private:
  struct Window {
    uint64_t lo = 0, hi = 0;  // the node holds key ids [lo, hi)
  };
  struct Trial {
    int holder = 0;
    KeyHash key;
    int64_t t0 = 0;
    uint64_t version = 0;
    std::vector<int> waiting;                     // nodes not listing it yet
    std::map<int, std::vector<std::string>> log;  // by waiting node (trace_slower_than)
    std::map<std::pair<int, int>, bool> peers;    // (waiting, sender): next frame seen
  };

  // The measured window's baseline: each node's bytes sent when it opened (bytes by type go
  // to types0_), and the nodes down at any moment of it, whose rates are not counted.
  struct WindowStart {
    std::vector<uint64_t> bytes0;
    std::set<int> down;
  };

  // Join: node i starts at a moment spread over join_spread_s.
  void Join(int64_t interval, LargeSimResult* r) {
    for (int i = 0; i < o_.nodes; ++i) {
      const int64_t at = o_.join_spread_s * 1000 * i / std::max(1, o_.nodes);
      if (at > c_.now()) c_.RunUntil(at);
      Add();
    }
    const int64_t join_start = 0;
    if (c_.RunUntilTrue([&] { return VersionsEverywhere(); }, c_.now() + 120 * interval, 500)) {
      r->join_s = static_cast<double>(c_.now() - join_start) / 1000.0;
    }
  }

  void OpenWindow(WindowStart* w) {
    for (size_t i = 0; i < c_.size(); ++i) {
      const SimNode& n = c_.node(static_cast<int>(i));
      w->bytes0.push_back(n.bytes_sent);
      types0_.emplace_back(n.bytes_by_type, n.bytes_by_type + 16);
      frames0_.emplace_back(n.frames_by_type, n.frames_by_type + 16);
    }
    for (size_t i = 0; i < c_.size(); ++i) {
      if (!c_.node(static_cast<int>(i)).up) w->down.insert(static_cast<int>(i));
    }
  }

  // Warm-up, then the measured window; churn and key changes throughout, adds timed in the
  // window until they converge (or clearly never will).
  void RunChurn(int64_t interval, WindowStart* w, LargeSimResult* r) {
    const int64_t start = c_.now();
    const int64_t window_start = start + o_.warmup_s * 1000;
    const int64_t end = window_start + o_.measure_s * 1000;
    int64_t next_churn = start + o_.churn_every_ms;
    int64_t next_add = window_start + static_cast<int64_t>(rng_() % o_.add_every_ms);
    int64_t next_second = start;
    int churn_kind = 0;
    bool window_open = false;
    int64_t next_death_sample = window_start + 5000;
    std::set<std::pair<int, int>> false_deaths;
    while (c_.now() < end || !trials_.empty()) {
      const int64_t now = c_.now();
      if (!window_open && now >= window_start) {
        window_open = true;
        OpenWindow(w);
      }
      if (now < end && now >= next_second) {
        ChangeKeys((now - start) / 1000);
        next_second += 1000;
      }
      if (now < end && o_.churn_every_ms > 0 && now >= next_churn) {
        const int hit = Churn(churn_kind++ % 3, r);
        if (window_open && hit >= 0) w->down.insert(hit);
        next_churn += o_.churn_every_ms;
      }
      if (window_open && now < end && now >= next_add) {
        StartTrial();
        ++r->adds;
        next_add += o_.add_every_ms;
      }
      c_.RunFor(10);
      CheckTrials(interval, r);
      if (window_open && now <= end && now >= next_death_sample) {
        SampleDeaths(*w, &false_deaths);
        next_death_sample += 5000;
      }
      if (c_.now() > end + 60 * interval) break;  // trials that never converge
    }
    r->false_deaths = false_deaths.size();
    r->adds_converged = r->adds - static_cast<int>(trials_.size());
    std::sort(r->add_intervals.begin(), r->add_intervals.end());
  }

  // Loads over the window, of the nodes up throughout it.
  void MeasureLoads(const WindowStart& w, LargeSimResult* r) {
    std::vector<double> rates, seed_rates;
    std::vector<std::pair<double, int>> all;
    for (size_t i = 0; i < w.bytes0.size(); ++i) {
      const int n = static_cast<int>(i);
      if (w.down.count(n) != 0 || !c_.node(n).up) continue;
      const double rate = static_cast<double>(c_.node(n).bytes_sent - w.bytes0[i]) /
                          static_cast<double>(o_.measure_s);
      (n < o_.seeds ? seed_rates : rates).push_back(rate);
      all.emplace_back(rate, n);
      for (int t = 0; t < 16; ++t) {
        r->by_type[t] += static_cast<double>(c_.node(n).bytes_by_type[t] - types0_[i][t]);
        r->frames_by_type[t] += static_cast<double>(c_.node(n).frames_by_type[t] - frames0_[i][t]);
      }
    }
    for (int t = 0; t < 16; ++t) {
      const double per =
          all.empty() ? 0
                      : 1.0 / static_cast<double>(all.size()) / static_cast<double>(o_.measure_s);
      r->by_type[t] *= per;
      r->frames_by_type[t] *= per;
    }
    r->bytes_per_s = Summarize(rates);
    r->seed_bytes_per_s = Summarize(seed_rates);
    if (!all.empty() && r->bytes_per_s.median > 0) {
      const auto busiest = *std::max_element(all.begin(), all.end());
      r->busiest_over_median = busiest.first / r->bytes_per_s.median;
      r->busiest = c_.node(busiest.second).spec.id;
      r->seed_over_median = r->seed_bytes_per_s.max / r->bytes_per_s.median;
    }
  }
  static GossipOptions Base(const LargeSimOptions& o) {
    GossipOptions g = SimCluster::DefaultOptions();
    g.failure_detector = o.detector;
    g.probe_interval_ms = o.probe_interval_ms;
    return g;
  }

  // Pairs (observer, node) where a node up through the window is held dead.
  void SampleDeaths(const WindowStart& w, std::set<std::pair<int, int>>* seen) {
    std::map<std::string, int> index;
    for (size_t i = 0; i < c_.size(); ++i)
      index[c_.node(static_cast<int>(i)).spec.id] = static_cast<int>(i);
    for (size_t a = 0; a < c_.size(); ++a) {
      const int at = static_cast<int>(a);
      if (!c_.node(at).up || w.down.count(at) != 0) continue;
      for (const PeerInfo& p : c_.engine(at).Peers(c_.now())) {
        if (p.alive) continue;
        auto it = index.find(p.node_id);
        if (it == index.end() || !c_.node(it->second).up || w.down.count(it->second) != 0) continue;
        if (seen->emplace(at, it->second).second && o_.trace_slower_than > 0) TraceDeath(at, p);
      }
    }
  }

  // A false death (trace_slower_than set): what the node holds of the member, and what the
  // rest of the cluster holds of it.
  void TraceDeath(int at, const PeerInfo& held) {
    size_t alive = 0, dead = 0;
    uint64_t epoch = 0, beat = 0;
    for (size_t b = 0; b < c_.size(); ++b) {
      const int other = static_cast<int>(b);
      if (!c_.node(other).up || other == at) continue;
      for (const PeerInfo& p : c_.engine(other).Peers(c_.now())) {
        if (p.node_id != held.node_id) continue;
        ++(p.alive ? alive : dead);
        if (std::make_pair(p.epoch, p.heartbeat) > std::make_pair(epoch, beat)) {
          epoch = p.epoch;
          beat = p.heartbeat;
        }
      }
    }
    std::printf(
        "  trace: node%d holds %s dead at %.1f s: epoch %llu heartbeat %llu, last heard %.1f s "
        "ago; elsewhere alive at %zu, dead at %zu, newest epoch %llu heartbeat %llu\n",
        at, held.node_id.c_str(), static_cast<double>(c_.now()) / 1000.0,
        static_cast<unsigned long long>(held.epoch),
        static_cast<unsigned long long>(held.heartbeat),
        static_cast<double>(c_.now() - held.last_heard_ms) / 1000.0, alive, dead,
        static_cast<unsigned long long>(epoch), static_cast<unsigned long long>(beat));
  }

  static NetOptions Net(const LargeSimOptions& o) {
    NetOptions n;
    n.seed = o.net_seed;
    n.drop = o.drop;
    return n;
  }

  int Add() {
    NodeSpec s;
    const int i = static_cast<int>(c_.size());
    s.id = "node" + std::to_string(i);
    for (int j = 0; j < o_.seeds; ++j) {
      if (j != i) s.seeds.push_back("node" + std::to_string(j));
    }
    s.log2_counters = o_.log2_counters;
    s.k = 2;
    const int n = c_.AddNode(s);
    windows_.push_back(Window{});
    epochs_.push_back(1);
    for (; windows_[n].hi < o_.keys; ++windows_[n].hi) c_.AddHash(n, NodeKey(n, windows_[n].hi));
    c_.Publish(n);
    return n;
  }

  void ChangeKeys(int64_t second) {
    for (size_t i = 0; i < c_.size(); ++i) {
      const int n = static_cast<int>(i);
      if (!c_.node(n).up || (second + n) % o_.publish_every_s != 0) continue;
      if (InTrial(n)) continue;  // a trial's holder publishes its add alone
      (void)c_.RemoveHash(n, NodeKey(n, windows_[n].lo++));
      c_.AddHash(n, NodeKey(n, windows_[n].hi++));
      c_.Publish(n);
      c_.Flush(n);
    }
  }

  bool InTrial(int n) const {
    return std::any_of(trials_.begin(), trials_.end(),
                       [&](const Trial& t) { return t.holder == n; });
  }

  // A random live non-seed node that holds no pending trial, or -1.
  int Victim() {
    for (int tries = 0; tries < 100; ++tries) {
      const int n = o_.seeds + static_cast<int>(rng_() % (c_.size() - o_.seeds));
      if (c_.node(n).up && !InTrial(n)) return n;
    }
    return -1;
  }

  // Returns the node that went down or restarted, or -1.
  int Churn(int kind, LargeSimResult* r) {
    if (kind == 2) {
      if (c_.size() + 1 >= SimCluster::DefaultOptions().max_members) return -1;
      Add();
      ++r->joins;
      return -1;
    }
    const int n = Victim();
    if (n < 0) return -1;
    if (kind == 0) {
      c_.node(n).up = false;
      ++r->failures;
    } else {
      c_.RestartFrom(n, ++epochs_[n], c_.Snapshot(n));
      ++r->restarts;
    }
    for (Trial& t : trials_) {
      t.waiting.erase(std::remove(t.waiting.begin(), t.waiting.end(), n), t.waiting.end());
    }
    return n;
  }

  void StartTrial() {
    const int holder = Victim();
    if (holder < 0) return;
    Trial t;
    t.holder = holder;
    t.key = NodeKey(holder, windows_[holder].hi++);
    c_.AddHash(holder, t.key);
    c_.Publish(holder);
    c_.Flush(holder);
    t.t0 = c_.now();
    t.version = c_.node(holder).builder->current().version;
    for (size_t i = 0; i < c_.size(); ++i) {
      if (static_cast<int>(i) != holder && c_.node(static_cast<int>(i)).up) {
        t.waiting.push_back(static_cast<int>(i));
      }
    }
    trials_.push_back(std::move(t));
  }

  void CheckTrials(int64_t interval, LargeSimResult* r) {
    for (auto it = trials_.begin(); it != trials_.end();) {
      Trial& t = *it;
      t.waiting.erase(std::remove_if(t.waiting.begin(), t.waiting.end(),
                                     [&](int n) {
                                       if (!c_.node(n).up) return true;
                                       if (!c_.WhoHasHash(n, "", t.key, t.holder)) return false;
                                       PrintTrace(t, n, interval);
                                       return true;
                                     }),
                      t.waiting.end());
      if (t.waiting.empty()) {
        r->add_intervals.push_back(static_cast<double>(c_.now() - t.t0) /
                                   static_cast<double>(interval));
        it = trials_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Every live node knows every other live node's current (epoch, version).
  bool VersionsEverywhere() {
    std::vector<int> live;
    for (size_t i = 0; i < c_.size(); ++i) {
      if (c_.node(static_cast<int>(i)).up) live.push_back(static_cast<int>(i));
    }
    for (int a : live) {
      size_t matching = 0;
      for (const PeerInfo& p : c_.engine(a).Peers(c_.now())) {
        const int o = Index(p.node_id);
        if (o < 0 || !c_.node(o).up) continue;
        const Summary& want = c_.node(o).builder->current();
        if (p.summary_epoch != want.epoch || p.version != want.version) return false;
        ++matching;
      }
      if (matching + 1 != live.size()) return false;
    }
    return true;
  }

  // Notes a frame sent (delivered = false) or delivered that is about a trial's origin and
  // to or from one of its waiting nodes.
  void Trace(const Frame& f, bool delivered) {
    for (Trial& t : trials_) {
      const bool to = std::find(t.waiting.begin(), t.waiting.end(), f.to) != t.waiting.end();
      const bool from = std::find(t.waiting.begin(), t.waiting.end(), f.from) != t.waiting.end();
      if (!to && !from) continue;
      const int waiting = to ? f.to : f.from;
      const int other = to ? f.from : f.to;
      const std::string& origin = c_.node(t.holder).spec.id;
      // Peers that sent the waiting node a frame about the origin: their marks and resends,
      // and the first numbered frame after, are noted too.
      auto peer = t.peers.find({waiting, other});
      const bool about = f.payload.find(origin) != std::string::npos;
      if (!about && peer == t.peers.end()) continue;
      WireFrame w;
      if (!DecodeFrame(f.payload, WireLimits(), &w).ok()) continue;
      std::string what;
      auto named = [&](const std::string& id, uint64_t v, const char* kind) {
        if (id == origin) what += std::string(kind) + " v" + std::to_string(v) + " ";
      };
      if (!about) {
        if (w.header.type == WireType::kResend) {
          what = "resend";
          for (uint64_t q : w.resend_seqs) what += " #" + std::to_string(q);
        } else if (w.header.type == WireType::kPrune && w.origins.empty()) {
          what = "tail mark #" + std::to_string(w.link_seq);
        } else if (w.link_seq != 0 && to && delivered && !peer->second) {
          what = "next frame #" + std::to_string(w.link_seq);
          peer->second = true;
        }
      }
      switch (w.header.type) {
        case WireType::kDelta:
        case WireType::kFullSummary: {
          MessageHeader h;
          if (PeekHeader(w.summary_bytes, DecodeLimits(), &h).ok() && h.origin == origin) {
            what = (w.header.type == WireType::kDelta ? "delta v" : "full v") +
                   std::to_string(h.version) + " #" + std::to_string(w.link_seq);
          }
          break;
        }
        case WireType::kDigest:
          for (const DigestEntry& e : w.digest.entries) {
            named(e.origin, e.has_summary ? e.version : 0, "digest");
          }
          break;
        case WireType::kProbe:
          for (const auto& v : w.probe.versions) named(v.origin, v.version, "probe");
          for (const auto& v : w.probe.relayed_versions) named(v.origin, v.version, "probe");
          break;
        case WireType::kRequestFull:
          for (const FullRequest& q : w.requests) named(q.origin, q.have_version, "request have");
          break;
        case WireType::kPrune:
        case WireType::kGraft:
          for (const std::string& o : w.origins) {
            named(o, 0, w.header.type == WireType::kPrune ? "prune" : "graft");
          }
          break;
        default:
          break;
      }
      if (what.empty()) continue;
      char line[256];
      std::snprintf(line, sizeof line, "    %+6.2f %s node%d %s: %s",
                    static_cast<double>(c_.now() - t.t0) / 1000.0, to ? "in  <-" : "out ->",
                    to ? f.from : f.to, delivered ? "arrived" : "sent   ", what.c_str());
      t.log[waiting].push_back(line);
      if (about && to && w.link_seq != 0) t.peers[{waiting, other}] = false;
    }
  }

  void PrintTrace(const Trial& t, int n, int64_t interval) {
    const double took = static_cast<double>(c_.now() - t.t0) / static_cast<double>(interval);
    if (o_.trace_slower_than <= 0 || took < o_.trace_slower_than) return;
    std::printf("  trace: node%d lists node%d v%llu after %.2f intervals\n", n, t.holder,
                static_cast<unsigned long long>(t.version), took);
    auto it = t.log.find(n);
    if (it != t.log.end()) {
      for (const std::string& line : it->second) std::printf("%s\n", line.c_str());
    }
  }

  static int Index(const std::string& id) {
    if (id.size() < 5 || id.compare(0, 4, "node") != 0) return -1;
    return std::stoi(id.substr(4));
  }

  size_t SampledFalseNegatives(size_t* checks) {
    size_t misses = 0;
    for (size_t h = 0; h < c_.size(); ++h) {
      const int holder = static_cast<int>(h);
      if (!c_.node(holder).up) continue;
      for (int s = 0; s < o_.samples_per_node; ++s) {
        const Window& w = windows_[holder];
        const KeyHash key = NodeKey(holder, w.lo + rng_() % (w.hi - w.lo));
        for (size_t a = 0; a < c_.size(); ++a) {
          const int at = static_cast<int>(a);
          if (at == holder || !c_.node(at).up) continue;
          ++*checks;
          if (!c_.WhoHasHash(at, "", key, holder)) ++misses;
        }
      }
    }
    return misses;
  }

  const LargeSimOptions o_;
  SimCluster c_;
  std::mt19937_64 rng_;
  std::vector<Window> windows_;
  std::vector<uint64_t> epochs_;
  std::vector<Trial> trials_;
  std::vector<std::vector<uint64_t>> types0_;   // bytes by type at the window's start
  std::vector<std::vector<uint64_t>> frames0_;  // frames by type at the window's start
};

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_TESTS_SUPPORT_LARGE_SIM_H_
