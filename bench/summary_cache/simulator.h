// The Summary Cache comparison (Fan, Cao, Almeida, Broder, ToN 2000) on peerbloom's code.
//
// N proxies with LRU caches serve one request stream. A local miss is resolved three ways on
// the same cache state (every miss stores the object locally whatever found it, so the
// caches evolve identically under all three):
//  - ICP: the proxy queries every peer (N-1 queries, N-1 replies) and fetches from a holder;
//  - peerbloom: the proxy asks its own daemon's who-has and fetches from the peers it lists,
//    in random order, until one holds the object; a listed peer without it is a false hit;
//  - oracle: an exact, instantly updated global directory (the best any scheme can do).
// The peerbloom side is the project's code end to end: each proxy's cache feeds a
// CountingBloomFilter and a SummaryBuilder; PublishPolicy (the daemon's rule) decides when
// a change goes to the node's GossipEngine; engines gossip over the in-memory network of
// tests/support/sim_cluster.h on the stream's clock; who-has reads the engine's
// PeerIndex. Nothing of the protocol is re-modelled here.
#ifndef PEERBLOOM_BENCH_SUMMARY_CACHE_SIMULATOR_H_
#define PEERBLOOM_BENCH_SUMMARY_CACHE_SIMULATOR_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/summary_cache/lru_cache.h"
#include "bench/summary_cache/workload.h"
#include "peerbloom/bloom_probe.h"
#include "peerbloom/params.h"
#include "peerbloom/publish_policy.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom::sim {

struct SimOptions {
  int nodes = 16;                // REQUIRES: 2 <= nodes <= 64
  size_t cache_objects = 20000;  // Default: 20000 objects per proxy.
  double target_fpr = 0.01;      // Default: 0.01, the daemon's target_fpr.
  Profile profile = Profile::kBalanced;
  // Default: the daemon's 1000. The engines' gossip interval and the publication policy's
  // timer; the failure timeout and anti-entropy interval scale with it (see Gossip below).
  int64_t gossip_interval_ms = 1000;
  double publish_threshold = 0.05;  // Default: the daemon's 0.05.
  int64_t publish_delay_ms = 0;     // Default: 0, the daemon's (two gossip intervals).
  uint64_t publish_batch = 0;       // Default: 0, the daemon's (kDefaultPublishBatch).
  int64_t latency_ms = 2;           // Default: 2 ms one way between daemons.
  double warmup = 0.1;         // Default: 0.1. Share of the stream served before counting starts.
  size_t warmup_requests = 0;  // Default: 0, use `warmup`; else requests before counting.
  uint64_t seed = 1;
  // Default: the daemon's, probes (docs/gossip.md, "Probe failure detection").
  FailureDetector detector = FailureDetector::kProbe;
};

// ICP sizes (RFC 2186): a 20-byte header, then the URL with its NUL; a query also carries
// the 4-byte requester address. UDP/IP headers are not counted (nor are TCP/ZeroMQ ones).
inline uint64_t IcpQueryBytes(uint32_t url_bytes) { return 20 + 4 + url_bytes + 1; }
inline uint64_t IcpReplyBytes(uint32_t url_bytes) { return 20 + url_bytes + 1; }

struct SchemeCounts {
  uint64_t local_hits = 0;
  uint64_t remote_hits = 0;
  uint64_t misses = 0;      // served by the origin
  uint64_t query_msgs = 0;  // ICP queries and replies
  uint64_t query_bytes = 0;
  uint64_t fetch_msgs = 0;  // HTTP requests to peers and their replies (2 per attempt)
};

