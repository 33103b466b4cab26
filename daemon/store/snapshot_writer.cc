// One thread per write: a snapshot is taken once a minute by default, so starting a thread
// costs nothing that matters, and no idle thread or queue has to be kept and stopped.
#include "daemon/store/snapshot_writer.h"

namespace peerbloom::daemon {

SnapshotWriter::~SnapshotWriter() { (void)Wait(); }

void SnapshotWriter::Start(SnapshotState state) {
  done_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this, state = std::move(state)]() mutable {
    if (gate_) gate_();
    result_ = WriteSnapshot(path_, state);
    spare_ = std::move(state.cells);
    // Release: the loop that sees done_ also sees result_.
    done_.store(true, std::memory_order_release);
  });
}

bool SnapshotWriter::TakeResult(Status* result) {
  if (!thread_.joinable() || !done_.load(std::memory_order_acquire)) return false;
  thread_.join();
  *result = result_;
  return true;
}

Status SnapshotWriter::Wait() {
  if (!thread_.joinable()) return Status::Ok();
  thread_.join();
  return result_;
}

}  // namespace peerbloom::daemon
