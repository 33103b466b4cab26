#include "peerbloom/key_scheme.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <string>

#include "peerbloom/hash.h"
#include "peerbloom/md5.h"

namespace peerbloom {
namespace {

// MD5(method || url) computed with OpenSSL's one-shot API, independent of KeyEncoder's
// reused context.
SquidKey OneShotStoreKey(uint8_t method, const std::string& url) {
  std::string input(1, static_cast<char>(method));
  input += url;
  SquidKey key{};
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(input.data(), input.size(), key.data(), &len, EVP_md5(), nullptr), 1);
  EXPECT_EQ(len, key.size());
  return key;
}

std::string_view Bytes(const SquidKey& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

TEST(KeyScheme, NamesRoundTrip) {
  for (KeyScheme s : {KeyScheme::kRaw, KeyScheme::kSquidMd5, KeyScheme::kNginxMd5}) {
    EXPECT_EQ(ParseKeyScheme(KeySchemeName(s)), s);
  }
  EXPECT_EQ(KeySchemeName(KeyScheme::kRaw), "raw");
  EXPECT_EQ(KeySchemeName(KeyScheme::kSquidMd5), "squid-md5");
  EXPECT_EQ(KeySchemeName(KeyScheme::kNginxMd5), "nginx-md5");
  EXPECT_EQ(KeySchemeName(static_cast<KeyScheme>(3)), "unknown");
  EXPECT_EQ(ParseKeyScheme("squid_md5"), std::nullopt);
  EXPECT_EQ(ParseKeyScheme("RAW"), std::nullopt);
  EXPECT_EQ(ParseKeyScheme("nginx"), std::nullopt);
  EXPECT_EQ(ParseKeyScheme("NGINX-MD5"), std::nullopt);
}

// Frozen numbering: the numbers travel in summary headers and signatures.
TEST(KeyScheme, NumbersAreFrozen) {
  EXPECT_EQ(static_cast<int>(KeyScheme::kRaw), 0);
  EXPECT_EQ(static_cast<int>(KeyScheme::kSquidMd5), 1);
  EXPECT_EQ(static_cast<int>(KeyScheme::kNginxMd5), 2);
  EXPECT_EQ(kLastKeyScheme, KeyScheme::kNginxMd5);
  EXPECT_FALSE(IsMd5KeyScheme(KeyScheme::kRaw));
  EXPECT_TRUE(IsMd5KeyScheme(KeyScheme::kSquidMd5));
  EXPECT_TRUE(IsMd5KeyScheme(KeyScheme::kNginxMd5));
}

TEST(KeyScheme, ParseSquidKeyHexAcceptsExactly32HexDigits) {
  const std::string hex = "0123456789abcdefABCDEF0011223344";
  SquidKey key{};
  ASSERT_TRUE(ParseSquidKeyHex(hex, &key));
  const SquidKey expected = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                             0xab, 0xcd, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44};
  EXPECT_EQ(key, expected);

  const SquidKey sentinel = {0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
                             0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};
  const std::string bad[] = {
      hex.substr(0, 31),                         // 31 digits
      hex + "0",                                 // 33 digits
      "",                                        // empty
      hex.substr(0, 31) + "g",                   // non-hex last digit
      "x" + hex.substr(1),                       // non-hex first digit
      hex.substr(0, 16) + " " + hex.substr(17),  // a space
      "0x" + hex.substr(2),                      // a prefix
      std::string(hex.substr(0, 31)) + '\0',     // a NUL byte
  };
  for (const std::string& b : bad) {
    SquidKey out = sentinel;
    EXPECT_FALSE(ParseSquidKeyHex(b, &out)) << "'" << b << "'";
    EXPECT_EQ(out, sentinel) << "'" << b << "' changed the output";
  }
}

TEST(KeyScheme, SquidKeyHexIsUpperCaseAndRoundTrips) {
  for (int first = 0; first < 256; first += 16) {
    SquidKey key;
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(first + i);
    const std::string hex = SquidKeyHex(key);
    ASSERT_EQ(hex.size(), 32u);
    for (char c : hex) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F')) << hex;
    SquidKey back{};
    ASSERT_TRUE(ParseSquidKeyHex(hex, &back));
    EXPECT_EQ(back, key);
  }
  const SquidKey mixed = {0x00, 0x0f, 0xf0, 0xff, 0x1a, 0xb2, 0x3c, 0xd4,
                          0x5e, 0xf6, 0x07, 0x80, 0x9a, 0xbc, 0xde, 0xf0};
  EXPECT_EQ(SquidKeyHex(mixed), "000FF0FF1AB23CD45EF607809ABCDEF0");
}

TEST(KeyScheme, KeyBytesFromTokenErrors) {
  std::string out = "unchanged";
  Status s = KeyBytesFromToken(KeyScheme::kSquidMd5, "", &out);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "empty key");
  s = KeyBytesFromToken(KeyScheme::kRaw, "", &out);
  EXPECT_EQ(s.message(), "empty key");
  s = KeyBytesFromToken(KeyScheme::kSquidMd5, "1DCD286542CB5C0FEE897C41AB94173", &out);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "key '1DCD286542CB5C0FEE897C41AB94173' is not 32 hex digits");
  s = KeyBytesFromToken(KeyScheme::kSquidMd5, "http://example.com/", &out);
  EXPECT_EQ(s.message(), "key 'http://example.com/' is not 32 hex digits");
  // A long token is quoted up to 64 characters.
  const std::string long_token(100, 'z');
  s = KeyBytesFromToken(KeyScheme::kSquidMd5, long_token, &out);
  EXPECT_EQ(s.message(), "key '" + std::string(64, 'z') + "' is not 32 hex digits");
  // nginx-md5 keys are 32 hex digits too.
  s = KeyBytesFromToken(KeyScheme::kNginxMd5, "e17bb66e9108123f0a69ed2223aca7a", &out);
  EXPECT_EQ(s.message(), "key 'e17bb66e9108123f0a69ed2223aca7a' is not 32 hex digits");
  s = KeyBytesFromToken(KeyScheme::kNginxMd5, "e17bb66e9108123f0a69ed2223aca7a40", &out);
  EXPECT_EQ(s.message(), "key 'e17bb66e9108123f0a69ed2223aca7a40' is not 32 hex digits");
  s = KeyBytesFromToken(KeyScheme::kNginxMd5, "http://127.0.0.1:38172/plain.txt", &out);
  EXPECT_EQ(s.message(), "key 'http://127.0.0.1:38172/plain.txt' is not 32 hex digits");
  EXPECT_TRUE(KeyBytesFromToken(KeyScheme::kNginxMd5, "", &out).IsInvalidArgument());
  EXPECT_EQ(out, "unchanged");
}

