// The cache-file metadata and swap.state record parsers, on real Squid 5.7 bytes
// (tests/data/squid/cache_dir, see its README) and on every truncation and corruption of them.
#include "peerbloom/squid_swap_meta.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace peerbloom {
namespace {

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The first cache file: http://127.0.0.1:40789/o1.html, 124 bytes of metadata + 256 of reply.
std::string FirstFile() { return ReadData("cache_dir/00/00/00000000"); }
constexpr size_t kFirstHeader = 124;

void PutLe(std::string* s, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

std::string Le(uint64_t v, size_t n) {
  std::string s(n, '\0');
  PutLe(&s, 0, v, n);
  return s;
}

// Metadata built from (type, value) entries, with the length Squid would write.
std::string BuildMeta(const std::vector<std::pair<uint8_t, std::string>>& entries) {
  std::string body;
  for (const auto& [type, value] : entries) {
    body += static_cast<char>(type);
    body += Le(value.size(), 4);
    body += value;
  }
  return std::string(1, '\x03') + Le(body.size() + 5, 4) + body;
}

std::string Key(uint8_t fill) { return std::string(16, static_cast<char>(fill)); }

std::string Message(std::string_view bytes) {
  SwapMeta meta;
  const Status s = ParseSquidSwapMeta(bytes, &meta);
  return s.ok() ? "ok" : s.message();
}

TEST(SquidSwapMeta, ParsesARealCacheFile) {
  const std::string file = FirstFile();
  ASSERT_EQ(file.size(), 380u);
  SwapMeta meta;
  ASSERT_TRUE(ParseSquidSwapMeta(file, &meta).ok());
  EXPECT_EQ(meta.header_bytes, kFirstHeader);
  EXPECT_EQ(SquidKeyHex(meta.key), "2E73D09DFC743754A98DF5E8FACEF7E9");
  EXPECT_EQ(meta.url, "http://127.0.0.1:40789/o1.html");
  EXPECT_EQ(meta.object_size, 256);
  EXPECT_EQ(meta.complete_file_size(), 380);
  ASSERT_TRUE(meta.has_std);
  EXPECT_EQ(meta.std.swap_file_sz, 0u);     // unknown when Squid writes the metadata
  EXPECT_EQ(meta.std.lastmod, 1704067200);  // the origin's Last-Modified
  EXPECT_EQ(meta.std.refcount, 1);
  EXPECT_FALSE(meta.key_private());
  EXPECT_TRUE(meta.vary_headers.empty());
  EXPECT_EQ(meta.unknown_entries, 0u);
  EXPECT_EQ(file.substr(meta.header_bytes, 15), "HTTP/1.1 200 OK");
  // The key is the public store key of the URL.
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  EXPECT_EQ(meta.key, encoder.SquidStoreKey(meta.url));
  EXPECT_EQ(PeekSquidSwapMetaLength(file), kFirstHeader);
}

TEST(SquidSwapMeta, EveryTruncatedPrefixIsRefusedWithItsReason) {
  const std::string file = FirstFile();
  for (size_t n = 0; n < kFirstHeader; ++n) {
    const std::string expected =
        n < 5 ? "swap metadata of '" + std::to_string(n) +
                    "' bytes is shorter than its '5'-byte prefix"
              : "swap metadata length '124' is beyond the '" + std::to_string(n) + "' bytes read";
    EXPECT_EQ(Message(std::string_view(file).substr(0, n)), expected) << n;
  }
  // The metadata alone is enough; the reply after it is not read.
  for (size_t n = kFirstHeader; n <= file.size(); ++n) {
    EXPECT_EQ(Message(std::string_view(file).substr(0, n)), "ok") << n;
  }
}

TEST(SquidSwapMeta, EveryCorruptedByteIsRefusedOrHarmless) {
  const std::string file = FirstFile().substr(0, kFirstHeader);
  size_t refused = 0;
  for (size_t i = 0; i < file.size(); ++i) {
    for (int flip : {0x01, 0x10, 0x80, 0xFF}) {
      std::string bad = file;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      SwapMeta meta;
      const Status s = ParseSquidSwapMeta(bad, &meta);
      if (s.ok()) {
        EXPECT_LE(meta.header_bytes, bad.size());
        EXPECT_LE(meta.url.size(), bad.size());
        continue;
      }
      ++refused;
      EXPECT_FALSE(s.message().empty());
      EXPECT_TRUE(s.IsCorruption() || s.IsResourceExhausted()) << s.ToString();
    }
  }
  // Corrupting the framing (first byte, lengths, types) is refused; key and value bytes
  // parse as other values. Counted to show the loop exercised both outcomes.
  EXPECT_GT(refused, 40u);
}

TEST(SquidSwapMeta, RefusesCorruptFramingWithExactMessages) {
  const std::string file = FirstFile().substr(0, kFirstHeader);
  auto with = [&](size_t at, uint64_t v, size_t n) {
    std::string s = file;
    PutLe(&s, at, v, n);
    return Message(s);
  };
  EXPECT_EQ(with(0, 4, 1), "swap metadata starts with byte '4', expected '3'");
  EXPECT_EQ(with(1, 9, 4), "swap metadata length '9' is below the minimum of '10'");
  EXPECT_EQ(with(1, 0xFFFFFFFF, 4), "swap metadata length '-1' is below the minimum of '10'");
  EXPECT_EQ(with(1, 300000, 4), "swap metadata length '300000' exceeds the limit of '262144'");
  EXPECT_EQ(with(1, 125, 4), "swap metadata length '125' is beyond the '124' bytes read");
  // The key entry (type at 5, length at 6).
  EXPECT_EQ(with(6, 15, 4), "store key entry has length '15', expected '16'");
  EXPECT_EQ(with(6, 1000, 4),
            "swap metadata entry of type '3' at offset '5' has length '1000', beyond the "
            "metadata length '124'");
  EXPECT_EQ(with(6, 0xFFFFFFFB, 4),
            "swap metadata entry of type '3' at offset '5' has length '-5', beyond the "
            "metadata length '124'");
  EXPECT_EQ(with(10, 0, 16), "store key is all zero");
  EXPECT_EQ(with(5, 1, 1), "swap metadata has no store key");  // obsolete type: skipped
  // STD_LFS (type at 26), URL (type at 75), OBJSIZE (type at 111, value at 116).
  EXPECT_EQ(with(27, 43, 4), "standard entry has length '43', expected '44'");
  EXPECT_EQ(with(75, kSwapMetaKeyMd5, 1), "store key entry has length '31', expected '16'");
  EXPECT_EQ(with(111, kSwapMetaStdLfs, 1), "standard entry has length '8', expected '44'");
  EXPECT_EQ(with(116, 0xFFFFFFFFFFFFFFFF, 8), "object size '-1' is negative");
  EXPECT_EQ(with(111, kSwapMetaObjSize + 3, 1), "ok");  // an unknown type is skipped
  // Metadata that ends inside the last entry's head or value.
  std::string cut = file;
  PutLe(&cut, 1, 120, 4);
  EXPECT_EQ(Message(cut),
            "swap metadata entry of type '10' at offset '111' has length '8', beyond the "
            "metadata length '120'");
  PutLe(&cut, 1, 113, 4);
  EXPECT_EQ(Message(cut), "swap metadata entry at offset '111' is truncated");
}

TEST(SquidSwapMeta, BuiltMetadata) {
  SwapMeta meta;
  ASSERT_TRUE(ParseSquidSwapMeta(BuildMeta({{kSwapMetaKeyMd5, Key(7)},
                                            {kSwapMetaVaryHeaders, "accept-encoding=\"gzip\""},
                                            {12, "x"},
                                            {kSwapMetaUrl, std::string("http://a/\0junk", 14)}}),
                                 &meta)
                  .ok());
  EXPECT_EQ(SquidKeyHex(meta.key), "07070707070707070707070707070707");
  EXPECT_EQ(meta.url, "http://a/");
  EXPECT_EQ(meta.vary_headers, "accept-encoding=\"gzip\"");
  EXPECT_EQ(meta.unknown_entries, 1u);
  EXPECT_FALSE(meta.has_std);
  EXPECT_EQ(meta.object_size, -1);
  EXPECT_EQ(meta.complete_file_size(), -1);

  EXPECT_EQ(Message(BuildMeta({{kSwapMetaKeyMd5, Key(1)}, {kSwapMetaKeyMd5, Key(2)}})),
            "swap metadata has two store keys");
  EXPECT_EQ(Message(BuildMeta({{kSwapMetaUrl, "http://a/"}})), "swap metadata has no store key");
  EXPECT_EQ(Message(BuildMeta({{kSwapMetaKeyMd5, Key(1)}, {kSwapMetaObjSize, "1234"}})),
            "object size entry has length '4', expected '8'");
  // The private flag (KEY_PRIVATE, bit 7 of the flags).
  std::string std_block(kSwapMetaStdBytes, '\0');
  PutLe(&std_block, 42, kSquidFlagKeyPrivate, 2);
  ASSERT_TRUE(ParseSquidSwapMeta(
                  BuildMeta({{kSwapMetaKeyMd5, Key(1)}, {kSwapMetaStdLfs, std_block}}), &meta)
                  .ok());
  EXPECT_TRUE(meta.key_private());
}

TEST(SquidSwapMeta, PeekLength) {
  EXPECT_EQ(PeekSquidSwapMetaLength(""), 0u);
  EXPECT_EQ(PeekSquidSwapMetaLength(std::string("\x03\x10\x00\x00", 4)), 0u);
  EXPECT_EQ(PeekSquidSwapMetaLength(std::string("\x04\x10\x00\x00\x00", 5)), 0u);
  EXPECT_EQ(PeekSquidSwapMetaLength(std::string("\x03\x10\x00\x00\x00", 5)), 16u);
  EXPECT_EQ(PeekSquidSwapMetaLength(std::string("\x03\xff\xff\xff\xff", 5)), 0u);
}

// swap.state ---------------------------------------------------------------------------

// Squid's SwapChecksum24, written independently of the library's.
uint32_t Checksum(uint32_t a, uint32_t b, uint32_t c) {
  uint64_t sum = uint64_t{a} + b + c;
  while (sum >> 24) sum = (sum & 0xFFFFFF) + (sum >> 24);
  return static_cast<uint32_t>(~sum) & 0xFFFFFF;
}

std::string Header(int32_t version, int32_t record_size) {
  std::string h(kSwapStateRecordBytes, '\0');
  h[0] = 3;
  PutLe(&h, 1, Checksum(version, record_size, 0), 3);
  PutLe(&h, 4, static_cast<uint32_t>(version), 4);
  PutLe(&h, 8, static_cast<uint32_t>(record_size), 4);
  return h;
}

std::string SwapStateMessage(std::string_view bytes) {
  const Status s = ParseSwapStateHeader(bytes);
  return s.ok() ? "ok" : s.ToString();
}

TEST(SquidSwapState, HeaderOfARealFile) {
  const std::string file = ReadData("cache_dir/swap.state");
  ASSERT_EQ(file.size(), 6 * kSwapStateRecordBytes);  // header + 4 ADD + 1 DEL
  EXPECT_EQ(SwapStateMessage(file), "ok");
  EXPECT_EQ(file.substr(0, 72), Header(2, 72));
  for (size_t n = 0; n < 12; ++n) {
    EXPECT_EQ(SwapStateMessage(std::string_view(file).substr(0, n)),
              "corruption: swap.state of '" + std::to_string(n) +
                  "' bytes is shorter than its '12'-byte header");
  }
  EXPECT_EQ(SwapStateMessage(std::string_view(file).substr(0, 12)), "ok");
  std::string bad = file;
  bad[2] ^= 1;
  EXPECT_EQ(SwapStateMessage(bad), "corruption: swap.state header checksum does not match");
  bad = file;
  bad[0] = 1;  // a version 1 file starts with a record
  EXPECT_EQ(SwapStateMessage(bad),
            "not supported: swap.state starts with op '1', expected '3' (a version 2 header)");
  EXPECT_EQ(SwapStateMessage(Header(3, 72)),
            "not supported: swap.state version '3' is not supported; this reader has '2'");
  EXPECT_EQ(SwapStateMessage(Header(2, 48)),
            "not supported: swap.state record size '48' is not supported; this reader has '72'");
}

TEST(SquidSwapState, RecordsOfARealFile) {
  const std::string file = ReadData("cache_dir/swap.state");
  const char* expected[] = {
      "1:0:2E73D09DFC743754A98DF5E8FACEF7E9", "1:1:2E17334650599715A07B9951D8C4B54C",
      "1:2:1DD3E1A888FDEC8B1196A463B3A8F35F", "1:3:051211522064ADECFD8CE2C5BA4DA42E",
      "2:3:051211522064ADECFD8CE2C5BA4DA42E"};
  for (size_t i = 0; i < 5; ++i) {
    SwapStateRecord r;
    ASSERT_TRUE(ParseSwapStateRecord(file.substr(72 * (i + 1), 72), &r).ok()) << i;
    EXPECT_EQ(std::to_string(static_cast<int>(r.op)) + ":" + std::to_string(r.file_number) + ":" +
                  SquidKeyHex(r.key),
              expected[i]);
    EXPECT_EQ(r.std.swap_file_sz, 380u);  // the file size, known when the write ended
  }
}

TEST(SquidSwapState, RecordRefusals) {
  const std::string record = ReadData("cache_dir/swap.state").substr(72, 72);
  auto message = [](std::string_view bytes) {
    SwapStateRecord r;
    const Status s = ParseSwapStateRecord(bytes, &r);
    return s.ok() ? "ok" : s.message();
  };
  for (size_t n = 0; n < 72; ++n) {
    EXPECT_EQ(message(std::string_view(record).substr(0, n)),
              "swap.state record of '" + std::to_string(n) + "' bytes, expected '72'");
  }
  // The checksum covers the file number and the size.
  for (size_t i : {1, 2, 3, 4, 5, 6, 7, 40, 41, 44, 47}) {
    std::string bad = record;
    bad[i] ^= 0x20;
    EXPECT_EQ(message(bad), "swap.state record checksum does not match") << i;
  }
  auto with = [&](size_t at, uint64_t v, size_t n) {
    std::string s = record;
    PutLe(&s, at, v, n);
    return message(s);
  };
  EXPECT_EQ(with(0, 0, 1), "swap.state record has op '0', expected '1' or '2'");
  EXPECT_EQ(with(0, 3, 1), "swap.state record has op '3', expected '1' or '2'");
  EXPECT_EQ(with(16, static_cast<uint64_t>(-3), 8), "swap.state record has time '-3'");
  EXPECT_EQ(with(16, static_cast<uint64_t>(-2), 8), "ok");
  EXPECT_EQ(with(52, 0, 16), "swap.state record has an all-zero store key");
  // A negative file number and a zero size, with their checksums made right.
  std::string s = record;
  PutLe(&s, 4, 0xFFFFFFFF, 4);
  PutLe(&s, 1, Checksum(0xFFFFFFFF, 0, 380), 3);
  EXPECT_EQ(message(s), "swap.state record has file number '-1'");
  s = record;
  PutLe(&s, 40, 0, 8);
  PutLe(&s, 1, Checksum(0, 0, 0), 3);
  EXPECT_EQ(message(s), "swap.state record has file size '0'");
  // Squid keeps 24 bits of the file number.
  s = record;
  PutLe(&s, 4, 0x05000007, 4);
  PutLe(&s, 1, Checksum(0x05000007, 0, 380), 3);
  SwapStateRecord r;
  ASSERT_TRUE(ParseSwapStateRecord(s, &r).ok());
  EXPECT_EQ(r.file_number, 7u);
}

}  // namespace
}  // namespace peerbloom
