// The client's reader of a peerbloomd config: defaults, the keys it takes, the daemon's
// checks and messages for them, and every other key left alone.
#include "peerbloom/client/client_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace peerbloom::client {
namespace {

constexpr char kMinimal[] =
    "node_id = \"a\"\n"
    "listen = \"tcp://127.0.0.1:7401\"\n"
    "data_dir = \"/tmp/pb\"\n";

std::string ErrorOf(const std::string& text) {
  ClientConfig c;
  const Status s = ParseClientConfig(text, "t.toml", &c);
  return s.ok() ? "ok" : s.message();
}

TEST(ClientConfig, Defaults) {
  ClientConfig c;
  ASSERT_TRUE(ParseClientConfig(kMinimal, "t.toml", &c).ok());
  EXPECT_EQ(c.source_path, "t.toml");
  EXPECT_EQ(c.control, "ipc:///tmp/pb/control.sock");
  EXPECT_EQ(c.control, DefaultControlEndpoint("/tmp/pb"));
  EXPECT_EQ(c.cluster_secret, "");
  EXPECT_EQ(c.key_scheme, KeyScheme::kSquidMd5);
  EXPECT_EQ(c.squid_url.uri_whitespace, UriWhitespace::kStrip);
  EXPECT_EQ(c.squid_url.append_domain, "");
}

// The offline tools key URLs as the daemon does: by the nodes' nginx_cache_key.
TEST(ClientConfig, ReadsTheNginxCacheKey) {
  ClientConfig c;
  ASSERT_TRUE(ParseClientConfig(std::string(kMinimal) +
                                    "key_scheme = \"nginx-md5\"\n"
                                    "nginx_cache_key = \"$scheme$host$request_uri\"\n",
                                "t.toml", &c)
                  .ok());
  std::string key;
  ASSERT_TRUE(c.nginx_key.Build("http://Cache.Example:8080/a?b=1", &key).ok());
  EXPECT_EQ(key, "httpcache.example/a?b=1");
  // nginx's own default, with the upstream named.
  ASSERT_TRUE(ParseClientConfig(std::string(kMinimal) + "key_scheme = \"nginx-md5\"\n"
                                                        "nginx_proxy_host = \"backend\"\n",
                                "t.toml", &c)
                  .ok());
  ASSERT_TRUE(c.nginx_key.Build("http://cache.example/a", &key).ok());
  EXPECT_EQ(key, "http://backend/a");
}

TEST(ClientConfig, ReadsTheClientKeysAndIgnoresTheDaemonsOwn) {
  ClientConfig c;
  const std::string text = std::string(kMinimal) +
                           "cluster_secret = \"s3\"\n"
                           "control = \"tcp://127.0.0.1:7400\"\n"
                           "squid_uri_whitespace = \"encode\"\n"
                           "squid_append_domain = \".lab\"\n"
                           "capacity = 5000\n"
                           "gossip_interval = \"200ms\"\n"
                           "[[feeds]]\npath = \"/x\"\n";
  ASSERT_TRUE(ParseClientConfig(text, "t.toml", &c).ok()) << ErrorOf(text);
  EXPECT_EQ(c.cluster_secret, "s3");
  EXPECT_EQ(c.control, "tcp://127.0.0.1:7400");
  EXPECT_EQ(c.squid_url.uri_whitespace, UriWhitespace::kEncode);
  EXPECT_EQ(c.squid_url.append_domain, ".lab");
  ASSERT_TRUE(ParseClientConfig("data_dir = \"/d\"\nkey_scheme = \"raw\"\n", "t.toml", &c).ok());
  EXPECT_EQ(c.key_scheme, KeyScheme::kRaw);
  // A control endpoint set outright needs no data_dir.
  ASSERT_TRUE(ParseClientConfig("control = \"ipc:///run/pb.sock\"\n", "t.toml", &c).ok());
  EXPECT_EQ(c.control, "ipc:///run/pb.sock");
}

TEST(ClientConfig, ErrorsAreTheDaemonsWithFileAndLine) {
  const std::string head = kMinimal;
  EXPECT_EQ(ErrorOf("listen = \"tcp://127.0.0.1:1\"\n"),
            "t.toml:1: missing required key 'data_dir'");
  EXPECT_EQ(ErrorOf(head + "key_scheme = \"md5\"\n"),
            "t.toml:4: 'key_scheme' must be 'squid-md5', 'nginx-md5' or 'raw', got 'md5'");
  EXPECT_EQ(ErrorOf(head + "cluster_secret = 7\n"), "t.toml:4: 'cluster_secret' must be a string");
  EXPECT_EQ(ErrorOf("data_dir = \"\"\n"), "t.toml:1: 'data_dir' must not be empty");
  EXPECT_EQ(ErrorOf(head + "allow_remote_control = 1\n"),
            "t.toml:4: 'allow_remote_control' must be true or false");
  EXPECT_EQ(ErrorOf(head + "squid_uri_whitespace = \"Strip\"\n"),
            "t.toml:4: 'squid_uri_whitespace' must be 'strip', 'allow', 'encode', 'chop' or "
            "'deny', got 'Strip'");
  EXPECT_EQ(ErrorOf(head + "squid_append_domain = \"example.com\"\n"),
            "t.toml:4: 'squid_append_domain' must be a '.' followed by at most 253 letters, "
            "digits, '-', '.' or '_', got 'example.com'");
  EXPECT_EQ(ErrorOf(head + "squid_uri_whitespace = \"chop\"\nkey_scheme = \"raw\"\n"),
            "t.toml:4: 'squid_uri_whitespace' and 'squid_append_domain' need key_scheme = "
            "'squid-md5'");
  EXPECT_EQ(ErrorOf(head + "control = \"tcp://10.1.2.3:7400\"\n"),
            "t.toml:4: 'control' endpoint 'tcp://10.1.2.3:7400' is not loopback; set "
            "'allow_remote_control = true' to allow it");
  EXPECT_EQ(ErrorOf(head + "control = \"tcp://10.1.2.3:7400\"\nallow_remote_control = true\n"),
            "ok");
  EXPECT_EQ(ErrorOf(head + "control = \"tcp://127.0.0.1:0\"\n"),
            "t.toml:4: 'control' needs a port other than '0'");
  EXPECT_EQ(ErrorOf(head + "control = \"udp://x\"\n"),
            "t.toml:4: 'control' must be 'ipc://PATH' or 'tcp://HOST:PORT', got 'udp://x'");
  EXPECT_EQ(ErrorOf("data_dir = \"/" + std::string(100, 'd') + "\"\n"),
            "t.toml:1: control socket path is longer than 107 characters: '/" +
                std::string(100, 'd') + "/control.sock' (set 'control' or a shorter 'data_dir')");
}

TEST(ClientConfig, BadTomlKeepsItsLine) {
  ClientConfig c;
  c.cluster_secret = "untouched";
  const Status s = ParseClientConfig("data_dir = \"/d\"\ncontrol = \n", "t.toml", &c);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message().rfind("t.toml:2: ", 0), 0u) << s.message();
  EXPECT_EQ(c.cluster_secret, "untouched");
}

