// A node restarting in a new epoch never drops out of its peers' who-has: from before it stops
// until its new epoch's summary is installed everywhere, every one of its URLs is listed for it
// at every sample. Real daemons; the failure timeout is long enough to span the restart, so
// the node never counts as silent.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kUrls = 300;

std::vector<std::string> Urls() {
  std::vector<std::string> urls;
  for (int i = 0; i < kUrls; ++i) {
    urls.push_back("http://restart.example.com/object/" + std::to_string(i));
  }
  return urls;
}

// The number of `urls` for which `answer` does not list `id`; kUrls + 1 when the answer does
// not have one line per url.
size_t Missing(const std::vector<std::vector<std::string>>& answer,
               const std::vector<std::string>& urls, const std::string& id) {
  if (answer.size() != urls.size()) return urls.size() + 1;
  size_t missing = 0;
  for (const std::vector<std::string>& ids : answer) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ++missing;
  }
  return missing;
}

// (epoch, summary_epoch) of `id` in the peers output of `observer`; zeros when not listed.
std::pair<uint64_t, uint64_t> Epochs(Node* observer, const std::string& id) {
  for (const json& p : observer->Peers()) {
    if (p.value("node_id", "") == id) {
      return {p.value("epoch", uint64_t{0}), p.value("summary_epoch", uint64_t{0})};
    }
  }
  return {0, 0};
}

// What the watcher saw over the restart window.
struct WatchResult {
  size_t samples = 0;          // who-has answers checked (one per observer per round)
  size_t misses = 0;           // URLs not listed for the restarted node, over all samples
  size_t failed_calls = 0;     // control calls with no answer
  size_t stand_in_rounds = 0;  // rounds at which some observer held the old summary for the
                               // new epoch (epoch above summary_epoch)
  bool installed = false;      // both observers hold a summary of an epoch above old_epoch
  std::string first_miss;
};

// Polls B's and C's who-has for every URL and their peers output, in a tight loop, until both
// hold a summary of a newer epoch than `old_epoch` (plus a few rounds) or until the deadline.
// Runs on its own thread: only it talks to B and C meanwhile.
void WatchUntilInstalled(Node* b, Node* c, const std::vector<std::string>& urls, uint64_t old_epoch,
                         Clock::time_point deadline, WatchResult* out) {
  int rounds_after_install = 0;
  WaitFor(
      [&] {
        bool all_new = true;
        bool stand_in = false;
        for (Node* observer : {b, c}) {
          const auto [epoch, summary_epoch] = Epochs(observer, "a");
          all_new &= summary_epoch > old_epoch && epoch == summary_epoch;
          stand_in |= summary_epoch != 0 && epoch > summary_epoch;
          const auto answer = observer->WhoHas(urls);
          if (answer.empty()) {
            ++out->failed_calls;
            continue;
          }
          ++out->samples;
          const size_t missing = Missing(answer, urls, "a");
          if (missing > 0 && out->misses == 0) {
            out->first_miss = observer->name() + " missed " + std::to_string(missing) +
                              " urls (epoch " + std::to_string(epoch) + ", summary epoch " +
                              std::to_string(summary_epoch) + ")";
          }
          out->misses += missing;
        }
        if (stand_in) ++out->stand_in_rounds;
        if (all_new) out->installed = true;
        if (out->installed) ++rounds_after_install;
        return rounds_after_install >= 5;
      },
      std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), milliseconds(0));
}

class RestartWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    // A restart takes well under this even on a loaded machine; the node must not count as
    // silent meanwhile (a silent node is rightly dropped, see cluster_test.cc).
    options_.failure_timeout_ms = 10000;
    a_ = cluster_.AddNode("a");
    b_ = cluster_.AddNode("b");
    c_ = cluster_.AddNode("c");
    ASSERT_TRUE(a_->Start(options_, {})) << a_->log_tail();
    ASSERT_TRUE(b_->Start(options_, {a_})) << b_->log_tail();
    ASSERT_TRUE(c_->Start(options_, {a_})) << c_->log_tail();
    ASSERT_TRUE(a_->Add(urls_));
    const bool converged = WaitFor(
        [&] {
          return Missing(b_->WhoHas(urls_), urls_, "a") == 0 &&
                 Missing(c_->WhoHas(urls_), urls_, "a") == 0;
        },
        milliseconds(20000));
    ASSERT_TRUE(converged) << "b and c never listed all of a's urls\n" << b_->log_tail();
    old_epoch_ = a_->Stats()["summary"]["epoch"].get<uint64_t>();
    ASSERT_EQ(Epochs(b_, "a").second, old_epoch_);
    ASSERT_EQ(Epochs(c_, "a").second, old_epoch_);
  }

  // Restarts `a` with `restart` while another thread watches b and c; checks what it saw.
  void RestartWatched(const std::function<bool()>& restart) {
    WatchResult seen;
    const auto deadline = Clock::now() + milliseconds(30000);
    std::thread watcher(WatchUntilInstalled, b_, c_, std::cref(urls_), old_epoch_, deadline, &seen);
    const bool restarted = restart();
    watcher.join();
    ASSERT_TRUE(restarted) << a_->log_tail();
    RecordProperty("samples", static_cast<int>(seen.samples));
    RecordProperty("stand_in_rounds", static_cast<int>(seen.stand_in_rounds));
    EXPECT_TRUE(seen.installed) << "a's new summary was not installed at b and c in time\n"
                                << b_->log_tail();
    EXPECT_EQ(seen.misses, 0u) << seen.first_miss;
    EXPECT_EQ(seen.failed_calls, 0u);
    EXPECT_GE(seen.samples, 10u);
    const json stats = a_->Stats();
    EXPECT_EQ(stats["snapshot"]["restored"], true);
    EXPECT_EQ(stats["filter"]["items"], kUrls);
    const uint64_t new_epoch = stats["summary"]["epoch"].get<uint64_t>();
    EXPECT_GT(new_epoch, old_epoch_);
    for (Node* observer : {b_, c_}) {
      EXPECT_EQ(Epochs(observer, "a"), std::make_pair(new_epoch, new_epoch)) << observer->name();
      EXPECT_EQ(Missing(observer->WhoHas(urls_), urls_, "a"), 0u) << observer->name();
    }
  }

  NodeOptions options_;
  Cluster cluster_;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
  Node* c_ = nullptr;
  const std::vector<std::string> urls_ = Urls();
  uint64_t old_epoch_ = 0;
};

TEST_F(RestartWindow, CleanRestartKeepsEveryUrlListedUntilTheNewEpochIsInstalled) {
  RestartWatched([&] { return a_->Stop() && a_->Start(options_, {b_, c_}); });
}

TEST_F(RestartWindow, KillNineRestartKeepsEveryUrlListedUntilTheNewEpochIsInstalled) {
  json reply;
  std::string body;
  ASSERT_TRUE(a_->Call({{"op", "snapshot"}}, "", &reply, &body));
  ASSERT_GE(a_->Stats()["snapshot"]["written"].get<uint64_t>(), 1u);
  RestartWatched([&] {
    a_->Kill9();
    return a_->Start(options_, {b_, c_});
  });
}

}  // namespace
}  // namespace peerbloom::testing
