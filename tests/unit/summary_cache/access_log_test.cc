#include "bench/summary_cache/access_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "bench/summary_cache/workload.h"

namespace peerbloom::sim {
namespace {

TEST(AccessLog, ParsesNativeLine) {
  AccessLogRecord r;
  ASSERT_TRUE(ParseAccessLogLine("1795327317.645      4 127.0.0.1 TCP_MISS/200 1705 GET "
                                 "http://127.0.0.1:8080/obj1.txt - HIER_DIRECT/127.0.0.1 "
                                 "text/plain",
                                 &r)
                  .ok());
  EXPECT_EQ(r.time_ms, 1795327317645);
  EXPECT_EQ(r.elapsed_ms, 4);
  EXPECT_EQ(r.client, "127.0.0.1");
  EXPECT_EQ(r.code, "TCP_MISS");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.bytes, 1705u);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.url, "http://127.0.0.1:8080/obj1.txt");
}

TEST(AccessLog, RefusesMalformedLines) {
  AccessLogRecord r;
  EXPECT_EQ(ParseAccessLogLine("", &r).message(), "expected at least 7 fields, got '0'");
  EXPECT_EQ(ParseAccessLogLine("1.0 1 c TCP_MISS/200 5 GET", &r).message(),
            "expected at least 7 fields, got '6'");
  EXPECT_EQ(ParseAccessLogLine("x.5 1 c TCP_MISS/200 5 GET u", &r).message(), "bad time 'x.5'");
  EXPECT_EQ(ParseAccessLogLine("1.1234 1 c TCP_MISS/200 5 GET u", &r).message(),
            "bad time '1.1234'");
  EXPECT_EQ(ParseAccessLogLine("1.5 -1 c TCP_MISS/200 5 GET u", &r).message(),
            "bad elapsed time '-1'");
  EXPECT_EQ(ParseAccessLogLine("1.5 1 c TCP_MISS 5 GET u", &r).message(),
            "bad code/status 'TCP_MISS'");
  EXPECT_EQ(ParseAccessLogLine("1.5 1 c /200 5 GET u", &r).message(), "bad code/status '/200'");
  EXPECT_EQ(ParseAccessLogLine("1.5 1 c TCP_MISS/2x0 5 GET u", &r).message(),
            "bad code/status 'TCP_MISS/2x0'");
  EXPECT_EQ(ParseAccessLogLine("1.5 1 c TCP_MISS/200 5k GET u", &r).message(), "bad size '5k'");
}

TEST(AccessLog, AcceptsTabsCarriageReturnAndShortFractions) {
  AccessLogRecord r;
  ASSERT_TRUE(ParseAccessLogLine("12.5\t0\tc\tTCP_HIT/200\t9\tGET\thttp://h/\r", &r).ok());
  EXPECT_EQ(r.time_ms, 12500);
  EXPECT_EQ(r.url, "http://h/");
  ASSERT_TRUE(ParseAccessLogLine("12 0 c NONE_NONE/000 0 GET http://h/", &r).ok());
  EXPECT_EQ(r.time_ms, 12000);
  EXPECT_EQ(r.status, 0);
}

TEST(AccessLog, ReplaysSampleLog) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/access_replay.log");
  ASSERT_TRUE(in.good());
  ObjectTable table;
  std::vector<Request> reqs;
  LogReplayStats st;
  ReplayLines(in, SiteOf::kSubnet, &table, &reqs, &st);
  EXPECT_EQ(st.lines, 14u);
  EXPECT_EQ(st.replayed, 6u);
  EXPECT_EQ(st.malformed, 4u);
  EXPECT_EQ(st.skipped_method, 2u);  // HEAD, CONNECT
  EXPECT_EQ(st.skipped_internal, 1u);
  EXPECT_EQ(st.first_error, "line 9: bad time 'this'");
  EXPECT_EQ(table.size(), 4u);  // obj1, obj2, o2, gone
  const std::vector<int64_t> times = {0, 13, 43, 39855, 40355, 43605};
  const std::vector<uint32_t> sites = {0, 1, 0, 2, 2, 0};
  const std::vector<uint32_t> objects = {0, 1, 0, 2, 3, 0};
  ASSERT_EQ(reqs.size(), 6u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].time_ms, times[i]) << i;
    EXPECT_EQ(reqs[i].site, sites[i]) << i;
    EXPECT_EQ(reqs[i].object, objects[i]) << i;
  }
}

TEST(AccessLog, ClientSitesNumberAddressesInOrder) {
  std::istringstream in(
      "1.000 0 b TCP_MISS/200 1 GET http://h/1\n"
      "2.000 0 a TCP_MISS/200 1 GET http://h/2\n"
      "3.000 0 b TCP_MISS/200 1 GET http://h/3\n");
  ObjectTable table;
  std::vector<Request> reqs;
  LogReplayStats st;
  ReplayLines(in, SiteOf::kClient, &table, &reqs, &st);
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].site, 0u);
  EXPECT_EQ(reqs[1].site, 1u);
  EXPECT_EQ(reqs[2].site, 0u);
}

// A synthetic stream written as an access.log replays as the same stream.
TEST(AccessLog, WrittenStreamReplaysIdentically) {
  ZipfOptions o;
  o.requests = 3000;
  o.objects = 500;
  o.local_objects = 50;
  o.sites = 300;  // more than 256: the site spans two octets of the address
  ObjectTable written;
  std::vector<std::string> urls;
  const std::vector<Request> s = ZipfStream(o, &written, &urls);
  std::stringstream log;
  WriteAccessLog(s, urls, 1700000000000, log);
  ObjectTable read;
  std::vector<Request> back;
  LogReplayStats st;
  ReplayLines(log, SiteOf::kSubnet, &read, &back, &st);
  EXPECT_EQ(st.malformed, 0u);
  ASSERT_EQ(back.size(), s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_EQ(back[i].time_ms, s[i].time_ms - s[0].time_ms) << i;
    ASSERT_EQ(back[i].site, s[i].site) << i;
    ASSERT_EQ(back[i].object, s[i].object) << i;  // interned in the same order
  }
}

}  // namespace
}  // namespace peerbloom::sim
