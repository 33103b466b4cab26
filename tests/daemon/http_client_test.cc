// HttpGet against a local server on 127.0.0.1 (port picked by the OS) that answers every
// connection with canned bytes. Timeouts are far above what a loaded machine needs to move a
// few hundred bytes over loopback, except in the timeout test, where the server never answers
// and the outcome cannot depend on load.
#include "daemon/digests/http_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include "tests/daemon/loopback_http_server.h"

namespace peerbloom::daemon {
namespace {

// Answers each connection with `response`; an empty one means silence until the client
// closes (or 60 s pass).
class CannedServer : public LoopbackHttpServer {
 public:
  explicit CannedServer(std::string response)
      : LoopbackHttpServer([response = std::move(response)](const std::string&) {
          return response.empty() ? std::nullopt : std::optional<std::string>(response);
        }) {}
};

HttpGetLimits Generous() {
  HttpGetLimits l;
  l.connect_timeout_ms = 30000;
  l.read_timeout_ms = 30000;
  l.total_timeout_ms = 60000;
  l.max_body_bytes = 1024;
  return l;
}

struct Got {
  Status status;
  HttpResponse res;
};

Got Get(const CannedServer& server, HttpGetLimits limits = Generous(), bool stop = false) {
  HttpRequest req;
  req.host = "127.0.0.1";
  req.port = server.port();
  req.path = "/squid-internal-periodic/store_digest";
  req.accept = "application/cache-digest";
  std::atomic<bool> stop_flag{stop};
  Got got;
  got.status = HttpGet(req, limits, stop_flag, &got.res);
  return got;
}

TEST(HttpGet, SendsOneRequestAndReadsToContentLength) {
  CannedServer server(
      "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
      "EXPIRES:  Sun, 06 Nov 1994 08:50:37 GMT \r\nContent-Length: 5\r\n\r\nhello");
  const Got got = Get(server);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.res.status, 200);
  EXPECT_EQ(got.res.body, "hello");
  EXPECT_EQ(got.res.date, "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(got.res.expires, "Sun, 06 Nov 1994 08:50:37 GMT");
  const std::string request = server.last_request();
  EXPECT_EQ(request.rfind("GET /squid-internal-periodic/store_digest HTTP/1.1\r\n", 0), 0)
      << request;
  EXPECT_NE(request.find("\r\nAccept: application/cache-digest\r\n"), std::string::npos);
  EXPECT_NE(request.find("\r\nConnection: close\r\n"), std::string::npos);
  EXPECT_EQ(request.find("Accept-Encoding"), std::string::npos) << "the digest is taken as served";
}

TEST(HttpGet, ReadsAChunkedBody) {
  CannedServer server(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  const Got got = Get(server);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.res.body, "hello");
}

TEST(HttpGet, WithoutContentLengthTheBodyEndsAtTheClose) {
  CannedServer server("HTTP/1.0 200 OK\r\n\r\nto the end");
  const Got got = Get(server);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.res.body, "to the end");
  EXPECT_EQ(got.res.date, "");
}

TEST(HttpGet, OtherStatusIsReturnedWithoutTheBody) {
  CannedServer server("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found");
  const Got got = Get(server);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.res.status, 404);
  EXPECT_EQ(got.res.body, "");
}

TEST(HttpGet, RefusesWhatItCannotTrust) {
  struct Case {
    std::string response;
    std::string error;
  };
  const std::string unreadable = "' unreadable (timed out, cut short or malformed)";
  const Case cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\nx",
       "resource exhausted: body exceeds the limit '1024' bytes"},
      {"HTTP/1.1 200 OK\r\n\r\n" + std::string(1025, 'x'),
       "resource exhausted: body exceeds the limit '1024' bytes"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n401\r\n" + std::string(1025, 'x') +
           "\r\n0\r\n\r\n",
       "resource exhausted: body exceeds the limit '1024' bytes"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "io error: http response from '"},
      {"SPDY 200\r\n\r\n", "io error: http response from '"},
      {"HTTP/1.1 200 OK\r\nno end of head", "io error: http response from '"},
      {"HTTP/1.1 200 OK\r\n" + std::string(70 << 10, 'h'), "io error: http response from '"},
  };
  for (const Case& c : cases) {
    CannedServer server(c.response);
    std::string expected = c.error;
    if (expected.back() == '\'') {
      expected += "127.0.0.1:" + std::to_string(server.port()) + unreadable;
    }
    EXPECT_EQ(Get(server).status.ToString(), expected) << c.response.substr(0, 60);
  }
}

// The server reads the request and never answers: the read timeout ends the wait. The
// server stays silent for 60 s, far past the 300 ms timeout, so load only delays the failure.
TEST(HttpGet, SilenceTimesOut) {
  CannedServer server("");
  HttpGetLimits limits = Generous();
  limits.read_timeout_ms = 300;
  EXPECT_EQ(Get(server, limits).status.ToString(),
            "io error: http response from '127.0.0.1:" + std::to_string(server.port()) +
                "' unreadable (timed out, cut short or malformed)");
}

// Each read may wait 30 s, but the whole response only 300 ms (plus the connect allowance).
TEST(HttpGet, TheWholeResponseHasADeadline) {
  CannedServer server("");
  HttpGetLimits limits = Generous();
  limits.connect_timeout_ms = 300;
  limits.total_timeout_ms = 300;
  EXPECT_EQ(Get(server, limits).status.ToString(), "io error: http response timed out");
}

TEST(HttpGet, StopEndsTheTransfer) {
  CannedServer server("");
  EXPECT_EQ(Get(server, Generous(), /*stop=*/true).status.ToString(), "io error: fetch cancelled");
}

// The flag is set once the server holds the request: the transfer in progress ends.
TEST(HttpGet, StopEndsATransferInProgress) {
  CannedServer server("");
  HttpRequest req;
  req.host = "127.0.0.1";
  req.port = server.port();
  req.path = "/x";
  req.accept = "*/*";
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    while (server.last_request().empty()) std::this_thread::yield();
    stop = true;
  });
  HttpResponse res;
  const Status s = HttpGet(req, Generous(), stop, &res);
  stopper.join();
  EXPECT_EQ(s.ToString(), "io error: fetch cancelled");
}

TEST(HttpDate, ReadsOnlyImfFixdate) {
  EXPECT_EQ(ParseHttpDate("Sat, 01 Jan 2000 00:00:00 GMT"), 946684800000);
  EXPECT_EQ(ParseHttpDate("Sat, 01 Jan 2000 00:00:00 UTC"), std::nullopt);
  EXPECT_EQ(ParseHttpDate("Sat, 32 Jan 2000 00:00:00 GMT"), std::nullopt);
}

}  // namespace
}  // namespace peerbloom::daemon
