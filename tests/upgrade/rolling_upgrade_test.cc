// A rolling upgrade with real binaries (docs/gossip.md, "Upgrading a cluster from the release
// before"): daemons of an older release, the peerbloomd named by PEERBLOOM_OLD_DAEMON (built
// from git history by scripts/rolling-upgrade.sh), form a cluster; then, one node at a time,
// the old daemon is stopped with SIGTERM and the peerbloomd of this tree starts in its place
// on the same data dir, keys and port. Before the first upgrade and after each one, every node
// adds URLs of its own, and every node must list every node for every URL added so far (old
// and new), with exact key counts. At every poll no member may be listed dead; at every step
// no frame may have been refused anywhere (by counter and by log line) and no daemon may have
// exited.
//
// The config: the harness writes the same keys as it did in the releases this runs against
// (wire versions 3 and 6, `git diff OLD_REF -- tests/support/cluster_harness.cc`), and both
// binaries read it; a daemon that refused it would exit and fail the start. The failure
// timeout spans a restart, so a node being upgraded is never silent for long enough to die.
//
// Not run by ctest: building the old release takes longer than a CI run (`make upgrade-test`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNodes = 4;
constexpr int kUrlsPerStep = 40;
// Longer than a restart takes (a final snapshot, then a start: under a second here, a few on
// a loaded machine), so the node being upgraded stays alive for its peers, as in a real upgrade
// with the default 10 s; short enough that a member wrongly judged silent (say, a version 3
// node waited on for acks it never sends) dies within the hold window below.
constexpr int kFailureTimeoutMs = 8000;
// After a step converges, everything must stay listed and alive this long: more than a failure
// timeout, the longest a false death takes to show under either detector.
constexpr std::chrono::milliseconds kHoldWindow{kFailureTimeoutMs * 3 / 2};
// A step converges within a second on an idle machine; the rest is for one under other load.
constexpr std::chrono::seconds kStepDeadline{90};

// Log text that means a frame (or a link) was refused, or a decoder failed: the transport's
// "refused ..." lines carry the engine's status ("corruption: ...", "not supported: unknown
// message type ..."), in every release since wire version 3.
constexpr const char* kRefusalMarks[] = {"refused", "corruption", "not supported",
                                         "unknown message type"};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The executable of a node's daemon, from the pid in its lock file; "" when none runs.
