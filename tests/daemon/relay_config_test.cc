// The relay and purge keys of the config file (docs/config.md, "Broadcast relay").
#include <gtest/gtest.h>

#include "daemon/config.h"
#include "daemon/relay_service.h"

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

}  // namespace
}  // namespace peerbloom::daemon
