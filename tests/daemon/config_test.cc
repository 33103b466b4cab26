#include "daemon/config/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "peerbloom/client/client_config.h"

namespace peerbloom::daemon {
namespace {

constexpr char kMinimal[] =
    "node_id = \"a\"\n"
    "listen = \"tcp://127.0.0.1:7401\"\n"
    "data_dir = \"/tmp/pb\"\n";

Status Parse(const std::string& text, Config* c) { return ParseConfig(text, "t.toml", c); }

std::string ErrorOf(const std::string& text) {
  Config c;
  Status s = Parse(text, &c);
  return s.ok() ? "ok" : s.message();
}

TEST(Config, MinimalGetsDocumentedDefaults) {
  Config c;
  ASSERT_TRUE(Parse(kMinimal, &c).ok());
  EXPECT_EQ(c.node_id, "a");
  EXPECT_EQ(c.advertise, "");
  EXPECT_EQ(c.key_scheme, KeyScheme::kSquidMd5);
  EXPECT_EQ(c.capacity, 1000000u);
  EXPECT_EQ(c.profile, Profile::kBalanced);
  EXPECT_DOUBLE_EQ(c.target_fpr, 0.01);
  EXPECT_EQ(c.gossip_interval_ms, 1000);
  EXPECT_EQ(c.failure_timeout_ms, 10000);
  EXPECT_EQ(c.anti_entropy_interval_ms, 5000);
  EXPECT_EQ(c.fanout, 4u);
  EXPECT_EQ(c.control, "ipc:///tmp/pb/control.sock");
  EXPECT_EQ(c.key_file, "/tmp/pb/node.key");
  EXPECT_EQ(c.log_file, "/tmp/pb/peerbloomd.log");
  EXPECT_TRUE(c.curve);
  EXPECT_EQ(c.snapshot_interval_ms, 60000);
  EXPECT_EQ(c.max_message_bytes, int64_t{64} << 20);
  EXPECT_EQ(c.source_path, "t.toml");
}

TEST(Config, ReadsEveryKey) {
  Config c;
  const std::string text = std::string(kMinimal) +
                           "advertise = \"tcp://cache-1:7401\"\n"
                           "cluster_secret = \"s\"\n"
                           "key_scheme = \"raw\"\n"
                           "capacity = 5000\n"
                           "profile = \"wire-lean\"\n"
                           "target_fpr = 0.02\n"
                           "gossip_interval = \"200ms\"\n"
                           "failure_timeout = \"3s\"\n"
                           "anti_entropy_interval = \"1m\"\n"
                           "fanout = 3\n"
                           "publish_threshold = 0.1\n"
                           "control = \"tcp://127.0.0.1:7400\"\n"
                           "log_level = \"debug\"\n"
                           "curve = false\n"
                           "snapshot_interval = 0\n"
                           "[[seeds]]\nendpoint = \"tcp://127.0.0.1:7402\"\n"
                           "public_key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n"
                           "[[feeds]]\npath = \"/tmp/feed\"\nstart_at_end = true\n";
  Status s = Parse(text, &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.advertise, "tcp://cache-1:7401");
  EXPECT_EQ(c.key_scheme, KeyScheme::kRaw);
  EXPECT_EQ(c.capacity, 5000u);
  EXPECT_EQ(c.profile, Profile::kWireLean);
  EXPECT_EQ(c.gossip_interval_ms, 200);
  EXPECT_EQ(c.failure_timeout_ms, 3000);
  EXPECT_EQ(c.anti_entropy_interval_ms, 60000);
  EXPECT_EQ(c.fanout, 3u);
  EXPECT_EQ(c.control, "tcp://127.0.0.1:7400");
  EXPECT_FALSE(c.curve);
  EXPECT_EQ(c.snapshot_interval_ms, 0);
  ASSERT_EQ(c.seeds.size(), 1u);
  EXPECT_EQ(c.seeds[0].endpoint, "tcp://127.0.0.1:7402");
  EXPECT_EQ(c.seeds[0].public_key, "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");
  ASSERT_EQ(c.feeds.size(), 1u);
  EXPECT_TRUE(c.feeds[0].start_at_end);
}

TEST(Config, ErrorsNameFileAndLine) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "gosip_interval = \"1s\"\n"),
            "t.toml:4: unknown key 'gosip_interval'");
  EXPECT_EQ(ErrorOf("node_id = \"a b\"\n"),
            "t.toml:1: 'node_id' must be 1-64 characters of [A-Za-z0-9._:-], got 'a b'");
  EXPECT_EQ(ErrorOf("node_id = \"a\"\nlisten = \"127.0.0.1:7401\"\n"),
            "t.toml:2: 'listen' must look like 'tcp://HOST:PORT', got '127.0.0.1:7401'");
  EXPECT_EQ(ErrorOf("node_id = \"a\"\ndata_dir = \"/x\"\n"),
            "t.toml:1: missing required key 'listen'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "key_scheme = \"md5\"\n"),
            "t.toml:4: 'key_scheme' must be 'squid-md5', 'nginx-md5' or 'raw', got 'md5'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "\n\ngossip_interval = \"fast\"\n"),
            "t.toml:6: 'gossip_interval' must be a duration like \"250ms\", \"2s\" or \"5m\" "
            "(or integer ms)");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "fanout = 0\n"),
            "t.toml:4: 'fanout' must be between '1' and '64', got '0'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "target_fpr = 0.7\n"),
            "t.toml:4: 'target_fpr' must be in (0, 0.5], got '0.7'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "curve = \"yes\"\n"),
            "t.toml:4: 'curve' must be true or false");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "[[seeds]]\nendpoint = \"tcp://h:1\"\nport = 3\n"),
            "t.toml:6: unknown key 'seeds.port'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "[[seeds]]\npublic_key = \"short\"\n"),
            "t.toml:5: 'seeds.public_key' must be a 40-character Z85 key, got 'short'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "capacity = 0\n"),
            "t.toml:4: 'capacity' must be between '1' and '4294967296', got '0'");
}

