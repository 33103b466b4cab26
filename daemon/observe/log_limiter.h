// LogLimiter: lets through at most `burst` log lines per `window_ms` for one kind of event
// caused by peers, and counts what it held back so the next admitted line can say so.
#ifndef PEERBLOOM_DAEMON_OBSERVE_LOG_LIMITER_H_
#define PEERBLOOM_DAEMON_OBSERVE_LOG_LIMITER_H_

#include <cstdint>

namespace peerbloom::daemon {

class LogLimiter {
 public:
  explicit LogLimiter(int burst = 5, int64_t window_ms = 10000)
      : burst_(burst), window_ms_(window_ms) {}

  // True when a line may be logged now. *suppressed receives how many were held back since
  // the last admitted line (then reset).
  bool Allow(int64_t now_ms, uint64_t* suppressed) {
    if (now_ms - window_start_ms_ >= window_ms_) {
      window_start_ms_ = now_ms;
      used_ = 0;
    }
    if (used_ >= burst_) {
      ++held_back_;
      return false;
    }
    ++used_;
    *suppressed = held_back_;
    held_back_ = 0;
    return true;
  }

 private:
  int burst_;
  int64_t window_ms_;
  int64_t window_start_ms_ = INT64_MIN / 2;
  int used_ = 0;
  uint64_t held_back_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_LOG_LIMITER_H_
