// The relay and purge keys of the config file (docs/config.md, "Broadcast relay").
#include <gtest/gtest.h>

#include "daemon/config/config.h"
#include "daemon/relay/relay_service.h"

namespace peerbloom::daemon {
namespace {

constexpr char kMinimal[] =
    "node_id = \"a\"\n"
    "listen = \"tcp://127.0.0.1:7401\"\n"
    "data_dir = \"/tmp/pb\"\n";

std::string ErrorOf(const std::string& text) {
  Config c;
  Status s = ParseConfig(text, "t.toml", &c);
  return s.ok() ? "ok" : s.message();
}

TEST(RelayConfig, DefaultsAreTheDocumentedOnes) {
  Config c;
  ASSERT_TRUE(ParseConfig(kMinimal, "t.toml", &c).ok());
  EXPECT_TRUE(c.relay_links.empty());
  EXPECT_EQ(c.relay_hop_limit, 16u);
  EXPECT_EQ(c.relay_rate_limit, 1000u);
  EXPECT_EQ(c.relay_max_payload_bytes, 65536);
  EXPECT_EQ(c.purge_squid, "");
  EXPECT_TRUE(c.purge_command.empty());
  EXPECT_EQ(c.purge_command_timeout_ms, 10000);
  EXPECT_TRUE(ValidateRelayConfig(c).ok());
}

TEST(RelayConfig, ReadsEveryKey) {
  Config c;
  ASSERT_TRUE(ParseConfig(std::string(kMinimal) +
                              "relay_links = [\"b\", \"c:1\"]\nrelay_hop_limit = 5\n"
                              "relay_rate_limit = 0\nrelay_max_payload_bytes = 100\n"
                              "purge_squid = \"127.0.0.1:3128\"\n",
                          "t.toml", &c)
                  .ok());
  EXPECT_EQ(c.relay_links, (std::vector<std::string>{"b", "c:1"}));
  EXPECT_EQ(c.relay_hop_limit, 5u);
  EXPECT_EQ(c.relay_rate_limit, 0u);
  EXPECT_EQ(c.relay_max_payload_bytes, 100);
  EXPECT_EQ(c.purge_squid, "127.0.0.1:3128");
  EXPECT_TRUE(ValidateRelayConfig(c).ok());
}

TEST(RelayConfig, RefusesBadValues) {
  const std::string m = kMinimal;
  EXPECT_EQ(ErrorOf(m + "relay_links = \"b\"\n"),
            "t.toml:4: 'relay_links' must be an array of node ids");
  EXPECT_EQ(ErrorOf(m + "relay_links = [\"b c\"]\n"),
            "t.toml:4: 'relay_links' must hold node ids, got 'b c'");
  EXPECT_EQ(ErrorOf(m + "relay_links = [\"b\", \"b\"]\n"),
            "t.toml:4: 'relay_links' names 'b' twice");
  EXPECT_EQ(ErrorOf(m + "relay_links = [\"a\"]\n"),
            "t.toml:4: 'relay_links' names this node itself");
  EXPECT_EQ(ErrorOf(m + "purge_squid = \"127.0.0.1\"\n"),
            "t.toml:4: 'purge_squid' must be HOST:PORT, got '127.0.0.1'");
  EXPECT_EQ(ErrorOf(m + "purge_squid = \"h:70000\"\n"),
            "t.toml:4: 'purge_squid' must be HOST:PORT, got 'h:70000'");
  EXPECT_NE(ErrorOf(m + "relay_hop_limit = 0\n"), "ok");
}

TEST(RelayConfig, ReadsThePurgeCommand) {
  Config c;
  ASSERT_TRUE(ParseConfig(std::string(kMinimal) +
                              "purge_command = [\"/usr/local/bin/purge\", \"--quiet\"]\n"
                              "purge_command_timeout = \"3s\"\n",
                          "t.toml", &c)
                  .ok());
  EXPECT_EQ(c.purge_command, (std::vector<std::string>{"/usr/local/bin/purge", "--quiet"}));
  EXPECT_EQ(c.purge_command_timeout_ms, 3000);
}

TEST(RelayConfig, RefusesBadPurgeCommands) {
  const std::string m = kMinimal;
  EXPECT_EQ(ErrorOf(m + "purge_command = []\n"),
            "t.toml:4: 'purge_command' must be a non-empty array of strings");
  EXPECT_EQ(ErrorOf(m + "purge_command = \"/bin/purge\"\n"),
            "t.toml:4: 'purge_command' must be a non-empty array of strings");
  EXPECT_EQ(ErrorOf(m + "purge_command = [\"purge\", \"x\"]\n"),
            "t.toml:4: 'purge_command' must start with an absolute path, got 'purge'");
  EXPECT_EQ(ErrorOf(m + "purge_command = [\"/bin/purge\", 3]\n"),
            "t.toml:4: 'purge_command' must be a string");
  EXPECT_EQ(ErrorOf(m + "purge_command = [\"/bin/purge\"]\npurge_squid = \"127.0.0.1:3128\"\n"),
            "t.toml:4: 'purge_command' and 'purge_squid' exclude each other");
  EXPECT_EQ(ErrorOf(m + "purge_command_timeout = \"50ms\"\n"),
            "t.toml:4: 'purge_command_timeout' must be between '100ms' and '24h', got '50ms'");
}

}  // namespace
}  // namespace peerbloom::daemon
