// The discrete-event loop the simulators share (sim_cluster.h, swim_sim.h): time jumps to the
// next event, never back, and ends at the deadline whether or not an event falls on it.
#ifndef PEERBLOOM_TESTS_SUPPORT_SIM_LOOP_H_
#define PEERBLOOM_TESTS_SUPPORT_SIM_LOOP_H_

#include <algorithm>
#include <cstdint>

namespace peerbloom::sim {

// Runs step() at each event time next() gives, up to `until_ms`; *now follows.
template <typename NextFn, typename StepFn>
void RunEventsUntil(int64_t* now, int64_t until_ms, NextFn&& next, StepFn&& step) {
  while (true) {
    const int64_t t = next();
    if (t > until_ms) break;
    *now = std::max(*now, t);
    step();
  }
  *now = std::max(*now, until_ms);
}

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_TESTS_SUPPORT_SIM_LOOP_H_
