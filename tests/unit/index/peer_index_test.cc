#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "peerbloom/peer_index.h"
#include "peerbloom/summary.h"

namespace peerbloom {
namespace {

KeyHash RandomHash(std::mt19937_64& rng) { return KeyHash{rng(), rng()}; }

BloomFilter RandomFilter(std::mt19937_64& rng, unsigned log2_bits, unsigned k, int keys) {
  BloomFilter f(log2_bits, k);
  for (int i = 0; i < keys; ++i) f.Add(RandomHash(rng));
  return f;
}

// The reference: every slot's filter kept apart and scanned one by one.
class Reference {
 public:
  void Put(PeerIndex::Slot s, BloomFilter f) { filters_[s] = std::move(f); }
  void Erase(PeerIndex::Slot s) { filters_.erase(s); }
  BloomFilter& at(PeerIndex::Slot s) { return filters_.at(s); }
  std::vector<PeerIndex::Slot> Query(const KeyHash& h) const {
    std::vector<PeerIndex::Slot> out;
    for (const auto& [s, f] : filters_) {
      if (f.MayContain(h)) out.push_back(s);
    }
    return out;
  }
  const std::map<PeerIndex::Slot, BloomFilter>& filters() const { return filters_; }

 private:
  std::map<PeerIndex::Slot, BloomFilter> filters_;
};

std::vector<PeerIndex::Slot> Sorted(std::vector<PeerIndex::Slot> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Queries random keys and keys known to be in some filter; both must agree exactly.
void ExpectSameAnswers(const PeerIndex& index, const Reference& ref, std::mt19937_64& rng,
                       const std::vector<KeyHash>& present) {
  std::vector<KeyHash> keys = present;
  for (int i = 0; i < 2000; ++i) keys.push_back(RandomHash(rng));
  size_t positives = 0;
  for (const KeyHash& h : keys) {
    std::vector<PeerIndex::Slot> got;
    index.Query(h, &got);
    const auto want = ref.Query(h);
    ASSERT_EQ(Sorted(got), want);
    positives += want.size();
  }
  EXPECT_GT(positives, 0u);  // the comparison covered matches, not only empty answers
  std::vector<uint32_t> offsets;
  std::vector<PeerIndex::Slot> slots;
  index.QueryBatch(keys, &offsets, &slots);
  ASSERT_EQ(offsets.size(), keys.size() + 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<PeerIndex::Slot> got(slots.begin() + offsets[i], slots.begin() + offsets[i + 1]);
    ASSERT_EQ(Sorted(got), ref.Query(keys[i])) << "batch key " << i;
  }
}

TEST(PeerIndex, MatchesPerPeerScanAcrossGroupSizes) {
  for (int peers : {1, 7, 8, 9, 64, 65, 130}) {
    std::mt19937_64 rng(peers);
    PeerIndex index;
    Reference ref;
    std::vector<KeyHash> present;
    for (int p = 0; p < peers; ++p) {
      BloomFilter f(12, 3);
      for (int i = 0; i < 200; ++i) {
        const KeyHash h = RandomHash(rng);
        f.Add(h);
        if (i == 0) present.push_back(h);
      }
      const PeerIndex::Slot s = index.Insert(f);
      EXPECT_EQ(index.digest(s), FilterDigest(f));
      ref.Put(s, std::move(f));
    }
    EXPECT_EQ(index.size(), static_cast<size_t>(peers));
    EXPECT_EQ(index.groups(), 1u);
    ExpectSameAnswers(index, ref, rng, present);
  }
}

TEST(PeerIndex, ManyGeometriesFormGroups) {
  std::mt19937_64 rng(1);
  PeerIndex index;
  Reference ref;
  for (int p = 0; p < 90; ++p) {
    const unsigned log2_bits = 10 + static_cast<unsigned>(rng() % 4);
    const unsigned k = 1 + static_cast<unsigned>(rng() % 7);
    BloomFilter f = RandomFilter(rng, log2_bits, k, 100);
    const PeerIndex::Slot slot = index.Insert(f);
    ref.Put(slot, std::move(f));
  }
  EXPECT_GT(index.groups(), 10u);
  ExpectSameAnswers(index, ref, rng, {});
  for (const auto& [slot, f] : ref.filters()) {
    BloomFilter back;
    ASSERT_TRUE(index.Extract(slot, &back).ok());
    EXPECT_EQ(back, f);
  }
}

TEST(PeerIndex, FlipsTrackFilterAndDigest) {
  std::mt19937_64 rng(2);
  PeerIndex index;
  Reference ref;
  for (int p = 0; p < 20; ++p) {
    BloomFilter f = RandomFilter(rng, 11, 2, 150);
    const PeerIndex::Slot slot = index.Insert(f);
    ref.Put(slot, std::move(f));
  }
  for (int round = 0; round < 50; ++round) {
    const PeerIndex::Slot s = static_cast<PeerIndex::Slot>(rng() % 20);
    std::vector<uint64_t> flips;
    for (int i = 0; i < 30; ++i) flips.push_back(rng() % 2048);
    std::sort(flips.begin(), flips.end());
    flips.erase(std::unique(flips.begin(), flips.end()), flips.end());
    ASSERT_TRUE(index.Flip(s, flips).ok());
    for (uint64_t p : flips) ref.at(s).FlipBit(p);
    EXPECT_EQ(index.digest(s), FilterDigest(ref.at(s)));
  }
  ExpectSameAnswers(index, ref, rng, {});
  const uint64_t before = index.digest(3);
  const std::vector<uint64_t> out_of_range = {5, 2048};
  const Status st = index.Flip(3, out_of_range);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "position '2048' outside a filter of 2^11 bits");
  EXPECT_EQ(index.digest(3), before);
  BloomFilter back;
  ASSERT_TRUE(index.Extract(3, &back).ok());
  EXPECT_EQ(back, ref.at(3));  // nothing was flipped
}

TEST(PeerIndex, EraseReusesSlotsAndClearsColumns) {
  std::mt19937_64 rng(3);
  PeerIndex index;
  Reference ref;
  std::vector<PeerIndex::Slot> live;
  for (int step = 0; step < 400; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t i = rng() % live.size();
      index.Erase(live[i]);
      ref.Erase(live[i]);
      live[i] = live.back();
      live.pop_back();
    } else {
      BloomFilter f = RandomFilter(rng, 10 + static_cast<unsigned>(rng() % 2), 3, 60);
      const PeerIndex::Slot s = index.Insert(f);
      EXPECT_FALSE(std::count(live.begin(), live.end(), s));
      ref.Put(s, std::move(f));
      live.push_back(s);
    }
    if (step % 50 == 0) ExpectSameAnswers(index, ref, rng, {});
  }
  ExpectSameAnswers(index, ref, rng, {});
  EXPECT_EQ(index.size(), live.size());
  // Slots are reused: never more than the most ever live at once.
  for (PeerIndex::Slot s : live) EXPECT_LT(s, 400u);
  for (PeerIndex::Slot s : live) index.Erase(s);
  EXPECT_EQ(index.groups(), 0u);  // emptied groups are freed
}

TEST(PeerIndex, ReplaceMovesBetweenGroups) {
  std::mt19937_64 rng(4);
  PeerIndex index;
  Reference ref;
  for (int p = 0; p < 10; ++p) {
    BloomFilter f = RandomFilter(rng, 12, 4, 300);
    const PeerIndex::Slot slot = index.Insert(f);
    ref.Put(slot, std::move(f));
  }
  BloomFilter smaller = RandomFilter(rng, 10, 4, 100);
  ASSERT_TRUE(index.Replace(5, smaller).ok());
  ref.Put(5, smaller);
  BloomFilter same = RandomFilter(rng, 12, 4, 300);
  ASSERT_TRUE(index.Replace(6, same).ok());
  ref.Put(6, same);
  EXPECT_EQ(index.groups(), 2u);
  EXPECT_EQ(index.log2_bits(5), 10u);
  EXPECT_EQ(index.digest(5), FilterDigest(smaller));
  ExpectSameAnswers(index, ref, rng, {});
  EXPECT_TRUE(index.Replace(99, same).IsInvalidArgument());
}

class SetForeign : public ForeignSummary {
 public:
  explicit SetForeign(std::string key) : key_(std::move(key)) {}
  bool MayContain(std::string_view key_bytes, const KeyHash&) const noexcept override {
    return key_bytes == key_;
  }
  size_t memory_bytes() const noexcept override { return key_.size(); }