TEST(KeyScheme, KeyBytesFromTokenValues) {
  std::string out;
  ASSERT_TRUE(KeyBytesFromToken(KeyScheme::kRaw, "http://example.com/a", &out).ok());
  EXPECT_EQ(out, "http://example.com/a");
  ASSERT_TRUE(
      KeyBytesFromToken(KeyScheme::kSquidMd5, "1dcd286542cb5c0fee897c41ab94173f", &out).ok());
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  EXPECT_EQ(out, Bytes(encoder.SquidStoreKey("http://127.0.0.1:8080/obj1.txt")));
  // An nginx-md5 key in either case: the cache file name of tests/data/nginx/plain.cache.
  const NginxKey name = NginxKeyOf("http://127.0.0.1:38172/plain.txt");
  for (const char* hex : {"e17bb66e9108123f0a69ed2223aca7a4", "E17BB66E9108123F0A69ED2223ACA7A4"}) {
    ASSERT_TRUE(KeyBytesFromToken(KeyScheme::kNginxMd5, hex, &out).ok()) << hex;
    EXPECT_EQ(out, Bytes(name)) << hex;
  }
}

TEST(KeyScheme, StoreKeyIsMd5OfMethodAndUrl) {
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  // Many URLs through one encoder: the reused context never leaks state between keys.
  for (int i = 0; i < 200; ++i) {
    const std::string url = "http://example.com/" + std::string(static_cast<size_t>(i), 'a');
    EXPECT_EQ(encoder.SquidStoreKey(url), OneShotStoreKey(kSquidMethodGet, url)) << i;
    EXPECT_EQ(encoder.SquidStoreKey(url, kSquidMethodHead), OneShotStoreKey(kSquidMethodHead, url));
  }
}

