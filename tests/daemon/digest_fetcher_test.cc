// DigestFetcher against a local HTTP server on 127.0.0.1 (port picked by the OS). Loop
// times are passed by hand; real time only bounds the HTTP requests, with timeouts far above
// what a loaded machine needs to serve 349 bytes over loopback, except in the test of the
// timeout itself, where the stub never answers and the outcome cannot depend on load.
#include "daemon/digests/digest_fetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "tests/daemon/loopback_http_server.h"

#include "peerbloom/squid_digest.h"

namespace peerbloom::daemon {
namespace {

using std::chrono::seconds;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

enum class Mode { kDigest, kExpired, kNoExpires, kError500, kGarbage, kSlow, kHuge, kHangUp };

// Serves store_digest_A.bin at the Squid digest path, or a misbehaviour.
class SquidStub {
 public:
  SquidStub() : digest_(ReadFixture("store_digest_A.bin")) {}
  int port() const { return server_.port(); }
  void set_mode(Mode m) { mode_ = m; }
  const std::string& digest() const { return digest_; }
  std::string last_request() { return server_.last_request(); }

 private:
  std::optional<std::string> Answer() {
    const std::string date = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
    std::string response;
    switch (mode_.load()) {
      case Mode::kDigest:  // Expires = Date + 60 s
        response = Response("200 OK", date + "Expires: Sun, 06 Nov 1994 08:50:37 GMT\r\n", digest_);
        break;
      case Mode::kExpired:  // Expires = Date - 60 s: a stale digest awaiting its rewrite
        response = Response("200 OK", date + "Expires: Sun, 06 Nov 1994 08:48:37 GMT\r\n", digest_);
        break;
      case Mode::kNoExpires:
        response = Response("200 OK", date, digest_);
        break;
      case Mode::kError500:
        response = Response("500 Internal Server Error", date, "oops");
        break;
      case Mode::kGarbage:
        response = Response("200 OK", date, std::string(400, 'g'));
        break;
      case Mode::kHuge:
        response = Response("200 OK", date, std::string(4096, '\0'));
        break;
      case Mode::kSlow:  // answers nothing until the client gives up and closes
        return std::nullopt;
      case Mode::kHangUp:  // closes without a word
        return "";
    }
    return response;
  }
  static std::string Response(const std::string& status, const std::string& headers,
                              const std::string& body) {
    return "HTTP/1.1 " + status + "\r\n" + headers +
           "Content-Type: application/cache-digest\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  }

  const std::string digest_;
  std::atomic<Mode> mode_{Mode::kDigest};
  LoopbackHttpServer server_{[this](const std::string&) { return Answer(); }};
};

DigestFetcherOptions TestOptions(int port) {
  DigestFetcherOptions o;
  o.sources = {DigestSource{"127.0.0.1", static_cast<uint16_t>(port)}};
  o.connect_timeout_ms = 30000;
  o.read_timeout_ms = 30000;
  o.total_timeout_ms = 60000;
  o.min_refresh_ms = 1000;
  o.default_refresh_ms = 30000;
  o.max_refresh_ms = 100000;
  o.initial_backoff_ms = 1000;
  o.max_backoff_ms = 4000;
  o.max_body_bytes = 1024;
  return o;
}

constexpr int64_t kUnixNow = 784111777000;  // the stub's Date

// One fetch cycle at loop time `now`: hand out due fetches, wait for them, collect.
std::vector<DigestFetchResult> Cycle(DigestFetcher* fetcher, int64_t now) {
  EXPECT_TRUE(fetcher->Poll(now, kUnixNow).empty());
  EXPECT_TRUE(fetcher->WaitIdle(seconds(120)));
  return fetcher->Poll(now, kUnixNow);
}

class FetcherTest : public ::testing::Test {
 protected:
  FetcherTest() : fetcher_(TestOptions(stub_.port())) {}
  std::vector<DigestFetchResult> Cycle(int64_t now) {
    return ::peerbloom::daemon::Cycle(&fetcher_, now);
  }
  DigestSourceStats Stats(int64_t now) { return fetcher_.Stats(now).at(0); }

