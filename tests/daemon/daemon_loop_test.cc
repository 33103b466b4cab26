// The daemon in-process, driven by a fake clock: feeds, control requests, snapshots.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>

#include "daemon/loop/clock.h"
#include "daemon/loop/daemon.h"
#include "daemon/store/snapshot.h"
#include "peerbloom/client/who_has_socket.h"
#include "peerbloom/squid_store_log.h"
#include "peerbloom/summary.h"
#include "tests/daemon/control_ask.h"
#include "tests/support/wait.h"

namespace peerbloom::daemon {
namespace {

using nlohmann::json;

class DaemonLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbloop.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::string text =
        "node_id = \"solo\"\nlisten = \"tcp://127.0.0.1:0\"\n"
        "data_dir = \"" +
        dir_ +
        "/data\"\ncurve = false\n"
        "key_scheme = \"raw\"\ncapacity = 10000\n"
        "[[feeds]]\npath = \"" +
        dir_ + "/feed\"\n";
    ASSERT_TRUE(ParseConfig(text, "loop.toml", &config_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  json Ask(Daemon* d, const json& request, const std::string& body, std::string* reply_body) {
    return AskDaemon(&context_, config_.control, d, request, body, reply_body);
  }

  // Writes `lines` to the daemon's who-has socket and turns the loop until as many answer
  // lines came back (or the same generous deadline passed).
  std::string AskSocket(Daemon* d, const std::string& lines) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, config_.who_has_socket.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::write(fd, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
    const auto want = std::count(lines.begin(), lines.end(), '\n');
    std::string answers;
    // The loop's turn (up to 5 ms) paces the polls.
    testing::WaitFor(
        [&] {
          d->RunOnce(5);
          char buffer[4096];
          const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
          if (n > 0) answers.append(buffer, static_cast<size_t>(n));
          return std::count(answers.begin(), answers.end(), '\n') >= want;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(0));
    ::close(fd);
    return answers;
  }

  void Turn(Daemon* d, int times) {
    for (int i = 0; i < times; ++i) {
      clock_.Advance(50);
      d->RunOnce(0);
    }
  }

  std::string dir_;
  Config config_;
  FakeClock clock_;
  zmq::context_t context_{1};
};

TEST_F(DaemonLoop, FeedLinesReachTheFilterAndWhoHas) {
  std::ofstream(dir_ + "/feed") << "+url http://a/1\nhttp://a/2\n+ rawkey\n- \n# comment\n";
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  std::string body;
  // a/3 is absent. The filter (capacity 10000 at 1 %: 2^18 counters, k = 2) holds 3 keys, so
  // it lists an absent key with probability at most (2 * 3 / 2^18)^2, about 5e-10, and the
  // fixed (default) cluster secret gives the same answer on every run.
  json reply = Ask(&d, {{"op", "who-has"}}, "http://a/1\nhttp://a/2\nhttp://a/3\n", &body);
  ASSERT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_EQ(reply["count"], 3);
  EXPECT_EQ(reply["claimed"], 2);
  EXPECT_EQ(body, "0\n0\n\n");
  EXPECT_EQ(reply["nodes"][0]["node_id"], "solo");
  EXPECT_EQ(reply["nodes"][0]["local"], true);
  reply = Ask(&d, {{"op", "who-has"}, {"input", "key"}}, "rawkey\n", &body);
  EXPECT_EQ(body, "0\n");
  reply = Ask(&d, {{"op", "stats"}}, "", &body);
  EXPECT_EQ(reply["stats"]["filter"]["items"], 3);
  EXPECT_EQ(reply["stats"]["feeds"][0]["adds"], 3);
  EXPECT_EQ(reply["stats"]["feeds"][0]["malformed"], 1);
}

// squid-md5 who-has keys URLs kMd5Lanes at a time; the keys must be those `add` made one at a
// time (KeyEncoder::FromUrl) for every spelling: canonical or not, refused by Squid (keyed as
// given), longer than two MD5 blocks, with empty lines breaking the groups. A line that is not
// an absolute URL is invalid, like an empty one: no Squid object has its key.
TEST_F(DaemonLoop, SquidMd5WhoHasInLanesFindsEveryAddedSpelling) {
  Config config;
  const std::string toml = "node_id = \"solo\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \"" +
                           dir_ + "/data\"\ncurve = false\ncapacity = 10000\n";
  ASSERT_TRUE(ParseConfig(toml, "md5.toml", &config).ok());
  config_ = config;
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  const std::vector<std::string> urls = {
      "http://a/1",
      "HTTP://A.Example:80/x",
      "http://a.example./%7e?q=1",
      "https://b.example:443/",
      "http://b.example:8080/path with space",
      "http://g.example:0/port-zero",
      "http://[::1]:80/v6",
      "ftp://user@c.example/file",
      "http://c.example/" + std::string(150, 'z'),
      "http://d.example/" + std::string(100, 'y'),
      "urn:isbn:0451450523",
      "http://e.example",
      "http://f.example/\xff\xfe",
  };
  std::string adds, asks, want;
  for (size_t i = 0; i < urls.size(); ++i) {
    adds += urls[i] + "\n";
    asks += urls[i] + "\n";
    want += "0\n";
    if (i % 5 == 2) {
      asks += "\n";
      want += "!\n";
    }
  }
  std::string body;
  json reply = Ask(&d, {{"op", "add"}}, adds, &body);
  ASSERT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_EQ(reply["invalid"], 0);
  reply = Ask(&d, {{"op", "who-has"}}, asks, &body);
  ASSERT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_EQ(body, want);
  reply = Ask(&d, {{"op", "who-has"}}, "http://a/1\nnot a url\n127.0.0.1/x\nhttp://a/1\n", &body);
  EXPECT_EQ(body, "0\n!\n!\n0\n");
  EXPECT_EQ(reply["invalid"], 2);
}

TEST_F(DaemonLoop, TheWhoHasSocketAnswersNodeIdsPerLine) {
  std::ofstream(dir_ + "/feed") << "+url http://a/1\n";
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  // a/2 is absent: 1 key in 2^18 counters, k = 2 (see FeedLinesReachTheFilterAndWhoHas).
  EXPECT_EQ(AskSocket(&d, "http://a/1\nhttp://a/2\n\nhttp://a/1\n"), "solo\n\n!\nsolo\n");
}

// The periodic snapshot is written by its own thread. The test holds that thread at the start
// of the write until it has its answers, so every answer came while the write was under way.
TEST_F(DaemonLoop, LookupsAreAnsweredWhileASnapshotIsBeingWritten) {
  config_.snapshot_interval_ms = 1000;
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  d.set_snapshot_gate_for_test([&entered, released] {
    entered.set_value();
    released.wait();
  });
  std::string body;
  json reply = Ask(&d, {{"op", "add"}}, "http://a/1\n", &body);
  ASSERT_EQ(reply["applied"], 1) << reply.dump();
  clock_.Advance(1001);
  d.RunOnce(0);                 // starts the write
  entered.get_future().wait();  // the writer thread is inside the write

  reply = Ask(&d, {{"op", "who-has"}}, "http://a/1\n", &body);
  EXPECT_EQ(body, "0\n") << reply.dump();
  EXPECT_EQ(AskSocket(&d, "http://a/1\n"), "solo\n");
  reply = Ask(&d, {{"op", "stats"}}, "", &body);
  EXPECT_EQ(reply["stats"]["snapshot"]["written"], 0);
  EXPECT_EQ(reply["stats"]["snapshot"]["failed"], 0);

  release.set_value();  // now the write goes on and ends
  int written = 0;
  testing::WaitFor(
      [&] {
        reply = Ask(&d, {{"op", "stats"}}, "", &body);
        written = reply["stats"]["snapshot"]["written"].get<int>();
        return written != 0;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(0));
  EXPECT_EQ(written, 1);
  EXPECT_EQ(reply["stats"]["snapshot"]["failed"], 0);
}

// The client library against the loop running on its own thread: a batch larger than a
// socket's buffer, so sending and reading the answers must interleave.
TEST_F(DaemonLoop, WhoHasSocketClientAsksInBatchesAndOneAtATime) {
  std::ofstream(dir_ + "/feed") << "+url http://a/1\n";
  auto d = std::make_unique<Daemon>(config_, &clock_);
  ASSERT_TRUE(d->Start().ok());
  Turn(d.get(), 5);
  volatile std::sig_atomic_t stop = 0, reload = 0;
  std::thread loop([&] { (void)d->Run(&stop, &reload); });
  client::WhoHasSocketClient client(config_.who_has_socket, 60000, 20);
  std::string lines, want, answers;
  for (int i = 0; i < 20000; ++i) {
    lines += "http://a/1\n\n";
    want += "solo\n!\n";
  }
  Status s = client.Ask(lines, &answers);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(answers == want) << answers.size() << " bytes of answers";
  for (int i = 0; i < 100; ++i) {
    s = client.Ask("http://a/1\n", &answers);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(answers, "solo\n");
  }
  stop = 1;
  loop.join();
  d.reset();  // closes and removes the socket
  client::WhoHasSocketClient gone(config_.who_has_socket, 1000, 0);
  EXPECT_EQ(gone.Ask("http://a/1\n", &answers).message(),
            "cannot connect to who-has socket '" + config_.who_has_socket +
                "': no such socket (is peerbloomd running, with this who_has_socket?)");
  EXPECT_EQ(gone.last_failure(), client::SocketFailure::kNoSocket);
}

TEST_F(DaemonLoop, FeedLinesThatAreNotUtf8AreBytesOrMalformedNeverFatal) {
  // raw key scheme: a URL or key is bytes, so these add; an unknown command is malformed.
  std::ofstream(dir_ + "/feed") << "+url http://a/caf\xe9\n"
                                   "+ \xff\n"
                                   "\xc3 junk\n"
                                   "+url http://a/\xed\xa0\x80\n"
                                   "-url http://a/caf\xe9\n"
                                   "+url http://a/ok\n";
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  std::string body;
  json reply = Ask(&d, {{"op", "who-has"}}, "http://a/\xed\xa0\x80\nhttp://a/ok\n", &body);
  EXPECT_EQ(body, "0\n0\n");
  reply = Ask(&d, {{"op", "who-has"}, {"input", "key"}}, "\xff\n", &body);
  EXPECT_EQ(body, "0\n");
  reply = Ask(&d, {{"op", "stats"}}, "", &body);
  const json& feed = reply["stats"]["feeds"][0];
  EXPECT_EQ(feed["lines"], 6);
  EXPECT_EQ(feed["adds"], 4);
  EXPECT_EQ(feed["removes"], 1);
  EXPECT_EQ(feed["malformed"], 1);
  EXPECT_EQ(reply["stats"]["filter"]["items"], 3);
  EXPECT_EQ(reply["stats"]["control"]["internal_errors"], 0);
}

// A clock that throws once when armed: an error escaping a turn of the loop.
class ThrowingClock final : public Clock {
 public:
  int64_t NowMs() const override {
    if (armed_) {
      armed_ = false;
      throw std::runtime_error("clock failed \xff");
    }
    return clock_.NowMs();
  }
  void Arm() { armed_ = true; }

 private:
  FakeClock clock_;
  mutable bool armed_ = false;
};

TEST_F(DaemonLoop, AnErrorEscapingTheLoopStillWritesTheFinalSnapshot) {
  ThrowingClock clock;
  Daemon d(config_, &clock);
  ASSERT_TRUE(d.Start().ok());
  std::string body;
  json reply = Ask(&d, {{"op", "add"}}, "http://a/1\nhttp://a/2\n", &body);
  ASSERT_EQ(reply["applied"], 2) << reply.dump();
  ASSERT_FALSE(std::filesystem::exists(d.snapshot_path())) << "no periodic snapshot yet";
  clock.Arm();
  volatile std::sig_atomic_t stop = 0, reload = 0;
  const Status s = d.Run(&stop, &reload);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            R"(unexpected error in the event loop: clock failed \xff; final snapshot written)");
  SnapshotState snap;
  ASSERT_TRUE(ReadSnapshot(d.snapshot_path(), &snap).ok());
  EXPECT_EQ(snap.items, 2u);
  EXPECT_EQ(snap.adds, 2u);
}

TEST_F(DaemonLoop, SnapshotRestoresContentAndFeedPosition) {
  std::ofstream(dir_ + "/feed") << "+url http://a/1\n+url http://a/2\n";
  {
    Daemon d(config_, &clock_);
    ASSERT_TRUE(d.Start().ok());
    Turn(&d, 5);
    std::string body;
    Ask(&d, {{"op", "add"}}, "http://a/control\n", &body);
    ASSERT_TRUE(d.WriteSnapshotNow().ok());
  }
  std::ofstream(dir_ + "/feed", std::ios::app) << "-url http://a/1\n";
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  std::string body;
  // With 2 keys left, a/1 would be a false positive with probability at most
  // (2 * 2 / 2^18)^2, about 2e-10 (see FeedLinesReachTheFilterAndWhoHas).
  json reply = Ask(&d, {{"op", "who-has"}}, "http://a/1\nhttp://a/2\nhttp://a/control\n", &body);
  EXPECT_EQ(body, "\n0\n0\n") << "a/1 removed by the new line, the rest restored";
  reply = Ask(&d, {{"op", "stats"}}, "", &body);
  EXPECT_EQ(reply["stats"]["snapshot"]["restored"], true);
  EXPECT_EQ(reply["stats"]["filter"]["items"], 2);
  EXPECT_EQ(reply["stats"]["feeds"][0]["lines"], 1) << "resumed after the lines already applied";
}

TEST_F(DaemonLoop, SquidStoreLogFeedKeepsTheLiveSetAcrossRestart) {
  const std::string text = "node_id = \"squid\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \"" +
                           dir_ + "/data\"\ncurve = false\ncapacity = 10000\n[[feeds]]\npath = \"" +
                           PEERBLOOM_SOURCE_DIR +
                           "/tests/data/squid/sample_store_A.log\"\n"
                           "format = \"squid-store-log\"\n";
  ASSERT_TRUE(ParseConfig(text, "squid.toml", &config_).ok());
  std::string body;
  {
    Daemon d(config_, &clock_);
    ASSERT_TRUE(d.Start().ok());
    Turn(&d, 5);
    json reply = Ask(&d, {{"op", "stats"}}, "", &body);
    const json& feed = reply["stats"]["feeds"][0];
    EXPECT_EQ(feed["lines"], 389);
    EXPECT_EQ(feed["store_log"]["live_keys"], 302) << "docs/squid.md: 302 keys held";
    EXPECT_EQ(reply["stats"]["filter"]["items"], 302);
    EXPECT_EQ(feed["removes_refused"], 0);
    ASSERT_TRUE(d.WriteSnapshotNow().ok());
  }
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  json reply = Ask(&d, {{"op", "stats"}}, "", &body);
  EXPECT_EQ(reply["stats"]["feeds"][0]["lines"], 0) << "resumed at the end";
  EXPECT_EQ(reply["stats"]["feeds"][0]["store_log"]["live_keys"], 302);
  EXPECT_EQ(reply["stats"]["filter"]["items"], 302);
}

// A store.log line for key number `n` (any 32 hex digits do: the key column is the identity).
std::string StoreLogLine(const char* action, int n) {
  char key[33];
  std::snprintf(key, sizeof(key), "%032X", n);
  if (std::string_view(action) == "RELEASE") {
    return std::string("1795329001.118 RELEASE 00 0000007B ") + key +
           "   ?         ?         ?         ? ?/? ?/? ? ?\n";
  }
  return std::string("1795329000.001 ") + action + " 00 0000007B " + key +
         "  200 1795329000 -1 -1 text/html 10/10 GET http://h/" + std::to_string(n) + "\n";
}

class StoreLogRotation : public DaemonLoop {
 protected:
  void SetUp() override {
    DaemonLoop::SetUp();
    log_ = dir_ + "/store.log";
    const std::string text = "node_id = \"squid\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \"" +
                             dir_ +
                             "/data\"\ncurve = false\ncapacity = 10000\n[[feeds]]\npath = \"" +
                             log_ + "\"\nformat = \"squid-store-log\"\n";
    ASSERT_TRUE(ParseConfig(text, "squid.toml", &config_).ok());
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::app | std::ios::binary) << text;
  }
  // Runs a daemon over what store.log holds now, snapshots it and stops it.
  void RunAndStop() {
    Daemon d(config_, &clock_);
    ASSERT_TRUE(d.Start().ok());
    Turn(&d, 5);
    ASSERT_TRUE(d.WriteSnapshotNow().ok());
  }
  json FeedStats(Daemon* d) {
    std::string body;
    return Ask(d, {{"op", "stats"}}, "", &body)["stats"];
  }
  std::string log_;
};

// `squid -k rotate` while the daemon is down: the lines written to the old file after the
// snapshot (an eviction and a new object) are read from store.log.0, then the new store.log.
TEST_F(StoreLogRotation, RotationWhileStoppedLosesNoLine) {
  Write(log_, StoreLogLine("SWAPOUT", 1) + StoreLogLine("SWAPOUT", 2) + StoreLogLine("SWAPOUT", 3) +
                  StoreLogLine("SWAPOUT", 4));
  RunAndStop();
  Write(log_, StoreLogLine("RELEASE", 1) + StoreLogLine("SWAPOUT", 5));
  std::filesystem::rename(log_, log_ + ".0");
  Write(log_, StoreLogLine("RELEASE", 2) + StoreLogLine("SWAPOUT", 6));
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  const json stats = FeedStats(&d);
  const json& feed = stats["feeds"][0];
  EXPECT_EQ(feed["lines"], 4);
  EXPECT_EQ(feed["resumes_rotated"], 1);
  EXPECT_EQ(feed["rotated_files_read"], 1);
  EXPECT_EQ(feed["resumes_lost"], 0);
  EXPECT_EQ(feed["resume_lost"], "");
  EXPECT_EQ(feed["removes"], 2);
  EXPECT_EQ(feed["removes_refused"], 0);
  EXPECT_EQ(feed["lag_bytes"], 0);
  EXPECT_EQ(feed["store_log"]["live_keys"], 4);  // 3, 4, 5 and 6
  EXPECT_EQ(stats["filter"]["items"], 4);
}

// The node's own published summary holds every live key after a restart that restored a
// snapshot and then read many lines (the summary, not the counting filter, is what peers get).
TEST_F(StoreLogRotation, PublishedSummaryHoldsEveryLiveKeyAfterRestart) {
  std::string text;
  for (int n = 1; n <= 300; ++n) text += StoreLogLine("SWAPOUT", n);
  Write(log_, text);
  RunAndStop();
  text.clear();
  for (int n = 301; n <= 500; ++n) text += StoreLogLine("SWAPOUT", n);
  for (int n = 1; n <= 50; ++n) text += StoreLogLine("RELEASE", n);
  Write(log_, text);
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 40);
  std::string body;
  const json reply = Ask(&d, {{"op", "summary"}, {"format", "bytes"}}, "", &body);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  Summary summary;
  ASSERT_TRUE(DecodeSummary(body, DecodeLimits(), &summary).ok());
  const IndexHasher hasher;
  int missing = 0;
  for (int n = 51; n <= 500; ++n) {
    char key[33];
    std::snprintf(key, sizeof(key), "%032X", n);
    SquidKey k;
    ASSERT_TRUE(ParseSquidKeyHex(key, &k));
    missing += !summary.filter.MayContain(hasher.Hash(SquidKeyBytes(k)));
  }
  EXPECT_EQ(missing, 0) << reply.dump() << "\n" << FeedStats(&d).dump();
}

// The saved file was rotated and compressed while the daemon was down: the loss is counted
// and named in stats; the newer files are still read.
TEST_F(StoreLogRotation, ACompressedAwayTailIsReportedAsLost) {
  Write(log_, StoreLogLine("SWAPOUT", 1) + StoreLogLine("SWAPOUT", 2));
  RunAndStop();
  Write(log_, StoreLogLine("RELEASE", 1));
  std::filesystem::rename(log_, log_ + ".1.gz");
  Write(log_, StoreLogLine("SWAPOUT", 3));
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  Turn(&d, 5);
  const json feed = FeedStats(&d)["feeds"][0];
  EXPECT_EQ(feed["resumes_lost"], 1);
  const std::string lost = feed["resume_lost"];
  EXPECT_NE(lost.find("lines after byte '"), std::string::npos) << lost;
  EXPECT_NE(lost.find("(compressed, not read: '" + log_ + ".1.gz')"), std::string::npos) << lost;
  EXPECT_EQ(feed["store_log"]["live_keys"], 3);  // key 1's RELEASE was in the lost tail
}

TEST_F(DaemonLoop, CorruptSnapshotRefusesToStart) {
  {
    Daemon d(config_, &clock_);
    ASSERT_TRUE(d.Start().ok());
    ASSERT_TRUE(d.WriteSnapshotNow().ok());
  }
  const std::string path = dir_ + "/data/state.snapshot";
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(40);
  f.put('\x7f');
  f.close();
  Daemon d(config_, &clock_);
  Status s = d.Start();
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "snapshot '" + path + "' is corrupt: checksum mismatch (move '" + path +
                             "' aside to start empty)");
}

TEST_F(DaemonLoop, ChangedGeometryRefusesTheSnapshot) {
  {
    Daemon d(config_, &clock_);
    ASSERT_TRUE(d.Start().ok());
    ASSERT_TRUE(d.WriteSnapshotNow().ok());
  }
  config_.capacity = 1000000;
  Daemon d(config_, &clock_);
  Status s = d.Start();
  EXPECT_EQ(s.message().rfind("snapshot '" + dir_ +
                                  "/data/state.snapshot' was written with "
                                  "another filter geometry",
                              0),
            0u)
      << s.ToString();
}

TEST_F(DaemonLoop, SecondDaemonOnTheSameDataDirIsRefused) {
  Daemon first(config_, &clock_);
  ASSERT_TRUE(first.Start().ok());
  Daemon second(config_, &clock_);
  Status s = second.Start();
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message().rfind("data_dir '" + dir_ + "/data' is in use by another peerbloomd", 0),
            0u)
      << s.message();
}

}  // namespace
}  // namespace peerbloom::daemon