TEST(Config, MetricsListenIsOffByDefaultAndChecked) {
  Config c;
  ASSERT_TRUE(Parse(kMinimal, &c).ok());
  EXPECT_EQ(c.metrics_listen, "");
  ASSERT_TRUE(Parse(std::string(kMinimal) + "metrics_listen = \"[::1]:9466\"\n", &c).ok());
  EXPECT_EQ(c.metrics_listen, "[::1]:9466");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "metrics_listen = \"9466\"\n"),
            "t.toml:4: 'metrics_listen': '9466' is not HOST:PORT or [IPV6]:PORT");
}

TEST(Config, WhoHasSocketAndBusyPoll) {
  Config c;
  ASSERT_TRUE(Parse(kMinimal, &c).ok());
  EXPECT_EQ(c.who_has_socket, "/tmp/pb/who-has.sock");
  EXPECT_EQ(c.control_busy_poll_us, 0);
  ASSERT_TRUE(
      Parse(std::string(kMinimal) + "who_has_socket = \"\"\ncontrol_busy_poll = \"50us\"\n", &c)
          .ok());
  EXPECT_EQ(c.who_has_socket, "");
  EXPECT_EQ(c.control_busy_poll_us, 50);
  ASSERT_TRUE(Parse(std::string(kMinimal) + "control_busy_poll = \"2ms\"\n", &c).ok());
  EXPECT_EQ(c.control_busy_poll_us, 2000);
  ASSERT_TRUE(Parse(std::string(kMinimal) + "control_busy_poll = \"0\"\n", &c).ok());
  EXPECT_EQ(c.control_busy_poll_us, 0);
  const std::string message =
      "t.toml:4: 'control_busy_poll' must be a duration like \"50us\" or \"1ms\", at most "
      "\"10ms\"";
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "control_busy_poll = \"11ms\"\n"), message);
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "control_busy_poll = \"50\"\n"), message);
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "control_busy_poll = 50\n"), message);
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "control_busy_poll = \"1s\"\n"), message);
}

TEST(Config, StoreLogFeedNeedsSquidKeys) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "key_scheme = \"raw\"\n[[feeds]]\npath = \"/x\"\n"
                                            "format = \"squid-store-log\"\n"),
            "t.toml:7: a 'squid-store-log' feed needs key_scheme = 'squid-md5'");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "[[feeds]]\npath = \"/x\"\nformat = \"csv\"\n"),
      "t.toml:6: 'feeds.format' must be 'line', 'squid-store-log' or 'nginx-cache', got 'csv'");
}

