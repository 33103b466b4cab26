// The who-has reply codec: golden bytes of what the daemon sends (docs/control-protocol.md),
// the round trip through the decoder, and hostile replies.
#include "peerbloom/client/who_has.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peerbloom::client {
namespace {

using nlohmann::json;

PeerMatch Peer(std::string id, int64_t age, bool imported = false) {
  return {std::move(id), "tcp://" + std::to_string(age) + ":1", age, imported};
}

// Four request lines: claimed by this node and peer b; invalid; by nobody; by b and the
// imported digest c.
void EncodeSample(json* reply, std::string* body) {
  WhoHasEncoder out("a", "tcp://10.0.0.1:7401", body);
  const std::vector<PeerMatch> b = {Peer("b", 40)};
  const std::vector<PeerMatch> bc = {Peer("b", 40), Peer("squid:c:3128", 900, true)};
  out.AddAnswer(true, b);
  out.AddInvalid();
  out.AddAnswer(false, {});
  out.AddAnswer(false, bc);
  out.Finish(reply);
}

TEST(WhoHasEncoder, WritesTheDocumentedBytes) {
  json reply;
  std::string body;
  EncodeSample(&reply, &body);
  EXPECT_EQ(body, "0 1\n!\n\n1 2\n");
  EXPECT_EQ(reply.dump(),
            R"({"claimed":2,"count":4,"invalid":1,"nodes":[)"
            R"({"endpoint":"tcp://10.0.0.1:7401","imported":false,"local":true,"node_id":"a",)"
            R"("summary_age_ms":0},)"
            R"({"endpoint":"tcp://40:1","imported":false,"local":false,"node_id":"b",)"
            R"("summary_age_ms":40},)"
            R"({"endpoint":"tcp://900:1","imported":true,"local":false,)"
            R"("node_id":"squid:c:3128","summary_age_ms":900}]})");
}

TEST(WhoHasEncoder, EmptyRequestHasNoLinesAndAnEmptyTable) {
  json reply;
  std::string body;
  WhoHasEncoder out("a", "tcp://x:1", &body);
  out.Finish(&reply);
  EXPECT_EQ(body, "");
  EXPECT_EQ(reply.dump(), R"({"claimed":0,"count":0,"invalid":0,"nodes":[]})");
}

TEST(WhoHasEncoder, ListsEachNodeOnceInTheOrderFirstNamed) {
  json reply;
  std::string body;
  WhoHasEncoder out("a", "tcp://x:1", &body);
  const std::vector<PeerMatch> cb = {Peer("c", 1), Peer("b", 2)};
  const std::vector<PeerMatch> b = {Peer("b", 2)};
  out.AddAnswer(false, cb);
  out.AddAnswer(true, b);
  out.AddAnswer(true, cb);
  out.Finish(&reply);
  EXPECT_EQ(body, "0 1\n2 1\n2 0 1\n");
  ASSERT_EQ(reply["nodes"].size(), 3u);
  EXPECT_EQ(reply["nodes"][0]["node_id"], "c");
  EXPECT_EQ(reply["nodes"][1]["node_id"], "b");
  EXPECT_EQ(reply["nodes"][2]["node_id"], "a");
  EXPECT_EQ(reply["nodes"][2]["local"], true);
}

TEST(WhoHasDecoder, RoundTrip) {
  json reply;
  std::string body;
  EncodeSample(&reply, &body);
  WhoHasReply r;
  ASSERT_TRUE(DecodeWhoHasReply(reply, body, &r).ok());
  EXPECT_EQ(r.count, 4u);
  EXPECT_EQ(r.claimed, 2u);
  EXPECT_EQ(r.invalid, 1u);
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].node_id, "a");
  EXPECT_EQ(r.nodes[0].endpoint, "tcp://10.0.0.1:7401");
  EXPECT_TRUE(r.nodes[0].local);
  EXPECT_FALSE(r.nodes[0].imported);
  EXPECT_EQ(r.nodes[1].node_id, "b");
  EXPECT_EQ(r.nodes[1].summary_age_ms, 40);
  EXPECT_FALSE(r.nodes[1].local);
  EXPECT_TRUE(r.nodes[2].imported);
  ASSERT_EQ(r.answers.size(), 4u);
  EXPECT_FALSE(r.answers[0].invalid);
  EXPECT_EQ(r.answers[0].nodes, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(r.answers[1].invalid);
  EXPECT_TRUE(r.answers[1].nodes.empty());
  EXPECT_FALSE(r.answers[2].invalid);
  EXPECT_TRUE(r.answers[2].nodes.empty());
  EXPECT_EQ(r.answers[3].nodes, (std::vector<size_t>{1, 2}));
  // The node table comes back as the daemon wrote it.
  for (size_t i = 0; i < r.nodes.size(); ++i)
    EXPECT_EQ(WhoHasNodeJson(r.nodes[i]), reply["nodes"][i]);
}