struct SimResult {
  uint64_t requests = 0;  // counted (after the warm-up)
  SchemeCounts icp, peerbloom, oracle;
  uint64_t false_hits = 0;       // peerbloom fetch attempts at a peer without the object
  uint64_t delay_misses = 0;     // a peer held it, no summary said so yet
  uint64_t nonholder_pairs = 0;  // (local miss, peer without the object) pairs
  uint64_t listed_bloom = 0;     // ... listed by who-has although the peer's content is not
                                 // (a false positive of the summary built from its content)
  uint64_t listed_stale = 0;     // ... listed because the held summary is older than content
  uint64_t update_msgs = 0;      // gossip frames, all types, all nodes
  uint64_t update_bytes = 0;
  uint64_t frames_by_type[16] = {};  // update_msgs by WireType number
  uint64_t refused_removes = 0;      // CBF removes refused (must stay 0)
  double estimated_fpr = 0;          // mean EstimatedFpr of the summaries held, sampled
  double summary_bytes = 0;          // per node: peers' summaries held, sampled mean
  uint64_t cbf_bytes = 0;            // per node: its counting filter
  unsigned summary_log2_bits = 0;    // geometry of node 0's summary at the end
  unsigned k = 0;
  int64_t simulated_ms = 0;
};

class SummaryCacheSim {
 public:
  SummaryCacheSim(const SimOptions& options, const ObjectTable* objects)
      : o_(options),
        objects_(objects),
        rng_(options.seed),
        cluster_(Net(options), Gossip(options)) {
    if (o_.nodes < 2 || o_.nodes > 64) std::abort();
    Geometry g;
    if (!ChooseGeometry(o_.profile, o_.cache_objects, o_.target_fpr, &g).ok()) std::abort();
    for (int i = 0; i < o_.nodes; ++i) {
      NodeSpec s;
      s.id = "proxy" + std::to_string(i);
      s.seeds = {i == 0 ? "proxy1" : "proxy0"};
      s.log2_counters = g.log2_counters;
      s.k = g.k;
      s.target_fpr = o_.target_fpr;
      cluster_.AddNode(s);
      caches_.emplace_back(o_.cache_objects);
      policies_.emplace_back(PublishPolicyOptions{o_.publish_threshold, o_.gossip_interval_ms,
                                                  o_.publish_delay_ms, o_.publish_batch});
      policies_.back().Published(0);  // AddNode published the empty summary
    }
    result_.k = g.k;
    result_.cbf_bytes = cluster_.node(0).cbf->bytes();
  }

  // Serves the stream; counting starts after the warm-up share.
  void Run(const std::vector<Request>& stream) {
    const size_t warm = o_.warmup_requests > 0
                            ? std::min(o_.warmup_requests, stream.size())
                            : static_cast<size_t>(o_.warmup * static_cast<double>(stream.size()));
    const size_t sample_every = std::max<size_t>(1, (stream.size() - warm) / 10);
    for (size_t i = 0; i < stream.size(); ++i) {
      if (i == warm) StartCounting();
      Serve(stream[i], i >= warm);
      if (i >= warm && (i - warm) % sample_every == sample_every - 1) Sample();
    }
    if (stream.size() == warm) StartCounting();
    Finish();
  }

  // One request at its time: gossip and timed publications up to then, then the lookup.
  void Serve(const Request& r, bool count) {
    AdvanceTo(r.time_ms);
    const int p = static_cast<int>(r.site % static_cast<uint32_t>(o_.nodes));
    if (count) ++result_.requests;
    if (caches_[p].Touch(r.object)) {
      if (count) CountLocalHit();
      return;
    }
    if (count) ResolveMiss(p, r.object);
    Store(p, r.object);
  }

  // Runs gossip (and the publication timers) for `ms` more with no requests.
  void Settle(int64_t ms) { AdvanceTo(cluster_.now() + ms); }
  void Finish() {
    result_.simulated_ms = cluster_.now() - counting_from_ms_;
    result_.update_msgs = Frames() - frames0_;
    result_.update_bytes = Bytes() - bytes0_;
    for (int t = 0; t < 16; ++t) result_.frames_by_type[t] = FramesOfType(t) - types0_[t];
    if (samples_ == 0) Sample();
    result_.estimated_fpr = fpr_sum_ / samples_;
    result_.summary_bytes = summary_bytes_sum_ / samples_;
    result_.summary_log2_bits = cluster_.node(0).builder->current().filter.log2_bits();
  }