TEST(Config, SquidDigestEntries) {
  Config c;
  const std::string text = std::string(kMinimal) +
                           "squid_digest_min_refresh = \"5s\"\n"   // line 4
                           "squid_digest_max_refresh = \"10m\"\n"  // line 5
                           "[[squid_digest]]\n"                    // line 6
                           "host = \"cache-7.example\"\n"
                           "[[squid_digest]]\n"
                           "host = \"10.0.0.8\"\n"
                           "port = 8080\n";
  ASSERT_TRUE(Parse(text, &c).ok()) << ErrorOf(text);
  ASSERT_EQ(c.squid_digests.size(), 2u);
  EXPECT_EQ(c.squid_digests[0].host, "cache-7.example");
  EXPECT_EQ(c.squid_digests[0].port, 3128);
  EXPECT_EQ(c.squid_digests[1].host, "10.0.0.8");
  EXPECT_EQ(c.squid_digests[1].port, 8080);
  EXPECT_EQ(c.squid_digest_min_refresh_ms, 5000);
  EXPECT_EQ(c.squid_digest_max_refresh_ms, 600000);
  Config d;
  ASSERT_TRUE(Parse(kMinimal, &d).ok());
  EXPECT_TRUE(d.squid_digests.empty());
  EXPECT_EQ(d.squid_digest_min_refresh_ms, 60000);
  EXPECT_EQ(d.squid_digest_max_refresh_ms, 21600000);
}

TEST(Config, SquidDigestErrorsNameTheLine) {
  const std::string head = kMinimal;
  EXPECT_EQ(ErrorOf(head + "key_scheme = \"raw\"\n[[squid_digest]]\nhost = \"s1\"\n"),
            "t.toml:5: 'squid_digest' needs key_scheme = 'squid-md5'");
  EXPECT_EQ(ErrorOf(head + "[[squid_digest]]\nhost = \"s1\"\nport = 0\n"),
            "t.toml:6: 'squid_digest.port' must be between '1' and '65535', got '0'");
  EXPECT_EQ(ErrorOf(head + "[[squid_digest]]\nhost = \"s1\"\nport = 70000\n"),
            "t.toml:6: 'squid_digest.port' must be between '1' and '65535', got '70000'");
  EXPECT_EQ(ErrorOf(head + "[[squid_digest]]\nport = 3128\n"),
            "t.toml:4: squid_digest without 'host'");
  EXPECT_EQ(ErrorOf(head + "[[squid_digest]]\nhost = \"http://s1/\"\n"),
            "t.toml:5: 'squid_digest.host' must be a host name or IPv4 address, got "
            "'http://s1/'");
  EXPECT_EQ(ErrorOf(head + "[[squid_digest]]\nhost = \"s1\"\nurl = \"x\"\n"),
            "t.toml:6: unknown key 'squid_digest.url'");
  EXPECT_EQ(ErrorOf(head + "[[squid_digest]]\nhost = \"s1\"\n"
                           "[[squid_digest]]\nhost = \"s2\"\n"
                           "[[squid_digest]]\nhost = \"s1\"\nport = 3128\n"),
            "t.toml:8: duplicate squid_digest 's1:3128' (first at line 4)");
  EXPECT_EQ(ErrorOf(head + "squid_digest_min_refresh = \"2m\"\n"
                           "squid_digest_max_refresh = \"1m\"\n"),
            "t.toml:5: 'squid_digest_max_refresh' must be at least 'squid_digest_min_refresh'");
  EXPECT_EQ(ErrorOf(head + "squid_digest = 3\n"),
            "t.toml:4: 'squid_digest' must be an array of tables ([[squid_digest]])");
}

TEST(Config, SquidUrlSettings) {
  Config d;
  ASSERT_TRUE(Parse(kMinimal, &d).ok());
  EXPECT_EQ(d.squid_url.uri_whitespace, UriWhitespace::kStrip);
  EXPECT_EQ(d.squid_url.append_domain, "");
  Config c;
  const std::string text = std::string(kMinimal) +
                           "squid_uri_whitespace = \"encode\"\n"
                           "squid_append_domain = \".example.com\"\n";
  ASSERT_TRUE(Parse(text, &c).ok()) << ErrorOf(text);
  EXPECT_EQ(c.squid_url.uri_whitespace, UriWhitespace::kEncode);
  EXPECT_EQ(c.squid_url.append_domain, ".example.com");
}

