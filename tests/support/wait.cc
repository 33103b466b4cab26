#include "tests/support/wait.h"

#include <thread>

namespace peerbloom::testing {

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
             std::chrono::milliseconds every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

bool HoldsFor(const std::function<bool()>& condition, std::chrono::milliseconds window,
              std::chrono::milliseconds every) {
  const auto end = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < end) {
    if (!condition()) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace peerbloom::testing
