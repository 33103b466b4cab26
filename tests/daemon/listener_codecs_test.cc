// The parts the local listeners share: descriptor shares, the /metrics request head, and the
// ZMTP server codec of the tcp control endpoint, each over bytes a hostile client could send.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/control/control_zmtp.h"
#include "daemon/control/descriptors.h"
#include "daemon/observe/http_head.h"

namespace peerbloom::daemon {
namespace {

TEST(ListenerLimits, AQuarterOfTheDescriptorsAtMost) {
  const ListenerLimits packaged = ListenerLimitsFor(8192);
  EXPECT_EQ(packaged.who_has, 256u);
  EXPECT_EQ(packaged.metrics, 64u);
  EXPECT_EQ(packaged.control, 64u);
  const ListenerLimits shell = ListenerLimitsFor(1024);
  EXPECT_EQ(shell.who_has, 128u);
  EXPECT_EQ(shell.metrics, 32u);
  EXPECT_EQ(shell.control, 32u);
  for (uint64_t limit : {uint64_t{64}, uint64_t{256}, uint64_t{1000}, uint64_t{4096}}) {
    const ListenerLimits l = ListenerLimitsFor(limit);
    EXPECT_LE(l.who_has + l.metrics + l.control, limit / 4) << limit;
  }
  const ListenerLimits tiny = ListenerLimitsFor(3);
  EXPECT_EQ(tiny.who_has, 2u);
  EXPECT_EQ(tiny.metrics, 2u);
}

TEST(HttpHead, ReadsWhatTheMetricsEndpointUses) {
  HttpRequestHead h;
  ASSERT_TRUE(ParseHttpRequestHead("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n", &h).ok());
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.path, "/metrics");
  EXPECT_TRUE(h.keep_alive);
  EXPECT_EQ(h.content_length, 0u);

