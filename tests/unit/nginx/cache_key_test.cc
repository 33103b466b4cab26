// NginxKeyTemplate: the cache key nginx builds for a URL. Expectations marked "nginx 1.22.1"
// were read from real nginx (tests/data/nginx/README.md, "Variables"), which echoed each
// variable for a request curl made for the URL.
#include <gtest/gtest.h>

#include <string>

#include "peerbloom/nginx_cache.h"

namespace peerbloom {
namespace {

NginxKeyTemplate Template(std::string_view text, std::string_view proxy_host = "") {
  NginxKeyTemplate t;
  const Status s = NginxKeyTemplate::Parse(text, proxy_host, &t);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return t;
}

// The key `text` builds for `url`, or "error: <message>".
std::string Key(std::string_view text, std::string_view url, std::string_view proxy_host = "") {
  std::string key = "stale";
  const Status s = Template(text, proxy_host).Build(url, &key);
  return s.ok() ? key : "error: " + s.message();
}

std::string ParseError(std::string_view text, std::string_view proxy_host = "") {
  NginxKeyTemplate t;
  const Status s = NginxKeyTemplate::Parse(text, proxy_host, &t);
  EXPECT_TRUE(s.IsInvalidArgument()) << text;
  return s.message();
}

// The fixtures of tests/data/nginx: nginx's default key, proxy_pass http://127.0.0.1:38172.
TEST(NginxKeyTemplate, TheDefaultKeyGivesTheNamesNginxGave) {
  const NginxKeyTemplate t = Template(NginxKeyTemplate::kDefault, "127.0.0.1:38172");
  EXPECT_TRUE(t.uses_proxy_host());
  EXPECT_EQ(t.text(), "http://$proxy_host$request_uri");
  const std::pair<const char*, const char*> asked[] = {
      {"http://127.0.0.1:38171/plain.txt", "e17bb66e9108123f0a69ed2223aca7a4"},
      {"http://127.0.0.1:38171/search?q=nginx+cache&lang=en&page=2&sort=relevance&filter=all"
       "&size=small&session=0123456789abcdef0123456789abcdef",
       "ccfb55a890eec7c1e03f7a746702fbc4"},
      {"http://127.0.0.1:38171/dir%20with%20space/caf%C3%A9.txt",
       "2e30de9bdeabcf2ec2bd241ca58575df"},
      {"http://127.0.0.1:38171/vary.txt", "a379b9dfda459e814fb70b1f8cbfdb29"},
  };
  for (const auto& [url, name] : asked) {
    std::string key;
    ASSERT_TRUE(t.Build(url, &key).ok()) << url;
    EXPECT_EQ(NginxKeyHex(NginxKeyOf(key)), name) << url << " -> " << key;
  }
}

// nginx's documented default, written out as a proxy_cache_key, has no "://": nginx 1.22.1
// named tests/data/nginx/documented-default-key.cache so, for /explicit/plain.txt?a=1 (its
// location's proxy_pass http://127.0.0.1:38172/ replaces /explicit/ upstream, not in the key).
TEST(NginxKeyTemplate, TheDocumentedDefaultWrittenOutHasNoSchemeSeparator) {
  const NginxKeyTemplate t = Template("$scheme$proxy_host$request_uri", "127.0.0.1:38172");
  std::string key;
  ASSERT_TRUE(t.Build("http://127.0.0.1:38171/explicit/plain.txt?a=1", &key).ok());
  EXPECT_EQ(key, "http127.0.0.1:38172/explicit/plain.txt?a=1");
  EXPECT_EQ(NginxKeyHex(NginxKeyOf(key)), "de85c6a18a9228fae014b09a68b264da");
}

TEST(NginxKeyTemplate, EachVariable) {
  const std::string url = "http://Example.COM:8080/a/./b%41?x=1";
  EXPECT_EQ(Key("$scheme", url), "http");
  EXPECT_EQ(Key("$host", url), "example.com");
  EXPECT_EQ(Key("$http_host", url), "example.com:8080");
  EXPECT_EQ(Key("$server_port", url), "8080");
  EXPECT_EQ(Key("$request_uri", url), "/a/./b%41?x=1");
  EXPECT_EQ(Key("$uri", url), "/a/bA");
  EXPECT_EQ(Key("$args", url), "x=1");
  EXPECT_EQ(Key("$query_string", url), "x=1");
  EXPECT_EQ(Key("$is_args", url), "?");
  EXPECT_EQ(Key("$proxy_host", url, "backend"), "backend");
  EXPECT_EQ(Key("$scheme://$host$uri$is_args$args", url), "http://example.com/a/bA?x=1");
}

TEST(NginxKeyTemplate, BracesLiteralsAndNameCase) {
  const std::string url = "https://h/p?q";
  EXPECT_EQ(Key("${scheme}s${host}", url), "httpssh");
  EXPECT_EQ(Key("${host}_x", url), "h_x");
  EXPECT_EQ(ParseError("$host_x"), "unsupported variable '$host_x': a url does not carry it");
  EXPECT_EQ(Key("cache:$host|$request_uri|", url), "cache:h|/p?q|");
  EXPECT_EQ(Key("$HOST$Request_URI", url), "h/p?q");  // nginx's names ignore case
  EXPECT_EQ(Key("no variables", url), "no variables");
  EXPECT_EQ(Key("$host$host", url), "hh");
  EXPECT_FALSE(Template("$scheme$host$request_uri").uses_proxy_host());
}

TEST(NginxKeyTemplate, RefusesWhatAUrlDoesNotCarry) {
  for (const char* name : {"cookie_a", "remote_addr", "http_user_agent", "http_accept_encoding",
                           "arg_x", "request_method", "unknown", "1"}) {
    EXPECT_EQ(ParseError("$scheme$" + std::string(name)),
              "unsupported variable '$" + std::string(name) + "': a url does not carry it");
  }
  EXPECT_EQ(ParseError("${Cookie_A}x"),
            "unsupported variable '$Cookie_A': a url does not carry it");
  // "$12" is capture 1 then "2", as nginx reads it.
  EXPECT_EQ(ParseError("$12"), "unsupported variable '$1': a url does not carry it");
}

TEST(NginxKeyTemplate, RefusesMalformedTemplates) {
  EXPECT_EQ(ParseError(""), "the cache key template is empty");
  EXPECT_EQ(ParseError("$host$"), "'$' at offset '5' is not followed by a variable name");
  EXPECT_EQ(ParseError("$host/$/x"), "'$' at offset '6' is not followed by a variable name");
  EXPECT_EQ(ParseError("a${}"), "'$' at offset '1' is not followed by a variable name");
  EXPECT_EQ(ParseError("a${host"), "'${' at offset '1' has no closing '}'");
  EXPECT_EQ(ParseError("${host-x}"), "'${' at offset '0' has no closing '}'");
  EXPECT_EQ(ParseError("${"), "'${' at offset '0' has no closing '}'");
  EXPECT_EQ(ParseError(NginxKeyTemplate::kDefault),
            "variable '$proxy_host' needs the host proxy_pass names, and none is given");
  NginxKeyTemplate t = Template("$host");
  EXPECT_FALSE(NginxKeyTemplate::Parse("$cookie_a", "", &t).ok());
  EXPECT_EQ(t.text(), "$host");  // unchanged on error
}

TEST(NginxKeyTemplate, AnUnparsedTemplateBuildsNothing) {
  const NginxKeyTemplate t;
  std::string key;
  const Status s = t.Build("http://h/", &key);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "no cache key template");
  EXPECT_FALSE(t.uses_proxy_host());
}

// Hosts and ports, nginx 1.22.1 with curl: the Host header curl sends for the URL gives $host
// (lower case, no port, no trailing dot); curl drops a default port from Host, as browsers do.
TEST(NginxKeyTemplate, HostsAndPorts) {
  const char* t = "$scheme|$host|$http_host|$server_port";
  EXPECT_EQ(Key(t, "http://Example.COM/a"), "http|example.com|example.com|80");
  EXPECT_EQ(Key(t, "http://Example.COM:80/a"), "http|example.com|example.com|80");
  EXPECT_EQ(Key(t, "https://h/a"), "https|h|h|443");
  EXPECT_EQ(Key(t, "https://h:443/a"), "https|h|h|443");
  EXPECT_EQ(Key(t, "https://h:80/a"), "https|h|h:80|80");
  EXPECT_EQ(Key(t, "HTTP://h:8080/a"), "http|h|h:8080|8080");
  EXPECT_EQ(Key(t, "http://h:08080/a"), "http|h|h:8080|8080");
  EXPECT_EQ(Key(t, "http://h:/a"), "http|h|h|80");  // an empty port is the default
  EXPECT_EQ(Key(t, "http://example.com.:8080/a"), "http|example.com|example.com.:8080|8080");
  EXPECT_EQ(Key(t, "http://user:pw@h:81/a"), "http|h|h:81|81");
  EXPECT_EQ(Key(t, "http://[::1]:8080/a"), "http|[::1]|[::1]:8080|8080");
  EXPECT_EQ(Key(t, "http://[FE80::1]/a"), "http|[fe80::1]|[fe80::1]|80");
}

TEST(NginxKeyTemplate, RefusedUrls) {
  const char* t = "$host$uri";
  EXPECT_EQ(Key(t, "ftp://h/a"), "error: url 'ftp://h/a' is not http:// or https://");
  EXPECT_EQ(Key(t, "h/a"), "error: url 'h/a' is not http:// or https://");
  EXPECT_EQ(Key(t, "http:///a"), "error: url 'http:///a' has no host");
  EXPECT_EQ(Key(t, "http://:80/a"), "error: url 'http://:80/a' has no host");
  EXPECT_EQ(Key(t, "http://[::1/a"), "error: url 'http://[::1/a' has no host");
  EXPECT_EQ(Key(t, "http://h:0/a"), "error: url 'http://h:0/a' has a bad port '0'");
  EXPECT_EQ(Key(t, "http://h:65536/a"), "error: url 'http://h:65536/a' has a bad port '65536'");
  EXPECT_EQ(Key(t, "http://h:8x/a"), "error: url 'http://h:8x/a' has a bad port '8x'");
  EXPECT_EQ(Key(t, "http://h/a b"), "error: url 'http://h/a b' holds a space or a control byte");
  EXPECT_EQ(Key(t, "http://h/a\x01"),
            "error: url 'http://h/a\\x01' holds a space or a control byte");
  EXPECT_EQ(Key(t, "http://a..b/"), "error: url 'http://a..b/' has a host nginx refuses");
  EXPECT_EQ(Key(t, "http://./"), "error: url 'http://./' has a host nginx refuses");
  EXPECT_EQ(Key(t, "http://h/.."), "error: url 'http://h/..' has a path nginx refuses");
}

// Paths and queries, nginx 1.22.1 with curl --path-as-is.
TEST(NginxKeyTemplate, RequestUriAsSentAndQueries) {
  const char* t = "$request_uri|$uri|$is_args|$args";
  EXPECT_EQ(Key(t, "http://h"), "/|/||");
  EXPECT_EQ(Key(t, "http://h?x=1"), "/?x=1|/|?|x=1");
  EXPECT_EQ(Key(t, "http://h/a?"), "/a?|/a||");
  EXPECT_EQ(Key(t, "http://h/a?x#frag"), "/a?x|/a|?|x");
  EXPECT_EQ(Key(t, "http://h/a#frag?x"), "/a|/a||");
  EXPECT_EQ(Key(t, "http://h/a?x?y=%41"), "/a?x?y=%41|/a|?|x?y=%41");
  EXPECT_EQ(Key(t, "http://h/dir%20with%20space/caf%C3%A9.txt"),
            "/dir%20with%20space/caf%C3%A9.txt|/dir with space/caf\xc3\xa9.txt||");
}

TEST(NginxKeyTemplate, UriIsNormalizedAsNginxDoes) {
  // nginx 1.22.1, each of them.
  const std::pair<const char*, const char*> cases[] = {
      {"/a/./b/../c//d", "/a/c/d"},
      {"/a/./b%41", "/a/bA"},
      {"/a/b/..", "/a/"},
      {"/a/b/.", "/a/b/"},
      {"/a/%2e%2e/b", "/b"},
      {"/a/.%2e/b", "/b"},
      {"/a/%2E/b", "/a/b"},
      {"/a%2Fb%2f%2Fc", "/a/b/c"},
      {"/a%3Fb%23c%25d%3fe", "/a?b#c%d?e"},
      {"/a+b%2Bc/.../..d", "/a+b+c/.../..d"},
      {"//a///b/", "/a/b/"},
      {"/a%e9b",
       "/a\xe9"
       "b"},
      {"/.", "/"},
      {"/a/..", "/"},
      {"/a/.b/..c", "/a/.b/..c"},
      {"/%252e%252e", "/%2e%2e"},
      {"/a/%2e", "/a/"},
  };
  for (const auto& [path, uri] : cases) {
    EXPECT_EQ(Key("$uri", std::string("http://h") + path), uri) << path;
  }
  // nginx 1.22.1 answers 400 to these.
  for (const char* path : {"/..", "/a/../..", "/%zz", "/a%00b", "/%", "/a%4", "/%2e%2e"}) {
    EXPECT_EQ(Key("$uri", std::string("http://h") + path),
              "error: url 'http://h" + std::string(path) + "' has a path nginx refuses")
        << path;
  }
}

TEST(NginxKeyTemplate, BuildReplacesTheKey) {
  const NginxKeyTemplate t = Template("$host");
  std::string key = "old contents";
  ASSERT_TRUE(t.Build("http://h/", &key).ok());
  EXPECT_EQ(key, "h");
  // A copy builds alike: the encoder holds one.
  const NginxKeyTemplate copy = t;
  ASSERT_TRUE(copy.Build("http://g/", &key).ok());
  EXPECT_EQ(key, "g");
}

}  // namespace
}  // namespace peerbloom
