#include "peerbloom/byte_io.h"

#include <gtest/gtest.h>

#include <string>

namespace peerbloom {
namespace {

TEST(ByteIo, FixedWidthIntegersAreLittleEndian) {
  std::string out;
  PutU8(&out, 0x01);
  PutU16(&out, 0x0302);
  PutU32(&out, 0x07060504);
  PutU64(&out, 0x0f0e0d0c0b0a0908ULL);
  ASSERT_EQ(out.size(), 15u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<char>(i + 1)) << i;

  ByteReader in(out);
  uint8_t a = 0;
  uint16_t b = 0;
  uint32_t c = 0;
  uint64_t d = 0;
  ASSERT_TRUE(in.ReadU8(&a) && in.ReadU16(&b) && in.ReadU32(&c) && in.ReadU64(&d));
  EXPECT_EQ(a, 0x01);
  EXPECT_EQ(b, 0x0302);
  EXPECT_EQ(c, 0x07060504u);
  EXPECT_EQ(d, 0x0f0e0d0c0b0a0908ULL);
  EXPECT_EQ(in.remaining(), 0u);
  EXPECT_EQ(LoadFixed(out.data() + 3, 4), 0x07060504u);
}

TEST(ByteIo, AShortReadFailsAndLeavesTheCursor) {
  const std::string bytes("\x01\x02\x03", 3);
  ByteReader in(bytes);
  uint32_t v = 0;
  EXPECT_FALSE(in.ReadU32(&v));
  EXPECT_EQ(in.position(), 0u);
  std::string_view view;
  EXPECT_FALSE(in.ReadBytes(4, &view));
  EXPECT_FALSE(in.Skip(4));
  EXPECT_EQ(in.position(), 0u);
  ASSERT_TRUE(in.ReadBytes(3, &view));
  EXPECT_EQ(view, bytes);
}

TEST(ByteIo, VarintsRoundTripAtEveryGroupBoundary) {
  for (int bits = 0; bits <= 64; ++bits) {
    for (int64_t delta = -1; delta <= 1; ++delta) {
      const uint64_t base = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits);
      const uint64_t value = base + static_cast<uint64_t>(delta);
      std::string out;
      PutVarint(&out, value);
      ByteReader in(out);
      uint64_t back = 0;
      ASSERT_TRUE(in.ReadVarint(&back)) << value;
      EXPECT_EQ(back, value);
      EXPECT_EQ(in.remaining(), 0u) << value;
    }
  }
}

TEST(ByteIo, VarintsHaveOneEncodingAndBadOnesLeaveTheCursor) {
  struct Case {
    std::string bytes;
    const char* why;
  };
  const Case bad[] = {
      {std::string("\x80\x00", 2), "trailing zero group"},
      {std::string("\x80", 1), "truncated"},
      {std::string(10, '\xff'), "eleven groups needed"},
      {std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10), "bits beyond 64"},
  };
  for (const Case& c : bad) {
    ByteReader in(c.bytes);
    uint64_t v = 7;
    EXPECT_FALSE(in.ReadVarint(&v)) << c.why;
    EXPECT_EQ(v, 7u) << c.why;
    EXPECT_EQ(in.position(), 0u) << c.why;
  }
}

TEST(ByteIo, Str8CarriesItsLength) {
  std::string out;
  PutStr8(&out, "node-a");
  PutStr8(&out, "");
  ByteReader in(out);
  std::string a = "x", b = "x";
  ASSERT_TRUE(in.ReadStr8(&a) && in.ReadStr8(&b));
  EXPECT_EQ(a, "node-a");
  EXPECT_EQ(b, "");
  const std::string cut(
      "\x05"
      "ab",
      3);
  ByteReader short_in(cut);
  EXPECT_FALSE(short_in.ReadStr8(&a));
  EXPECT_EQ(short_in.position(), 0u);
}

}  // namespace
}  // namespace peerbloom
