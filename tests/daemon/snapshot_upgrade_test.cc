// Upgrading across the 2 % design margin: a snapshot an earlier version wrote with the same
// settings, in the geometry its sizing rule chose (ChooseLegacyGeometry), is restored with
// its content and its geometry; any other geometry is still refused.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <zmq.hpp>

#include "daemon/loop/clock.h"
#include "daemon/loop/daemon.h"
#include "daemon/store/local_store.h"
#include "daemon/store/snapshot.h"
#include "peerbloom/params.h"
#include "tests/daemon/control_ask.h"

namespace peerbloom::daemon {
namespace {

using nlohmann::json;

constexpr int kKeys = 500;

std::string Url(int n) { return "http://upgrade.example/" + std::to_string(n); }

// Writes to `path` the snapshot a node of `config` holding kKeys keys would leave, in `g`.
SnapshotState WriteSnapshotOf(const Config& config, const Geometry& g, const std::string& path) {
  std::unique_ptr<LocalStore> store;
  EXPECT_TRUE(LocalStore::Create(StoreOptionsOf(config), &store).ok());
  EXPECT_TRUE(store->UseGeometry(g).ok());
  for (int n = 0; n < kKeys; ++n) store->Add(store->encoder()->FromUrl(Url(n)));
  const CountingBloomFilter& f = store->filter();
  SnapshotState s;
  s.node_id = config.node_id;
  s.epoch = 1000;
  s.version = 7;
  s.k = f.k();
  s.log2_counters = f.log2_counters();
  s.size_multiplier = f.multiplier();
  s.key_scheme = config.key_scheme;
  s.index_key_fingerprint = store->IndexKeyFingerprint();
  s.items = f.items();
  s.saturation_events = f.saturation_events();
  s.adds = store->stats().adds;
  s.written_unix_ms = 1000;
  s.cells.assign(f.raw_cells());
  EXPECT_TRUE(WriteSnapshot(path, s).ok());
  return s;
}

// Settings whose geometry the design margin changed (balanced profile, k = 2, at 1 %).
struct UpgradeCase {
  const char* filter_sizes;
  uint64_t capacity;
};

// 10100 keys: 47 x 2^12 counters give 0.990 %, the margin takes 3 x 2^16. 13700 keys: 2^18
// gives 0.985 %, the margin takes 2^19.
const UpgradeCase kCases[] = {{"exact", 10100}, {"power-of-two", 13700}};

// Names the case in test output (and in ctest's listing) instead of its bytes.
void PrintTo(const UpgradeCase& c, std::ostream* os) {
  *os << c.filter_sizes << ", capacity " << c.capacity;
}

class SnapshotUpgrade : public ::testing::TestWithParam<UpgradeCase> {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbupgrade.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::string text = "node_id = \"solo\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \"" +
                             dir_ + "/data\"\ncurve = false\nkey_scheme = \"raw\"\ncapacity = " +
                             std::to_string(GetParam().capacity) + "\nfilter_sizes = \"" +
                             GetParam().filter_sizes + "\"\n";
    ASSERT_TRUE(ParseConfig(text, "upgrade.toml", &config_).ok());
    path_ = dir_ + "/data/state.snapshot";
    ASSERT_TRUE(ChooseGeometry(config_.profile, config_.capacity, config_.target_fpr, &current_,
                               config_.filter_sizes)
                    .ok());
    ASSERT_TRUE(ChooseLegacyGeometry(config_.profile, config_.capacity, config_.target_fpr,
                                     &legacy_, config_.filter_sizes)
                    .ok());
    ASSERT_NE(legacy_, current_) << "the case must be one the margin changed";
    // A first start creates the data dir as the daemon wants it (private); it writes no
    // snapshot without Run.
    Daemon d(config_, &clock_);
    ASSERT_TRUE(d.Start().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  SnapshotState WriteSnapshotIn(const Geometry& g) { return WriteSnapshotOf(config_, g, path_); }

  json Ask(Daemon* d, const json& request, const std::string& body, std::string* reply_body) {
    return AskDaemon(&context_, config_.control, d, request, body, reply_body);
  }

  // The daemon's filter and snapshot stats, and its who-has answer for every key.
  void ExpectServesInLegacyGeometry(Daemon* d) {
    std::string body;
    const json stats = Ask(d, {{"op", "stats"}}, "", &body)["stats"];
    EXPECT_EQ(stats["filter"]["k"], legacy_.k) << stats.dump();
    EXPECT_EQ(stats["filter"]["log2_counters"], legacy_.log2_counters);
    EXPECT_EQ(stats["filter"]["counters"], legacy_.counters());
    EXPECT_EQ(stats["filter"]["items"], kKeys);
    EXPECT_EQ(stats["snapshot"]["restored"], true);
    EXPECT_EQ(stats["snapshot"]["legacy_geometry"], true);
    std::string urls, want;
    for (int n = 0; n < kKeys; ++n) {
      urls += Url(n) + "\n";
      want += "0\n";
    }
    const json reply = Ask(d, {{"op", "who-has"}}, urls, &body);
    ASSERT_EQ(reply["ok"], true) << reply.dump();
    EXPECT_EQ(reply["claimed"], kKeys);
    EXPECT_EQ(body, want);
    // The published summary is folded from the restored filter: its size divides it.
    const json summary = Ask(d, {{"op", "summary"}}, "", &body)["summary"];
    EXPECT_EQ(summary["k"], legacy_.k) << summary.dump();
    EXPECT_EQ(legacy_.counters() % summary["bits"].get<uint64_t>(), 0u) << summary.dump();
  }

  std::string RefusedMessage() const {
    return "snapshot '" + path_ +
           "' was written with another filter geometry (capacity, profile, target_fpr, "
           "filter_sizes or the version's sizing rule changed) (move '" +
           path_ + "' aside to start empty)";
  }

  std::string dir_;
  std::string path_;
  Config config_;
  Geometry current_;
  Geometry legacy_;
  FakeClock clock_;
  zmq::context_t context_{1};
};

TEST_P(SnapshotUpgrade, AnEarlierRulesSnapshotIsRestoredInItsGeometry) {
  const SnapshotState old = WriteSnapshotIn(legacy_);
  {
    Daemon d(config_, &clock_);
    const Status s = d.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectServesInLegacyGeometry(&d);
    // What it writes back is the same content in the same geometry.
    ASSERT_TRUE(d.WriteSnapshotNow().ok());
  }
  SnapshotState again;
  ASSERT_TRUE(ReadSnapshot(path_, &again).ok());
  EXPECT_EQ(again.k, legacy_.k);
  EXPECT_EQ(again.log2_counters, legacy_.log2_counters);
  EXPECT_EQ(again.size_multiplier, legacy_.multiplier);
  EXPECT_EQ(again.items, old.items);
  EXPECT_EQ(again.adds, old.adds);
  EXPECT_TRUE(again.cells == old.cells) << "counters differ";
  // And the next start restores that one the same way.
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  ExpectServesInLegacyGeometry(&d);
}

TEST_P(SnapshotUpgrade, AnyOtherGeometryIsRefused) {
  Geometry other_capacity;
  ASSERT_TRUE(ChooseLegacyGeometry(config_.profile, config_.capacity * 4, config_.target_fpr,
                                   &other_capacity, config_.filter_sizes)
                  .ok());
  const Geometry others[] = {
      {legacy_.k + 1, legacy_.log2_counters, legacy_.multiplier},
      {legacy_.k, legacy_.log2_counters - 1, legacy_.multiplier},
      {current_.k, current_.log2_counters + 1, current_.multiplier},
      other_capacity,
  };
  for (const Geometry& g : others) {
    ASSERT_NE(g, legacy_);
    ASSERT_NE(g, current_);
    WriteSnapshotIn(g);
    Daemon d(config_, &clock_);
    const Status s = d.Start();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(s.message(), RefusedMessage())
        << "k=" << g.k << " log2=" << g.log2_counters << " c=" << g.multiplier;
  }
}

// The current rule's own snapshot is restored as before, without the legacy flag.
TEST_P(SnapshotUpgrade, TheCurrentRulesSnapshotIsRestoredAsBefore) {
  WriteSnapshotIn(current_);
  Daemon d(config_, &clock_);
  ASSERT_TRUE(d.Start().ok());
  std::string body;
  const json stats = Ask(&d, {{"op", "stats"}}, "", &body)["stats"];
  EXPECT_EQ(stats["filter"]["counters"], current_.counters()) << stats.dump();
  EXPECT_EQ(stats["filter"]["items"], kKeys);
  EXPECT_EQ(stats["snapshot"]["restored"], true);
  EXPECT_EQ(stats["snapshot"]["legacy_geometry"], false);
}

// Exact sizes are the default for a new data dir. A snapshot an earlier version wrote at its
// default, power-of-two sizes, for the same settings, keeps its geometry while filter_sizes is
// not set; set to "exact", the key asks for exact sizes and such a snapshot is refused.
class DefaultSizes : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbsizes.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    path_ = dir_ + "/data/state.snapshot";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Config ConfigWith(const std::string& extra) const {
    const std::string text =
        "node_id = \"solo\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \"" + dir_ +
        "/data\"\ncurve = false\nkey_scheme = \"raw\"\ncapacity = 13700\n" + extra;
    Config c;
    EXPECT_TRUE(ParseConfig(text, "sizes.toml", &c).ok());
    return c;
  }

