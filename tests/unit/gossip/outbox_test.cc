// Outbox: headers, the per-endpoint byte cap and its counters, dropped links.
#include "lib/gossip/outbox.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "lib/gossip/local_node.h"
#include "tests/unit/gossip/part_options.h"

namespace peerbloom {
namespace {

GossipOptions Options() {
  GossipOptions o = test::PartOptions("a");
  o.cluster_tag = 77;
  return o;
}

// An outbox of node "a" with its own local node and counters.
struct Fixture {
  explicit Fixture(GossipOptions o) : options(std::move(o)) {}
  GossipOptions options;
  LocalNode self{options};
  GossipStats stats;
  Outbox out{options, self, &stats};
};

TEST(Outbox, HeaderNamesThisNodeAndItsHeartbeat) {
  Fixture f(Options());
  f.self.Start();
  f.self.Beat();
  WireHeader h = f.out.Header(/*chosen=*/true, /*contact=*/false);
  EXPECT_EQ(h.cluster_tag, 77u);
  EXPECT_EQ(h.sender_id, "a");
  EXPECT_EQ(h.sender_heartbeat, 2u);
  EXPECT_EQ(h.flags, kWireFlagNeighbour);
  EXPECT_EQ(h.sender_endpoint, "");
  h = f.out.Header(false, true);
  EXPECT_EQ(h.flags, kWireFlagContact);
  EXPECT_EQ(h.sender_endpoint, "tcp://a:1");
}

TEST(Outbox, DropsFramesBeyondTheEndpointCapUntilTaken) {
  GossipOptions o = Options();
  o.max_pending_bytes_per_endpoint = 10;
  Fixture f(o);
  Outbox& out = f.out;
  const GossipStats& stats = f.stats;
  out.Send("tcp://b:1", "", "123456", WireType::kDigest);
  out.Send("tcp://b:1", "", "12345", WireType::kDelta);            // 11 bytes: dropped
  out.Send("tcp://b:1", "", "1234", WireType::kDelta);             // exactly 10: kept
  out.Send("tcp://c:1", "", "123456789", WireType::kFullSummary);  // its own queue
  EXPECT_TRUE(out.QueueFull("tcp://b:1"));
  EXPECT_FALSE(out.QueueFull("tcp://c:1"));
  EXPECT_EQ(stats.messages_out, 3u);
  EXPECT_EQ(stats.bytes_out, 19u);
  EXPECT_EQ(stats.queue_dropped, 1u);
  EXPECT_EQ(stats.queue_dropped_bytes, 5u);
  EXPECT_EQ(stats.digests_out, 1u);
  EXPECT_EQ(stats.deltas_out, 1u);
  EXPECT_EQ(stats.full_summaries_out, 1u);
  std::vector<Outgoing> taken = out.TakeOutgoing();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].payload, "123456");
  EXPECT_EQ(taken[1].payload, "1234");
  EXPECT_EQ(taken[2].endpoint, "tcp://c:1");
  // Taking empties the queues: the cap applies between two takes.
  EXPECT_FALSE(out.QueueFull("tcp://b:1"));
  out.Send("tcp://b:1", "", "1234567890", WireType::kDigest);
  EXPECT_EQ(out.TakeOutgoing().size(), 1u);
  EXPECT_TRUE(out.TakeOutgoing().empty());
}

TEST(Outbox, ListsEachDroppedEndpointOnce) {
  Fixture f(Options());
  Outbox& out = f.out;
  out.NoteDropped("tcp://b:1");
  out.NoteDropped("");
  out.NoteDropped("tcp://c:1");
  out.NoteDropped("tcp://b:1");
  EXPECT_EQ(out.TakeDropped(), (std::vector<std::string>{"tcp://b:1", "tcp://c:1"}));
  EXPECT_TRUE(out.TakeDropped().empty());
}

TEST(Outbox, UnlinkIsAnEmptyDigestWithTheUnlinkFlag) {
  Fixture f(Options());
  f.out.SendUnlink("tcp://b:1", "");
  std::vector<Outgoing> taken = f.out.TakeOutgoing();
  ASSERT_EQ(taken.size(), 1u);
  WireFrame frame;
  ASSERT_TRUE(DecodeFrame(taken[0].payload, WireLimits(), &frame).ok());
  EXPECT_EQ(frame.header.type, WireType::kDigest);
  EXPECT_EQ(frame.header.flags, kWireFlagUnlink);
  EXPECT_TRUE(frame.digest.entries.empty());
}

}  // namespace
}  // namespace peerbloom
