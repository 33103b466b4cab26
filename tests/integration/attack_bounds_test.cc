// An attacker holding one authorized key sends what a well-formed peer could send, only far
// larger than the cluster is configured for: full summaries of invented (or real) origins with
// huge geometries, and floods of imported Squid digests. The target refuses them on their
// headers, counts them, keeps its memory bounded and goes on answering for the real members.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/squid_digest.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/hostile_client.h"

namespace peerbloom::testing {
namespace {

constexpr char kAttacker[] = "test-client";  // the node id the harness lists its key for

// A valid Squid Cache Digest (version 5, 5 bits per entry, 4 hash functions) of `capacity`
// entries with no bit set: what a Squid with an empty cache of that capacity serves.
std::string EmptySquidDigest(uint32_t capacity) {
  const uint32_t mask = static_cast<uint32_t>((uint64_t{capacity} * 5 + 7) / 8);
  std::string d(kCacheDigestHeaderBytes + mask, '\0');
  auto be16 = [&](size_t at, uint16_t v) {
    d[at] = static_cast<char>(v >> 8);
    d[at + 1] = static_cast<char>(v);
  };
  auto be32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) d[at + i] = static_cast<char>(v >> (24 - 8 * i));
  };
  be16(0, kCacheDigestVersionCurrent);
  be16(2, kCacheDigestVersionRequired);
  be32(4, capacity);
  be32(16, mask);
  d[20] = 5;
  d[21] = 4;
  return d;
}

class AttackBounds : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string public_key, secret_key;
    cluster_.AuthorizeExtraKey(&public_key, &secret_key);
    attacker_.SetKeys(public_key, secret_key);
  }

  // A CURVE DEALER on `target`'s peer endpoint holding the authorized extra key.
  zmq::socket_t Attacker(Node* target) { return attacker_.Connect(target); }

  WireHeader Header(WireType type) { return attacker_.NextHeader(type); }

  // Makes the attacker a known member of `target` (an empty digest, as a joining node sends).
  void Introduce(zmq::socket_t* s, Node* target) {
    std::string frame;
    ASSERT_TRUE(EncodeDigestFrame(Header(WireType::kDigest), DigestBody{}, &frame).ok());
    s->send(zmq::buffer(frame));
    ASSERT_TRUE(WaitFor(
        [&] {
          for (const json& p : target->Peers()) {
            if (p["node_id"] == kAttacker) return true;
          }
          return false;
        },
        kWaitDeadline));
  }

  // A valid full summary frame: an empty filter of 2^log2_bits bits, k = 2, Golomb-Rice coded
  // (a few hundred bytes on the wire whatever the size).
  std::string SummaryFrame(const std::string& origin, uint64_t epoch, unsigned log2_bits) {
    Summary s;
    s.origin = origin;
    s.epoch = epoch;
    s.version = 1;
    s.key_scheme = KeyScheme::kRaw;
    s.filter = BloomFilter(log2_bits, 2);
    std::string codec, frame;
    EXPECT_TRUE(EncodeSummary(s, &codec, BodyEncoding::kGolombRice).ok());
    EXPECT_TRUE(
        EncodeSummaryFrame(Header(WireType::kFullSummary), WireType::kFullSummary, codec, &frame)
            .ok());
    return frame;
  }

  static uint64_t Gossip(Node* n, const char* name) { return StatsCounter(n, "gossip", name); }

  Cluster cluster_;
  HostileClient attacker_{kAttacker};
};

