// Bounded waits for tests that watch real processes: poll a condition until it holds or a
// deadline passes, never sleep and hope (docs/STYLE: deadlines, not sleeps).
#ifndef PEERBLOOM_TESTS_SUPPORT_WAIT_H_
#define PEERBLOOM_TESTS_SUPPORT_WAIT_H_

#include <chrono>
#include <functional>

namespace peerbloom::testing {

// The deadline for a wait on real processes (gossip to spread, a daemon to notice something):
// generous, because a loaded machine (ctest -j, builds beside it) may stall a process for
// seconds. A wait returns as soon as its condition holds, so a long deadline costs nothing.
inline constexpr std::chrono::seconds kWaitDeadline{30};

// Polls `condition` every `every` (default 20 ms) until it holds or `timeout` passes. Returns
// the result of the last evaluation.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
             std::chrono::milliseconds every = std::chrono::milliseconds(20));

// Whether `condition` holds at every poll, every `every` (default: back to back), for
// `window`: for what must not happen, given a window in which it would have shown.
bool HoldsFor(const std::function<bool()>& condition, std::chrono::milliseconds window,
              std::chrono::milliseconds every = std::chrono::milliseconds(0));

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_WAIT_H_