TEST(WhoHasDecoder, EmptyLinesAndInvalidLinesOnly) {
  json reply = {{"count", 3}, {"claimed", 0}, {"invalid", 1}, {"nodes", json::array()}};
  WhoHasReply r;
  ASSERT_TRUE(DecodeWhoHasReply(reply, "\n!\n\n", &r).ok());
  ASSERT_EQ(r.answers.size(), 3u);
  EXPECT_FALSE(r.answers[0].invalid);
  EXPECT_TRUE(r.answers[1].invalid);
  EXPECT_FALSE(r.answers[2].invalid);
  ASSERT_TRUE(DecodeWhoHasReply({{"count", 0}, {"nodes", json::array()}}, "", &r).ok());
  EXPECT_TRUE(r.answers.empty());
}

TEST(WhoHasDecoder, LastLineWithoutNewlineCounts) {
  json reply = {{"count", 2},
                {"nodes", json::array({{{"node_id", "a"}, {"endpoint", "tcp://a:1"}}})}};
  WhoHasReply r;
  ASSERT_TRUE(DecodeWhoHasReply(reply, "0\n0", &r).ok());
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_EQ(r.answers[1].nodes, std::vector<size_t>{0});
  // Absent flags take their defaults.
  EXPECT_FALSE(r.nodes[0].local);
  EXPECT_FALSE(r.nodes[0].imported);
  EXPECT_EQ(r.nodes[0].summary_age_ms, 0);
}

std::string ErrorOf(const json& reply, std::string_view body) {
  WhoHasReply r;
  const Status s = DecodeWhoHasReply(reply, body, &r);
  return s.ok() ? "ok" : s.ToString();
}

TEST(WhoHasDecoder, RefusesMalformedReplies) {
  const json one = {{"node_id", "a"}, {"endpoint", "tcp://a:1"}};
  const json nodes = json::array({one});
  EXPECT_EQ(ErrorOf(json::object(), ""), "corruption: malformed who-has reply: no 'nodes' array");
  EXPECT_EQ(ErrorOf({{"nodes", 3}}, ""), "corruption: malformed who-has reply: no 'nodes' array");
  EXPECT_EQ(ErrorOf({{"nodes", json::array({{{"node_id", "a"}}})}}, ""),
            "corruption: malformed who-has reply: a node is not an object with 'node_id' and "
            "'endpoint'");
  EXPECT_EQ(ErrorOf({{"nodes", json::array({{{"node_id", 1}, {"endpoint", "e"}}})}}, ""),
            "corruption: malformed who-has reply: 'node_id' has the wrong type");
  EXPECT_EQ(ErrorOf({{"count", "3"}, {"nodes", nodes}}, ""),
            "corruption: malformed who-has reply: 'count' has the wrong type");
  EXPECT_EQ(ErrorOf({{"nodes", nodes}}, "1\n"),
            "corruption: malformed who-has reply: line '1' is not node indexes below '1'");
  for (const char* line :
       {"0 ", " 0", "0  0", "x", "-0", "+0", "0x0", "!!", "0 !", "99999999999999999999999"}) {
    EXPECT_NE(ErrorOf({{"nodes", nodes}}, std::string(line) + "\n"), "ok") << line;
  }
  EXPECT_EQ(ErrorOf({{"count", 2}, {"nodes", nodes}}, "0\n"),
            "corruption: malformed who-has reply: '1' lines for 'count' '2'");
  EXPECT_EQ(ErrorOf({{"nodes", nodes}}, "0 0\n"), "ok");
}

// Every prefix of a valid body and every corrupted byte of it decodes or is refused; what
// decodes keeps every index inside the node table and one answer per counted line.
TEST(WhoHasDecoder, TruncatedAndCorruptedBodies) {
  json reply;
  std::string body;
  EncodeSample(&reply, &body);
  auto check = [&](std::string_view b) {
    WhoHasReply r;
    if (!DecodeWhoHasReply(reply, b, &r).ok()) return;
    EXPECT_EQ(r.answers.size(), r.count);
    for (const WhoHasAnswer& a : r.answers) {
      for (size_t i : a.nodes) EXPECT_LT(i, r.nodes.size());
    }
  };
  for (size_t n = 0; n < body.size(); ++n) check(std::string_view(body).substr(0, n));
  for (size_t i = 0; i < body.size(); ++i) {
    for (int v = 0; v < 256; ++v) {
      std::string bad = body;
      bad[i] = static_cast<char>(v);
      check(bad);
    }
  }
}

}  // namespace
}  // namespace peerbloom::client
