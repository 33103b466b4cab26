// EscapeBytes / QuoteBytes / IsValidUtf8: exact outputs for the byte strings that broke JSON
// replies (lone bytes, truncated, overlong and surrogate sequences) and for text that must
// pass through untouched.
#include "peerbloom/escape.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace peerbloom {
namespace {

TEST(EscapeBytes, ValidTextPassesThrough) {
  EXPECT_EQ(EscapeBytes(""), "");
  EXPECT_EQ(EscapeBytes("http://example.com/a?b=c&d='e'"), "http://example.com/a?b=c&d='e'");
  EXPECT_EQ(EscapeBytes("caf\xc3\xa9"), "caf\xc3\xa9");            // é, 2 bytes
  EXPECT_EQ(EscapeBytes("\xe2\x82\xac"), "\xe2\x82\xac");          // €, 3 bytes
  EXPECT_EQ(EscapeBytes("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // U+1F600, 4 bytes
  EXPECT_EQ(EscapeBytes("\xc2\xa0"), "\xc2\xa0");                  // U+00A0, first after C1
  EXPECT_EQ(EscapeBytes("\xed\x9f\xbf"), "\xed\x9f\xbf");          // U+D7FF, last before D800
  EXPECT_EQ(EscapeBytes("\xee\x80\x80"), "\xee\x80\x80");          // U+E000, first after DFFF
  EXPECT_EQ(EscapeBytes("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");  // U+10FFFF, the last
}

TEST(EscapeBytes, BytesThatAreNotUtf8BecomeHexEscapes) {
  EXPECT_EQ(EscapeBytes("\xff"), R"(\xff)");
  EXPECT_EQ(EscapeBytes("\xc3"), R"(\xc3)");  // truncated 2-byte sequence
  EXPECT_EQ(EscapeBytes("a\x80"
                        "b"),
            R"(a\x80b)");                                     // lone continuation byte
  EXPECT_EQ(EscapeBytes("\xc0\xaf"), R"(\xc0\xaf)");          // overlong '/'
  EXPECT_EQ(EscapeBytes("\xe0\x80\xaf"), R"(\xe0\x80\xaf)");  // overlong '/', 3 bytes
  EXPECT_EQ(EscapeBytes("\xf0\x80\x80\xaf"), R"(\xf0\x80\x80\xaf)");
  EXPECT_EQ(EscapeBytes("\xed\xa0\x80"), R"(\xed\xa0\x80)");          // lone surrogate U+D800
  EXPECT_EQ(EscapeBytes("\xed\xbf\xbf"), R"(\xed\xbf\xbf)");          // U+DFFF
  EXPECT_EQ(EscapeBytes("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)");  // above U+10FFFF
  EXPECT_EQ(EscapeBytes("\xf5\x80\x80\x80"), R"(\xf5\x80\x80\x80)");
  EXPECT_EQ(EscapeBytes("\xe2\x82"), R"(\xe2\x82)");  // € cut short
  EXPECT_EQ(EscapeBytes("\xe2\x82x"), R"(\xe2\x82x)");
  // A bad byte does not swallow the valid character after it.
  EXPECT_EQ(EscapeBytes("\xc3\xc3\xa9"), "\\xc3\xc3\xa9");
  EXPECT_EQ(EscapeBytes("caf\xe9"), R"(caf\xe9)");  // Latin-1 é
}

TEST(EscapeBytes, ControlsAndBackslashAreEscaped) {
  EXPECT_EQ(EscapeBytes("a\nb\tc\rd"), R"(a\x0ab\x09c\x0dd)");
  EXPECT_EQ(EscapeBytes("\x1b[31m"), R"(\x1b[31m)");
  EXPECT_EQ(EscapeBytes("\x7f"), R"(\x7f)");
  EXPECT_EQ(EscapeBytes(std::string("nul\0byte", 8)), R"(nul\x00byte)");
  EXPECT_EQ(EscapeBytes("\xc2\x80\xc2\x9b\xc2\x9f"), R"(\u0080\u009b\u009f)");  // C1
  EXPECT_EQ(EscapeBytes(R"(a\b)"), R"(a\\b)");
  // Escaped text escapes again without ambiguity: `\xff` typed literally is not byte 0xff.
  EXPECT_EQ(EscapeBytes(R"(\xff)"), R"(\\xff)");
}

TEST(EscapeBytes, OutputIsAlwaysValidUtf8AndDumpsAsJson) {
  // Every 1- and 2-byte string, and every 3-byte string with a lead byte >= 0xe0.
  std::string s(3, '\0');
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c : {0x00, 0x41, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}) {
        s[0] = static_cast<char>(a);
        s[1] = static_cast<char>(b);
        s[2] = static_cast<char>(c);
        for (size_t n = 1; n <= 3; ++n) {
          const std::string e = EscapeBytes(std::string_view(s).substr(0, n));
          ASSERT_TRUE(IsValidUtf8(e)) << a << " " << b << " " << c;
          ASSERT_NO_THROW((void)nlohmann::json(e).dump());
        }
      }
    }
  }
}

TEST(IsValidUtf8, AcceptsWellFormedOnly) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii\n"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9"));
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));
  EXPECT_TRUE(IsValidUtf8("\xc2\x80"));  // a C1 control is well-formed
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));
  EXPECT_FALSE(
      IsValidUtf8("a\x80"
                  "b"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));
  EXPECT_FALSE(IsValidUtf8("caf\xc3"));
}

TEST(IsValidUtf8, AgreesWithTheJsonSerializer) {
  // nlohmann's dump() throws exactly on what is not well-formed UTF-8.
  std::string s(2, '\0');
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      s[0] = static_cast<char>(a);
      s[1] = static_cast<char>(b);
      bool dumps = true;
      try {
        (void)nlohmann::json(s).dump();
      } catch (const nlohmann::json::type_error&) {
        dumps = false;
      }
      ASSERT_EQ(IsValidUtf8(s), dumps) << a << " " << b;
    }
  }
}

TEST(QuoteBytes, QuotesAPrefixCutAtACharacterBoundary) {
  EXPECT_EQ(QuoteBytes("not-hex"), "'not-hex'");
  EXPECT_EQ(QuoteBytes("\xff"), R"('\xff')");
  EXPECT_EQ(QuoteBytes(""), "''");
  EXPECT_EQ(QuoteBytes(std::string(100, 'z')), "'" + std::string(64, 'z') + "'");
  EXPECT_EQ(QuoteBytes("abcdef", 3), "'abc'");
  // "é" is bytes 4-5: a cut after byte 4 drops the whole character.
  EXPECT_EQ(QuoteBytes("caf\xc3\xa9!", 4), "'caf'");
  EXPECT_EQ(QuoteBytes("caf\xc3\xa9!", 5), "'caf\xc3\xa9'");
  // Bytes that are not UTF-8 count one each.
  EXPECT_EQ(QuoteBytes("\xff\xfe\xfd", 2), R"('\xff\xfe')");
  // The limit counts input bytes, not the escaped text.
  EXPECT_EQ(QuoteBytes("\\\\\\", 2), R"('\\\\')");
}

}  // namespace
}  // namespace peerbloom
