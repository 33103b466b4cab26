#include "tests/support/seeded_rng.h"

#include <cstdio>
#include <cstdlib>

namespace peerbloom::testing {
namespace {

std::string SeedLine(const std::string& what, uint64_t seed) {
  return what + " seed " + std::to_string(seed) +
         " (replay: PEERBLOOM_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace

uint64_t TestSeed() {
  const char* text = std::getenv("PEERBLOOM_TEST_SEED");
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    const unsigned long long seed = std::strtoull(text, &end, 10);
    if (*end == '\0') return seed;
  }
  std::random_device device;
  return (uint64_t{device()} << 32) | device();
}

SeededRng::SeededRng(const std::string& what, uint64_t seed)
    : seed_(seed), engine_(seed), trace_(__FILE__, __LINE__, SeedLine(what, seed)) {
  std::printf("%s\n", SeedLine(what, seed).c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
}

}  // namespace peerbloom::testing