std::string RunningBinary(const std::string& node_dir) {
  const pid_t pid = DaemonPid(node_dir);
  std::error_code ec;
  if (pid <= 0) return "";
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  return ec ? "" : exe.string();
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  const auto p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

class RollingUpgrade : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old_binary = std::getenv("PEERBLOOM_OLD_DAEMON");
    ASSERT_TRUE(old_binary != nullptr && *old_binary != '\0')
        << "PEERBLOOM_OLD_DAEMON names no binary: run scripts/rolling-upgrade.sh";
    old_binary_ = Canonical(old_binary);
    new_binary_ = Canonical(PEERBLOOMD_BIN);
    ASSERT_TRUE(std::filesystem::exists(old_binary_)) << old_binary_;
    const char* ref = std::getenv("PEERBLOOM_OLD_REF");
    old_ref_ = ref != nullptr ? ref : "the old release";
    for (int i = 0; i < kNodes; ++i) {
      nodes_.push_back(cluster_.AddNode(std::string(1, static_cast<char>('a' + i))));
    }
  }

  static NodeOptions Options(const std::string& binary) {
    NodeOptions o;
    o.failure_timeout_ms = kFailureTimeoutMs;
    o.daemon_binary = binary;
    return o;
  }

  std::string Dir(const Node* n) const { return cluster_.dir() + "/" + n->name(); }

  std::vector<Node*> Others(const Node* self) const {
    std::vector<Node*> others;
    for (Node* n : nodes_) {
      if (n != self) others.push_back(n);
    }
    return others;
  }

  // Every node adds kUrlsPerStep URLs of its own, named by the step and the node.
  void AddUrls(int step) {
    for (Node* n : nodes_) {
      std::vector<std::string> urls;
      for (int i = 0; i < kUrlsPerStep; ++i) {
        urls.push_back("http://" + n->name() + ".upgrade.example/step" + std::to_string(step) +
                       "/object-" + std::to_string(i));
      }
      ASSERT_TRUE(n->Add(urls)) << n->name() << " step " << step << "\n" << n->log_tail();
      for (const std::string& u : urls) {
        all_urls_.push_back(u);
        owners_.push_back(n->name());
      }
      added_[n->name()] += urls.size();
    }
  }

  // URLs whose who-has answer at `observer` does not list their owner (presence only: a
  // Bloom filter may list other nodes too).
  size_t Missing(Node* observer) {
    const auto answer = observer->WhoHas(all_urls_);
    if (answer.size() != all_urls_.size()) return all_urls_.size();
    size_t missing = 0;
    for (size_t i = 0; i < answer.size(); ++i) {
      if (std::find(answer[i].begin(), answer[i].end(), owners_[i]) == answer[i].end()) {
        ++missing;
      }
    }
    return missing;
  }

  // Whether `observer` lists every other node as alive, with the exact count of keys that node
  // added, and holds exactly its own. A member listed dead is recorded in dead_sightings_.
  bool MembersExact(Node* observer, std::string* why) {
    if (StatsCounter(observer, "filter", "items") != added_[observer->name()]) {
      *why = observer->name() + " holds " +
             std::to_string(StatsCounter(observer, "filter", "items")) + " keys";
      return false;
    }
    size_t listed = 0;
    for (const json& p : observer->Peers()) {
      const std::string id = p.value("node_id", "");
      if (!p.value("alive", false)) {
        dead_sightings_.insert(observer->name() + " lists " + id + " dead");
        continue;
      }
      if (p.value("estimated_items", uint64_t{0}) != added_[id]) {
        *why = observer->name() + " has " + std::to_string(p.value("estimated_items", 0)) +
               " keys for " + id;
        return false;
      }
      ++listed;
    }
    if (listed != nodes_.size() - 1) *why = observer->name() + " lists " + std::to_string(listed);
    return listed == nodes_.size() - 1;
  }

  // Whether every node lists every URL's owner and every member exactly. A daemon that exited
  // ends the wait at once (the step's checks say which).
  bool Converged(std::string* why) {
    for (Node* n : nodes_) {
      if (n->exited()) return true;
      if (!MembersExact(n, why)) return false;
      if (const size_t missing = Missing(n); missing > 0) {
        *why = n->name() + " misses the owner of " + std::to_string(missing) + " URLs";
        return false;
      }
    }
    return true;
  }

  // Log lines of `n` (all its runs, old and new) that tell of a refusal.
  std::vector<std::string> RefusalLines(const Node* n) const {
    std::istringstream log(ReadFile(Dir(n) + "/stderr.log"));
    std::vector<std::string> found;
    for (std::string line; std::getline(log, line);) {
      const std::string lower = Lower(line);
      for (const char* mark : kRefusalMarks) {
        if (lower.find(mark) != std::string::npos) {
          found.push_back(n->name() + ": " + line);
          break;
        }
      }
    }
    return found;
  }

  // Every node runs the binary it should at `step`, nothing was refused anywhere (counters of
  // this run, log lines of every run) and nobody was seen dead.
  void ExpectHealthy(int step) {
    for (int i = 0; i < kNodes; ++i) {
      Node* n = nodes_[i];
      ASSERT_FALSE(n->exited()) << n->name() << " exited at step " << step << "\n" << n->log_tail();
      EXPECT_EQ(RunningBinary(Dir(n)), i < step ? new_binary_ : old_binary_) << n->name();
      EXPECT_EQ(StatsCounter(n, "transport", "refused_by_gossip"), 0u) << n->name();
      EXPECT_EQ(StatsCounter(n, "transport", "refused_frames"), 0u) << n->name();
      EXPECT_EQ(StatsCounter(n, "gossip", "malformed_in"), 0u) << n->name();
      // Releases before the probe detector (wire version 3) have no such counter: 0.
      EXPECT_EQ(StatsCounter(n, "gossip", "declared_dead"), 0u) << n->name();
      const std::vector<std::string> refusals = RefusalLines(n);
      EXPECT_EQ(refusals.size(), 0u) << n->name() << "'s log, the first of them:\n"
                                     << (refusals.empty() ? "" : refusals.front());
    }
    EXPECT_EQ(dead_sightings_, std::set<std::string>{}) << "at step " << step;
  }

  // The step's checks: every URL added so far is listed for its owner everywhere, with exact
  // counts, soon and then for the whole hold window; and ExpectHealthy.
  void ExpectStep(int step) {
    const auto start = Clock::now();
    std::string why;
    const auto converged = [&] { return Converged(&why); };
    const bool listed = WaitFor(converged, kStepDeadline, std::chrono::milliseconds(200));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const bool held = listed && HoldsFor(converged, kHoldWindow, std::chrono::milliseconds(500));
    ASSERT_NO_FATAL_FAILURE(ExpectHealthy(step));
    ASSERT_TRUE(listed) << "step " << step << ": " << why;
    ASSERT_TRUE(held) << "step " << step << ", within the hold window: " << why;
    ASSERT_FALSE(HasFailure()) << "step " << step << " failed";
    std::printf(
        "[ upgrade  ] step %d: %d of %d nodes run this tree (the rest %s); %zu URLs listed for "
        "their owner at every node after %.1f s and for %.0f s more; no refusal, no death\n",
        step, step, kNodes, old_ref_.c_str(), all_urls_.size(), seconds,
        std::chrono::duration<double>(kHoldWindow).count());
    std::fflush(stdout);
  }

  // Stops the old daemon of `n` and starts this tree's in its place.
  void Upgrade(Node* n) {
    const auto start = Clock::now();
    ASSERT_TRUE(n->Stop()) << n->name() << " did not exit on SIGTERM\n" << n->log_tail();
    ASSERT_TRUE(n->Start(Options(new_binary_), Others(n))) << n->log_tail();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const json stats = n->Stats();
    EXPECT_TRUE(stats.contains("snapshot") && stats["snapshot"].value("restored", false))
        << n->name() << " did not restore the old release's snapshot\n"
        << n->log_tail();
    std::printf(
        "[ upgrade  ] %s: stopped, and this tree's peerbloomd answering on its data dir "
        "and port %.1f s later\n",
        n->name().c_str(), seconds);
  }

  Cluster cluster_;
  std::vector<Node*> nodes_;
  std::string old_binary_;
  std::string new_binary_;
  std::string old_ref_;
  std::vector<std::string> all_urls_;     // every URL added, in order
  std::vector<std::string> owners_;       // the node that added all_urls_[i]
  std::map<std::string, size_t> added_;   // URLs added per node
  std::set<std::string> dead_sightings_;  // "observer lists member dead", at any poll
};

TEST_F(RollingUpgrade, OneNodeAtATimeKeepsEveryUrlListedAndRefusesNoFrame) {
  for (Node* n : nodes_) {
    const std::vector<Node*> seeds = n == nodes_[0] ? std::vector<Node*>{} : std::vector{nodes_[0]};
    ASSERT_TRUE(n->Start(Options(old_binary_), seeds)) << n->name() << "\n" << n->log_tail();
  }
  ASSERT_NO_FATAL_FAILURE(AddUrls(0));
  ASSERT_NO_FATAL_FAILURE(ExpectStep(0));
  for (int step = 1; step <= kNodes; ++step) {
    ASSERT_NO_FATAL_FAILURE(Upgrade(nodes_[step - 1]));
    ASSERT_NO_FATAL_FAILURE(AddUrls(step));
    ASSERT_NO_FATAL_FAILURE(ExpectStep(step));
  }
}

}  // namespace
}  // namespace peerbloom::testing
