// Peers of different sizes (c x 2^j, c odd) and k in one index: every query answers as a
// scan of each peer's own filter, and no held key is ever missing.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "peerbloom/peer_index.h"
#include "peerbloom/summary.h"

namespace peerbloom {
namespace {

struct Shape {
  unsigned log2;
  unsigned k;
  unsigned multiplier;
};

TEST(PeerIndexMixedSizes, AnswersAsAScanOfEachFilter) {
  const Shape shapes[] = {{10, 1, 1}, {10, 1, 3}, {9, 1, 5}, {8, 2, 15}, {10, 2, 3}, {7, 3, 31}};
  std::mt19937_64 rng(21);
  PeerIndex index;
  std::map<PeerIndex::Slot, BloomFilter> reference;
  std::map<PeerIndex::Slot, std::vector<KeyHash>> held;
  for (int copy = 0; copy < 3; ++copy) {
    for (const Shape& s : shapes) {
      BloomFilter f(s.log2, s.k, s.multiplier);
      std::vector<KeyHash> keys;
      for (int i = 0; i < 60; ++i) keys.push_back(KeyHash{rng(), rng()});
      for (const KeyHash& h : keys) f.Add(h);
      const PeerIndex::Slot slot = index.Insert(f);
      EXPECT_EQ(index.multiplier(slot), s.multiplier);
      reference[slot] = std::move(f);
      held[slot] = std::move(keys);
    }
  }
  EXPECT_EQ(index.groups(), std::size(shapes));
  auto check = [&] {
    for (int q = 0; q < 3000; ++q) {
      const KeyHash h{rng(), rng()};
      std::vector<PeerIndex::Slot> got;
      index.Query(h, &got);
      std::vector<PeerIndex::Slot> want;
      for (const auto& [slot, f] : reference) {
        if (f.MayContain(h)) want.push_back(slot);
      }
      std::sort(got.begin(), got.end());
      ASSERT_EQ(got, want);
    }
    for (const auto& [slot, keys] : held) {
      for (const KeyHash& h : keys) {
        std::vector<PeerIndex::Slot> got;
        index.Query(h, &got);
        ASSERT_NE(std::find(got.begin(), got.end(), slot), got.end()) << slot;
      }
    }
  };
  check();
  // A peer changes size (a new full summary of another size), another takes a delta.
  const PeerIndex::Slot moved = reference.begin()->first;
  BloomFilter bigger(9, 1, 7);
  for (const KeyHash& h : held[moved]) bigger.Add(h);
  ASSERT_TRUE(index.Replace(moved, bigger).ok());
  reference[moved] = bigger;
  const PeerIndex::Slot flipped = std::next(reference.begin(), 3)->first;
  std::vector<uint64_t> positions;
  for (uint64_t p = 1; p < reference[flipped].bits(); p += 97) {
    if (!reference[flipped].TestBit(p)) positions.push_back(p);
  }
  ASSERT_TRUE(index.Flip(flipped, positions).ok());
  for (uint64_t p : positions) reference[flipped].FlipBit(p);
  EXPECT_EQ(index.digest(flipped), FilterDigest(reference[flipped]));
  BloomFilter extracted;
  ASSERT_TRUE(index.Extract(flipped, &extracted).ok());
  EXPECT_EQ(extracted, reference[flipped]);
  check();
  const uint64_t beyond = reference[flipped].bits();
  const Status st = index.Flip(flipped, std::vector<uint64_t>{beyond});
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(),
            "position '" + std::to_string(beyond) + "' outside a filter of " +
                SizeText(reference[flipped].log2_bits(), reference[flipped].multiplier()) +
                " bits");
}

}  // namespace
}  // namespace peerbloom