// Before: each 2^28-bit summary of an invented origin cost every node +256 MiB, and 2^32 (the
// default decode limit) ended the daemon with std::bad_alloc. Now the bound is 4x the largest
// filter of the cluster's configuration (capacity 100000, balanced: 2^22 counters, so 2^24
// bits) and the summaries are refused on their headers.
TEST_F(AttackBounds, OversizedSummariesAreRefusedMemoryStaysBoundedVictimStaysListed) {
  Node* a = cluster_.AddNode("a");
  Node* b = cluster_.AddNode("b");
  NodeOptions o;
  ASSERT_TRUE(a->Start(o, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(o, {a})) << b->log_tail();
  ASSERT_TRUE(a->Add({"victim-key"}));
  ASSERT_TRUE(WaitFor([&] { return b->WhoHas({"victim-key"})[0] == std::vector<std::string>{"a"}; },
                      kWaitDeadline));
  const int pid = DaemonPid(cluster_.dir() + "/b");
  ASSERT_GT(pid, 0);
  const uint64_t rss_before = ProcStatusBytes(pid, "VmRSS");

  zmq::socket_t s = Attacker(b);
  Introduce(&s, b);
  uint64_t a_epoch = 0;
  for (const json& p : b->Peers()) {
    if (p["node_id"] == "a") a_epoch = p.value("epoch", uint64_t{0});
  }
  ASSERT_GT(a_epoch, 0u);
  std::vector<std::string> frames;
  for (int i = 0; i < 4; ++i) frames.push_back(SummaryFrame("ghost-" + std::to_string(i), 1, 28));
  frames.push_back(SummaryFrame("a", a_epoch + 1000, 28));  // the victim's id, a newer epoch
  frames.push_back(SummaryFrame("ghost-9", 1, 25));         // 2x the bound: refused too
  for (const std::string& f : frames) s.send(zmq::buffer(f));
  ASSERT_TRUE(
      WaitFor([&] { return Gossip(b, "summaries_out_of_bounds") == frames.size(); }, kWaitDeadline))
      << Gossip(b, "summaries_out_of_bounds");

  // Generous margin: the refused frames are a few hundred bytes each; 64 MiB covers allocator
  // noise and stats answers. One accepted 2^28-bit summary alone would pass it 4-fold.
  const uint64_t rss_after = ProcStatusBytes(pid, "VmRSS");
  EXPECT_LT(rss_after, rss_before + (uint64_t{64} << 20))
      << "rss " << rss_before << " -> " << rss_after;
  for (const json& p : b->Peers()) {
    EXPECT_EQ(p["node_id"].get<std::string>().rfind("ghost-", 0), std::string::npos) << p;
  }
  EXPECT_EQ(b->WhoHas({"victim-key"})[0], std::vector<std::string>{"a"});
  EXPECT_TRUE(SeesAlive(b, "a"));
  EXPECT_EQ(b->Stats()["gossip"].value("malformed_in", 0u), frames.size());
}

// Before: imported digests had no cap: three 48 MiB frames took a node from 21 MB to 316 MB.
// Now one importer may have at most max_imports_per_importer digests and
// max_import_bytes_per_importer bytes held, and importers must be known members. Scaled down
// (4 MiB digests, an 8 MiB quota) so that a loaded machine moves the frames quickly.
TEST_F(AttackBounds, ImportFloodsAreCappedPerImporter) {
  Node* b = cluster_.AddNode("b");
  NodeOptions o;
  o.key_scheme = "squid-md5";
  o.max_message_bytes = int64_t{64} << 20;
  o.extra = "max_import_bytes_per_importer = 8388608\n";  // 8 MiB: two 4 MiB digests
  ASSERT_TRUE(b->Start(o, {})) << b->log_tail();
  const int pid = DaemonPid(cluster_.dir() + "/b");
  ASSERT_GT(pid, 0);
  const uint64_t rss_before = ProcStatusBytes(pid, "VmRSS");

  zmq::socket_t s = Attacker(b);
  Introduce(&s, b);
  const std::string digest = EmptySquidDigest(6710000);  // 4 MiB - 426 bytes
  ASSERT_LE(digest.size(), size_t{4} << 20);
  int next = 0;
  auto frame_of = [&](const std::string& importer, int entries) {
    std::vector<ImportedDigestEntry> e(static_cast<size_t>(entries));
    for (ImportedDigestEntry& x : e) {
      x.origin = "squid:10.9.0." + std::to_string(++next) + ":3128";
      x.importer = importer;
      x.version = 1;
      x.lifetime_ms = 3600000;
      x.source_url = "http://10.9.0.1:3128/squid-internal-periodic/store_digest";
      x.flags = kImportHasDigest;
      x.digest = digest;
    }
    std::string frame;
    EXPECT_TRUE(EncodeImportedDigestFrame(Header(WireType::kImportedDigest), e, &frame).ok());
    return frame;
  };
  auto imported = [&] { return b->Stats()["squid_digests"]["imported"].size(); };
  auto refused = [&] { return b->Stats()["squid_digests"].value("imports_over_quota", 0u); };

  s.send(zmq::buffer(frame_of(kAttacker, 2)));  // 8 MiB: within the quota
  ASSERT_TRUE(WaitFor([&] { return imported() == 2; }, kWaitDeadline)) << b->Stats().dump();
  for (int i = 0; i < 5; ++i) s.send(zmq::buffer(frame_of(kAttacker, 3)));  // 12 MiB frames
  s.send(zmq::buffer(frame_of("ghost-importer", 1)));                       // not a member
  ASSERT_TRUE(WaitFor([&] { return refused() == 6; }, kWaitDeadline)) << b->Stats().dump();
  EXPECT_EQ(imported(), 2u);

  // Held: two 4 MiB digests, each kept twice (bytes to pass on, mask in the index): 16 MiB.
  // Margin: 32 MiB more for frames in flight (each freed after its refusal) and the
  // allocator. Before the caps the same frames held 18 digests, about 144 MiB.
  const uint64_t rss_after = ProcStatusBytes(pid, "VmRSS");
  EXPECT_LT(rss_after, rss_before + (uint64_t{48} << 20))
      << "rss " << rss_before << " -> " << rss_after;
  json reply;
  std::string body;
  EXPECT_TRUE(b->Call({{"op", "ping"}}, "", &reply, &body));
}

}  // namespace
}  // namespace peerbloom::testing
