// The pieces of /metrics and of the log format: frame peeking for the traffic counters, the
// histogram, label escaping, the listen address, the HTTP server on 127.0.0.1 (port picked by
// the OS, timeouts far above what loopback needs), and the key=value log line.
#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>

#include <regex>
#include <sstream>
#include <string>

#include "daemon/config/config.h"
#include "daemon/observe/log_format.h"
#include "daemon/observe/loop_metrics.h"
#include "daemon/observe/metrics_report.h"
#include "daemon/observe/metrics_server.h"
#include "peerbloom/wire.h"

namespace peerbloom::daemon {
namespace {

std::string DigestFrame(const std::string& sender) {
  WireHeader h;
  h.type = WireType::kDigest;
  h.sender_id = sender;
  std::string out;
  EXPECT_TRUE(EncodeDigestFrame(h, DigestBody{}, &out).ok());
  return out;
}

TEST(LoopMetrics, PeeksTypeAndSenderFromTheHeaderOnly) {
  const std::string frame = DigestFrame("node-b");
  EXPECT_EQ(FrameTypeName(frame), "digest");
  EXPECT_EQ(FrameSender(frame), "node-b");
  // Every truncated prefix is read without reading past it.
  for (size_t n = 0; n < frame.size(); ++n) {
    const std::string prefix = frame.substr(0, n);
    const std::string_view type = FrameTypeName(prefix);
    EXPECT_TRUE(type == "unknown" || type == "digest") << n;
    EXPECT_LE(FrameSender(prefix).size(), n) << n;
  }
  std::string bad_type = frame;
  bad_type[6] = 99;
  EXPECT_EQ(FrameTypeName(bad_type), "unknown");
  EXPECT_EQ(FrameTypeName("garbage that is long enough to hold a header"), "unknown");
}

TEST(LoopMetrics, CountsByTypeByPeerAndRefusalsByReason) {
  LoopMetrics m;
  const std::string frame = DigestFrame("node-b");
  m.CountIn(frame, Status::Ok());
  m.CountIn(frame, Status::Ok());
  m.CountIn(frame, Status::Corruption("bad"));
  m.CountIn("junk", Status::NotSupported("x"));
  m.CountOut("tcp://127.0.0.1:1", frame);
  EXPECT_EQ(m.in_by_type().at("digest").messages, 3u);
  EXPECT_EQ(m.in_by_type().at("digest").bytes, 3 * frame.size());
  EXPECT_EQ(m.in_by_type().at("unknown").messages, 1u);
  EXPECT_EQ(m.in_by_peer().at("node-b").messages, 2u) << "refused frames name no peer";
  EXPECT_EQ(m.in_by_peer().size(), 1u);
  EXPECT_EQ(m.refused_by_reason().at("corruption"), 1u);
  EXPECT_EQ(m.refused_by_reason().at("not_supported"), 1u);
  EXPECT_EQ(m.out_by_endpoint().at("tcp://127.0.0.1:1").bytes, frame.size());
  EXPECT_EQ(m.out_by_type().at("digest").messages, 1u);
}

TEST(LatencyHistogram, CountsEachObservationInItsBucket) {
  LatencyHistogram h;
  h.Observe(0.00001);  // on a bound: counts in that bucket (le is "less or equal")
  h.Observe(0.0003);
  h.Observe(5.0);  // above every bound: only in +Inf
  EXPECT_EQ(h.buckets[0], 1u);
  EXPECT_EQ(h.buckets[5], 1u);  // 5e-4
  uint64_t in_buckets = 0;
  for (uint64_t b : h.buckets) in_buckets += b;
  EXPECT_EQ(in_buckets, 2u);
  EXPECT_EQ(h.count, 3u);
  EXPECT_DOUBLE_EQ(h.sum, 5.00031);
}

TEST(MetricsText, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeLabelValue("/var/log/squid/store.log"), "/var/log/squid/store.log");
}

TEST(MetricsText, NamesFollowPrometheusConventions) {
  const std::regex kName("peerbloom_[a-z0-9_]+");
  for (const MetricDoc& m : MetricsReference()) {
    SCOPED_TRACE(m.name);
    EXPECT_TRUE(std::regex_match(m.name, kName));
    EXPECT_EQ(m.name.find("summary"), std::string::npos) << "a Prometheus type";
    const bool total = m.name.size() > 6 && m.name.substr(m.name.size() - 6) == "_total";
    EXPECT_EQ(total, m.type == "counter");
    EXPECT_TRUE(m.type == "counter" || m.type == "gauge" || m.type == "histogram");
  }
}

TEST(ListenAddress, ParsesHostAndPort) {
  std::string host;
  int port = -1;
  ASSERT_TRUE(ParseListenAddress("127.0.0.1:9466", &host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9466);
  ASSERT_TRUE(ParseListenAddress("[::1]:0", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  for (const char* bad : {"", "9466", ":9466", "host:", "host:65536", "host:-1", "::1:9466",
                          "[::1:9466", "host:94x"}) {
    EXPECT_EQ(ParseListenAddress(bad, &host, &port).ToString(),
              std::string("invalid argument: '") + bad + "' is not HOST:PORT or [IPV6]:PORT")
        << bad;
  }
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(&bound_).ok());
    ASSERT_EQ(bound_.rfind("127.0.0.1:", 0), 0u) << bound_;
    port_ = std::stoi(bound_.substr(bound_.find(':') + 1));
  }

  MetricsServer server_{"127.0.0.1:0"};
  std::string bound_;
  int port_ = 0;
  httplib::Result Get(const std::string& path) {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(std::chrono::seconds(30));
    c.set_read_timeout(std::chrono::seconds(30));
    return c.Get(path);
  }
};

TEST_F(MetricsServerTest, ServesTheLatestPublishedText) {
  httplib::Result r = Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << "nothing published yet";
  server_.Publish("peerbloom_x 1\n");
  server_.Publish("peerbloom_x 2\n");
  r = Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "peerbloom_x 2\n");
  EXPECT_EQ(r->get_header_value("Content-Type"), MetricsServer::kContentType);
  EXPECT_EQ(server_.scrapes(), 2u);
  r = Get("/other");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

TEST(MetricsServer, ABusyPortIsRefused) {
  MetricsServer first("127.0.0.1:0");
  std::string bound;
  ASSERT_TRUE(first.Start(&bound).ok());
  MetricsServer second(bound);
  std::string unused;
  EXPECT_EQ(second.Start(&unused).ToString(),
            "io error: cannot listen for metrics on '" + bound + "' (address in use or not local)");
}

// The formatter writes one line of key=value fields; the message is quoted and escaped.
TEST(LogFormat, OneLineOfKeyValueFields) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(MakeLogFormatter());
  logger.warn("feed '{}': line {}: key {} is bad", "/x \"y\"", 2, "'\\xff'");
  const std::regex kLine(
      R"re(ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=warning msg="(.*)"\n)re");
  std::smatch m;
  const std::string line = out.str();
  ASSERT_TRUE(std::regex_match(line, m, kLine)) << line;
  EXPECT_EQ(m[1].str(), R"(feed '/x \"y\"': line 2: key '\\xff' is bad)");
}

TEST(LogFormat, QuotesControlBytes) {
  spdlog::memory_buf_t buf;
  AppendQuotedLogValue(std::string("a\nb\tc\x01\x7f\xc3\xa9", 9), &buf);
  EXPECT_EQ(std::string(buf.data(), buf.size()), R"("a\nb\tc\x01\x7f)"
                                                 "\xc3\xa9\"");
}

TEST(LogFormat, LevelChangesByNameAndRefusesOthers) {
  std::string previous;
  ASSERT_TRUE(SetLogLevel("debug", &previous).ok());
  EXPECT_EQ(CurrentLogLevel(), "debug");
  ASSERT_TRUE(SetLogLevel("warn", &previous).ok());
  EXPECT_EQ(previous, "debug");
  EXPECT_EQ(SetLogLevel("loud", &previous).ToString(),
            "invalid argument: 'level' must be one of trace, debug, info, warn, error, critical, "
            "off, got 'loud'");
  EXPECT_EQ(CurrentLogLevel(), "warn");
  ASSERT_TRUE(SetLogLevel("info", &previous).ok());
}

}  // namespace
}  // namespace peerbloom::daemon
