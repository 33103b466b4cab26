#include "daemon/purge_runner.h"

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
    if (queued_.size() >= kMaxQueued) return false;
    queued_.push_back(std::move(job));
  }
  wake_.notify_one();
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
  return queued_.size() + running_ + done_.size();
}

void PurgeRunner::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !queued_.empty(); });
    if (stop_) return;
    PurgeJob job = std::move(queued_.front());
    queued_.pop_front();
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
