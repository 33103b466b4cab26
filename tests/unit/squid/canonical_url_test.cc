// CanonicalSquidUrl against Squid 5.7's rules, one rule per test. Every http case here was
// also sent through a real Squid (Debian 5.7-2+deb12u6) and its store.log key compared;
// tests/data/squid/canonical_keys.tsv holds the recorded keys (checked in
// canonical_keys_test.cc).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cstdio>
#include <cstring>

#include "lib/squid/numeric_host.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/squid_url.h"

namespace peerbloom {
namespace {

std::string Canonical(std::string_view url, const SquidUrlOptions& options = {}) {
  std::string out;
  const Status s = CanonicalSquidUrl(url, options, &out);
  EXPECT_TRUE(s.ok()) << url << ": " << s.ToString();
  return out;
}

std::string Refusal(std::string_view url, const SquidUrlOptions& options = {}) {
  std::string out;
  const Status s = CanonicalSquidUrl(url, options, &out);
  EXPECT_TRUE(s.IsInvalidArgument()) << url << " gave '" << out << "'";
  return s.message();
}

void ExpectCanonical(const std::vector<std::pair<std::string, std::string>>& cases,
                     const SquidUrlOptions& options = {}) {
  for (const auto& [typed, canonical] : cases) {
    EXPECT_EQ(Canonical(typed, options), canonical) << typed;
  }
}

TEST(CanonicalSquidUrl, SchemeAndHostAreLowerCased) {
  ExpectCanonical({
      {"http://alpha.lab/x", "http://alpha.lab/x"},
      {"HTTP://ALPHA.LAB/X", "http://alpha.lab/X"},
      {"Http://Alpha.Lab/A?B#C", "http://alpha.lab/A?B#C"},
      {"HTTPS://Alpha.Lab/x", "https://alpha.lab/x"},
      {"FTP://Alpha.Lab/x", "ftp://alpha.lab/x"},
  });
}

TEST(CanonicalSquidUrl, UnknownSchemesKeepTheirSpellingAndNeedAPort) {
  ExpectCanonical({
      {"Foo+Bar://Alpha.Lab:99/x", "Foo+Bar://alpha.lab:99/x"},
      // Debian's 5.7 removed Gopher: an unknown scheme without a default port.
      {"GOPHER://alpha.lab:70/x", "GOPHER://alpha.lab:70/x"},
      {"whois://alpha.lab:43/x", "whois://alpha.lab/x"},
      {"cache_object://alpha.lab/info", "cache_object://alpha.lab/info"},
      {"coaps://alpha.lab:5683/x", "coaps://alpha.lab/x"},
  });
  EXPECT_EQ(Refusal("gopher://alpha.lab/x"),
            "url 'gopher://alpha.lab/x' names no port and scheme 'gopher' has no default");
}

TEST(CanonicalSquidUrl, DefaultPortIsDroppedOtherPortsPrintedInDecimal) {
  ExpectCanonical({
      {"http://alpha.lab:80/x", "http://alpha.lab/x"},
      {"https://alpha.lab:443/x", "https://alpha.lab/x"},
      {"ftp://alpha.lab:21/x", "ftp://alpha.lab/x"},
      {"http://alpha.lab:443/x", "http://alpha.lab:443/x"},
      {"https://alpha.lab:80/x", "https://alpha.lab:80/x"},
      {"http://alpha.lab:18081/x", "http://alpha.lab:18081/x"},
      // Squid reads the port with atoi().
      {"http://alpha.lab:0080/x", "http://alpha.lab/x"},
      {"http://alpha.lab:80abc/x", "http://alpha.lab/x"},
      {"http://alpha.lab:+8080/x", "http://alpha.lab:8080/x"},
      {"http://alpha.lab:4294967376/x", "http://alpha.lab/x"},  // 2^32 + 80, truncated
      {"http://alpha.lab:65535/x", "http://alpha.lab:65535/x"},
  });
}

TEST(CanonicalSquidUrl, EmptyPathBecomesSlashEvenBeforeQueryOrFragment) {
  ExpectCanonical({
      {"http://alpha.lab", "http://alpha.lab/"},
      {"http://alpha.lab:8080", "http://alpha.lab:8080/"},
      {"http://alpha.lab?q=1", "http://alpha.lab/?q=1"},
      {"http://alpha.lab#top", "http://alpha.lab/#top"},
      {"http://alpha.lab:81?q", "http://alpha.lab:81/?q"},
  });
}

TEST(CanonicalSquidUrl, PathQueryAndFragmentAreKeptByteForByte) {
  ExpectCanonical({
      {"http://alpha.lab/a/%7e", "http://alpha.lab/a/%7e"},
      {"http://alpha.lab/a/%7E", "http://alpha.lab/a/%7E"},
      {"http://alpha.lab/caf\xc3\xa9?q=\xc3\xa9", "http://alpha.lab/caf\xc3\xa9?q=\xc3\xa9"},
      {"http://alpha.lab/a/../b/./c", "http://alpha.lab/a/../b/./c"},
      {"http://alpha.lab//double//slash", "http://alpha.lab//double//slash"},
      {"http://alpha.lab/x#frag", "http://alpha.lab/x#frag"},
      {"http://alpha.lab/x?a=1&b=%2F#f?g", "http://alpha.lab/x?a=1&b=%2F#f?g"},
      {"http://alpha.lab/\"<>{}|\\^`", "http://alpha.lab/\"<>{}|\\^`"},
  });
}

TEST(CanonicalSquidUrl, TrailingDotsLeaveTheHost) {
  ExpectCanonical({
      {"http://alpha.lab./x", "http://alpha.lab/x"},
      {"http://alpha.lab...:8080/x", "http://alpha.lab:8080/x"},
      {"http://127.0.0.1./x", "http://127.0.0.1/x"},
  });
}

TEST(CanonicalSquidUrl, UserinfoIsDroppedForHttpKeptForFtp) {
  ExpectCanonical({
      {"http://user:pw@alpha.lab/x", "http://alpha.lab/x"},
      {"https://user@alpha.lab:443/x", "https://alpha.lab/x"},
      {"http://a@b@alpha.lab/x", "http://alpha.lab/x"},
      {"http://@alpha.lab/x", "http://alpha.lab/x"},
      {"ftp://user:pw@alpha.lab/x", "ftp://user:pw@alpha.lab/x"},
      {"FTP://User@Alpha.Lab:21/x", "ftp://User@alpha.lab/x"},
      // Unescaped, then every byte outside the userinfo set escaped again in upper case.
      {"ftp://a%2fb%3A%7e@alpha.lab/x", "ftp://a%2Fb:~@alpha.lab/x"},
      {"ftp://a@b@alpha.lab/x", "ftp://a%40b@alpha.lab/x"},
      {"ftp://%%41%zz%00@alpha.lab/x", "ftp://%2541%25zz%2500@alpha.lab/x"},
      {"foo://u%20v@alpha.lab:9/x", "foo://u%20v@alpha.lab:9/x"},
      // Squid escapes from a signed char.
      {"ftp://caf%C3%A9@alpha.lab/x", "ftp://caf%FFFFFFC3%FFFFFFA9@alpha.lab/x"},
  });
}

TEST(CanonicalSquidUrl, NumericHostsAreRerendered) {
  ExpectCanonical({
      {"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
      {"http://2130706433:8080/x", "http://127.0.0.1:8080/x"},
      {"http://0x7f.1:8080/x", "http://127.0.0.1:8080/x"},
      {"http://0X7F.0.0.1/x", "http://127.0.0.1/x"},
      {"http://0177.0.0.1/x", "http://127.0.0.1/x"},
      {"http://127.1/x", "http://127.0.0.1/x"},
      {"http://1.2.65535/x", "http://1.2.255.255/x"},
      {"http://[::1]:8080/x", "http://[::1]:8080/x"},
      {"http://[0:0::1]:8080/x", "http://[::1]:8080/x"},
      {"http://[2001:DB8:0:0:0:0:0:1]/x", "http://[2001:db8::1]/x"},
      {"http://[1:0:0:2:0:0:0:3]/x", "http://[1:0:0:2::3]/x"},
      {"http://[::102:304]/x", "http://[::1.2.3.4]/x"},
      {"http://[::ffff:127.0.0.1]:8080/x", "http://127.0.0.1:8080/x"},
      {"http://[::FFFF:7f00:1]/x", "http://127.0.0.1/x"},
      {"http://[fe80::1%25]/x", "http://[fe80::1]/x"},
      {"http://[fe80::1%eth0]/x", "http://[fe80::1]/x"},
      {"http://[::1%2]/x", "http://[::1]/x"},
      // Unbracketed IPv6: two or more ':' mean no port.
      {"http://::1/x", "http://[::1]/x"},
      // The unspecified addresses are "any" to Squid, which keeps the text.
      {"http://0.0.0.0/x", "http://0.0.0.0/x"},
      {"http://0x0/x", "http://0x0/x"},
      {"http://[::]/x", "http://::/x"},
      {"http://[::ffff:0.0.0.0]/x", "http://::ffff:0.0.0.0/x"},
      // Not numeric: kept as a name.
      {"http://1.2.3.256/x", "http://1.2.3.256/x"},
      {"http://08.1.1.1/x", "http://08.1.1.1/x"},
      {"http://[::1%lo]/x", "http://::1%lo/x"},
      {"http://0:0:0:0:0:0:0:1:8080/x", "http://0:0:0:0:0:0:0:1:8080/x"},
      // A bracket left over from "[[" makes Squid drop the first and last byte, then look.
      {"http://[[::1]]/x", "http://[::1/x"},
      {"http://[[::1]/x", "http://[::1/x"},
  });
}

TEST(CanonicalSquidUrl, WhitespaceEndsTheHost) {
  // The rest of the authority becomes path; default uri_whitespace strips the space.
  ExpectCanonical({{"http://alpha.lab /x", "http://alpha.lab//x"},
                   {"http://alpha.lab\v/x", "http://alpha.lab/\v/x"}});
}

TEST(CanonicalSquidUrl, DelimitersAroundTheUrlAreDropped) {
  ExpectCanonical({{" \thttp://alpha.lab/x \r", "http://alpha.lab/x"},
                   {"\fhttp://alpha.lab/x\v", "http://alpha.lab/x"}});
}

TEST(CanonicalSquidUrl, PathEndsAtCarriageReturn) {
  ExpectCanonical({{"http://alpha.lab/x\ry", "http://alpha.lab/x"}});
}

TEST(CanonicalSquidUrl, UriWhitespaceStripIsTheDefault) {
  ExpectCanonical({
      {"http://alpha.lab/a b", "http://alpha.lab/ab"},
      {"http://alpha.lab/a\tb c", "http://alpha.lab/abc"},
      // VT and FF alone do not count as whitespace; once SP or HT does, they go too.
      {"http://alpha.lab/a\fb", "http://alpha.lab/a\fb"},
      {"http://alpha.lab/a \fb", "http://alpha.lab/ab"},
      {"http://alpha.lab?a b", "http://alpha.lab/?ab"},
  });
}

TEST(CanonicalSquidUrl, UriWhitespaceOtherPolicies) {
  SquidUrlOptions o;
  o.uri_whitespace = UriWhitespace::kAllow;
  ExpectCanonical({{"http://alpha.lab/a b", "http://alpha.lab/a b"}}, o);
  o.uri_whitespace = UriWhitespace::kChop;
  ExpectCanonical({{"http://alpha.lab/a b?c", "http://alpha.lab/a"},
                   {"http://alpha.lab/a\fb c", "http://alpha.lab/a\fb"},
                   {"http://alpha.lab /x", "http://alpha.lab/"}},
                  o);
  o.uri_whitespace = UriWhitespace::kEncode;
  // The whole path is escaped, not only the whitespace; '%' is left alone.
  ExpectCanonical(
      {{"http://alpha.lab/a b", "http://alpha.lab/a%20b"},
       {"http://alpha.lab/a b~\xc3\xa9#f%41'", "http://alpha.lab/a%20b%7E%C3%A9%23f%41%27"},
       {"http://alpha.lab/a~b", "http://alpha.lab/a~b"}},
      o);
  o.uri_whitespace = UriWhitespace::kDeny;
  EXPECT_EQ(Canonical("http://alpha.lab/a~b", o), "http://alpha.lab/a~b");
  EXPECT_EQ(Refusal("http://alpha.lab/a b", o),
            "whitespace in the url path and uri_whitespace is 'deny'");
}

TEST(CanonicalSquidUrl, EncodedPathIsCutAtSquidsBuffer) {
  SquidUrlOptions o;
  o.uri_whitespace = UriWhitespace::kEncode;
  const std::string url = "http://h/" + std::string(3000, ' ') + "a";
  const std::string out = Canonical(url, o);
  EXPECT_EQ(out.size(), std::string("http://h").size() + kSquidMaxUrlBytes);
  EXPECT_EQ(out.substr(0, 15), "http://h/%20%20");
}

TEST(CanonicalSquidUrl, AppendDomainCompletesDotlessNames) {
  SquidUrlOptions o;
  o.append_domain = ".Lab";
  ExpectCanonical(
      {
          {"http://ALPHA/x", "http://alpha.Lab/x"},  // appended as configured
          {"http://alpha:8080/x", "http://alpha.Lab:8080/x"},
          {"http://alpha./x", "http://alpha/x"},  // it has a dot when append_domain looks
          {"http://alpha.lab/x", "http://alpha.lab/x"},
          {"http://2130706433/x", "http://2130706433.Lab/x"},
          {"http://[::1]/x", "http://[::1]/x"},
      },
      o);
  o.append_domain = "." + std::string(200, 'd');
  EXPECT_EQ(Refusal("http://" + std::string(60, 'h') + "/x", o), "host '" + std::string(60, 'h') +
                                                                     "' is too long to append '." +
                                                                     std::string(79, 'd') + "...'");
}

TEST(CanonicalSquidUrl, UrnIsKeptAfterItsNamespace) {
  ExpectCanonical({
      {"URN:ISBN:0451450523", "urn:ISBN:0451450523"},
      {"urn:x-y:A b/c", "urn:x-y:A b/c"},
  });
  EXPECT_EQ(Refusal("urn:a:b"), "invalid urn namespace in 'a:b'");
  EXPECT_EQ(Refusal("urn:-ab:c"), "invalid urn namespace in '-ab:c'");
  EXPECT_EQ(Refusal("urn:isbn"), "invalid urn namespace in 'isbn'");
}

TEST(CanonicalSquidUrl, LongHostNamesAreCutAt255Bytes) {
  const std::string host(300, 'a');
  EXPECT_EQ(Canonical("http://" + host + "/x"), "http://" + host.substr(0, 255) + "/x");
}

TEST(CanonicalSquidUrl, RefusesWhatSquidRefuses) {
  EXPECT_EQ(Refusal(""), "empty url");
  EXPECT_EQ(Refusal(" \t "), "empty url");
  EXPECT_EQ(Refusal("alpha.lab/x"), "no scheme in url 'alpha.lab/x'");
  EXPECT_EQ(Refusal("1http://alpha.lab/x"), "no scheme in url '1http://alpha.lab/x'");
  EXPECT_EQ(Refusal("abcdefghijklmnopq://alpha.lab/x"),
            "no scheme in url 'abcdefghijklmnopq://alpha.lab/x'");
  EXPECT_EQ(Refusal("http:/alpha.lab/x"), "no '//' after the scheme in url 'http:/alpha.lab/x'");
  EXPECT_EQ(Refusal("http:///x"), "no host in url 'http:///x'");
  EXPECT_EQ(Refusal("http://user@/x"), "no host in url 'http://user@/x'");
  EXPECT_EQ(Refusal("http://[]/x"), "no host in url 'http://[]/x'");
  EXPECT_EQ(Refusal("http://:80/x"), "no host in url 'http://:80/x'");
  EXPECT_EQ(Refusal("http://./x"), "no host in url 'http://./x'");
  EXPECT_EQ(Refusal("http://a..lab/x"), "host 'a..lab' has an empty label");
  EXPECT_EQ(Refusal("http://.alpha.lab/x"), "host '.alpha.lab' has an empty label");
  EXPECT_EQ(Refusal("http://alpha.lab:0/x"), "port '0' is not in 1-65535");
  EXPECT_EQ(Refusal("http://alpha.lab:/x"), "port '' is not in 1-65535");
  EXPECT_EQ(Refusal("http://alpha.lab:65536/x"), "port '65536' is not in 1-65535");
  EXPECT_EQ(Refusal("http://alpha.lab:-80/x"), "port '-80' is not in 1-65535");
  EXPECT_EQ(Refusal("http://alpha.lab:http/x"), "port 'http' is not in 1-65535");
  EXPECT_EQ(Refusal("http://alpha.lab:99999999999999999999/x"),
            "port '99999999999999999999' is not in 1-65535");
  EXPECT_EQ(Refusal("http://alpha.lab/a\nb"), "control byte '0x0a' in url");
  EXPECT_EQ(Refusal(std::string("http://alpha.lab/a\0b", 20)), "control byte '0x00' in url");
  EXPECT_EQ(Refusal("http://alpha.lab/a\x7f"), "control byte '0x7f' in url");
  EXPECT_EQ(Refusal("http://h/" + std::string(8183, 'x')),
            "url of '8192' bytes is longer than the '8191' squid accepts");
  SquidUrlOptions o;
  o.append_domain = ".lab";
  EXPECT_EQ(Refusal("http://h/" + std::string(8179, 'x'), o),
            "url of '8188' bytes is longer than the '8187' squid accepts");
}

// who-has refuses what is not an absolute URL (a store key is never made of one) and keys the
// rest, refused by Squid or not.
TEST(IsAbsoluteUrl, NeedsASchemeAndAHostOrUrn) {
  for (const char* url :
       {"http://alpha.lab/x", "HTTP://Alpha.LAB:80", " \thttp://a/x ", "ftp://user@alpha.lab/x",
        "x-y+z.w://h/", "urn:isbn:0451450523", "URN:a:b", "http://alpha.lab:0/x", "http://a..lab/x",
        "http://:80/x", "http://user@/x", "http://alpha.lab/a\nb"}) {
    EXPECT_TRUE(IsAbsoluteUrl(url)) << url;
  }
  for (const char* url :
       {"", " ", "127.0.0.40/x", "alpha.lab", "alpha.lab:80/x", "localhost:3128", "/x",
        "1http://alpha.lab/x", "abcdefghijklmnopq://alpha.lab/x", "http:/alpha.lab/x", "http:///x",
        "http://?q", "http://#f", "http:// a/", "http://", "http:", "mailto:a@b"}) {
    EXPECT_FALSE(IsAbsoluteUrl(url)) << url;
  }
}

// The control-byte scan works 16 and 8 bytes at a time, then byte by byte: a byte that must
// be refused (or a space that must be stripped) is found at every offset.
TEST(CanonicalSquidUrl, EveryOffsetIsScanned) {
  const std::string url = "http://alpha.lab/" + std::string(40, 'p');
  for (size_t i = 17; i < url.size(); ++i) {
    std::string bad = url;
    bad[i] = '\x01';
    EXPECT_EQ(Refusal(bad), "control byte '0x01' in url") << i;
    bad[i] = '\x7f';
    EXPECT_EQ(Refusal(bad), "control byte '0x7f' in url") << i;
    bad[i] = static_cast<char>(0x80);  // not a control byte
    EXPECT_EQ(Canonical(bad), bad) << i;
    if (i + 1 < url.size()) {
      bad[i] = ' ';
      EXPECT_EQ(Canonical(bad), url.substr(0, i) + url.substr(i + 1)) << i;
    }
  }
}

TEST(CanonicalSquidUrl, OutputStringIsReplacedNotAppended) {
  std::string out = "junk";
  ASSERT_TRUE(CanonicalSquidUrl("HTTP://A/", {}, &out).ok());
  EXPECT_EQ(out, "http://a/");
}

TEST(SquidUrlOptions, AppendDomainIsChecked) {
  SquidUrlOptions o;
  EXPECT_TRUE(ValidateSquidUrlOptions(o).ok());
  o.append_domain = ".example.com";
  EXPECT_TRUE(ValidateSquidUrlOptions(o).ok());
  o.append_domain = "example.com";
  EXPECT_EQ(ValidateSquidUrlOptions(o).message(),
            "append_domain must be a '.' followed by at most 253 letters, digits, '-', '.' or "
            "'_', got 'example.com'");
  o.append_domain = ".a b";
  EXPECT_FALSE(ValidateSquidUrlOptions(o).ok());
}

TEST(SquidUrlOptions, UriWhitespaceNamesRoundTrip) {
  for (auto p : {UriWhitespace::kStrip, UriWhitespace::kAllow, UriWhitespace::kEncode,
                 UriWhitespace::kChop, UriWhitespace::kDeny}) {
    EXPECT_EQ(ParseUriWhitespace(UriWhitespaceName(p)), p);
  }
  EXPECT_EQ(ParseUriWhitespace("STRIP"), std::nullopt);
}

TEST(InetAton, AcceptsWhatGlibcGetaddrinfoAccepts) {
  const std::vector<std::pair<std::string, uint32_t>> ok = {
      {"1.2.3", 0x01020003},
      {"4294967295", 0xffffffff},
      {"0xffffffff", 0xffffffff},
      {"1.16777215", 0x01ffffff},
      {"1.2.65535", 0x0102ffff},
      {"00000000000000001.2.3.4", 0x01020304},
      {"0x00000000000007f.1", 0x7f000001},
      {"0X7F.1", 0x7f000001},
      {"0", 0},
      {"1.2.3.04", 0x01020304},
      {"012345670123", 0x53977053},
  };
  for (const auto& [text, want] : ok) {
    uint32_t got = 1;
    EXPECT_TRUE(squid_url::ParseInetAton(text, &got)) << text;
    EXPECT_EQ(got, want) << text;
  }
  for (const char* bad : {"1.2.3.4.",  "0x",         "0x.",         "08",         "09.1.1.1",
                          "1.2.3.256", "4294967296", "0x100000000", "1.16777216", "1.2.65536",
                          "1..2",      ".1",         "1e1",         "0xg",        "1.2.3.08",
                          "999.1.1.1", "",           "1.2.3.4.5",   "+1",         "1 "}) {
    uint32_t got = 0;
    EXPECT_FALSE(squid_url::ParseInetAton(bad, &got)) << bad;
  }
}

// What Squid prints for a host, computed the way Squid does: getaddrinfo(AI_NUMERICHOST), then
// Ip::Address's rules. "" when the host stays as typed.
std::string SquidRendering(const std::string& host) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return "";
  in6_addr a{};
  if (res->ai_family == AF_INET) {
    a.s6_addr[10] = a.s6_addr[11] = 0xff;
    std::memcpy(a.s6_addr + 12, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, 4);
  } else {
    a = reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr;
  }
  ::freeaddrinfo(res);
  char text[INET6_ADDRSTRLEN];
  if (IN6_IS_ADDR_V4MAPPED(&a)) {
    if (a.s6_addr[12] == 0 && a.s6_addr[13] == 0 && a.s6_addr[14] == 0 && a.s6_addr[15] == 0) {
      return "";
    }
    return ::inet_ntop(AF_INET, a.s6_addr + 12, text, sizeof(text));
  }
  if (IN6_IS_ADDR_UNSPECIFIED(&a)) return "";
  return "[" + std::string(::inet_ntop(AF_INET6, &a, text, sizeof(text))) + "]";
}

// Random short hosts over the bytes numeric addresses are made of, against libc.
TEST(NumericHost, AgreesWithGetaddrinfo) {
  std::mt19937 rng(20240501);
  const std::string alphabet = "0000111789abcdefx..::";
  int numeric = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string host(1 + rng() % 16, ' ');
    for (char& c : host) c = alphabet[rng() % alphabet.size()];
    squid_url::HostText text;
    const size_t n = squid_url::RenderNumericHost(host, &text);
    const std::string want = SquidRendering(host);
    ASSERT_EQ(std::string(text.data(), n), want) << "host '" << host << "'";
    numeric += n > 0;
  }
  std::printf("%d of 200000 random hosts were numeric\n", numeric);
  EXPECT_GT(numeric, 1000) << "the generator hardly produced addresses: the test proves little";
}

TEST(KeyEncoder, SquidMd5KeysTheCanonicalUrl) {
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  const std::string want(encoder.FromUrl("http://alpha.lab:18081/x"));
  EXPECT_EQ(encoder.FromUrl("HTTP://ALPHA.LAB:18081/x"), want);
  EXPECT_EQ(encoder.FromUrl("http://alpha.lab.:18081/x"), want);
  const SquidKey direct = encoder.SquidStoreKey("http://alpha.lab:18081/x");
  EXPECT_EQ(want, std::string(reinterpret_cast<const char*>(direct.data()), direct.size()));
  EXPECT_EQ(encoder.FromUrl("http://alpha.lab:80/t/x"), encoder.FromUrl("http://alpha.lab/t/x"));
  // A URL Squid refuses is keyed as given.
  const SquidKey raw = encoder.SquidStoreKey("http://a..b/");
  EXPECT_EQ(encoder.FromUrl("http://a..b/"),
            std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

TEST(KeyEncoder, SquidMd5UsesItsOptions) {
  SquidUrlOptions o;
  o.append_domain = ".lab";
  o.uri_whitespace = UriWhitespace::kEncode;
  KeyEncoder encoder(KeyScheme::kSquidMd5, o);
  KeyEncoder plain(KeyScheme::kSquidMd5);
  EXPECT_EQ(encoder.FromUrl("http://alpha/a b"), plain.FromUrl("http://alpha.lab/a%20b"));
}

TEST(KeyEncoder, RawKeysTheUrlAsGiven) {
  KeyEncoder encoder(KeyScheme::kRaw);
  EXPECT_EQ(encoder.FromUrl("HTTP://ALPHA.LAB:80/x"), "HTTP://ALPHA.LAB:80/x");
}

}  // namespace
}  // namespace peerbloom
