// Clock: where the daemon's loop takes time from. Production uses the steady clock; tests
// inject a FakeClock and move time by hand, so deadlines are testable without sleeping.
#ifndef PEERBLOOM_DAEMON_LOOP_CLOCK_H_
#define PEERBLOOM_DAEMON_LOOP_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace peerbloom::daemon {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds since an arbitrary origin.
  virtual int64_t NowMs() const = 0;
};

class SteadyClock final : public Clock {
 public:
  int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1000) : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_; }
  void Advance(int64_t ms) { now_ms_ += ms; }
  void Set(int64_t ms) { now_ms_ = ms; }

 private:
  int64_t now_ms_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_LOOP_CLOCK_H_
