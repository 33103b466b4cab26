// DeltaCache: contiguous chains, the byte cap, and what a requester gets back.
#include "lib/gossip/delta_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peerbloom {
namespace {

std::vector<uint64_t> Bases(const std::vector<const CachedDelta*>& chain) {
  std::vector<uint64_t> out;
  for (const CachedDelta* d : chain) out.push_back(d->base_version);
  return out;
}

TEST(DeltaCache, ServesTheChainFromAnyHeldBaseToTheCurrentVersion) {
  DeltaCache c;
  c.Add(1, 2, "aa", 100);
  c.Add(2, 3, "bbb", 100);
  c.Add(3, 4, "c", 100);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.bytes(), 6u);
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
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.bytes(), 8u);
  EXPECT_TRUE(c.From(1, 4).empty());
  EXPECT_EQ(Bases(c.From(2, 4)), (std::vector<uint64_t>{2, 3}));
}

TEST(DeltaCache, ADeltaLargerThanTheCapEmptiesIt) {
  DeltaCache c;
  c.Add(1, 2, "aa", 4);
  c.Add(2, 3, "bbbbb", 4);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_TRUE(c.From(2, 3).empty());
}

TEST(DeltaCache, ABreakInTheChainStartsANewOne) {
  DeltaCache c;
  c.Add(1, 2, "aa", 100);
  c.Add(5, 6, "bb", 100);
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.bytes(), 2u);
  EXPECT_TRUE(c.From(1, 6).empty());
  EXPECT_EQ(Bases(c.From(5, 6)), (std::vector<uint64_t>{5}));
  c.Clear();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
}

}  // namespace
}  // namespace peerbloom