  const SimResult& result() const { return result_; }
  bool Holds(int node, uint32_t object) const { return caches_[node].Contains(object); }
  const LruCache& cache(int node) const { return caches_[node]; }
  SimCluster& cluster() { return cluster_; }
  // Who-has at `node` for an object, as node indexes.
  std::vector<int> Listed(int node, uint32_t object) {
    std::vector<PeerMatch> m;
    cluster_.node(node).engine->WhoHas("", objects_->hash(object), cluster_.now(), &m);
    std::vector<int> out;
    for (const PeerMatch& x : m) out.push_back(std::atoi(x.node_id.c_str() + 5));  // "proxyN"
    return out;
  }

 private:
  // The engines run at the simulated interval, as a daemon with gossip_interval set to it:
  // the failure timeout and the anti-entropy interval keep their default ratios to it (10 and
  // 5 intervals, never below the daemon's defaults), so a slower interval is not read as
  // failures.
  static GossipOptions Gossip(const SimOptions& o) {
    GossipOptions g = SimCluster::DefaultOptions();
    g.gossip_interval_ms = o.gossip_interval_ms;
    g.failure_detector = o.detector;
    g.failure_timeout_ms = std::max<int64_t>(g.failure_timeout_ms, 10 * o.gossip_interval_ms);
    g.anti_entropy_interval_ms =
        std::max<int64_t>(g.anti_entropy_interval_ms, 5 * o.gossip_interval_ms);
    return g;
  }

  static NetOptions Net(const SimOptions& o) {
    NetOptions n;
    n.seed = o.seed;
    n.latency_ms = o.latency_ms;
    return n;
  }

  // Publication timers fire at their own time, not at the next request's.
  void AdvanceTo(int64_t t) {
    while (true) {
      int64_t due = INT64_MAX;
      for (int i = 0; i < o_.nodes; ++i) {
        due = std::min(
            due, policies_[i].NextPublishMs(cluster_.node(i).builder->pending(), cluster_.now()));
      }
      if (due > t) break;
      cluster_.RunUntil(std::max(due, cluster_.now()));
      for (int i = 0; i < o_.nodes; ++i) MaybePublish(i);
    }
    cluster_.RunUntil(t);
  }

  void MaybePublish(int i) {
    SummaryBuilder& b = *cluster_.node(i).builder;
    const PublishAction a =
        policies_[i].Decide(b.pending(), b.current().filter.bits(), cluster_.now());
    if (a == PublishAction::kWait) return;
    cluster_.Publish(i);
    policies_[i].Published(cluster_.now());
    cluster_.Flush(i);
  }

  void CountLocalHit() {
    ++result_.icp.local_hits;
    ++result_.peerbloom.local_hits;
    ++result_.oracle.local_hits;
  }

  void ResolveMiss(int p, uint32_t object) {
    const uint64_t holders = Holders(object) & ~Bit(p);
    const uint64_t peers = static_cast<uint64_t>(o_.nodes - 1);
    const uint32_t url = objects_->url_bytes(object);
    // ICP and the oracle find every holder, the oracle without asking.
    SchemeCounts& icp = result_.icp;
    icp.query_msgs += 2 * peers;
    icp.query_bytes += peers * (IcpQueryBytes(url) + IcpReplyBytes(url));
    for (SchemeCounts* s : {&result_.icp, &result_.oracle}) {
      if (holders != 0) {
        ++s->remote_hits;
        s->fetch_msgs += 2;
      } else {
        ++s->misses;
      }
    }
    PeerbloomMiss(p, object, holders);
  }