 private:
  std::string key_;
};

TEST(PeerIndex, ForeignSlotsAnswerThroughQueryKey) {
  PeerIndex index;
  BloomFilter f(10, 2);
  const KeyHash h{11, 13};
  f.Add(h);
  const PeerIndex::Slot a = index.Insert(f);
  const PeerIndex::Slot b = index.InsertForeign(std::make_unique<SetForeign>("url"));
  EXPECT_TRUE(index.IsForeign(b));
  EXPECT_FALSE(index.IsForeign(a));
  std::vector<PeerIndex::Slot> got;
  index.QueryKey("url", h, &got);
  EXPECT_EQ(Sorted(got), (std::vector<PeerIndex::Slot>{a, b}));
  got.clear();
  index.QueryKey("other", h, &got);
  EXPECT_EQ(got, std::vector<PeerIndex::Slot>{a});
  got.clear();
  index.Query(h, &got);  // bit-sliced only
  EXPECT_EQ(got, std::vector<PeerIndex::Slot>{a});
  BloomFilter out;
  EXPECT_TRUE(index.Extract(b, &out).IsInvalidArgument());
  index.Erase(b);
  EXPECT_FALSE(index.InUse(b));
}

TEST(PeerIndex, MemoryIsAboutOneFilterPerPeer) {
  PeerIndex index;
  for (int p = 0; p < 64; ++p) (void)index.Insert(BloomFilter(16, 3));
  const size_t filter_bytes = (size_t{1} << 16) / 8;
  // 64 peers in one group: 2^16 rows of 8 bytes, plus per-slot bookkeeping.
  EXPECT_GE(index.memory_bytes(), 64 * filter_bytes);
  EXPECT_LT(index.memory_bytes(), 64 * filter_bytes + 64 * 1024);
}

}  // namespace
}  // namespace peerbloom
