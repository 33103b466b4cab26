#include "peerbloom/squid_store_log_state.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"

namespace peerbloom {
namespace {

std::vector<std::string> ReadLines(const std::string& name) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The keys the fixture's README says node A held when the log was cut: obj1..obj5.txt and
// o4..o300.html (o1..o3 were purged), computed from the URLs, not read from the log.
std::set<SquidKey> ExpectedLiveKeysOfA() {
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  std::set<SquidKey> keys;
  for (int i = 1; i <= 5; ++i) {
    keys.insert(encoder.SquidStoreKey("http://127.0.0.1:8080/obj" + std::to_string(i) + ".txt"));
  }
  for (int i = 4; i <= 300; ++i) {
    keys.insert(encoder.SquidStoreKey("http://127.0.0.1:8080/o" + std::to_string(i) + ".html"));
  }
  return keys;
}

std::set<SquidKey> LiveKeys(const StoreLogState& state) {
  std::set<SquidKey> keys;
  state.live().ForEach([&](const SquidKey& k) { keys.insert(k); });
  return keys;
}

// Applies decisions to a counting filter the way the daemon does.
struct Replayer {
  IndexHasher hasher;
  CountingBloomFilter filter{16, 4};
  StoreLogState state;

  void Apply(const std::string& line) {
    SquidKey key;
    switch (state.ApplyLine(line, &key)) {
      case StoreLogDecision::kAdd:
        filter.Add(hasher.Hash(SquidKeyBytes(key)));
        break;
      case StoreLogDecision::kRemove:
        EXPECT_TRUE(filter.Remove(hasher.Hash(SquidKeyBytes(key))));
        break;
      case StoreLogDecision::kIgnore:
      case StoreLogDecision::kMalformed:
        break;
    }
  }
};

TEST(StoreLogState, ReplayOfALeavesExactlyTheLiveKeys) {
  const std::vector<std::string> lines = ReadLines("sample_store_A.log");
  ASSERT_EQ(lines.size(), 389u);
  Replayer r;
  for (const std::string& line : lines) r.Apply(line);
  const std::set<SquidKey> expected = ExpectedLiveKeysOfA();
  ASSERT_EQ(expected.size(), 302u);
  EXPECT_EQ(LiveKeys(r.state), expected);
  const StoreLogCounters& c = r.state.counters();
  EXPECT_EQ(c.malformed, 0u);
  EXPECT_EQ(c.lines(), 389u);
  EXPECT_EQ(c.adds - c.removes, 302u);
  EXPECT_GT(c.internal, 0u);  // the digest's own RELEASE lines
  // The counting filter holds the same keys as a filter built straight from the set.
  CountingBloomFilter direct(16, 4);
  for (const SquidKey& k : expected) direct.Add(r.hasher.Hash(SquidKeyBytes(k)));
  EXPECT_EQ(r.filter.raw_cells(), direct.raw_cells());
  EXPECT_EQ(r.filter.items(), 302u);
  EXPECT_EQ(r.filter.refused_removes(), 0u);
}

TEST(StoreLogState, LogOfBParsesWithoutMalformedLines) {
  const std::vector<std::string> lines = ReadLines("sample_store_B.log");
  ASSERT_EQ(lines.size(), 136u);
  Replayer r;
  for (const std::string& line : lines) r.Apply(line);
  const StoreLogCounters& c = r.state.counters();
  EXPECT_EQ(c.malformed, 0u);
  EXPECT_EQ(c.lines(), 136u);
  EXPECT_EQ(r.state.live().size(), c.adds - c.removes);
  EXPECT_EQ(r.filter.refused_removes(), 0u);
}

std::string Line(std::string_view action, std::string_view key, std::string_view url) {
  return "1795327317.643 " + std::string(action) + " 00 00000000 " + std::string(key) +
         "  200 1795327317 1795327306 1795413717 text/plain 1354/1354 GET " + std::string(url);
}

constexpr std::string_view kK = "1DCD286542CB5C0FEE897C41AB94173F";

TEST(StoreLogState, RepeatedSwapOutDoesNotInflate) {
  StoreLogState state;
  SquidKey key;
  EXPECT_EQ(state.ApplyLine(Line("SWAPOUT", kK, "http://h/a"), &key), StoreLogDecision::kAdd);
  EXPECT_EQ(SquidKeyHex(key), kK);
  EXPECT_EQ(state.ApplyLine(Line("SWAPOUT", kK, "http://h/a"), &key), StoreLogDecision::kIgnore);
  EXPECT_EQ(state.ApplyLine(Line("RELEASE", kK, "?"), &key), StoreLogDecision::kRemove);
  EXPECT_EQ(state.ApplyLine(Line("RELEASE", kK, "?"), &key), StoreLogDecision::kIgnore);
  EXPECT_TRUE(state.live().empty());
  EXPECT_EQ(state.counters().duplicate_swapouts, 1u);
  EXPECT_EQ(state.counters().unknown_releases, 1u);
}

TEST(StoreLogState, FailuresInternalsAndUnknownActionsAreIgnored) {
  StoreLogState state;
  SquidKey key;
  EXPECT_EQ(state.ApplyLine(Line("SO_FAIL", kK, "http://h/a"), &key), StoreLogDecision::kIgnore);
  EXPECT_EQ(state.ApplyLine(Line("SWAPOUT", kK, "http://h:3128/squid-internal-periodic/x"), &key),
            StoreLogDecision::kIgnore);
  EXPECT_EQ(state.ApplyLine(Line("SWAPIN", kK, "http://h/a"), &key), StoreLogDecision::kIgnore);
  EXPECT_TRUE(state.live().empty());
  const StoreLogCounters& c = state.counters();
  EXPECT_EQ(c.swapout_failures, 1u);
  EXPECT_EQ(c.internal, 1u);
  EXPECT_EQ(c.other_actions, 1u);
}

TEST(StoreLogState, MalformedLinesAreCountedWithAReason) {
  StoreLogState state;
  SquidKey key;
  Status error;
  EXPECT_EQ(state.ApplyLine("garbage", &key, &error), StoreLogDecision::kMalformed);
  EXPECT_EQ(error.message(), "line has '1' fields, expected at least '13'");
  EXPECT_EQ(state.ApplyLine(Line("SWAPOUT", "XYZ", "http://h/a"), &key),
            StoreLogDecision::kMalformed);
  EXPECT_EQ(state.counters().malformed, 2u);
  EXPECT_TRUE(state.live().empty());
}

// A snapshot taken half-way and restored into a fresh state, followed by the rest of the
// log, ends where an uninterrupted replay ends.
TEST(StoreLogState, SnapshotMidwayThenResume) {
  const std::vector<std::string> lines = ReadLines("sample_store_A.log");
  StoreLogState first;
  SquidKey key;
  const size_t half = lines.size() / 2;
  for (size_t i = 0; i < half; ++i) (void)first.ApplyLine(lines[i], &key);
  std::string snapshot;
  first.EncodeTo(&snapshot);
  StoreLogState second(SipKey{42});
  ASSERT_TRUE(second.DecodeFrom(snapshot, 1000).ok());
  for (size_t i = half; i < lines.size(); ++i) (void)second.ApplyLine(lines[i], &key);
  EXPECT_EQ(LiveKeys(second), ExpectedLiveKeysOfA());
}

// The usual eviction of an on-disk object carries no reply fields; it must still drain the
// key, or the filter only grows.
TEST(StoreLogState, BareReleaseRemovesALiveKey) {
  StoreLogState state;
  SquidKey key;
  const std::string hex = "09CE0016B72C430B13CE6715158BEDE7";
  ASSERT_EQ(state.ApplyLine("1795329000.001 SWAPOUT 00 0000007B " + hex +
                                "  200 1795329000 -1 -1 text/html 10/10 GET http://h/a",
                            &key),
            StoreLogDecision::kAdd);
  ASSERT_EQ(state.ApplyLine("1795329001.118 RELEASE 00 0000007B " + hex +
                                "   ?         ?         ?         ? ?/? ?/? ? ?",
                            &key),
            StoreLogDecision::kRemove);
  EXPECT_EQ(SquidKeyHex(key), hex);
  EXPECT_EQ(state.live().size(), 0u);
  EXPECT_EQ(state.counters().removes, 1u);
  EXPECT_EQ(state.counters().malformed, 0u);
}

SquidKey KeyN(int n) {
  SquidKey k{};
  k[15] = static_cast<uint8_t>(n);
  k[0] = 0x5A;
  return k;
}

std::string LineN(const char* action, int n) {
  return Line(action, SquidKeyHex(KeyN(n)), "http://h/" + std::to_string(n));
}

// A rebuild replaces a live set that lost lines with what the cache holds, and replays the
// events logged while the cache was read on top: each key ends as its last event says, or
// as the read saw it when it had none.
TEST(StoreLogState, RebuildFromHeldKeysReplaysTheJournal) {
  StoreLogState state;
  SquidKey key;
  // The live set believes 1, 2, 3 (lines for 4 and 5, and 2's eviction, were lost).
  for (int n : {1, 2, 3})
    ASSERT_EQ(state.ApplyLine(LineN("SWAPOUT", n), &key), StoreLogDecision::kAdd);
  state.StartJournal(100);
  ASSERT_TRUE(state.journaling());
  // While the cache is read: 3 evicted, 6 written, 4 evicted (not live here: ignored as a
  // decision, but journaled), 7 written then evicted.
  EXPECT_EQ(state.ApplyLine(LineN("RELEASE", 3), &key), StoreLogDecision::kRemove);
  EXPECT_EQ(state.ApplyLine(LineN("SWAPOUT", 6), &key), StoreLogDecision::kAdd);
  EXPECT_EQ(state.ApplyLine(LineN("RELEASE", 4), &key), StoreLogDecision::kIgnore);
  EXPECT_EQ(state.ApplyLine(LineN("SWAPOUT", 7), &key), StoreLogDecision::kAdd);
  EXPECT_EQ(state.ApplyLine(LineN("RELEASE", 7), &key), StoreLogDecision::kRemove);
  // The read saw 1, 3, 4, 5 and 6 (it ran before 3 and 4 left, after 6 arrived).
  const StoreLogRebuild r = state.FinishRebuild({KeyN(1), KeyN(3), KeyN(4), KeyN(5), KeyN(6)});
  EXPECT_FALSE(state.journaling());
  EXPECT_EQ(r.held, 5u);
  EXPECT_EQ(r.journal, 5u);
  EXPECT_EQ(LiveKeys(state), (std::set<SquidKey>{KeyN(1), KeyN(5), KeyN(6)}));
  EXPECT_EQ(std::set<SquidKey>(r.added.begin(), r.added.end()), std::set<SquidKey>{KeyN(5)});
  EXPECT_EQ(std::set<SquidKey>(r.removed.begin(), r.removed.end()), std::set<SquidKey>{KeyN(2)});
}

TEST(StoreLogState, AnOverflowingJournalIsAbandoned) {
  StoreLogState state;
  SquidKey key;
  state.StartJournal(2);
  for (int n : {1, 2, 3}) (void)state.ApplyLine(LineN("SWAPOUT", n), &key);
  EXPECT_FALSE(state.journaling());
  EXPECT_TRUE(state.journal_overflowed());
  EXPECT_EQ(state.live().size(), 3u);  // the live set itself is unaffected
}

}  // namespace
}  // namespace peerbloom
