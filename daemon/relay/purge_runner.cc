#include "daemon/relay/purge_runner.h"

#include <exception>
#include <string>

namespace peerbloom::daemon {

PurgeRunner::PurgeRunner(Action action) : action_(std::move(action)) {
  thread_ = std::thread([this] { Run(); });
}

PurgeRunner::~PurgeRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool PurgeRunner::Submit(PurgeJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<PurgeJob>& q = queued_[job.origin];
    if (queued_count_ >= kMaxQueued || q.size() >= kMaxQueuedPerOrigin) {
      if (q.empty()) queued_.erase(job.origin);
      return false;
    }
    if (q.empty() && !job.origin.empty()) turns_.push_back(job.origin);
    q.push_back(std::move(job));
    ++queued_count_;
  }
  wake_.notify_one();
  return true;
}

bool PurgeRunner::TakeNext(PurgeJob* job) {
  std::string origin;
  if (const auto local = queued_.find(""); local != queued_.end()) {
    origin = "";
  } else if (!turns_.empty()) {
    origin = std::move(turns_.front());
    turns_.pop_front();
  } else {
    return false;
  }
  auto it = queued_.find(origin);
  *job = std::move(it->second.front());
  it->second.pop_front();
  --queued_count_;
  if (it->second.empty()) {
    queued_.erase(it);
  } else if (!origin.empty()) {
    turns_.push_back(origin);  // its next job waits for every other origin's turn
  }
  return true;
}

std::vector<PurgeJob> PurgeRunner::TakeDone() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PurgeJob> out;
  out.swap(done_);
  return out;
}

size_t PurgeRunner::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_count_ + running_ + done_.size();
}

void PurgeRunner::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || queued_count_ > 0; });
    if (stop_) return;
    PurgeJob job;
    if (!TakeNext(&job)) continue;
    running_ = 1;
    lock.unlock();
    // The action quotes a URL from another node: an exception ends this job, not the daemon.
    try {
      action_(stop_, &job.result);
    } catch (const std::exception& e) {
      job.result["purged"] = false;
      job.result["error"] = std::string("internal error: ") + e.what();
    }
    lock.lock();
    running_ = 0;
    done_.push_back(std::move(job));
  }
}

}  // namespace peerbloom::daemon
