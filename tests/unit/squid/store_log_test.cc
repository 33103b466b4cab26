#include "peerbloom/squid_store_log.h"

#include <gtest/gtest.h>

#include <string>

namespace peerbloom {
namespace {

constexpr std::string_view kSwapOut =
    "1795327317.643 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F  200 1795327317 "
    "1795327306 1795413717 text/plain 1354/1354 GET http://127.0.0.1:8080/obj1.txt";

Status Parse(std::string_view line) {
  StoreLogEntry e;
  return ParseStoreLogLine(line, &e);
}

TEST(StoreLogLine, ParsesARealSwapOut) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine(kSwapOut, &e).ok());
  EXPECT_EQ(e.action, StoreLogAction::kSwapOut);
  EXPECT_EQ(e.action_name, "SWAPOUT");
  EXPECT_EQ(SquidKeyHex(e.key), "1DCD286542CB5C0FEE897C41AB94173F");
  EXPECT_EQ(e.content_type, "text/plain");
  EXPECT_EQ(e.method, "GET");
  EXPECT_EQ(e.url, "http://127.0.0.1:8080/obj1.txt");
  EXPECT_FALSE(e.squid_internal);
}

// The key column is MD5(0x01 || URL) for a GET: the log and who-has meet on the same bytes.
TEST(StoreLogLine, KeyIsTheStoreKeyOfTheUrl) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine(kSwapOut, &e).ok());
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  EXPECT_EQ(e.key, encoder.SquidStoreKey(e.url));
}

TEST(StoreLogLine, ActionsAndPaddedFields) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine("1795328056.953 RELEASE -1 FFFFFFFF "
                                "0500000000000000A77D000000000000  404 1795328056        -1 "
                                "1795414456 text/html 335/335 GET "
                                "http://127.0.0.1:8080/fresh1.html",
                                &e)
                  .ok());
  EXPECT_EQ(e.action, StoreLogAction::kRelease);
  EXPECT_EQ(e.url, "http://127.0.0.1:8080/fresh1.html");
  ASSERT_TRUE(ParseStoreLogLine("1.5 SO_FAIL 00 00000001 1DCD286542CB5C0FEE897C41AB94173F 200 "
                                "1 1 1 text/plain -1/0 GET http://h/x",
                                &e)
                  .ok());
  EXPECT_EQ(e.action, StoreLogAction::kSoFail);
  ASSERT_TRUE(ParseStoreLogLine("1 FROBNICATE 00 00000001 1DCD286542CB5C0FEE897C41AB94173F 200 "
                                "1 1 1 text/plain 1/1 GET http://h/x",
                                &e)
                  .ok());
  EXPECT_EQ(e.action, StoreLogAction::kOther);
  EXPECT_EQ(e.action_name, "FROBNICATE");
}

// Squid 5.7 src/store_log.cc prints an object without a memory copy (most evictions of
// on-disk objects) with '?' in every field after the key.
constexpr std::string_view kBareRelease =
    "1795329001.118 RELEASE 00 0000007B 09CE0016B72C430B13CE6715158BEDE7   ?         ?     "
    "    ?         ? ?/? ?/? ? ?";

TEST(StoreLogLine, ReleaseWithoutMemoryObjectKeepsItsKey) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine(kBareRelease, &e).ok());
  EXPECT_EQ(e.action, StoreLogAction::kRelease);
  EXPECT_EQ(SquidKeyHex(e.key), "09CE0016B72C430B13CE6715158BEDE7");
  EXPECT_EQ(e.content_type, "?/?");
  EXPECT_EQ(e.method, "?");
  EXPECT_EQ(e.url, "?");
  EXPECT_FALSE(e.squid_internal);
}

// A memory object whose URIs are not set yet logs "?" as its URL; its reply may be empty
// (status 0, dates -1, content type "unknown", length -1).
TEST(StoreLogLine, MemoryObjectWithoutUrisOrReply) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine("1795329001.118 RELEASE -1 FFFFFFFF "
                                "0100000000000000B17D000000000000    0        -1        -1    "
                                "    -1 unknown -1/0 GET ?",
                                &e)
                  .ok());
  EXPECT_EQ(e.action, StoreLogAction::kRelease);
  EXPECT_EQ(e.content_type, "unknown");
  EXPECT_EQ(e.url, "?");
}

