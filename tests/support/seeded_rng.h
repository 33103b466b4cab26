// The random choices of a test (kill times, which node restarts), made replayable: the seed
// comes from PEERBLOOM_TEST_SEED when it is set, otherwise from std::random_device. It is
// printed when the generator is made, recorded as the test property "seed" (in --gtest_output
// XML), and named by every failure while the generator lives, so a failing run says how to
// replay it: PEERBLOOM_TEST_SEED=N build/tests/peerbloom_integration_tests --gtest_filter=...
// Not thread-safe; make it in the test's own thread (the trace belongs to that thread).
#ifndef PEERBLOOM_TESTS_SUPPORT_SEEDED_RNG_H_
#define PEERBLOOM_TESTS_SUPPORT_SEEDED_RNG_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace peerbloom::testing {

// PEERBLOOM_TEST_SEED (decimal) when set and valid, otherwise a draw of std::random_device.
uint64_t TestSeed();

// A std::mt19937_64 seeded by TestSeed(); a UniformRandomBitGenerator, so it also feeds
// <random> distributions and std::shuffle.
class SeededRng {
 public:
  using result_type = std::mt19937_64::result_type;

  // `what` names the randomness in the printed line ("fault_disk kill-time seed N").
  explicit SeededRng(const std::string& what) : SeededRng(what, TestSeed()) {}
  SeededRng(const SeededRng&) = delete;
  SeededRng& operator=(const SeededRng&) = delete;

  uint64_t seed() const { return seed_; }
  result_type operator()() { return engine_(); }
  static constexpr result_type min() { return std::mt19937_64::min(); }
  static constexpr result_type max() { return std::mt19937_64::max(); }

 private:
  SeededRng(const std::string& what, uint64_t seed);

  uint64_t seed_;
  std::mt19937_64 engine_;
  ::testing::ScopedTrace trace_;
};

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_SEEDED_RNG_H_