TEST(Config, SquidUrlSettingErrors) {
  const std::string head = kMinimal;
  EXPECT_EQ(ErrorOf(head + "squid_uri_whitespace = \"Strip\"\n"),
            "t.toml:4: 'squid_uri_whitespace' must be 'strip', 'allow', 'encode', 'chop' or "
            "'deny', got 'Strip'");
  EXPECT_EQ(ErrorOf(head + "squid_append_domain = \"example.com\"\n"),
            "t.toml:4: 'squid_append_domain' must be a '.' followed by at most 253 letters, "
            "digits, '-', '.' or '_', got 'example.com'");
  EXPECT_EQ(ErrorOf(head + "key_scheme = \"raw\"\nsquid_append_domain = \".lab\"\n"),
            "t.toml:5: 'squid_uri_whitespace' and 'squid_append_domain' need key_scheme = "
            "'squid-md5'");
  EXPECT_EQ(ErrorOf(head + "squid_uri_whitespace = \"chop\"\nkey_scheme = \"raw\"\n"),
            "t.toml:4: 'squid_uri_whitespace' and 'squid_append_domain' need key_scheme = "
            "'squid-md5'");
}

TEST(Config, TomlSyntaxErrorsKeepTheirLine) {
  const std::string message = ErrorOf("node_id = \"a\"\nlisten = \n");
  EXPECT_EQ(message.rfind("t.toml:2: ", 0), 0u) << message;
}

TEST(Config, ControlMustBeLocalUnlessAllowed) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "control = \"tcp://10.1.2.3:7400\"\n"),
            "t.toml:4: 'control' endpoint 'tcp://10.1.2.3:7400' is not loopback; set "
            "'allow_remote_control = true' to allow it");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) +
                    "control = \"tcp://10.1.2.3:7400\"\nallow_remote_control = true\n"),
            "ok");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "control = \"udp://x\"\n"),
            "t.toml:4: 'control' must be 'ipc://PATH' or 'tcp://HOST:PORT', got 'udp://x'");
}

TEST(Config, WildcardListenNeedsAdvertise) {
  EXPECT_EQ(ErrorOf("node_id = \"a\"\nlisten = \"tcp://0.0.0.0:7401\"\ndata_dir = \"/x\"\n"),
            "t.toml:2: 'advertise' is required when 'listen' binds a wildcard address");
  EXPECT_EQ(ErrorOf("node_id = \"a\"\nlisten = \"tcp://0.0.0.0:7401\"\ndata_dir = \"/x\"\n"
                    "advertise = \"tcp://10.0.0.1:7401\"\n"),
            "ok");
}

TEST(Config, ImpossibleGeometryIsRefused) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "capacity = 4294967296\nprofile = \"wire-lean\"\n")
                .rfind("t.toml:4: filter geometry: ", 0),
            0u);
}

TEST(Config, FilterSizes) {
  Config c;
  ASSERT_TRUE(Parse(kMinimal, &c).ok());
  EXPECT_EQ(c.filter_sizes, SizeSteps::kExact);
  EXPECT_FALSE(c.filter_sizes_set);
  ASSERT_TRUE(Parse(std::string(kMinimal) + "filter_sizes = \"power-of-two\"\n", &c).ok());
  EXPECT_EQ(c.filter_sizes, SizeSteps::kPowerOfTwo);
  ASSERT_TRUE(Parse(std::string(kMinimal) + "filter_sizes = \"exact\"\n", &c).ok());
  EXPECT_EQ(c.filter_sizes, SizeSteps::kExact);
  EXPECT_TRUE(c.filter_sizes_set);
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "filter_sizes = \"odd\"\n"),
            "t.toml:4: 'filter_sizes' must be 'power-of-two' or 'exact', got 'odd'");
}

TEST(Config, MissingFileIsAnIoError) {
  Config c;
  Status s = LoadConfig("/nonexistent/peerbloomd.toml", &c);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(),
            "/nonexistent/peerbloomd.toml: cannot open config file: No such file or directory");
}