// A RELEASE is applied on its key whatever the fields after the key hold; other actions
// still need a well-formed line.
TEST(StoreLogLine, ReleaseNeedsOnlyItsKeyFields) {
  constexpr std::string_view kOdd[] = {
      "1 RELEASE 00 0000007B 09CE0016B72C430B13CE6715158BEDE7",
      "1 RELEASE 00 0000007B 09CE0016B72C430B13CE6715158BEDE7 OK ? ? ? x",
      "1 RELEASE 00 0000007B 09CE0016B72C430B13CE6715158BEDE7 ? ? ? ? ?/? ?? ? ?",
      "1 RELEASE 00 0000007B 09CE0016B72C430B13CE6715158BEDE7   ?  ?\t? ? ?/? ?/? ? ?",
  };
  for (std::string_view line : kOdd) {
    StoreLogEntry e;
    ASSERT_TRUE(ParseStoreLogLine(line, &e).ok()) << line;
    EXPECT_EQ(e.action, StoreLogAction::kRelease);
    EXPECT_EQ(SquidKeyHex(e.key), "09CE0016B72C430B13CE6715158BEDE7");
    EXPECT_FALSE(e.squid_internal);
  }
  EXPECT_EQ(Parse("1 SWAPOUT 00 0000007B 09CE0016B72C430B13CE6715158BEDE7 OK ? ? ? t 1/1 GET "
                  "http://h/x")
                .message(),
            "http status 'OK' is not an integer");
  EXPECT_EQ(Parse("1 RELEASE 00 0000007B 09CE0016B72C430B13CE6715158BEDE").message(),
            "store key '09CE0016B72C430B13CE6715158BEDE' is not 32 hex digits");
  EXPECT_EQ(Parse("1 RELEASE 00 0000007B").message(),
            "line has '4' fields, expected at least '13'");
}

// Every prefix of a bare RELEASE fails with a reason until its key is whole, and then
// releases that key: a torn line never releases a different key.
TEST(StoreLogLine, EveryPrefixOfABareReleaseFailsOrKeepsTheKey) {
  const size_t key_end = kBareRelease.find("   ?");
  for (size_t n = 0; n < kBareRelease.size(); ++n) {
    StoreLogEntry e;
    const Status s = ParseStoreLogLine(kBareRelease.substr(0, n), &e);
    if (n < key_end) {
      EXPECT_FALSE(s.ok()) << n;
    } else {
      ASSERT_TRUE(s.ok()) << n;
      EXPECT_EQ(SquidKeyHex(e.key), "09CE0016B72C430B13CE6715158BEDE7");
    }
  }
}

TEST(StoreLogLine, ContentTypeWithSpacesIsCountedFromBothEnds) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine("1795327317.643 SWAPOUT 00 00000000 "
                                "1DCD286542CB5C0FEE897C41AB94173F  200 1795327317 1795327306 "
                                "1795413717 text/html; charset=utf-8 1354/1354 GET "
                                "http://127.0.0.1:8080/a.html\r",
                                &e)
                  .ok());
  EXPECT_EQ(e.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(e.method, "GET");
  EXPECT_EQ(e.url, "http://127.0.0.1:8080/a.html");
}

// With `uri_whitespace allow` a URL may hold spaces: the sizes field is then found from the
// left, and the URL is the rest of the line.
TEST(StoreLogLine, UrlWithSpacesFallsBackToTheSizesField) {
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine("1795327317.643 SWAPOUT 00 00000000 "
                                "1DCD286542CB5C0FEE897C41AB94173F  200 1 1 1 text/html; "
                                "charset=utf-8 10/10 GET http://h/a b c",
                                &e)
                  .ok());
  EXPECT_EQ(SquidKeyHex(e.key), "1DCD286542CB5C0FEE897C41AB94173F");
  EXPECT_EQ(e.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(e.method, "GET");
  EXPECT_EQ(e.url, "http://h/a b c");
  // Without a sizes field anywhere the line stays malformed.
  EXPECT_FALSE(ParseStoreLogLine("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 "
                                 "1 t x GET http://h/a b",
                                 &e)
                   .ok());
}

