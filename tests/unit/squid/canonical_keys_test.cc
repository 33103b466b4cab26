// The keys a real Squid gave URLs spelled many ways (tests/data/squid/canonical_keys.tsv,
// recorded by tests/integration/squid_canonical_url_test.cc) pin the canonicalization rules
// where no Squid runs: for every row, CanonicalSquidUrl must give the recorded canonical URL,
// MD5(0x01 || that URL) must be Squid's key, and what Squid refused must be refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "peerbloom/key_scheme.h"
#include "peerbloom/squid_url.h"
#include "tests/unit/squid/canonical_keys_tsv.h"

namespace peerbloom {
namespace {

TEST(CanonicalKeys, EverySpellingGetsTheKeySquidGaveIt) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/canonical_keys.tsv");
  ASSERT_TRUE(in) << "cannot open tests/data/squid/canonical_keys.tsv";
  int stored = 0, refused = 0, line_no = 0;
  KeyEncoder raw(KeyScheme::kSquidMd5);
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    SCOPED_TRACE("canonical_keys.tsv:" + std::to_string(line_no));
    squid_keys_tsv::Row row;
    ASSERT_TRUE(squid_keys_tsv::ParseRow(line, &row)) << line;
    SquidUrlOptions options;
    ASSERT_TRUE(squid_keys_tsv::ParseSettings(row.settings, &options)) << row.settings;
    std::string canonical;
    const Status s = CanonicalSquidUrl(row.spelling, options, &canonical);
    if (row.canonical == "-") {
      EXPECT_TRUE(s.IsInvalidArgument())
          << "squid answered " << row.key << ", we made '" << canonical << "'";
      ++refused;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(IsAbsoluteUrl(row.spelling)) << "who-has would refuse what squid stored";
    EXPECT_EQ(canonical, row.canonical);
    EXPECT_EQ(SquidKeyHex(raw.SquidStoreKey(row.canonical)), row.key)
        << "the recorded canonical URL is not what Squid hashed";
    KeyEncoder encoder(KeyScheme::kSquidMd5, options);
    const std::string_view key = encoder.FromUrl(row.spelling);
    SquidKey bytes;
    ASSERT_EQ(key.size(), bytes.size());
    std::copy(key.begin(), key.end(), bytes.begin());
    EXPECT_EQ(SquidKeyHex(bytes), row.key);
    ++stored;
  }
  // The fixture covers what it claims to: catch a truncated or emptied file.
  EXPECT_GE(stored, 35);
  EXPECT_GE(refused, 9);
}

TEST(CanonicalKeysTsv, EscapingRoundTrips) {
  const std::string text = std::string("a b\t\\\x01\xc3\xa9~", 9);
  const std::string escaped = squid_keys_tsv::Escape(text);
  EXPECT_EQ(escaped, "a\\x20b\\x09\\x5c\\x01\\xc3\\xa9~");
  std::string back;
  ASSERT_TRUE(squid_keys_tsv::Unescape(escaped, &back));
  EXPECT_EQ(back, text);
  EXPECT_FALSE(squid_keys_tsv::Unescape("a\\x2", &back));
  EXPECT_FALSE(squid_keys_tsv::Unescape("a\\y20", &back));
}

}  // namespace
}  // namespace peerbloom
