#include "peerbloom/hash.h"

#include <gtest/gtest.h>

#include <string>

#include "peerbloom/key_scheme.h"

namespace peerbloom {
namespace {

SipKey SequentialKey() {
  SipKey key;
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
  return key;
}

std::string SequentialBytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i);
  return s;
}

// Vectors from the SipHash paper's appendix and the reference implementation (key 00..0f,
// message 00..len-1). They prove the round function and padding are right.
TEST(SipHash, ReferenceVectors24) {
  EXPECT_EQ(SipHash64(2, 4, SequentialKey(), "", 0), 0x726fdb47dd0e0e31ULL);
  const std::string msg = SequentialBytes(15);
  EXPECT_EQ(SipHash64(2, 4, SequentialKey(), msg.data(), msg.size()), 0xa129ca6149be45e5ULL);
}

// The 128-bit output path against the reference implementation's vectors_sip128 (first
// two entries, read as two little-endian 64-bit words).
TEST(SipHash, ReferenceVectors24Wide) {
  const KeyHash empty = SipHash128(2, 4, SequentialKey(), "", 0);
  EXPECT_EQ(empty.h1, 0xe6a825ba047f81a3ULL);
  EXPECT_EQ(empty.h2, 0x930255c71472f66dULL);
  const std::string one = SequentialBytes(1);
  const KeyHash h = SipHash128(2, 4, SequentialKey(), one.data(), one.size());
  EXPECT_EQ(h.h1, 0x44af996bd8c187daULL);
  EXPECT_EQ(h.h2, 0x45fc229b11597634ULL);
}

// Pinned outputs of the index hash (SipHash-1-3-128). Every host must compute these; a
// change here moves every filter position in a cluster and needs a new HashScheme.
TEST(SipHash, PinnedIndexVectors13) {
  const SipKey key = SequentialKey();
  struct Case {
    size_t len;
    uint64_t h1, h2;
  } cases[] = {
      {0, 0xbea58827b2bc7ee7ULL, 0x013030dd6adb62fdULL},
      {7, 0xc3e0aaf223b98410ULL, 0x77ab4808c82e2fa6ULL},
      {8, 0xb4dae3d5e1fe12aaULL, 0x99c7f935ab164f72ULL},
      {15, 0x6c52bdb205557ec1ULL, 0x09017e1eeccd2129ULL},
      {63, 0x6f42fe4ee300584cULL, 0xad6052a70a6b9f07ULL},
  };
  for (const auto& c : cases) {
    const std::string msg = SequentialBytes(c.len);
    const KeyHash h = SipHash128(1, 3, key, msg.data(), msg.size());
    EXPECT_EQ(h.h1, c.h1) << "length " << c.len;
    EXPECT_EQ(h.h2, c.h2) << "length " << c.len;
  }
}

TEST(IndexKey, DerivedFromSecret) {
  const SipKey a = DeriveIndexKey("cluster secret");
  const SipKey b = DeriveIndexKey("cluster secret");
  const SipKey c = DeriveIndexKey("another secret");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Pinned: the derivation is part of the wire contract (docs/hashing.md).
  const SipKey pinned = {0x59, 0x2c, 0x1a, 0xcf, 0xc7, 0x61, 0x54, 0x0c,
                         0x92, 0xfb, 0xdb, 0xc9, 0x1e, 0xb5, 0x75, 0x00};
  EXPECT_EQ(a, pinned);
}

TEST(KeyScheme, SquidStoreKeyMatchesStoreLog) {
  // From ../shared/fixtures/squid/sample_store_A.log, first line.
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  const SquidKey key = encoder.SquidStoreKey("http://127.0.0.1:8080/obj1.txt");
  EXPECT_EQ(SquidKeyHex(key), "1DCD286542CB5C0FEE897C41AB94173F");
  SquidKey parsed;
  ASSERT_TRUE(ParseSquidKeyHex("1dcd286542cb5c0fee897c41ab94173f", &parsed));
  EXPECT_EQ(parsed, key);
  EXPECT_EQ(encoder.FromUrl("http://127.0.0.1:8080/obj1.txt"),
            std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
}

}  // namespace
}  // namespace peerbloom
