// SwimSim: N SwimMembership nodes on an in-memory network with a fake clock, for the SWIM
// tests and bench/swim_sim_bench.cc. A message sent at t arrives at t + latency (+ seeded
// jitter), or is lost with a seeded probability. A killed node neither sends nor receives; a
// stalled node keeps what arrives and handles it, and its timers, when the stall ends (a
// process stopped by SIGSTOP). Every message is encoded and decoded, so the byte counts are
// the bodies' real sizes. Nothing here reads a wall clock.
#ifndef PEERBLOOM_TESTS_SUPPORT_SWIM_SIM_H_
#define PEERBLOOM_TESTS_SUPPORT_SWIM_SIM_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "peerbloom/swim.h"
#include "tests/support/sim_loop.h"

namespace peerbloom::sim {

struct SwimNet {
  uint64_t seed = 1;
  int64_t latency_ms = 2;
  int64_t jitter_ms = 1;
  double loss = 0.0;
};

struct SwimSimNode {
  std::unique_ptr<SwimMembership> m;
  bool killed = false;
  int64_t stalled_until_ms = 0;
  uint64_t sent[3] = {};        // messages by SwimKind
  uint64_t sent_bytes[3] = {};  // their body bytes
};

class SwimSim {
 public:
  SwimSim(size_t n, SwimNet net, const std::function<void(SwimOptions*)>& tune = {})
      : net_(net), rng_(net.seed) {
    for (size_t i = 0; i < n; ++i) index_[Id(i)] = i;
    nodes_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      SwimOptions o;
      o.self = Id(i);
      o.rng_seed = net.seed * 1000003 + i;
      if (tune) tune(&o);
      nodes_[i].m = std::make_unique<SwimMembership>(o);
      for (size_t j = 0; j < n; ++j) nodes_[i].m->AddMember(Id(j), 0);
    }
  }

  static std::string Id(size_t i) { return "n" + std::to_string(i); }
  size_t size() const { return nodes_.size(); }
  int64_t now() const { return now_; }
  SwimSimNode& node(size_t i) { return nodes_[i]; }
  SwimMembership& member(size_t i) { return *nodes_[i].m; }

  void Kill(size_t i) { nodes_[i].killed = true; }
  void set_loss(double loss) { net_.loss = loss; }
  void Stall(size_t i, int64_t ms) { nodes_[i].stalled_until_ms = now_ + ms; }
  // Called with (observer, event) for every state change a live node applies.
  void OnChange(std::function<void(size_t, const SwimEvent&)> hook) {
    on_change_ = std::move(hook);
  }

  void RunUntil(int64_t until_ms) {
    RunEventsUntil(
        &now_, until_ms, [this] { return NextEventTime(); }, [this] { Step(); });
  }
  void RunFor(int64_t ms) { RunUntil(now_ + ms); }

 private:
  struct Msg {
    int64_t at = 0;
    uint64_t seq = 0;
    size_t from = 0, to = 0;
    std::string body;
    bool operator>(const Msg& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  bool Running(const SwimSimNode& n) const { return !n.killed && n.stalled_until_ms <= now_; }

  int64_t NextEventTime() {
    int64_t t = inflight_.empty() ? INT64_MAX : inflight_.top().at;
    if (deadlines_.empty() || rebuild_) RebuildDeadlines();
    if (!deadlines_.empty()) t = std::min(t, deadlines_.top().first);
    return t;
  }

  // Nodes' next deadlines in a heap; entries go stale and are checked when popped.
  void RebuildDeadlines() {
    rebuild_ = false;
    deadlines_ = {};
    for (size_t i = 0; i < nodes_.size(); ++i) Schedule(i);
  }
  void Schedule(size_t i) {
    const SwimSimNode& n = nodes_[i];
    if (n.killed) return;
    const int64_t t = std::max(n.m->NextDeadline(), n.stalled_until_ms);
    if (t != INT64_MAX) deadlines_.push({t, i});
  }

  void Step() {
    while (!inflight_.empty() && inflight_.top().at <= now_) {
      Msg msg = inflight_.top();
      inflight_.pop();
      SwimSimNode& dst = nodes_[msg.to];
      if (dst.killed) continue;
      if (dst.stalled_until_ms > now_) {  // kept until the stall ends
        msg.at = dst.stalled_until_ms;
        inflight_.push(std::move(msg));
        continue;
      }
      SwimMessage m;
      if (!DecodeSwimMessage(msg.body, &m).ok()) std::abort();
      dst.m->OnMessage(Id(msg.from), m, now_);
      Collect(msg.to);
    }
    while (!deadlines_.empty() && deadlines_.top().first <= now_) {
      const size_t i = deadlines_.top().second;
      deadlines_.pop();
      SwimSimNode& n = nodes_[i];
      if (n.killed) continue;
      if (!Running(n)) {  // stalled: its timers run when the stall ends
        deadlines_.push({n.stalled_until_ms, i});
        continue;
      }
      // A later deadline has an entry of its own: every change of one is scheduled.
      if (n.m->NextDeadline() <= now_) {
        n.m->OnTick(now_);
        Collect(i);
      }
    }
  }

  void Collect(size_t i) {
    SwimSimNode& n = nodes_[i];
    for (const SwimEvent& e : n.m->TakeChanges()) {
      if (on_change_) on_change_(i, e);
    }
    for (SwimSend& s : n.m->TakeSends()) {
      std::string body = EncodeSwimMessage(s.message);
      const size_t kind = static_cast<size_t>(s.message.kind);
      ++n.sent[kind];
      n.sent_bytes[kind] += body.size();
      if (net_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < net_.loss) {
        continue;
      }
      const int64_t jitter =
          net_.jitter_ms > 0 ? static_cast<int64_t>(rng_() % (net_.jitter_ms + 1)) : 0;
      inflight_.push(
          Msg{now_ + net_.latency_ms + jitter, seq_++, i, index_.at(s.to), std::move(body)});
    }
    Schedule(i);
  }

  SwimNet net_;
  std::mt19937_64 rng_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
  bool rebuild_ = true;
  std::vector<SwimSimNode> nodes_;
  std::unordered_map<std::string, size_t> index_;
  std::priority_queue<Msg, std::vector<Msg>, std::greater<Msg>> inflight_;
  std::priority_queue<std::pair<int64_t, size_t>, std::vector<std::pair<int64_t, size_t>>,
                      std::greater<std::pair<int64_t, size_t>>>
      deadlines_;
  std::function<void(size_t, const SwimEvent&)> on_change_;
};

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_TESTS_SUPPORT_SWIM_SIM_H_
