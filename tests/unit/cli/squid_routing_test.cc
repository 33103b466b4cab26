#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "cli/squid_helper.h"
#include "cli/squid_outcomes.h"

namespace peerbloom::cli {
namespace {

TEST(SquidHelper, ParsesChannelIdAndDecodesTheUrl) {
  HelperRequest r = ParseHelperLine("7 http://a.example/x%20y?q=%25 -");
  EXPECT_EQ(r.channel, "7");
  EXPECT_EQ(r.url, "http://a.example/x y?q=%");
  r = ParseHelperLine("http://a.example/z\r");
  EXPECT_EQ(r.channel, "");
  EXPECT_EQ(r.url, "http://a.example/z");
  EXPECT_EQ(ParseHelperLine("3").url, "");
  EXPECT_EQ(ParseHelperLine("3 -").url, "");
  // A decoded newline would split the batch: not looked up.
  EXPECT_EQ(ParseHelperLine("4 http://a.example/%0Ax").url, "");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

TEST(SquidHelper, NamesTheFirstNamedPeerAndNeverItself) {
  client::WhoHasReply reply;
  reply.nodes = {{"B", "tcp://b", true, false, 0},
                 {"squid:1.2.3.4:3128", "http://x", false, true, 5},
                 {"A", "tcp://a", false, false, 5},
                 {"C", "tcp://c", false, false, 5}};
  reply.answers.resize(4);
  reply.answers[0].nodes = {0, 2, 3};  // itself, then A
  reply.answers[1].nodes = {0};        // itself only
  reply.answers[2].nodes = {1, 3};     // an unnamed import, then C
  reply.answers[3].invalid = true;
  const std::vector<HelperRequest> requests = {
      {"1", "u1"}, {"2", "u2"}, {"3", "u3"}, {"4", "u4"}, {"5", "u5"}};
  std::string out;
  AppendHelperAnswers(requests, &reply, {{"A", "cache-a"}}, &out);
  EXPECT_EQ(out, "1 OK peer=cache-a\n2 ERR\n3 OK peer=C\n4 ERR\n5 ERR\n");
  out.clear();
  AppendHelperAnswers(requests, nullptr, {}, &out);  // the daemon did not answer
  EXPECT_EQ(out, "1 ERR\n2 ERR\n3 ERR\n4 ERR\n5 ERR\n");
}

TEST(SquidHelper, ReadsTheWhoHasSocketsAnswersAndCountsThem) {
  const std::vector<HelperRequest> requests = {
      {"1", "u1"}, {"2", "u2"}, {"3", "u3"}, {"4", "u4"}, {"5", ""}, {"", "u6"}};
  // B is this node: listed first when its own filter claims the URL, never named.
  const std::string lines = "B A C\nB\nsquid:1.2.3.4:3128 C\n!\n!\n\n";
  std::string out;
  HelperCounters counts;
  AppendSocketAnswers(requests, lines, {{"A", "cache-a"}}, "B", &out, &counts);
  EXPECT_EQ(out, "1 OK peer=cache-a\n2 ERR\n3 OK peer=C\n4 ERR\n5 ERR\nERR\n");
  EXPECT_EQ(counts.peer, 2u);
  EXPECT_EQ(counts.none, 2u);
  EXPECT_EQ(counts.invalid, 2u);
  counts.timeout = 4;
  EXPECT_EQ(counts.ReportLine(42),
            "\x01peerbloom-helper pid=42 peer=2 none=2 invalid=2 no_socket=0 denied=0 refused=0 "
            "timeout=4 other=0");
  // A URL that would read as a report, once decoded, is not looked up.
  EXPECT_EQ(ParseHelperLine("7 %01peerbloom-helper -").url, "");
}

TEST(SquidOutcomes, ReadsTheRouteLog) {
  std::string peer;
  EXPECT_EQ(
      ParseOutcomeLine("1.000 cache-a TCP_MISS/200 FIRSTUP_PARENT/127.0.0.11 http://x/", &peer),
      RouteOutcome::kHit);
  EXPECT_EQ(peer, "cache-a");
  EXPECT_EQ(ParseOutcomeLine("1.000 cache-c TCP_MISS/200 HIER_DIRECT/127.0.0.1 http://x/", &peer),
            RouteOutcome::kFalseHit);
  EXPECT_EQ(peer, "cache-c");
  EXPECT_EQ(ParseOutcomeLine("1.000 cache-a TCP_MEM_HIT/200 HIER_NONE/- http://x/", &peer),
            RouteOutcome::kNotRouted);
  EXPECT_EQ(ParseOutcomeLine("1.000 - TCP_MISS/200 HIER_DIRECT/127.0.0.1 http://x/", &peer),
            RouteOutcome::kNotRouted);
  EXPECT_EQ(ParseOutcomeLine("", &peer), RouteOutcome::kNotRouted);
  OutcomeTally tally;
  EXPECT_TRUE(tally.Add("1 a TCP_MISS/200 ANY_OLD_PARENT/h u"));
  EXPECT_TRUE(tally.Add("1 a TCP_MISS/200 HIER_DIRECT/h u"));
  EXPECT_FALSE(tally.Add("1 - TCP_MISS/200 HIER_DIRECT/h u"));
  EXPECT_EQ(tally.by_peer["a"].hits, 1u);
  EXPECT_EQ(tally.by_peer["a"].false_hits, 1u);
}

TEST(SquidOutcomes, TheReaderFollowsAGrowingAndAReplacedLog) {
  const std::string path = ::testing::TempDir() + "routes_reader_test.log";
  std::remove(path.c_str());
  std::vector<std::string> seen;
  auto collect = [&seen](std::string_view line) { seen.emplace_back(line); };
  OutcomeLogReader reader(path);
  EXPECT_FALSE(reader.ReadAvailable(collect).ok());  // not there yet
  std::ofstream(path) << "one\ntw";
  ASSERT_TRUE(reader.ReadAvailable(collect).ok());
  EXPECT_EQ(seen, std::vector<std::string>{"one"});  // a partial line waits
  std::ofstream(path, std::ios::app) << "o\n";
  ASSERT_TRUE(reader.ReadAvailable(collect).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
  std::ofstream(path, std::ios::trunc) << "x\n";  // cut shorter: read from the start
  ASSERT_TRUE(reader.ReadAvailable(collect).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two", "x"}));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace peerbloom::cli