  SquidStub stub_;
  DigestFetcher fetcher_;
};

TEST_F(FetcherTest, FetchesValidatesAndSchedulesAtExpires) {
  std::vector<DigestFetchResult> r = Cycle(1000);
  ASSERT_EQ(r.size(), 1u) << Stats(1000).last_error;
  const std::string source = "127.0.0.1:" + std::to_string(stub_.port());
  EXPECT_EQ(r[0].import.source, source);
  EXPECT_EQ(r[0].import.source_url, "http://" + source + "/squid-internal-periodic/store_digest");
  EXPECT_EQ(r[0].import.digest_bytes, stub_.digest());
  EXPECT_EQ(r[0].import.valid_for_ms, 60000);
  EXPECT_EQ(r[0].import.fetched_unix_ms, static_cast<uint64_t>(kUnixNow));
  EXPECT_EQ(stub_.last_request().rfind("GET /squid-internal-periodic/store_digest HTTP/1.1\r\n", 0),
            0u);
  CacheDigest d;
  ASSERT_TRUE(CacheDigest::Parse(stub_.digest(), &d).ok());
  const DigestSourceStats st = Stats(1500);
  EXPECT_EQ(st.fetches, 1u);
  EXPECT_EQ(st.failures, 0u);
  EXPECT_EQ(st.last_success_ms, 1000);
  EXPECT_EQ(st.age_ms, 500);
  EXPECT_EQ(st.bytes, stub_.digest().size());
  EXPECT_EQ(st.capacity, d.header().capacity);
  EXPECT_EQ(st.count, d.header().count);
  EXPECT_DOUBLE_EQ(st.fill, d.fill());
  EXPECT_DOUBLE_EQ(st.estimated_fpr, d.EstimatedFalsePositiveRate());
  EXPECT_EQ(st.next_fetch_ms, 61000);
  EXPECT_EQ(fetcher_.NextDeadline(1500), 61000);
  // Not due before Expires.
  EXPECT_TRUE(Cycle(60999).empty());
  EXPECT_EQ(Stats(60999).fetches, 1u);
  EXPECT_EQ(Cycle(61000).size(), 1u);
  EXPECT_EQ(Stats(61000).fetches, 2u);
}

TEST_F(FetcherTest, FailuresBackOffExponentiallyAndRecover) {
  stub_.set_mode(Mode::kError500);
  EXPECT_TRUE(Cycle(0).empty());
  DigestSourceStats st = Stats(0);
  EXPECT_EQ(st.last_error, "http status '500'");
  EXPECT_EQ(st.next_fetch_ms, 1000);
  stub_.set_mode(Mode::kGarbage);
  EXPECT_TRUE(Cycle(1000).empty());
  st = Stats(1000);
  EXPECT_EQ(st.last_error.rfind("digest refused: ", 0), 0u) << st.last_error;
  EXPECT_EQ(st.next_fetch_ms, 3000);
  stub_.set_mode(Mode::kHuge);
  EXPECT_TRUE(Cycle(3000).empty());
  st = Stats(3000);
  EXPECT_EQ(st.last_error, "body exceeds the limit '1024' bytes");
  EXPECT_EQ(st.next_fetch_ms, 7000);
  stub_.set_mode(Mode::kHangUp);  // SlowSourceTimesOut covers a source that never answers
  EXPECT_TRUE(Cycle(7000).empty());
  st = Stats(7000);
  EXPECT_FALSE(st.last_error.empty());
  EXPECT_EQ(st.next_fetch_ms, 11000);  // capped at max_backoff_ms
  EXPECT_EQ(st.failures, 4u);
  EXPECT_EQ(st.consecutive_failures, 4u);
  EXPECT_EQ(st.last_success_ms, -1);
  stub_.set_mode(Mode::kNoExpires);
  ASSERT_EQ(Cycle(11000).size(), 1u);
  st = Stats(11000);
  EXPECT_EQ(st.consecutive_failures, 0u);
  EXPECT_TRUE(st.last_error.empty());
  EXPECT_EQ(st.valid_for_ms, 30000);  // default_refresh_ms without Expires
  EXPECT_EQ(st.next_fetch_ms, 41000);
  // An already expired digest: the next one is due, ask again after min_refresh_ms.
  stub_.set_mode(Mode::kExpired);
  ASSERT_EQ(Cycle(41000).size(), 1u);
  st = Stats(41000);
  EXPECT_EQ(st.valid_for_ms, 1000);
  EXPECT_EQ(st.next_fetch_ms, 42000);
}

// A source that accepts the request and never answers fails the fetch after the read
// timeout. The stub stays silent for 60 s, far past the 300 ms timeout: a loaded machine only
// makes the failure come later, never turns it into a success.
TEST(DigestFetcherTimeout, SlowSourceTimesOut) {
  SquidStub stub;
  stub.set_mode(Mode::kSlow);
  DigestFetcherOptions o = TestOptions(stub.port());
  o.read_timeout_ms = 300;
  o.total_timeout_ms = 2000;
  DigestFetcher fetcher(o);
  EXPECT_TRUE(Cycle(&fetcher, 0).empty());
  const DigestSourceStats st = fetcher.Stats(0).at(0);
  EXPECT_FALSE(st.last_error.empty());
  EXPECT_EQ(st.failures, 1u);
  EXPECT_EQ(st.next_fetch_ms, 1000);  // initial_backoff_ms
}

TEST(HttpDate, ParsesImfFixdateOnly) {
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777000);
  EXPECT_EQ(ParseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
  EXPECT_EQ(ParseHttpDate("Tue, 29 Feb 2028 23:59:59 GMT"), 1835481599000);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), std::nullopt);
  EXPECT_EQ(ParseHttpDate("Sun, 06 Foo 1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 25:49:37 GMT"), std::nullopt);
  EXPECT_EQ(ParseHttpDate(""), std::nullopt);
}

TEST(DigestFetcherOptions, Validation) {
  DigestFetcherOptions o = TestOptions(3128);
  EXPECT_TRUE(ValidateDigestFetcherOptions(o).ok());
  o.sources.push_back(o.sources[0]);
  EXPECT_EQ(ValidateDigestFetcherOptions(o).ToString(),
            Status::InvalidArgument("duplicate squid digest source '127.0.0.1:3128'").ToString());
  o = TestOptions(3128);
  o.sources[0].host = "::1";
  EXPECT_FALSE(ValidateDigestFetcherOptions(o).ok());
  o = TestOptions(0);
  EXPECT_FALSE(ValidateDigestFetcherOptions(o).ok());
  o = TestOptions(3128);
  o.default_refresh_ms = 500;
  EXPECT_FALSE(ValidateDigestFetcherOptions(o).ok());
  o = TestOptions(3128);
  o.max_body_bytes = kMaxImportedDigestBytes + 1;
  EXPECT_FALSE(ValidateDigestFetcherOptions(o).ok());
}

}  // namespace
}  // namespace peerbloom::daemon
