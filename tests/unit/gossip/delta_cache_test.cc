// DeltaCache: contiguous chains, the byte cap, and what a requester gets back.
#include "lib/gossip/delta_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace peerbloom {
namespace {

std::vector<uint64_t> Bases(const std::vector<const CachedDelta*>& chain) {
  std::vector<uint64_t> out;
  for (const CachedDelta* d : chain) out.push_back(d->base_version);
  return out;
}

// (deltas held, bytes held)
std::pair<size_t, size_t> Held(const DeltaCache& c) { return {c.size(), c.bytes()}; }

TEST(DeltaCache, ServesTheChainFromAnyHeldBaseToTheCurrentVersion) {
  DeltaCache c;
  c.Add(1, 2, "aa", 100);
  c.Add(2, 3, "bbb", 100);
  c.Add(3, 4, "c", 100);
  EXPECT_EQ(Held(c), (std::pair<size_t, size_t>{3, 6}));
  EXPECT_EQ(Bases(c.From(1, 4)), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Bases(c.From(3, 4)), (std::vector<uint64_t>{3}));
  EXPECT_TRUE(c.From(0, 4).empty());  // older than the chain reaches
  EXPECT_TRUE(c.From(1, 5).empty());  // the chain does not end at the asked version
}

TEST(DeltaCache, DropsTheOldestBeyondTheByteCap) {
  DeltaCache c;
  c.Add(1, 2, "aaaa", 10);
  c.Add(2, 3, "bbbb", 10);
  c.Add(3, 4, "cccc", 10);  // 12 bytes: the first goes
  EXPECT_EQ(Held(c), (std::pair<size_t, size_t>{2, 8}));
  EXPECT_TRUE(c.From(1, 4).empty());
  EXPECT_EQ(Bases(c.From(2, 4)), (std::vector<uint64_t>{2, 3}));
}

TEST(DeltaCache, ABreakInTheChainOrAnOversizedDeltaStartsOver) {
  DeltaCache c;
  c.Add(1, 2, "aa", 100);
  c.Add(5, 6, "bb", 100);  // does not continue 1 -> 2
  EXPECT_EQ(Held(c), (std::pair<size_t, size_t>{1, 2}));
  EXPECT_TRUE(c.From(1, 6).empty());
  EXPECT_EQ(Bases(c.From(5, 6)), (std::vector<uint64_t>{5}));
  c.Add(6, 7, "ccccc", 4);  // larger than the cap: no chain can hold it
  EXPECT_EQ(Held(c), (std::pair<size_t, size_t>{0, 0}));
  EXPECT_TRUE(c.From(6, 7).empty());
  c.Add(7, 8, "dd", 100);
  c.Clear();
  EXPECT_EQ(Held(c), (std::pair<size_t, size_t>{0, 0}));
}

}  // namespace
}  // namespace peerbloom
