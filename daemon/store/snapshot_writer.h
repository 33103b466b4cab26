// SnapshotWriter: writes snapshots on a thread of its own, so the event loop does not wait for
// the checksum, the write and the fsyncs (about 80 ms for 16 MiB of counters on this kind of
// machine; the loop now only copies the counters, a few ms). At most one write is under way;
// the loop starts one, looks for its result on later turns, and waits for it only where it
// must (a snapshot asked for by control, the final one on stop).
//
// The file is written by WriteSnapshot (snapshot.h): temp file, fsync, rename, fsync of the
// directory. A process killed at any moment leaves the previous snapshot or the new one.
//
// Thread-safety: the methods are called from one thread (the loop); the writer thread only
// touches the state handed to it and the result. Resource owner: not copyable; the
// destructor waits for a write under way.
#ifndef PEERBLOOM_DAEMON_STORE_SNAPSHOT_WRITER_H_
#define PEERBLOOM_DAEMON_STORE_SNAPSHOT_WRITER_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "daemon/store/snapshot.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

class SnapshotWriter {
 public:
  explicit SnapshotWriter(std::string path) : path_(std::move(path)) {}
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  // Whether a write was started and its result not yet taken.
  bool busy() const { return thread_.joinable(); }
  // Starts writing `state`. REQUIRES: !busy().
  void Start(SnapshotState state);
  // True when the write under way has finished; *result receives its status and the writer
  // is idle again. False (nothing changed) while it runs or when none was started.
  bool TakeResult(Status* result);
  // Waits for the write under way, if any, and returns its status (Ok when there was none).
  Status Wait();
  // The counters buffer of the last finished write, to fill for the next one: refilling
  // memory already touched costs a copy, a fresh 16 MiB buffer also thousands of page faults.
  // REQUIRES: !busy().
  std::string TakeSpareBuffer() { return std::move(spare_); }
  // Tests only: `gate` runs on the writer thread before each write (a test holds a write
  // under way by blocking in it). REQUIRES: !busy().
  void set_gate_for_test(std::function<void()> gate) { gate_ = std::move(gate); }

 private:
  std::string path_;
  std::thread thread_;
  std::atomic<bool> done_{false};
  Status result_;
  std::string spare_;
  std::function<void()> gate_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STORE_SNAPSHOT_WRITER_H_