  void PeerbloomMiss(int p, uint32_t object, uint64_t holders) {
    std::vector<int> listed = Listed(p, object);
    result_.nonholder_pairs += static_cast<uint64_t>(o_.nodes - 1 - std::popcount(holders));
    for (int c : listed) {
      if (holders & Bit(c)) continue;
      ++(ContentClaims(c, object) ? result_.listed_bloom : result_.listed_stale);
    }
    std::shuffle(listed.begin(), listed.end(), rng_);
    SchemeCounts& s = result_.peerbloom;
    for (int c : listed) {
      s.fetch_msgs += 2;
      if (holders & Bit(c)) {
        ++s.remote_hits;
        return;
      }
      ++result_.false_hits;
    }
    ++s.misses;
    if (holders != 0) ++result_.delay_misses;
  }

  // Whether the summary of node c's present content, at the geometry it publishes, claims
  // the object: a listing it has no matter how fast updates travel.
  bool ContentClaims(int c, uint32_t object) {
    const SimNode& n = cluster_.node(c);
    const SizeReduction& reduce = n.builder->current().filter.reduction();
    bool all = true;
    ForEachProbe(objects_->hash(object), n.cbf->k(), reduce,
                 [&](uint64_t pos) { all = all && n.cbf->ProjectedBit(pos, reduce.size()); });
    return all;
  }

  void Store(int p, uint32_t object) {
    if (auto evicted = caches_[p].Insert(object)) {
      Holders(*evicted) &= ~Bit(p);
      if (!cluster_.RemoveHash(p, objects_->hash(*evicted))) ++result_.refused_removes;
    }
    Holders(object) |= Bit(p);
    cluster_.AddHash(p, objects_->hash(object));
    MaybePublish(p);
  }

  uint64_t& Holders(uint32_t object) {
    if (object >= directory_.size()) directory_.resize(objects_->size(), 0);
    return directory_[object];
  }
  static uint64_t Bit(int i) { return uint64_t{1} << i; }

  void StartCounting() {
    counting_from_ms_ = cluster_.now();
    frames0_ = Frames();
    bytes0_ = Bytes();
    for (int t = 0; t < 16; ++t) types0_[t] = FramesOfType(t);
  }
  uint64_t FramesOfType(int t) {
    uint64_t f = 0;
    for (int i = 0; i < o_.nodes; ++i) f += cluster_.node(i).frames_by_type[t];
    return f;
  }
  uint64_t Frames() {
    uint64_t f = 0;
    for (int i = 0; i < o_.nodes; ++i) f += cluster_.node(i).frames_sent;
    return f;
  }
  uint64_t Bytes() {
    uint64_t b = 0;
    for (int i = 0; i < o_.nodes; ++i) b += cluster_.node(i).bytes_sent;
    return b;
  }

  // The summaries one node holds: their estimated FPR and their memory (a node in turn).
  void Sample() {
    const int at = static_cast<int>(samples_ % static_cast<uint64_t>(o_.nodes));
    double fpr = 0, bytes = 0;
    int n = 0;
    for (const PeerInfo& info : cluster_.engine(at).Peers(cluster_.now())) {
      Summary s;
      if (!cluster_.engine(at).GetSummary(info.node_id, &s).ok()) continue;
      fpr += s.filter.EstimatedFpr();
      bytes += static_cast<double>(s.filter.bits()) / 8;
      ++n;
    }
    if (n > 0) fpr_sum_ += fpr / n;
    summary_bytes_sum_ += bytes;
    ++samples_;
  }

  SimOptions o_;
  const ObjectTable* objects_;
  std::mt19937_64 rng_;
  SimCluster cluster_;
  std::vector<LruCache> caches_;
  std::vector<PublishPolicy> policies_;
  std::vector<uint64_t> directory_;  // the oracle: object -> bit set of holders
  SimResult result_;
  int64_t counting_from_ms_ = 0;
  uint64_t frames0_ = 0, bytes0_ = 0;
  uint64_t types0_[16] = {};
  double fpr_sum_ = 0, summary_bytes_sum_ = 0;
  uint64_t samples_ = 0;
};

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_BENCH_SUMMARY_CACHE_SIMULATOR_H_
