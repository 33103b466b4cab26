#include "peerbloom/feed.h"

#include <gtest/gtest.h>

#include <string>

#include "peerbloom/nginx_cache.h"

namespace peerbloom {
namespace {

constexpr std::string_view kHex = "1DCD286542CB5C0FEE897C41AB94173F";

FeedLine ParseOk(std::string_view line, KeyScheme scheme = KeyScheme::kSquidMd5) {
  FeedLine out;
  const Status s = ParseFeedLine(line, scheme, &out);
  EXPECT_TRUE(s.ok()) << "'" << line << "': " << s.ToString();
  return out;
}

std::string Error(std::string_view line, KeyScheme scheme = KeyScheme::kSquidMd5) {
  FeedLine out;
  const Status s = ParseFeedLine(line, scheme, &out);
  EXPECT_TRUE(s.IsInvalidArgument()) << "'" << line << "'";
  return s.message();
}

TEST(FeedLine, BlankLinesAndCommentsDoNothing) {
  for (std::string_view line : {"", "   ", "\t\r", "# a comment", "   # indented", "#+ x"}) {
    EXPECT_EQ(ParseOk(line).op, FeedOp::kNone) << "'" << line << "'";
  }
}

TEST(FeedLine, KeyCommands) {
  // The parsed text points into the line, so the lines must outlive the results.
  const std::string add = "+ " + std::string(kHex);
  const std::string remove = "-\t" + std::string(kHex) + " \r";
  FeedLine l = ParseOk(add);
  EXPECT_EQ(l.op, FeedOp::kAdd);
  EXPECT_EQ(l.subject, FeedSubject::kKey);
  EXPECT_EQ(l.text, kHex);
  l = ParseOk(remove);
  EXPECT_EQ(l.op, FeedOp::kRemove);
  EXPECT_EQ(l.text, kHex);
  l = ParseOk("+ some-opaque-id/42", KeyScheme::kRaw);
  EXPECT_EQ(l.op, FeedOp::kAdd);
  EXPECT_EQ(l.text, "some-opaque-id/42");
}

TEST(FeedLine, UrlCommandsAndBareUrls) {
  FeedLine l = ParseOk("+url http://example.com/a?b=c");
  EXPECT_EQ(l.op, FeedOp::kAdd);
  EXPECT_EQ(l.subject, FeedSubject::kUrl);
  EXPECT_EQ(l.text, "http://example.com/a?b=c");
  l = ParseOk("-url https://example.com/x");
  EXPECT_EQ(l.op, FeedOp::kRemove);
  EXPECT_EQ(l.subject, FeedSubject::kUrl);
  l = ParseOk("  http://example.com/bare  ");
  EXPECT_EQ(l.op, FeedOp::kAdd);
  EXPECT_EQ(l.subject, FeedSubject::kUrl);
  EXPECT_EQ(l.text, "http://example.com/bare");
}

TEST(FeedLine, MalformedLinesSayWhy) {
  EXPECT_EQ(Error("+"), "'+' needs an argument");
  EXPECT_EQ(Error("-url   "), "'-url' needs an argument");
  EXPECT_EQ(Error("+ 1234"), "key '1234' is not 32 hex digits");
  EXPECT_EQ(Error("+ " + std::string(kHex) + " extra"),
            "unexpected text 'extra' after '" + std::string(kHex) + "'");
  EXPECT_EQ(Error("+url not-a-url"), "'not-a-url' is not an absolute url");
  EXPECT_EQ(Error("+url ://x"), "'://x' is not an absolute url");
  EXPECT_EQ(Error("+url http://"), "'http://' is not an absolute url");
  EXPECT_EQ(Error("+url 1http://x"), "'1http://x' is not an absolute url");
  EXPECT_EQ(Error("http://a/b trailing"), "unexpected text 'trailing' after url 'http://a/b'");
  EXPECT_EQ(Error("add http://a/b"),
            "unknown command 'add' (expected '+', '-', '+url', '-url', a url or '#')");
  EXPECT_EQ(Error("+key x"),
            "unknown command '+key' (expected '+', '-', '+url', '-url', a url or '#')");
  EXPECT_EQ(Error(std::string("+ a\x01"
                              "b"),
                  KeyScheme::kRaw),
            R"(argument 'a\x01b' contains a control byte)");
}

TEST(FeedLine, BytesThatAreNotUtf8AreQuotedEscaped) {
  // squid-md5 keys must be hex: each of these is malformed, and the reason quotes it escaped.
  EXPECT_EQ(Error("+ \xff"), R"(key '\xff' is not 32 hex digits)");
  EXPECT_EQ(Error("- a\x80"
                  "b"),
            R"(key 'a\x80b' is not 32 hex digits)");
  EXPECT_EQ(Error("+ \xc0\xaf"), R"(key '\xc0\xaf' is not 32 hex digits)");
  EXPECT_EQ(Error("+ \xed\xa0\x80"), R"(key '\xed\xa0\x80' is not 32 hex digits)");
  EXPECT_EQ(Error("+ caf\xc3\xa9"), "key 'caf\xc3\xa9' is not 32 hex digits");
  EXPECT_EQ(Error("\xc3 x"),
            R"(unknown command '\xc3' (expected '+', '-', '+url', '-url', a url or '#'))");
  EXPECT_EQ(Error("http://a/\xff trailing\xfe"),
            R"(unexpected text 'trailing\xfe' after url 'http://a/\xff')");
  // A URL is bytes: one that is not UTF-8 is still a URL (Squid keys the raw bytes).
  EXPECT_EQ(ParseOk("+url http://a/\xff").text, "http://a/\xff");
  // A raw key is bytes too.
  EXPECT_EQ(ParseOk("+ \xff", KeyScheme::kRaw).text, "\xff");
}

TEST(FeedLine, OverlongLineIsRefused) {
  std::string line = "+url http://h/";
  line.append(kMaxFeedLineBytes - line.size(), 'a');
  EXPECT_EQ(ParseOk(line).op, FeedOp::kAdd);
  line.push_back('a');
  EXPECT_EQ(Error(line), "line of '32769' bytes exceeds the limit of '32768'");
}

TEST(FeedLine, KeyBytesFollowTheScheme) {
  KeyEncoder md5(KeyScheme::kSquidMd5);
  std::string bytes;
  ASSERT_TRUE(FeedLineKeyBytes(ParseOk("+url http://h/a"), &md5, &bytes).ok());
  const SquidKey expected = md5.SquidStoreKey("http://h/a");
  EXPECT_EQ(bytes, std::string(reinterpret_cast<const char*>(expected.data()), 16));
  // A URL is keyed by Squid's canonical form of it (docs/squid.md, "Canonical URLs").
  std::string spelled;
  ASSERT_TRUE(FeedLineKeyBytes(ParseOk("-url HTTP://H:80/a"), &md5, &spelled).ok());
  EXPECT_EQ(spelled, bytes);
  KeyEncoder md5_domain(KeyScheme::kSquidMd5, SquidUrlOptions{UriWhitespace::kStrip, ".lab"});
  ASSERT_TRUE(FeedLineKeyBytes(ParseOk("http://h/a"), &md5_domain, &spelled).ok());
  const SquidKey completed = md5.SquidStoreKey("http://h.lab/a");
  EXPECT_EQ(spelled, std::string(reinterpret_cast<const char*>(completed.data()), 16));
  const std::string remove = "- " + SquidKeyHex(expected);
  ASSERT_TRUE(FeedLineKeyBytes(ParseOk(remove), &md5, &bytes).ok());
  EXPECT_EQ(bytes, std::string(reinterpret_cast<const char*>(expected.data()), 16));

  KeyEncoder raw(KeyScheme::kRaw);
  ASSERT_TRUE(FeedLineKeyBytes(ParseOk("http://h/a", KeyScheme::kRaw), &raw, &bytes).ok());
  EXPECT_EQ(bytes, "http://h/a");
  ASSERT_TRUE(FeedLineKeyBytes(ParseOk("+ obj-7", KeyScheme::kRaw), &raw, &bytes).ok());
  EXPECT_EQ(bytes, "obj-7");
  EXPECT_EQ(FeedLineKeyBytes(FeedLine(), &raw, &bytes).message(), "line has no key");
}

// nginx-md5 keys are 32 hex digits like squid-md5's (a cache file's name); a URL is keyed
// through the node's cache key template.
TEST(FeedLine, NginxKeysAreHexAndUrlsGoThroughTheTemplate) {
  const std::string hex = "e17bb66e9108123f0a69ed2223aca7a4";
  EXPECT_EQ(ParseOk("+ " + hex, KeyScheme::kNginxMd5).text, hex);
  EXPECT_EQ(Error("+ " + hex.substr(1), KeyScheme::kNginxMd5),
            "key '" + hex.substr(1) + "' is not 32 hex digits");
  EXPECT_EQ(Error("- obj-7", KeyScheme::kNginxMd5), "key 'obj-7' is not 32 hex digits");

  NginxKeyTemplate key;
  ASSERT_TRUE(NginxKeyTemplate::Parse("$scheme$host$request_uri", "", &key).ok());
  KeyEncoder nginx(KeyScheme::kNginxMd5, {}, key);
  std::string bytes;
  ASSERT_TRUE(
      FeedLineKeyBytes(ParseOk("+url http://H/a?b", KeyScheme::kNginxMd5), &nginx, &bytes).ok());
  const NginxKey expected = NginxKeyOf("httph/a?b");
  EXPECT_EQ(bytes, std::string(reinterpret_cast<const char*>(expected.data()), 16));
  ASSERT_TRUE(
      FeedLineKeyBytes(ParseOk("- " + NginxKeyHex(expected), KeyScheme::kNginxMd5), &nginx, &bytes)
          .ok());
  EXPECT_EQ(bytes, std::string(reinterpret_cast<const char*>(expected.data()), 16));
}

TEST(FeedLine, UrlShape) {
  EXPECT_TRUE(LooksLikeUrl("http://a"));
  EXPECT_TRUE(LooksLikeUrl("svn+ssh://a/b"));
  EXPECT_FALSE(LooksLikeUrl("http://a b"));
  EXPECT_FALSE(LooksLikeUrl("ht tp://a"));
  EXPECT_FALSE(LooksLikeUrl("/path"));
  EXPECT_FALSE(LooksLikeUrl(""));
}

}  // namespace
}  // namespace peerbloom