  // The filter a daemon of `config` serves after Start: its stats, or the refusal.
  Status StartAndRead(const Config& config, json* filter, json* snapshot) {
    Daemon d(config, &clock_);
    PEERBLOOM_RETURN_IF_ERROR(d.Start());
    std::string body;
    const json stats =
        AskDaemon(&context_, config.control, &d, {{"op", "stats"}}, "", &body)["stats"];
    *filter = stats["filter"];
    *snapshot = stats["snapshot"];
    return Status::Ok();
  }

  static Geometry Choose(const Config& c, SizeSteps steps, bool legacy) {
    Geometry g;
    const Status s = legacy ? ChooseLegacyGeometry(c.profile, c.capacity, c.target_fpr, &g, steps)
                            : ChooseGeometry(c.profile, c.capacity, c.target_fpr, &g, steps);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return g;
  }

  std::string dir_;
  std::string path_;
  FakeClock clock_;
  zmq::context_t context_{1};
};

TEST_F(DefaultSizes, ANewDataDirUsesExactSizes) {
  const Config config = ConfigWith("");
  EXPECT_EQ(config.filter_sizes, SizeSteps::kExact);
  const Geometry exact = Choose(config, SizeSteps::kExact, false);
  ASSERT_NE(exact, Choose(config, SizeSteps::kPowerOfTwo, false));
  json filter, snapshot;
  ASSERT_TRUE(StartAndRead(config, &filter, &snapshot).ok());
  EXPECT_EQ(filter["counters"], exact.counters()) << filter.dump();
  EXPECT_EQ(snapshot["restored"], false);
}

TEST_F(DefaultSizes, APowerOfTwoSnapshotKeepsItsGeometryWhileTheKeyIsUnset) {
  const Config config = ConfigWith("");
  {  // a first start creates the data dir as the daemon wants it
    Daemon d(config, &clock_);
    ASSERT_TRUE(d.Start().ok());
  }
  // The current rule's power-of-two size and the one before the design margin.
  for (const bool legacy : {false, true}) {
    const Geometry pow2 = Choose(config, SizeSteps::kPowerOfTwo, legacy);
    SCOPED_TRACE(legacy ? "pre-margin power-of-two" : "power-of-two");
    WriteSnapshotOf(config, pow2, path_);
    json filter, snapshot;
    const Status s = StartAndRead(config, &filter, &snapshot);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(filter["counters"], pow2.counters()) << filter.dump();
    EXPECT_EQ(filter["items"], kKeys);
    EXPECT_EQ(snapshot["restored"], true);
    EXPECT_EQ(snapshot["legacy_geometry"], true);

    // Asked for explicitly, exact sizes refuse it, unless an exact rule gives it too (c = 1).
    const Config exact = ConfigWith("filter_sizes = \"exact\"\n");
    const bool exact_gives = pow2 == Choose(exact, SizeSteps::kExact, false) ||
                             pow2 == Choose(exact, SizeSteps::kExact, true);
    const Status again = StartAndRead(exact, &filter, &snapshot);
    EXPECT_EQ(again.IsInvalidArgument(), !exact_gives) << again.ToString();
    if (!legacy) {
      EXPECT_FALSE(exact_gives) << "the case must tell the two sizes apart";
    }
  }
  // And a snapshot in exact sizes is restored as the current rule's, without the flag.
  WriteSnapshotOf(config, Choose(config, SizeSteps::kExact, false), path_);
  json filter, snapshot;
  ASSERT_TRUE(StartAndRead(config, &filter, &snapshot).ok());
  EXPECT_EQ(snapshot["restored"], true);
  EXPECT_EQ(snapshot["legacy_geometry"], false);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SnapshotUpgrade, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<UpgradeCase>& test) {
                           return std::string(test.param.filter_sizes) == "exact" ? "Exact"
                                                                                  : "PowerOfTwo";
                         });

}  // namespace
}  // namespace peerbloom::daemon
