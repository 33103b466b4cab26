// PurgeRunner: runs purge actions (an HTTP PURGE to the local Squid, or the purge command) on a
// thread of its own, so the event loop never waits for one: a slow Squid or a slow command
// delays other purges, never who-has, gossip or the relay (docs/relay.md, "Cluster-wide
// purge"). The loop submits jobs whose filter check it has done and takes finished ones on
// later turns.
//
// Jobs run one at a time. Each origin has its own queue and the queues take turns, so a flood
// of purges from one origin (a member, within its rate) delays another origin's by one job
// at most, never by the flood; the operator's own purges (origin "") go before any origin's.
// One origin may hold kMaxQueuedPerOrigin jobs, all together kMaxQueued; Submit refuses more
// (the caller reports the purge as failed and counts it).
//
// Thread-safety: Submit, TakeDone and pending are called from one thread (the loop); the
// worker only touches the queues under the mutex. Resource owner: not copyable; the
// destructor stops the worker (an HTTP request ends early, a command is killed) and joins it.
#ifndef PEERBLOOM_DAEMON_RELAY_PURGE_RUNNER_H_
#define PEERBLOOM_DAEMON_RELAY_PURGE_RUNNER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace peerbloom::daemon {

struct PurgeJob {
  uint64_t ticket = 0;    // the caller's, handed back as given
  std::string origin;     // the node that asked for it; "" for this node's operator
  nlohmann::json result;  // the filter check's result; the action adds its outcome
};

class PurgeRunner {
 public:
  static constexpr size_t kMaxQueued = 1024;
  static constexpr size_t kMaxQueuedPerOrigin = 64;
  // Runs the action a job's result names and records its outcome there. Called on the worker
  // thread; must return soon once `stop` is set.
  using Action = std::function<void(const std::atomic<bool>& stop, nlohmann::json* result)>;

  explicit PurgeRunner(Action action);
  ~PurgeRunner();
  PurgeRunner(const PurgeRunner&) = delete;
  PurgeRunner& operator=(const PurgeRunner&) = delete;

  // Queues a job. False when kMaxQueued jobs wait already (nothing queued).
  bool Submit(PurgeJob job);
  // The jobs finished since the last call, in order.
  std::vector<PurgeJob> TakeDone();
  // Jobs queued or running, and finished ones not yet taken.
  size_t pending() const;

 private:
  void Run();

  Action action_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  // The next job: the operator's first, then the origins in turn. Under mu_.
  bool TakeNext(PurgeJob* job);

  std::map<std::string, std::deque<PurgeJob>> queued_;  // by origin
  std::deque<std::string> turns_;                       // origins with queued jobs, next first
  size_t queued_count_ = 0;
  std::vector<PurgeJob> done_;
  size_t running_ = 0;
  std::thread thread_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_PURGE_RUNNER_H_
