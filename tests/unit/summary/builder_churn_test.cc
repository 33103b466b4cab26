// NO FALSE NEGATIVES, end to end: random keys under heavy add/remove churn go through a
// counting filter and a SummaryBuilder over hundreds of publications; a peer receives every
// full summary and delta over the wire (encode, decode, apply). After each publication the
// peer's filter equals the builder's bit for bit, equals a fresh projection of the counting
// filter, and reports every key the node holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/summary_builder.h"
#include "tests/unit/summary/node_sim.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

using testing_util::Node;
using testing_util::RandomHash;
using testing_util::Receiver;

struct ChurnCase {
  const char* name;
  unsigned log2_counters;
  unsigned k;
  unsigned min_log2_bits;
  size_t low;  // the population swings between low and high keys
  size_t high;
};

void PrintTo(const ChurnCase& c, std::ostream* os) { *os << c.name; }

struct ChurnStats {
  int fulls = 0, deltas = 0, grows = 0, shrinks = 0;
};

// The population target for round r: a slow swing with a fast wobble, so the summary must
// grow and shrink several times while the churn never stops.
size_t Target(const ChurnCase& c, int round) {
  const double phase = 0.5 - 0.5 * std::cos(round * 0.05);
  const double wobble = 0.1 * std::sin(round * 0.7);
  const double x = std::clamp(phase + wobble, 0.0, 1.0);
  return c.low + static_cast<size_t>(x * static_cast<double>(c.high - c.low));
}

void ChurnRound(const ChurnCase& c, int round, Node* node, std::mt19937_64& rng) {
  // Heavy churn: up to a fifth of the keys leave and as many (plus the swing) arrive.
  const size_t leave = node->held.empty() ? 0 : rng() % (node->held.size() / 5 + 1);
  for (size_t i = 0; i < leave; ++i) node->RemoveAt(rng() % node->held.size());
  const size_t target = Target(c, round);
  while (node->held.size() > target) node->RemoveAt(rng() % node->held.size());
  while (node->held.size() < target) {
    // One add in twenty repeats a key already held (a cache storing it twice).
    if (!node->held.empty() && rng() % 20 == 0) {
      node->Add(node->held[rng() % node->held.size()]);
    } else {
      node->Add(RandomHash(rng));
    }
  }
}

void CheckPeer(const Node& node, const Receiver& peer) {
  const Summary& mine = node.builder.current();
  ASSERT_EQ(peer.summary.version, mine.version);
  ASSERT_TRUE(peer.summary.filter == mine.filter);
  ASSERT_EQ(peer.digest, node.builder.digest());
  BloomFilter projected;
  ASSERT_TRUE(node.filter.Project(mine.filter.log2_bits(), &projected).ok());
  ASSERT_TRUE(mine.filter == projected);
  for (const KeyHash& h : node.held) ASSERT_TRUE(peer.summary.filter.MayContain(h));
}

ChurnStats RunChurn(const ChurnCase& c, int rounds, uint64_t seed) {
  SummaryBuilderOptions options;
  options.origin = "churn-node";
  options.min_log2_bits = c.min_log2_bits;
  Node node(c.log2_counters, c.k, options);
  Receiver peer;
  std::mt19937_64 rng(seed);
  ChurnStats stats;
  constexpr BodyEncoding kEncodings[] = {BodyEncoding::kRaw, BodyEncoding::kZstd,
                                         BodyEncoding::kGolombRice};
  for (int round = 0; round < rounds; ++round) {
    ChurnRound(c, round, &node, rng);
    const unsigned before = node.builder.current().filter.log2_bits();
    const uint64_t version = node.builder.current().version;
    Publication p;
    EXPECT_TRUE(node.builder.Publish(&p).ok());
    if (p.changed) {
      EXPECT_EQ(node.builder.current().version, version + 1);
      peer.Take(node.builder, p, kEncodings[round % 3]);
      stats.fulls += p.full;
      stats.deltas += !p.full;
      const unsigned after = node.builder.current().filter.log2_bits();
      stats.grows += round > 0 && after > before;
      stats.shrinks += round > 0 && after < before;
    } else {
      EXPECT_EQ(node.builder.current().version, version);
    }
    CheckPeer(node, peer);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << c.name << " round " << round;
      break;
    }
  }
  return stats;
}

class BuilderChurn : public ::testing::TestWithParam<ChurnCase> {};

TEST_P(BuilderChurn, PeerNeverMissesAHeldKey) {
  const ChurnCase& c = GetParam();
  const ChurnStats stats = RunChurn(c, 300, 42 + c.k);
  EXPECT_GT(stats.deltas, 100) << c.name;
  EXPECT_GT(stats.grows, 0) << c.name;
  EXPECT_GT(stats.shrinks, 0) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, BuilderChurn,
    ::testing::Values(ChurnCase{"wire-lean", 22, 1, 8, 100, 20000},
                      ChurnCase{"balanced", 19, 2, 8, 100, 20000},
                      ChurnCase{"memory-lean", 18, 7, 8, 100, 20000},
                      // 1024 counters for up to 3000 keys: counters saturate and stay.
                      ChurnCase{"saturating", 10, 3, 6, 5, 3000}),
    [](const ::testing::TestParamInfo<ChurnCase>& param_info) {
      std::string name = param_info.param.name;
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace peerbloom