TEST(Config, Durations) {
  int64_t ms = 0;
  ASSERT_TRUE(ParseDuration("250ms", &ms));
  EXPECT_EQ(ms, 250);
  ASSERT_TRUE(ParseDuration("2s", &ms));
  EXPECT_EQ(ms, 2000);
  ASSERT_TRUE(ParseDuration("1h", &ms));
  EXPECT_EQ(ms, 3600000);
  EXPECT_FALSE(ParseDuration("2", &ms));
  EXPECT_FALSE(ParseDuration("s", &ms));
  EXPECT_FALSE(ParseDuration("-1s", &ms));
  EXPECT_FALSE(ParseDuration("99999999999999999999h", &ms));
}

// Every shipped config loads and its seed key files are named consistently.
// The keys a client reads (peerbloom/client/client_config.h) mean the same to both readers:
// the same values, and the same error for a bad one.
TEST(Config, ClientReaderAgreesOnSharedKeys) {
  const std::string head = kMinimal;
  const std::vector<std::string> texts = {
      head,
      head + "cluster_secret = \"s\"\nkey_scheme = \"raw\"\n",
      head + "control = \"tcp://127.0.0.1:7400\"\n",
      head + "control = \"tcp://10.0.0.1:7400\"\nallow_remote_control = true\n",
      head + "squid_uri_whitespace = \"chop\"\nsquid_append_domain = \".lab\"\n",
      head + "key_scheme = \"md5\"\n",
      head + "cluster_secret = 1\n",
      head + "allow_remote_control = \"yes\"\n",
      head + "control = \"tcp://10.0.0.1:7400\"\n",
      head + "control = \"tcp://127.0.0.1:0\"\n",
      head + "control = \"udp://x\"\n",
      head + "squid_uri_whitespace = \"x\"\n",
      head + "squid_append_domain = \"lab\"\n",
      head + "squid_append_domain = \".lab\"\nkey_scheme = \"raw\"\n",
      "node_id = \"a\"\nlisten = \"tcp://127.0.0.1:1\"\ndata_dir = \"/" + std::string(100, 'd') +
          "\"\n",
      head + "control = \n",
      head + "control = \"tcp://127.0.0.1:7400\"\ncontrol_token_file = \"/etc/pb.token\"\n",
  };
  for (const std::string& text : texts) {
    Config d;
    client::ClientConfig c;
    const Status ds = Parse(text, &d);
    const Status cs = client::ParseClientConfig(text, "t.toml", &c);
    EXPECT_EQ(cs.ToString(), ds.ToString()) << text;
    if (!ds.ok()) continue;
    EXPECT_EQ(c.control, d.control) << text;
    EXPECT_EQ(c.cluster_secret, d.cluster_secret) << text;
    EXPECT_EQ(c.key_scheme, d.key_scheme) << text;
    EXPECT_EQ(c.squid_url.uri_whitespace, d.squid_url.uri_whitespace) << text;
    EXPECT_EQ(c.squid_url.append_domain, d.squid_url.append_domain) << text;
    EXPECT_EQ(c.control_token_file, d.control_token_file) << text;
  }
}

TEST(Config, ControlTokenFileDefaultsForTcpOnly) {
  Config c;
  ASSERT_TRUE(Parse(kMinimal, &c).ok());
  EXPECT_EQ(c.control_token_file, "");
  ASSERT_TRUE(Parse(std::string(kMinimal) + "control = \"tcp://127.0.0.1:7400\"\n", &c).ok());
  EXPECT_EQ(c.control_token_file, "/tmp/pb/control.token");
}

TEST(Config, ImportedDigestPrefixIsNotANodeId) {
  EXPECT_EQ(ErrorOf("node_id = \"squid:h:1\"\n"),
            "t.toml:1: 'node_id' must not start with 'squid:' (reserved for imported Squid "
            "digests), got 'squid:h:1'");
}

TEST(Config, EveryExampleConfigLoads) {
  int loaded = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PEERBLOOM_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".toml") continue;
    Config c;
    Status s = LoadConfig(entry.path().string(), &c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    ++loaded;
  }
  EXPECT_GE(loaded, 4);
}

}  // namespace
}  // namespace peerbloom::daemon