TEST(ClientConfig, MissingFileIsAnIoError) {
  ClientConfig c;
  const Status s = LoadClientConfig("/nonexistent/peerbloomd.toml", &c);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(),
            "/nonexistent/peerbloomd.toml: cannot open config file: No such file or directory");
}

TEST(ClientConfig, LoadsAFile) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pbclient." + std::to_string(::getpid()) + ".toml"))
                               .string();
  std::ofstream(path) << kMinimal << "cluster_secret = \"f\"\n";
  ClientConfig c;
  const Status s = LoadClientConfig(path, &c);
  std::filesystem::remove(path);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.source_path, path);
  EXPECT_EQ(c.cluster_secret, "f");
}

TEST(ClientConfig, EveryExampleConfigLoads) {
  int loaded = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PEERBLOOM_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".toml") continue;
    ClientConfig c;
    const Status s = LoadClientConfig(entry.path().string(), &c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(c.control.empty());
    ++loaded;
  }
  EXPECT_GE(loaded, 4);
}

TEST(ClientConfig, Endpoints) {
  std::string host;
  int port = -1;
  ASSERT_TRUE(ParseTcpEndpoint("tcp://[::1]:7400", &host, &port));
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(port, 7400);
  ASSERT_TRUE(ParseTcpEndpoint("tcp://127.0.0.1:0", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 0);
  EXPECT_FALSE(ParseTcpEndpoint("tcp://:1", &host, &port));
  EXPECT_FALSE(ParseTcpEndpoint("tcp://h:", &host, &port));
  EXPECT_FALSE(ParseTcpEndpoint("tcp://h:*", &host, &port));
  EXPECT_FALSE(ParseTcpEndpoint("tcp://h:70000", &host, &port));
  EXPECT_FALSE(ParseTcpEndpoint("tcp://h:123456", &host, &port));
  EXPECT_FALSE(ParseTcpEndpoint("ipc://x", &host, &port));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.2"));
  EXPECT_FALSE(IsLoopbackHost("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

}  // namespace
}  // namespace peerbloom::client
