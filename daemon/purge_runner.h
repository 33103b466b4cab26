// PurgeRunner: runs purge actions (an HTTP PURGE to the local Squid, or the purge command) on a
// thread of its own, so the event loop never waits for one: a slow Squid or a slow command
// delays other purges, never who-has, gossip or the relay (docs/relay.md, "Cluster-wide
// purge"). The loop submits jobs whose filter check it has done and takes finished ones on
// later turns.
//
// Jobs run one at a time, in order. The queue holds at most kMaxQueued jobs; Submit refuses
// more (the caller reports the purge as failed and counts it).
//
// Thread-safety: Submit, TakeDone and pending are called from one thread (the loop); the
// worker only touches the queues under the mutex. Resource owner: not copyable; the
// destructor stops the worker (an HTTP request ends early, a command is killed) and joins it.
#ifndef PEERBLOOM_DAEMON_PURGE_RUNNER_H_
#define PEERBLOOM_DAEMON_PURGE_RUNNER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace peerbloom::daemon {

struct PurgeJob {
  uint64_t ticket = 0;    // the caller's, handed back as given
  nlohmann::json result;  // the filter check's result; the action adds its outcome
};

class PurgeRunner {
 public:
  static constexpr size_t kMaxQueued = 1024;
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
  std::deque<PurgeJob> queued_;
  std::vector<PurgeJob> done_;
  size_t running_ = 0;
  std::thread thread_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_PURGE_RUNNER_H_
