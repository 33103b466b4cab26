// `peerbloom squid-keys` against a real Squid (scripts/squid-testbed.sh): after fills that
// overflow a small cache_dir (evictions, refused writes), purges and forced refreshes, the
// keys read from the cache_dir equal the live set of its store.log, from every source; and
// after a Squid restart (which writes no store.log lines) they still equal it.
// Skipped where Squid is not installed or the test cannot start it (not root).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "peerbloom/squid_store_log_state.h"
#include "tests/support/process.h"
#include "tests/support/squid_testbed.h"
#include "tests/support/wait.h"

namespace peerbloom {
namespace {

struct CliOutput {
  int exit_code = -1;
  std::vector<std::string> lines;  // standard output
  std::string err;                 // standard error
};

class SquidKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing::SquidTestbed::SkipReason(); !why.empty())
      GTEST_SKIP() << why;
    // 300 kB objects through a 10 MB cache_dir: Squid must evict to store them all.
    testing::SquidTestbedOptions options;
    options.name = "squidkeys";
    options.cache_mb = 10;
    options.fill_query = "?bytes=300000";
    const std::string failed = bed_.Start(options);
    ASSERT_TRUE(failed.empty()) << failed;
    dir_ = bed_.root() + "/" + bed_.addr();
  }
  void TearDown() override { bed_.Stop(/*keep_files=*/HasFailure()); }

  std::string ReadFile(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::set<std::string> StoreLogLiveSet(StoreLogCounters* counters = nullptr) const {
    StoreLogState state;
    std::istringstream log(ReadFile(dir_ + "/logs/store.log"));
    SquidKey key;
    for (std::string line; std::getline(log, line);) {
      EXPECT_NE(state.ApplyLine(line, &key), StoreLogDecision::kMalformed) << line;
    }
    if (counters != nullptr) *counters = state.counters();
    std::set<std::string> keys;
    state.live().ForEach([&](const SquidKey& k) { keys.insert(SquidKeyHex(k)); });
    return keys;
  }

  CliOutput SquidKeys(const std::string& args) const {
    const testing::ProcessResult r =
        testing::RunCli("squid-keys " + args + " '" + dir_ + "/cache'");
    CliOutput out;
    out.exit_code = r.exit_code;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) out.lines.push_back(line);
    out.err = r.err;
    return out;
  }

  static std::set<std::string> Keys(const CliOutput& out) {
    std::set<std::string> keys;
    for (const std::string& line : out.lines) keys.insert(line.substr(0, line.find(' ')));
    return keys;
  }

  // Polls until the keys of `source` equal the store.log live set (Squid writes the log,
  // swap.state and the files as it goes) or 30 s pass; returns the last output.
  CliOutput WaitForAgreement(const std::string& source, std::set<std::string>* log_live) const {
    CliOutput out;
    testing::WaitFor(
        [&] {
          *log_live = StoreLogLiveSet();
          out = SquidKeys("--source " + source);
          return out.exit_code == 0 && Keys(out) == *log_live;
        },
        std::chrono::seconds(30), std::chrono::milliseconds(200));
    return out;
  }

  void ExpectEverySourceAgrees(const char* when) const {
    for (const char* source : {"both", "files", "swap-state"}) {
      std::set<std::string> live;
      const CliOutput out = WaitForAgreement(source, &live);
      EXPECT_EQ(out.exit_code, 0) << out.err;
      EXPECT_EQ(Keys(out), live) << when << ", source " << source << "\n" << out.err;
      EXPECT_EQ(out.lines.size(), live.size()) << "a key printed twice";
      std::printf("%s, source %s: %zu keys = store.log live set\n%s", when, source,
                  out.lines.size(), out.err.c_str());
    }
  }

  testing::SquidTestbed bed_;
  std::string dir_;
};

TEST_F(SquidKeysTest, KeysEqualTheStoreLogLiveSet) {
  ASSERT_EQ(bed_.Run("fill " + bed_.addr() + " 60"), 0);
  std::set<std::string> live;
  CliOutput out = WaitForAgreement("both", &live);
  ASSERT_EQ(Keys(out), live) << out.err;
  // Purge three cached objects and force three others to be fetched again (Squid replaces
  // the stored copy under the same key).
  out = SquidKeys("--urls");
  ASSERT_GE(out.lines.size(), 6u) << out.err;
  std::set<std::string> purged;
  for (size_t i = 0; i < 6; ++i) {
    const std::string& line = out.lines[i];
    const std::string key = line.substr(0, 32);
    const std::string url = line.substr(line.find(' ') + 1);
    if (i < 3) {
      // Squid's store maintenance may still evict it first: then PURGE answers 404.
      if (bed_.Run("purge " + bed_.addr() + " '" + url + "'") != 0) {
        ASSERT_EQ(StoreLogLiveSet().count(key), 0u) << "PURGE failed for a cached " << url;
      }
      purged.insert(key);
    } else {
      const std::string refresh = "curl -sf -o /dev/null -H 'Cache-Control: no-cache' -x http://" +
                                  bed_.addr() + ":3128 '" + url + "'";
      const testing::ProcessResult r = testing::RunShell(refresh);
      ASSERT_EQ(r.exit_code, 0) << url << "\n" << r;
    }
  }
  ExpectEverySourceAgrees("after fill, purges and refreshes");
  StoreLogCounters c;
  live = StoreLogLiveSet(&c);
  EXPECT_GE(c.removes, purged.size());
  for (const std::string& key : purged) EXPECT_EQ(live.count(key), 0u) << key;
  std::printf(
      "store.log: %llu swapouts, %llu releases of live keys (%zu purged, the rest "
      "evicted), %llu swapout failures, %llu repeated swapouts\n",
      static_cast<unsigned long long>(c.adds), static_cast<unsigned long long>(c.removes),
      purged.size(), static_cast<unsigned long long>(c.swapout_failures),
      static_cast<unsigned long long>(c.duplicate_swapouts));
}

TEST_F(SquidKeysTest, KeysOfAStoppedAndRestartedSquid) {
  ASSERT_EQ(bed_.Run("fill " + bed_.addr() + " 40"), 0);
  // Stopped, Squid writes its index (swap.state) clean and store.log is final: the keys
  // read offline equal the live set of the whole log.
  ASSERT_EQ(bed_.Run("stop " + bed_.addr()), 0);
  const std::set<std::string> final_live = StoreLogLiveSet();
  const CliOutput stopped = SquidKeys("");
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(Keys(stopped), final_live) << stopped.err;
  // Started again, Squid reloads its index from swap.state and writes no store.log line.
  ASSERT_EQ(bed_.Run("start " + bed_.addr()), 0);
  ExpectEverySourceAgrees("after a restart");
  EXPECT_EQ(StoreLogLiveSet(), final_live);
}

}  // namespace
}  // namespace peerbloom