// Every length across the one-, two- and three-block boundaries (55/56 and 119/120 bytes with
// the prefix), every prefix byte, against OpenSSL.
TEST(Md5, MatchesOpenSslAtEveryLengthAndPrefix) {
  std::string data;
  for (size_t n = 0; n <= 300; ++n) {
    for (int prefix : {0x00, 0x01, 0x02, 0x80, 0xff}) {
      EXPECT_EQ(Md5WithPrefix(static_cast<uint8_t>(prefix), data),
                OneShotStoreKey(static_cast<uint8_t>(prefix), data))
          << "length " << n << " prefix " << prefix;
    }
    data.push_back(static_cast<char>((n * 131 + 7) & 0xff));
  }
}

// RFC 1321's test suite (appendix A.5).
TEST(Md5, RfcVectorsWithoutPrefix) {
  EXPECT_EQ(SquidKeyHex(Md5("")), "D41D8CD98F00B204E9800998ECF8427E");
  EXPECT_EQ(SquidKeyHex(Md5("a")), "0CC175B9C0F1B6A831C399E269772661");
  EXPECT_EQ(SquidKeyHex(Md5("abc")), "900150983CD24FB0D6963F7D28E17F72");
  EXPECT_EQ(SquidKeyHex(Md5("message digest")), "F96B697D7CB7938D525A2F31AAF161D0");
  EXPECT_EQ(SquidKeyHex(Md5("abcdefghijklmnopqrstuvwxyz")), "C3FCD3D76192E4007DFB496CCA67E13B");
  EXPECT_EQ(SquidKeyHex(Md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
            "D174AB98D277D9F5A5611C2C9F419D9F");
  EXPECT_EQ(SquidKeyHex(Md5("1234567890123456789012345678901234567890"
                            "1234567890123456789012345678901234567890")),
            "57EDF4A22BE3C955AC49DA2E2107B67A");
}

// Every length across the one-, two- and three-block boundaries (55/56, 119/120 bytes),
// against OpenSSL, and against Md5WithPrefix with the first byte as the prefix.
TEST(Md5, MatchesOpenSslAndThePrefixedFormAtEveryLength) {
  std::string data;
  for (size_t n = 0; n <= 300; ++n) {
    Md5Digest openssl{};
    unsigned int len = 0;
    ASSERT_EQ(EVP_Digest(data.data(), data.size(), openssl.data(), &len, EVP_md5(), nullptr), 1);
    EXPECT_EQ(Md5(data), openssl) << "length " << n;
    if (n > 0) {
      EXPECT_EQ(Md5(data), Md5WithPrefix(static_cast<uint8_t>(data[0]), data.substr(1))) << n;
    }
    data.push_back(static_cast<char>((n * 131 + 7) & 0xff));
  }
}

// RFC 1321's test suite, the prefix being the message's first byte.
TEST(Md5, RfcVectors) {
  EXPECT_EQ(SquidKeyHex(Md5WithPrefix('a', "")), "0CC175B9C0F1B6A831C399E269772661");
  EXPECT_EQ(SquidKeyHex(Md5WithPrefix('a', "bc")), "900150983CD24FB0D6963F7D28E17F72");
  EXPECT_EQ(SquidKeyHex(Md5WithPrefix('m', "essage digest")), "F96B697D7CB7938D525A2F31AAF161D0");
  EXPECT_EQ(SquidKeyHex(Md5WithPrefix('1',
                                      "2345678901234567890123456789012345678901234567890"
                                      "123456789012345678901234567890")),
            "57EDF4A22BE3C955AC49DA2E2107B67A");
}

// The lanes give each lane's own digest: lengths mixing one- and two-block messages, and a
// lane too long for two blocks (hashed one at a time).
TEST(Md5, LanesMatchOneAtATime) {
  for (size_t n = 0; n <= 200; ++n) {
    std::string data[kMd5Lanes];
    std::string_view views[kMd5Lanes];
    for (size_t l = 0; l < kMd5Lanes; ++l) {
      data[l] = std::string((n * (l + 1) + 13 * l) % 160, static_cast<char>('a' + l + n % 7));
      views[l] = data[l];
    }
    Md5Digest out[kMd5Lanes];
    Md5WithPrefixLanes(kSquidMethodGet, views, out);
    for (size_t l = 0; l < kMd5Lanes; ++l) {
      EXPECT_EQ(out[l], Md5WithPrefix(kSquidMethodGet, views[l])) << n << " lane " << l;
    }
  }
}

TEST(KeyScheme, HeadKeyDiffersFromGet) {
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  const std::string url = "http://127.0.0.1:8080/obj1.txt";
  const SquidKey get = encoder.SquidStoreKey(url);
  const SquidKey head = encoder.SquidStoreKey(url, kSquidMethodHead);
  EXPECT_NE(get, head);
  EXPECT_EQ(get, encoder.SquidStoreKey(url, kSquidMethodGet));
  EXPECT_EQ(SquidKeyHex(get), "1DCD286542CB5C0FEE897C41AB94173F");
  // FromUrl uses GET.
  EXPECT_EQ(encoder.FromUrl(url), Bytes(get));
  EXPECT_NE(encoder.FromUrl(url), Bytes(head));
}

// nginx-md5: MD5 of the cache key the template builds, the name nginx gives the file; a URL
// the template cannot key, or an encoder without a template, keys the URL as given.
TEST(KeyScheme, NginxMd5KeysTheCacheKeyOfTheUrl) {
  NginxKeyTemplate key;
  ASSERT_TRUE(NginxKeyTemplate::Parse(NginxKeyTemplate::kDefault, "127.0.0.1:38172", &key).ok());
  KeyEncoder encoder(KeyScheme::kNginxMd5, {}, key);
  EXPECT_EQ(encoder.scheme(), KeyScheme::kNginxMd5);
  // tests/data/nginx/plain.cache: nginx named it so for this URL through this key.
  const std::string_view bytes = encoder.FromUrl("http://127.0.0.1:38171/plain.txt");
  ASSERT_EQ(bytes.size(), 16u);
  NginxKey name;
  ASSERT_TRUE(ParseNginxCacheFileName("e17bb66e9108123f0a69ed2223aca7a4", &name));
  EXPECT_EQ(bytes, Bytes(name));
  // The fragment is not sent; the host's port is not part of this key.
  EXPECT_EQ(encoder.FromUrl("http://localhost/plain.txt#top"), Bytes(name));
  // nginx answers 400 to "/..": keyed as given.
  EXPECT_EQ(encoder.FromUrl("http://h/.."), Bytes(NginxKeyOf("http://h/..")));
  EXPECT_EQ(encoder.FromUrl("ftp://h/a"), Bytes(NginxKeyOf("ftp://h/a")));

  KeyEncoder untemplated(KeyScheme::kNginxMd5);
  EXPECT_EQ(untemplated.FromUrl("http://127.0.0.1:38171/plain.txt"),
            Bytes(NginxKeyOf("http://127.0.0.1:38171/plain.txt")));
}

TEST(KeyScheme, RawSchemePassesUrlThrough) {
  KeyEncoder encoder(KeyScheme::kRaw);
  EXPECT_EQ(encoder.scheme(), KeyScheme::kRaw);
  EXPECT_EQ(encoder.FromUrl("http://example.com/x?y=1"), "http://example.com/x?y=1");
}

TEST(IndexHasher, IsSipHash13WithTheDerivedKey) {
  const IndexHasher hasher(DeriveIndexKey("s3cret"));
  const std::string url = "http://example.com/index.html";
  EXPECT_EQ(hasher.Hash(url), SipHash128(1, 3, DeriveIndexKey("s3cret"), url.data(), url.size()));
  EXPECT_NE(hasher.Hash(url), IndexHasher(DeriveIndexKey("other")).Hash(url));
  EXPECT_EQ(IndexHasher().key(), DeriveIndexKey(""));
}

}  // namespace
}  // namespace peerbloom
