// PeerSummaries: held summaries in place, deltas applied whole or not at all, the encoded
// cache's byte cap.
#include "lib/gossip/peer_summaries.h"

#include <gtest/gtest.h>

#include <string>

namespace peerbloom {
namespace {

Summary Full(const std::string& origin, uint64_t version) {
  Summary s;
  s.origin = origin;
  s.epoch = 1;
  s.version = version;
  s.key_scheme = KeyScheme::kRaw;
  s.filter = BloomFilter(10, 2);
  s.filter.FlipBit(5);
  return s;
}

TEST(PeerSummaries, EncodedCacheKeepsNoMoreThanItsCap) {
  GossipOptions o;
  const Summary b = Full("b", 1);
  std::string bytes;
  ASSERT_TRUE(EncodeSummary(b, &bytes).ok());
  o.encoded_cache_bytes = bytes.size() + bytes.size() / 2;  // room for one
  PeerSummaries held(o);
  held.Store("b", b, 10);
  held.Store("c", Full("c", 1), 10);
  std::string out;
  ASSERT_TRUE(held.Encoded("b", &out));  // encoded and kept
  EXPECT_EQ(out, bytes);
  EXPECT_EQ(held.encoded_bytes(), bytes.size());
  ASSERT_TRUE(held.Encoded("c", &out));  // encoded, but no room to keep it
  EXPECT_EQ(held.encoded_bytes(), bytes.size());
  EXPECT_TRUE(held.Find("c")->encoded.empty());
  held.Drop("b");
  EXPECT_EQ(held.encoded_bytes(), 0u);
  EXPECT_FALSE(held.Encoded("b", &out));
  EXPECT_EQ(held.Find("b")->received_ms, 10);  // a drop keeps when it last arrived
}

TEST(PeerSummaries, ADeltaWithTheWrongResultChangesNothing) {
  GossipOptions o;
  PeerSummaries held(o);
  const Summary b = Full("b", 1);
  held.Store("b", b, 10);
  const uint64_t before = held.digest("b");
  SummaryDelta d;
  d.base_version = 1;
  d.version = 2;
  d.flipped = {7};
  d.result_digest = before;  // not what flipping 7 gives
  EXPECT_FALSE(held.ApplyDelta("b", d, "x", 20));
  EXPECT_EQ(held.digest("b"), before);
  EXPECT_EQ(held.Find("b")->version, 1u);
  d.result_digest = before ^ PositionDigest(7);
  EXPECT_TRUE(held.ApplyDelta("b", d, "x", 20));
  EXPECT_EQ(held.Find("b")->version, 2u);
  EXPECT_EQ(held.Find("b")->received_ms, 20);
  EXPECT_EQ(held.DeltasFrom("b", 1).size(), 1u);
  d.flipped = {1024};  // out of range
  d.base_version = 2;
  d.version = 3;
  EXPECT_FALSE(held.ApplyDelta("b", d, "y", 30));
  EXPECT_EQ(held.Find("b")->version, 2u);
}

}  // namespace
}  // namespace peerbloom