TEST(StoreLogLine, SquidInternalUrlsAreFlagged) {
  EXPECT_TRUE(IsSquidInternalUrl("http://127.0.0.1:3128/squid-internal-periodic/store_digest"));
  EXPECT_TRUE(IsSquidInternalUrl("http://h:3129/squid-internal-mgr/digest_stats"));
  EXPECT_TRUE(IsSquidInternalUrl("/squid-internal-static/icons/x.png"));
  EXPECT_FALSE(IsSquidInternalUrl("http://h/o48.html"));
  EXPECT_FALSE(IsSquidInternalUrl("/o48.html"));
  EXPECT_FALSE(IsSquidInternalUrl("http://h/a/squid-internal-periodic/x"));
  EXPECT_FALSE(IsSquidInternalUrl("http://h/squid-internalx"));
  EXPECT_FALSE(IsSquidInternalUrl("http://squid-internal-host"));
  EXPECT_FALSE(IsSquidInternalUrl("?"));
}

TEST(StoreLogLine, MalformedLinesSayWhy) {
  EXPECT_EQ(Parse("").message(), "empty line");
  EXPECT_EQ(Parse("   \r").message(), "empty line");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F").message(),
            "line has '5' fields, expected at least '13'");
  // Twelve fields: the content type is missing.
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 1 1/1 GET "
                  "http://h/x")
                .message(),
            "line has '12' fields, expected at least '13'");
  EXPECT_EQ(Parse("x1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 1 t 1/1 "
                  "GET http://h/x")
                .message(),
            "timestamp 'x1' is not a number");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173 200 1 1 1 t 1/1 GET "
                  "http://h/x")
                .message(),
            "store key '1DCD286542CB5C0FEE897C41AB94173' is not 32 hex digits");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173G 200 1 1 1 t 1/1 GET "
                  "http://h/x")
                .message(),
            "store key '1DCD286542CB5C0FEE897C41AB94173G' is not 32 hex digits");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F OK 1 1 1 t 1/1 GET "
                  "http://h/x")
                .message(),
            "http status 'OK' is not an integer");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 1 t 11 GET "
                  "http://h/x")
                .message(),
            "sizes field '11' is not 'expected/real'");
}

TEST(StoreLogLine, BytesThatAreNotUtf8AreQuotedEscaped) {
  EXPECT_EQ(Parse("\xff"
                  "1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 1 t 1/1 "
                  "GET http://h/x")
                .message(),
            R"(timestamp '\xff1' is not a number)");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 \xed\xa0\x80 200 1 1 1 t 1/1 GET http://h/x").message(),
            R"(store key '\xed\xa0\x80' is not 32 hex digits)");
  EXPECT_EQ(Parse("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 1 t "
                  "1/1\x1b[2J GET http://h/x")
                .message(),
            R"(sizes field '1/1\x1b[2J' is not 'expected/real')");
  // A URL that is not UTF-8 is data, not an error: Squid logs what it was asked for.
  StoreLogEntry e;
  ASSERT_TRUE(ParseStoreLogLine("1 SWAPOUT 00 00000000 1DCD286542CB5C0FEE897C41AB94173F 200 1 1 "
                                "1 t 1/1 GET http://h/caf\xe9",
                                &e)
                  .ok());
  EXPECT_EQ(e.url, "http://h/caf\xe9");
}

TEST(StoreLogLine, OverlongLineIsRefusedUnread) {
  std::string line(kSwapOut);
  line.append(kMaxStoreLogLineBytes - line.size(), 'a');
  EXPECT_TRUE(Parse(line).ok());  // exactly at the limit: the URL just got longer
  line.push_back('a');
  EXPECT_EQ(Parse(line).message(), "line of '32769' bytes exceeds the limit of '32768'");
}

// Every prefix of a valid line either fails with a reason or (once the URL has started)
// parses with the same key: a torn last line never yields a different key.
TEST(StoreLogLine, EveryPrefixFailsCleanlyOrKeepsTheKey) {
  StoreLogEntry full;
  ASSERT_TRUE(ParseStoreLogLine(kSwapOut, &full).ok());
  const size_t url_start = kSwapOut.find("http://");
  for (size_t n = 0; n < kSwapOut.size(); ++n) {
    StoreLogEntry e;
    const Status s = ParseStoreLogLine(kSwapOut.substr(0, n), &e);
    if (n <= url_start) {
      EXPECT_FALSE(s.ok()) << n;
      EXPECT_FALSE(s.message().empty());
    } else {
      ASSERT_TRUE(s.ok()) << n;
      EXPECT_EQ(e.key, full.key);
    }
  }
}

}  // namespace
}  // namespace peerbloom