  ASSERT_TRUE(ParseHttpRequestHead("GET /metrics HTTP/1.0\r\n", &h).ok());
  EXPECT_FALSE(h.keep_alive);
  ASSERT_TRUE(ParseHttpRequestHead("GET /metrics HTTP/1.0\nConnection: keep-alive\n", &h).ok());
  EXPECT_TRUE(h.keep_alive);
  ASSERT_TRUE(ParseHttpRequestHead("GET /metrics HTTP/1.1\r\nconnection: Close\r\n", &h).ok());
  EXPECT_FALSE(h.keep_alive);
  ASSERT_TRUE(ParseHttpRequestHead("GET http://node:9466/metrics HTTP/1.1\r\n", &h).ok());
  EXPECT_EQ(h.path, "/metrics");
  ASSERT_TRUE(ParseHttpRequestHead("POST /x HTTP/1.1\r\nContent-Length: 12\r\n", &h).ok());
  EXPECT_EQ(h.method, "POST");
  EXPECT_EQ(h.content_length, 12u);
}

TEST(HttpHead, RefusesWhatItCannotServe) {
  HttpRequestHead h;
  for (const char* head : {
           "",
           "GET",
           "GET /metrics",
           "GET /metrics HTTP/2.0\r\n",
           "GET /metrics SPDY/3\r\n",
           "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n",
           "GET /metrics HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n",
           "GET /metrics HTTP/1.1\r\nContent-Length: -1\r\n",
           "GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n",
           "GET /metrics HTTP/1.1\r\nno colon here\r\n",
       }) {
    EXPECT_FALSE(ParseHttpRequestHead(head, &h).ok()) << head;
  }
}

// What a libzmq REQ client with the NULL mechanism sends: greeting, READY, then messages.
std::string ClientGreeting(const std::string& socket_type) {
  std::string g(64, '\0');
  g[0] = '\xff';
  g[9] = '\x7f';
  g[10] = 3;
  g[11] = 1;
  g.replace(12, 4, "NULL");
  std::string ready = "\x05READY";
  ready.push_back(11);
  ready += "Socket-Type";
  ready += std::string("\0\0\0", 3);
  ready.push_back(static_cast<char>(socket_type.size()));
  ready += socket_type;
  g.push_back(0x04);
  g.push_back(static_cast<char>(ready.size()));
  return g + ready;
}

std::string Frame(bool more, const std::string& body) {
  std::string f;
  if (body.size() > 255) {
    f.push_back(static_cast<char>((more ? 0x01 : 0) | 0x02));
    for (int shift = 56; shift >= 0; shift -= 8) {
      f.push_back(static_cast<char>(static_cast<uint64_t>(body.size()) >> shift));
    }
  } else {
    f.push_back(more ? 0x01 : 0);
    f.push_back(static_cast<char>(body.size()));
  }
  return f + body;
}

struct Seen {
  std::vector<ZmtpServer::Event> events;
  std::vector<ZmtpRequest> requests;
  std::string out;
  uint64_t dropped = 0;
};

// Feeds `stream` `step` bytes at a time; keeps bodies when `keep`.
Seen Feed(const std::string& stream, size_t step, bool keep) {
  ZmtpServer server;
  Seen seen;
  std::string pending;
  for (size_t at = 0; at < stream.size() || !pending.empty();) {
    if (at < stream.size()) {
      pending.append(stream.substr(at, step));
      at += step;
    }
    for (;;) {
      size_t used = 0;
      const ZmtpServer::Event e = server.Next(pending, &used, &seen.out);
      pending.erase(0, used);
      if (e == ZmtpServer::Event::kNeedMore) break;
      seen.events.push_back(e);
      if (e == ZmtpServer::Event::kError) return seen;
      if (e == ZmtpServer::Event::kBody) keep ? server.KeepBody() : server.DropBody();
      if (e == ZmtpServer::Event::kRequest) seen.requests.push_back(server.request());
    }
    if (at >= stream.size()) break;
  }
  seen.dropped = server.TakeDropped();
  return seen;
}

TEST(ZmtpServer, ReadsRequestsInAnyChunking) {
  const std::string body(1000, 'b');
  const std::string stream = ClientGreeting("REQ") + Frame(true, "") +
                             Frame(true, R"({"op":"ping"})") + Frame(false, body) +
                             Frame(true, "") + Frame(false, R"({"op":"stats"})");
  for (size_t step : {size_t{1}, size_t{7}, size_t{64}, stream.size()}) {
    const Seen seen = Feed(stream, step, true);
    using E = ZmtpServer::Event;
    EXPECT_EQ(seen.events,
              (std::vector<E>{E::kHeader, E::kBody, E::kRequest, E::kHeader, E::kRequest}))
        << "step " << step;
    ASSERT_EQ(seen.requests.size(), 2u) << "step " << step;
    EXPECT_TRUE(seen.requests[0].delimiter_empty);
    EXPECT_EQ(seen.requests[0].header, R"({"op":"ping"})");
    EXPECT_EQ(seen.requests[0].body_size, body.size());
    EXPECT_EQ(seen.requests[0].body, body);
    EXPECT_EQ(seen.requests[1].header, R"({"op":"stats"})");
    EXPECT_EQ(seen.requests[1].frames, 2u);
  }
}

TEST(ZmtpServer, ADroppedBodyIsCountedNotKept) {
  const std::string body(70000, 'x');
  const std::string stream = ClientGreeting("DEALER") + Frame(true, "") +
                             Frame(true, R"({"op":"add"})") + Frame(false, body);
  const Seen seen = Feed(stream, 4096, false);
  ASSERT_EQ(seen.requests.size(), 1u);
  EXPECT_EQ(seen.requests[0].body_size, body.size());
  EXPECT_TRUE(seen.requests[0].body.empty());
  EXPECT_EQ(seen.dropped, body.size());
}

TEST(ZmtpServer, RefusesWhatIsNotZmtp3WithNull) {
  EXPECT_EQ(Feed("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" + std::string(64, ' '), 5, true)
                .events.back(),
            ZmtpServer::Event::kError);
  std::string curve = ClientGreeting("REQ");
  curve.replace(12, 5, "CURVE");
  EXPECT_EQ(Feed(curve, 3, true).events.back(), ZmtpServer::Event::kError);
  EXPECT_EQ(Feed(ClientGreeting("PUB") + Frame(false, "x"), 3, true).events.back(),
            ZmtpServer::Event::kError);
  // A data frame before the client's READY.
  std::string early = ClientGreeting("REQ").substr(0, 64) + Frame(false, "x");
  EXPECT_EQ(Feed(early, 3, true).events.back(), ZmtpServer::Event::kError);
}

TEST(ZmtpServer, TheServersHelloIsAGreetingAndAReady) {
  const std::string hello = ZmtpServer::Hello();
  ASSERT_GT(hello.size(), 64u);
  EXPECT_EQ(static_cast<unsigned char>(hello[0]), 0xff);
  EXPECT_EQ(hello[10], 3);
  EXPECT_EQ(hello.substr(12, 4), "NULL");
  EXPECT_EQ(hello[64], 0x04);  // a command frame
  EXPECT_NE(hello.find("ROUTER"), std::string::npos);
  std::string reply;
  ZmtpServer::AppendReply(R"({"ok":true})", "", &reply);
  EXPECT_EQ(reply, Frame(true, "") + Frame(false, R"({"ok":true})"));
}

}  // namespace
}  // namespace peerbloom::daemon
