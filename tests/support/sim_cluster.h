// SimCluster: N GossipEngines on an in-memory network with a fake clock, for tests and
// bench/gossip_sim_bench.cc. Each node owns a counting filter and a SummaryBuilder, like the
// daemon. The network is event-driven: a frame sent at t arrives at t + latency (+ a seeded
// random jitter, which reorders), and may be dropped or duplicated with seeded probabilities;
// a filter hook can drop chosen frames. Nothing here reads a wall clock.
#ifndef PEERBLOOM_TESTS_SUPPORT_SIM_CLUSTER_H_
#define PEERBLOOM_TESTS_SUPPORT_SIM_CLUSTER_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lib/util/splitmix64.h"
#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/gossip.h"
#include "peerbloom/hash.h"
#include "peerbloom/summary.h"
#include "peerbloom/summary_builder.h"
#include "peerbloom/wire.h"
#include "tests/support/sim_loop.h"

namespace peerbloom::sim {

// Key `id` of node `node`: distinct keys for distinct (node, id) while id < 2^40, spread like
// hashes of real URLs.
inline KeyHash NodeKey(uint64_t node, uint64_t id) {
  const uint64_t a = SplitMix64((node << 40) ^ id);
  return KeyHash{a, SplitMix64(a)};
}

struct NetOptions {
  uint64_t seed = 1;
  int64_t latency_ms = 2;
  int64_t jitter_ms = 0;  // extra uniform delay in [0, jitter]: reorders frames
  double drop = 0.0;
  double duplicate = 0.0;
};

struct NodeSpec {
  std::string id;
  std::vector<std::string> seeds;  // ids of seed nodes (they may be added later)
  unsigned log2_counters = 14;
  unsigned k = 2;
  unsigned min_log2_bits = 10;
  uint64_t epoch = 1;
  double target_fpr = 0.01;
};

// A node's content as a snapshot keeps it: the counting filter's cells and item count, and
// the keys it stood for (the daemon writes one periodically and at a clean stop).
struct NodeSnapshot {
  std::string cells;
  uint64_t items = 0;
  std::multiset<std::string> keys;
};

struct SimNode {
  NodeSpec spec;
  GossipOptions options;
  std::unique_ptr<CountingBloomFilter> cbf;
  std::unique_ptr<SummaryBuilder> builder;
  std::unique_ptr<GossipEngine> engine;
  std::multiset<std::string> keys;
  bool up = true;
  bool muted = false;  // frames it sends are lost
  uint64_t bytes_sent = 0;
  uint64_t frames_sent = 0;
  uint64_t bytes_by_type[16] = {};   // by WireType number (byte 6 of the frame)
  uint64_t frames_by_type[16] = {};  // likewise
  std::set<std::string> sent_to;     // endpoints it ever sent a frame to
};

struct Frame {
  int64_t at = 0;
  uint64_t seq = 0;
  int from = 0;
  int to = 0;
  std::string payload;
  bool operator>(const Frame& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

class SimCluster {
 public:
  explicit SimCluster(NetOptions net = NetOptions(), GossipOptions base = DefaultOptions())
      : net_(net), base_(std::move(base)), rng_(net.seed) {}

  static GossipOptions DefaultOptions() {
    GossipOptions o;
    o.key_scheme = KeyScheme::kRaw;
    o.cluster_tag = ClusterTag("sim");
    return o;
  }
  static std::string Endpoint(const std::string& id) { return "sim://" + id; }

  // Adds a node; it starts at the next Run. Returns its index.
  int AddNode(NodeSpec spec) {
    auto node = std::make_unique<SimNode>();
    node->spec = std::move(spec);
    nodes_.push_back(std::move(node));
    by_endpoint_[Endpoint(nodes_.back()->spec.id)] = static_cast<int>(nodes_.size() - 1);
    by_id_[nodes_.back()->spec.id] = static_cast<int>(nodes_.size() - 1);
    Boot(static_cast<int>(nodes_.size() - 1));
    return static_cast<int>(nodes_.size() - 1);
  }

  // Starts a node afresh: new counting filter (restored from `from` when given), builder and
  // engine in epoch spec.epoch.
  void Boot(int i, const NodeSnapshot* from = nullptr) {
    SimNode& n = *nodes_[i];
    n.options = base_;
    n.options.node_id = n.spec.id;
    n.options.endpoint = Endpoint(n.spec.id);
    n.options.rng_seed = net_.seed * 1000003 + static_cast<uint64_t>(i);
    n.options.seeds.clear();
    for (const std::string& s : n.spec.seeds) n.options.seeds.push_back(Seed{Endpoint(s), ""});
    if (boot_hook_) boot_hook_(&n.options);
    n.cbf = std::make_unique<CountingBloomFilter>(n.spec.log2_counters, n.spec.k);
    n.keys.clear();
    if (from != nullptr) {
      if (!n.cbf->Restore(from->cells, from->items, 0, 0).ok()) std::abort();  // same geometry
      n.keys = from->keys;
    }
    SummaryBuilderOptions bo;
    bo.origin = n.spec.id;
    bo.epoch = n.spec.epoch;
    bo.key_scheme = n.options.key_scheme;
    bo.min_log2_bits = n.spec.min_log2_bits;
    bo.target_fpr = n.spec.target_fpr;
    n.builder = std::make_unique<SummaryBuilder>(n.cbf.get(), bo);
    n.engine = std::make_unique<GossipEngine>(n.options);
    n.up = true;
    Publish(i);
  }

  // Restarts node i in a new epoch with an empty cache.
  void Restart(int i, uint64_t new_epoch) {
    nodes_[i]->spec.epoch = new_epoch;
    Boot(i);
  }
  // Node i's content now, as a snapshot would keep it.
  NodeSnapshot Snapshot(int i) const {
    const SimNode& n = *nodes_[i];
    return NodeSnapshot{std::string(n.cbf->raw_cells()), n.cbf->items(), n.keys};
  }
  // Restarts node i in a new epoch from a snapshot, as the daemon restores one: the content
  // of the snapshot (what changed after it is lost), a fresh builder and engine.
  void RestartFrom(int i, uint64_t new_epoch, const NodeSnapshot& snapshot) {
    nodes_[i]->spec.epoch = new_epoch;
    Boot(i, &snapshot);
  }

  void AddKey(int i, const std::string& key) {
    SimNode& n = *nodes_[i];
    const KeyHash h = hasher_.Hash(key);
    n.cbf->Add(h);
    n.builder->Touch(h);
    n.keys.insert(key);
  }
  bool RemoveKey(int i, const std::string& key) {
    SimNode& n = *nodes_[i];
    auto it = n.keys.find(key);
    if (it == n.keys.end()) return false;
    const KeyHash h = hasher_.Hash(key);
    if (!n.cbf->Remove(h)) return false;
    n.builder->Touch(h);
    n.keys.erase(it);
    return true;
  }
  // Untracked variants for large key sets (benchmarks): the caller remembers its keys.
  void AddHash(int i, const KeyHash& h) {
    nodes_[i]->cbf->Add(h);
    nodes_[i]->builder->Touch(h);
  }
  bool RemoveHash(int i, const KeyHash& h) {
    if (!nodes_[i]->cbf->Remove(h)) return false;
    nodes_[i]->builder->Touch(h);
    return true;
  }

  // Builder -> engine, as the daemon does after changes.
  void Publish(int i) {
    SimNode& n = *nodes_[i];
    Publication p;
    if (!n.builder->Publish(&p).ok() || !p.changed) return;
    if (p.full) {
      n.engine->PublishFull(n.builder->current(), now_);
    } else {
      n.engine->PublishDelta(p.delta, now_);
    }
    Collect(i);
  }

  // The engine sends pending local deltas now (the daemon's urgent publication).
  void Flush(int i) {
    nodes_[i]->engine->FlushNow(now_);
    Collect(i);
  }

  // Runs the event loop until `until_ms`.
  void RunUntil(int64_t until_ms) {
    RunEventsUntil(
        &now_, until_ms, [this] { return NextEventTime(); }, [this] { Step(); });
  }
  void RunFor(int64_t ms) { RunUntil(now_ + ms); }
  // Runs until pred() holds (checked after each event) or the deadline; returns pred().
  // pred() is checked after each event, or only once `check_every_ms` of simulated time
  // passed since the last check (for costly predicates over large clusters).
  bool RunUntilTrue(const std::function<bool()>& pred, int64_t deadline_ms,
                    int64_t check_every_ms = 0) {
    if (pred()) return true;
    int64_t checked = now_;
    while (true) {
      const int64_t t = NextEventTime();
      if (t > deadline_ms) break;
      now_ = std::max(now_, t);
      Step();
      // Skip the check only while the next event is also within the step: a check is never
      // skipped right before time jumps ahead.
      if (now_ - checked < check_every_ms && NextEventTime() - checked < check_every_ms) continue;
      checked = now_;
      if (pred()) return true;
    }
    now_ = std::max(now_, deadline_ms);
    return pred();
  }

  // Whether node `at` holds origin's current summary exactly.
  bool Holds(int at, int origin) const {
    const SimNode& o = *nodes_[origin];
    Summary s;
    if (!nodes_[at]->engine->GetSummary(o.spec.id, &s).ok()) return false;
    const Summary& want = o.builder->current();
    return s.epoch == want.epoch && s.version == want.version && s.filter == want.filter;
  }
  // Every up node holds every other up node's current summary. Versions are compared first
  // (cheap); filters bit for bit only when every version matches.
  bool AllHoldAll() const {
    for (size_t a = 0; a < nodes_.size(); ++a) {
      if (!nodes_[a]->up) continue;
      size_t matching = 0;
      for (const PeerInfo& p : nodes_[a]->engine->Peers(now_)) {
        auto it = by_id_.find(p.node_id);
        if (it == by_id_.end() || !nodes_[it->second]->up) continue;
        const Summary& want = nodes_[it->second]->builder->current();
        if (p.epoch != want.epoch || p.version != want.version) return false;
        ++matching;
      }
      size_t up = 0;
      for (const auto& n : nodes_) up += n->up ? 1 : 0;
      if (matching + 1 != up) return false;
    }
    for (size_t a = 0; a < nodes_.size(); ++a) {
      for (size_t o = 0; o < nodes_.size(); ++o) {
        if (a == o || !nodes_[a]->up || !nodes_[o]->up) continue;
        if (!Holds(static_cast<int>(a), static_cast<int>(o))) return false;
      }
    }
    return true;
  }
  // Whether node `at` currently considers `other` alive.
  bool SeesAlive(int at, int other) const {
    for (const PeerInfo& p : nodes_[at]->engine->Peers(now_)) {
      if (p.node_id == nodes_[other]->spec.id) return p.alive;
    }
    return false;
  }
  bool WhoHasLists(int at, const std::string& key, int holder) const {
    return WhoHasHash(at, key, hasher_.Hash(key), holder);
  }
  bool WhoHasHash(int at, std::string_view key, const KeyHash& h, int holder) const {
    std::vector<PeerMatch> out;
    nodes_[at]->engine->WhoHas(key, h, now_, &out);
    return std::any_of(out.begin(), out.end(),
                       [&](const PeerMatch& m) { return m.node_id == nodes_[holder]->spec.id; });
  }
  // Keys held by some up node that another up node's who-has does not list for it.
  size_t FalseNegatives() const {
    size_t misses = 0;
    for (size_t h = 0; h < nodes_.size(); ++h) {
      if (!nodes_[h]->up) continue;
      for (const std::string& key : nodes_[h]->keys) {
        for (size_t a = 0; a < nodes_.size(); ++a) {
          if (a != h && nodes_[a]->up &&
              !WhoHasLists(static_cast<int>(a), key, static_cast<int>(h))) {
            ++misses;
          }
        }
      }
    }
    return misses;
  }

  // Delivers `payload` to node `to` now, as if from the network (a crafted frame), and
  // queues what it sends in answer. Returns the engine's status.
  Status Inject(int to, std::string_view payload) {
    const Status s = nodes_[to]->engine->OnMessage(payload, now_);
    Collect(to);
    return s;
  }
  // Adds n nodes "node0".."node{n-1}"; node i knows only node (i + n - 1) % n as its seed (a
  // ring of single seeds).
  void AddRing(int n) {
    for (int i = 0; i < n; ++i) {
      NodeSpec s;
      s.id = "node" + std::to_string(i);
      if (n > 1) s.seeds = {"node" + std::to_string((i + n - 1) % n)};
      AddNode(s);
    }
  }
  // Drops frames for which the hook returns true (before the random faults).
  void SetFilter(std::function<bool(const Frame&)> hook) { filter_ = std::move(hook); }
  // Sees each frame as it reaches an up node (tracing).
  void SetDeliverHook(std::function<void(const Frame&)> hook) { deliver_ = std::move(hook); }
  // Adds the hook's answer (ms) to a frame's latency (a slow link).
  void SetDelay(std::function<int64_t(const Frame&)> hook) { delay_ = std::move(hook); }
  // Addition: adjusts each node's options as it boots (after node_id and seeds are set).
  void SetBootHook(std::function<void(GossipOptions*)> hook) { boot_hook_ = std::move(hook); }
  void set_net(NetOptions net) { net_ = net; }

  int64_t now() const { return now_; }
  size_t size() const { return nodes_.size(); }
  SimNode& node(int i) { return *nodes_[i]; }
  GossipEngine& engine(int i) { return *nodes_[i]->engine; }
  const IndexHasher& hasher() const { return hasher_; }

 private:
  int64_t NextEventTime() const {
    int64_t t = INT64_MAX;
    if (!inflight_.empty()) t = inflight_.top().at;
    for (const auto& n : nodes_) {
      if (n->up) t = std::min(t, std::max(n->engine->NextDeadline(), now_));
    }
    return t;
  }

  void Step() {
    while (!inflight_.empty() && inflight_.top().at <= now_) {
      Frame f = inflight_.top();
      inflight_.pop();
      SimNode& dst = *nodes_[f.to];
      if (!dst.up) continue;
      if (deliver_) deliver_(f);
      (void)dst.engine->OnMessage(f.payload, now_);  // refusals are counted by the engine
      Collect(f.to);
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      SimNode& n = *nodes_[i];
      if (n.up && n.engine->NextDeadline() <= now_) {
        n.engine->OnTick(now_);
        Collect(static_cast<int>(i));
      }
    }
  }

  void Collect(int i) {
    SimNode& n = *nodes_[i];
    for (Outgoing& o : n.engine->TakeOutgoing()) {
      n.bytes_sent += o.payload.size();
      ++n.frames_sent;
      if (o.payload.size() > 6) {
        n.bytes_by_type[static_cast<uint8_t>(o.payload[6]) & 15] += o.payload.size();
        ++n.frames_by_type[static_cast<uint8_t>(o.payload[6]) & 15];
      }
      n.sent_to.insert(o.endpoint);
      auto it = by_endpoint_.find(o.endpoint);
      if (it == by_endpoint_.end() || n.muted || !n.up) continue;
      Frame f{now_ + net_.latency_ms, 0, i, it->second, std::move(o.payload)};
      if (filter_ && filter_(f)) continue;
      if (delay_) f.at += delay_(f);
      if (Chance(net_.drop)) continue;
      const int copies = Chance(net_.duplicate) ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        Frame g = f;
        g.seq = seq_++;
        if (net_.jitter_ms > 0) {
          g.at += static_cast<int64_t>(rng_() % static_cast<uint64_t>(net_.jitter_ms + 1));
        }
        inflight_.push(std::move(g));
      }
    }
    (void)n.engine->TakeDropped();
  }

  bool Chance(double p) {
    return p > 0 && std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
  }

  NetOptions net_;
  GossipOptions base_;
  std::mt19937_64 rng_;
  IndexHasher hasher_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  std::map<std::string, int> by_endpoint_;
  std::map<std::string, int> by_id_;
  std::priority_queue<Frame, std::vector<Frame>, std::greater<Frame>> inflight_;
  std::function<bool(const Frame&)> filter_;
  std::function<int64_t(const Frame&)> delay_;
  std::function<void(const Frame&)> deliver_;
  std::function<void(GossipOptions*)> boot_hook_;
};

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_TESTS_SUPPORT_SIM_CLUSTER_H_
