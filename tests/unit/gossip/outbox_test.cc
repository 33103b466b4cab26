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

std::vector<uint64_t> SeqsOf(const std::vector<Outgoing>& taken) {
  std::vector<uint64_t> seqs;
  for (const Outgoing& o : taken) {
    WireFrame frame;
    EXPECT_TRUE(DecodeFrame(o.payload, WireLimits(), &frame).ok());
    seqs.push_back(frame.link_seq);
  }
  return seqs;
}

TEST(Outbox, NumbersSummaryFramesPerEndpointAndResendsTheSameBytes) {
  Fixture f(Options());
  Outbox& out = f.out;
  out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d1");
  out.SendSummaryBytes("tcp://c:1", "", false, WireType::kDelta, "d1");
  out.SendSummaryBytes("tcp://b:1", "", false, WireType::kFullSummary, "f2");
  out.SendDigest("tcp://b:1", "", false, DigestBody());  // not numbered
  out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d3");
  std::vector<Outgoing> taken = out.TakeOutgoing();
  EXPECT_EQ(SeqsOf(taken), (std::vector<uint64_t>{1, 1, 2, 0, 3}));
  EXPECT_EQ(out.Resend("tcp://b:1", "", {2, 3, 9}), 2u);  // 9 was never sent
  std::vector<Outgoing> again = out.TakeOutgoing();
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].payload, taken[2].payload);
  EXPECT_EQ(again[1].payload, taken[4].payload);
  EXPECT_EQ(f.stats.frames_resent, 2u);
  EXPECT_EQ(out.Resend("tcp://d:1", "", {1}), 0u);  // nothing sent there
}

TEST(Outbox, KeepsTheLatestFramesAndNumbersOnAfterADroppedLink) {
  Fixture f(Options());
  Outbox& out = f.out;
  int64_t now_ms = 0;
  out.SetClock(&now_ms);
  const size_t n = Outbox::kKeptFrames + 5;
  for (size_t i = 0; i < n; ++i) {
    out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d" + std::to_string(i));
    // Each older than the kept window by the time the next is sent.
    now_ms += Outbox::kKeptIntervals * f.options.gossip_interval_ms + 1;
  }
  (void)out.TakeOutgoing();
  EXPECT_EQ(out.Resend("tcp://b:1", "", {1, 5, 6, n}), 2u);  // 6 and n are still kept
  (void)out.TakeOutgoing();
  out.NoteDropped("tcp://b:1");
  EXPECT_EQ(out.Resend("tcp://b:1", "", {n}), 0u);
  out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "next");
  EXPECT_EQ(SeqsOf(out.TakeOutgoing()), (std::vector<uint64_t>{n + 1}));
}

// A busy link sends more than kKeptFrames frames an interval: a receiver asking over the next
// interval must still find every one of them, and a frame is let go once it is both outside
// the window and beyond the latest kKeptFrames.
TEST(Outbox, KeepsEveryFrameOfTheLastIntervalsOnABusyLink) {
  Fixture f(Options());
  Outbox& out = f.out;
  int64_t now_ms = 1000;
  out.SetClock(&now_ms);
  const int64_t window = Outbox::kKeptIntervals * f.options.gossip_interval_ms;
  const size_t burst = 4 * Outbox::kKeptFrames;
  for (size_t i = 0; i < burst; ++i) {
    out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d" + std::to_string(i));
  }
  (void)out.TakeOutgoing();
  now_ms += window;  // the burst is exactly at the edge of the window: all kept
  out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "edge");
  (void)out.TakeOutgoing();
  EXPECT_EQ(out.Resend("tcp://b:1", "", {1, burst / 2, burst, burst + 1}), 4u);
  (void)out.TakeOutgoing();
  now_ms += 1;  // the burst leaves the window: only the latest kKeptFrames stay
  out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "after");
  (void)out.TakeOutgoing();
  const uint64_t last = burst + 2;
  EXPECT_EQ(out.Resend("tcp://b:1", "", {1, last - Outbox::kKeptFrames}), 0u);
  EXPECT_EQ(out.Resend("tcp://b:1", "", {last - Outbox::kKeptFrames + 1, last}), 2u);
}

TEST(Outbox, AFrameDroppedForAFullQueueStillTakesItsNumber) {
  GossipOptions o = Options();
  Fixture probe(o);
  probe.out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d1");
  o.max_pending_bytes_per_endpoint = probe.out.TakeOutgoing()[0].payload.size();
  Fixture f(o);
  f.out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d1");
  f.out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d2");  // dropped
  EXPECT_EQ(f.stats.queue_dropped, 1u);
  (void)f.out.TakeOutgoing();
  f.out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d3");
  EXPECT_EQ(SeqsOf(f.out.TakeOutgoing()), (std::vector<uint64_t>{3}));  // the gap shows
  EXPECT_EQ(f.out.Resend("tcp://b:1", "", {2}), 1u);                    // and is repaired
}

TEST(Outbox, AVersionFourOutboxNumbersNothing) {
  GossipOptions o = Options();
  o.wire_version = 4;
  Fixture f(o);
  f.out.SendSummaryBytes("tcp://b:1", "", false, WireType::kDelta, "d1");
  EXPECT_EQ(SeqsOf(f.out.TakeOutgoing()), (std::vector<uint64_t>{0}));
  EXPECT_EQ(f.out.Resend("tcp://b:1", "", {1}), 0u);
}

TEST(Outbox, ResendFrameNamesTheNumbers) {
  Fixture f(Options());
  f.out.SendResend("tcp://b:1", "", {4, 7});
  f.out.SendResend("tcp://b:1", "", {});  // nothing to ask: not sent
  std::vector<Outgoing> taken = f.out.TakeOutgoing();
  ASSERT_EQ(taken.size(), 1u);
  WireFrame frame;
  ASSERT_TRUE(DecodeFrame(taken[0].payload, WireLimits(), &frame).ok());
  EXPECT_EQ(frame.header.type, WireType::kResend);
  EXPECT_EQ(frame.resend_seqs, (std::vector<uint64_t>{4, 7}));
  EXPECT_EQ(f.stats.resends_asked, 1u);
}

}  // namespace
}  // namespace peerbloom
