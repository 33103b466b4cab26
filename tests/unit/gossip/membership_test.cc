// Membership: member state transitions and failure detection driven by explicit times.
#include "lib/gossip/membership.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/gossip/part_options.h"

namespace peerbloom {
namespace {

GossipOptions Options() {
  GossipOptions o = test::PartOptions("a");
  o.failure_timeout_ms = 1000;
  o.forget_dead_after_ms = 500;
  o.max_members = 2;
  return o;
}

WireHeader From(const std::string& id, uint64_t epoch, uint64_t heartbeat) {
  WireHeader h;
  h.flags = kWireFlagContact;
  h.sender_id = id;
  h.sender_endpoint = "tcp://" + id + ":1";
  h.sender_epoch = epoch;
  h.sender_heartbeat = heartbeat;
  return h;
}

struct Fixture {
  GossipOptions options = Options();
  GossipStats stats;
  std::vector<std::string> restarted;
  Membership members{options, &stats, [this](const std::string& id) { restarted.push_back(id); }};
};

TEST(Membership, AMemberHeardDirectlyIsAliveUntilTheFailureTimeoutPasses) {
  Fixture f;
  const Member* b = f.members.AcceptSender(From("b", 1, 1), 100);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->endpoint, "tcp://b:1");
  EXPECT_EQ(b->last_heard_ms, 100);
  EXPECT_TRUE(f.members.Alive(*b, 1100));   // exactly the timeout: still alive
  EXPECT_FALSE(f.members.Alive(*b, 1101));  // one past: dead
  // A frame with no progress does not refresh liveness; a newer heartbeat does.
  f.members.AcceptSender(From("b", 1, 1), 1000);
  EXPECT_EQ(b->last_heard_ms, 100);
  f.members.AcceptSender(From("b", 1, 2), 1050);
  EXPECT_EQ(b->last_heard_ms, 1050);
  EXPECT_TRUE(f.members.Alive(*b, 2050));
  EXPECT_FALSE(f.members.Alive(*b, 2051));
}

// Under the probe detector a member may first be known from its summary, relayed by others:
// whether it probes is not known, and its heartbeat need not advance (a prober beats only to
// refute). It is held dead by its heartbeat only after two anti-entropy periods (a complete
// exchange brings its entry meanwhile), and after failure_timeout once its own frame said
// how it is judged.
TEST(Membership, AProbingNodeWaitsLongerForAMemberWhoseDetectorItDoesNotKnow) {
  GossipOptions o = Options();
  o.failure_detector = FailureDetector::kProbe;
  o.anti_entropy_interval_ms = 2000;
  GossipStats stats;
  Membership members(o, &stats, [](const std::string&) {});
  const Member* c = members.AdvanceEpoch("c", 1, 100, /*own_word=*/true);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->probes);
  EXPECT_FALSE(c->detector_heard);
  const int64_t grace = 2 * members.AntiEntropyMs();
  EXPECT_GT(grace, o.failure_timeout_ms);
  EXPECT_EQ(members.HeartbeatTimeoutMs(*c), grace);
  EXPECT_TRUE(members.Alive(*c, 100 + o.failure_timeout_ms + 1));
  EXPECT_TRUE(members.Alive(*c, 100 + grace));
  EXPECT_FALSE(members.Alive(*c, 100 + grace + 1));
  // Its own frame says it does not probe: judged by its heartbeat from then on.
  members.AcceptSender(From("c", 1, 1), 200);
  members.NoteProbes("c", false);
  EXPECT_TRUE(c->detector_heard);
  EXPECT_EQ(members.HeartbeatTimeoutMs(*c), o.failure_timeout_ms);
  EXPECT_FALSE(members.Alive(*c, 200 + o.failure_timeout_ms + 1));
  // A node that does not probe judges every member by failure_timeout.
  Fixture f;
  const Member* d = f.members.AdvanceEpoch("d", 1, 100, /*own_word=*/true);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(f.members.HeartbeatTimeoutMs(*d), f.options.failure_timeout_ms);
  EXPECT_FALSE(f.members.Alive(*d, 100 + f.options.failure_timeout_ms + 1));
}

TEST(Membership, AMemberLearnedDeadThroughGossipIsNotCalledAlive) {
  Fixture f;
  DigestEntry e;
  e.origin = "c";
  e.epoch = 3;
  e.heartbeat = 9;
  e.alive = false;
  f.members.Merge(e, 100);
  const Member* c = f.members.Find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->epoch, 3u);
  EXPECT_EQ(c->heartbeat, 9u);
  EXPECT_EQ(c->last_heard_ms, kNeverMs);
  EXPECT_FALSE(f.members.Alive(*c, 100));
  // The same heartbeat from a node that sees it alive is progress: never heard before.
  e.alive = true;
  f.members.Merge(e, 200);
  EXPECT_EQ(c->last_heard_ms, 200);
  EXPECT_TRUE(f.members.Alive(*c, 200));
}

TEST(Membership, AHigherEpochIsARestartAndAnOlderOneIsRefused) {
  Fixture f;
  f.members.AcceptSender(From("b", 1, 5), 100);
  EXPECT_EQ(f.restarted.size(), 1u);  // the first epoch heard replaces epoch 0
  f.restarted.clear();
  const Member* b = f.members.AdvanceEpoch("b", 2, 200);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(f.restarted, (std::vector<std::string>{"b"}));
  EXPECT_EQ(b->epoch, 2u);
  EXPECT_EQ(b->heartbeat, 0u);
  EXPECT_EQ(b->last_heard_ms, 200);
  EXPECT_EQ(f.members.AdvanceEpoch("b", 1, 300), nullptr);
  EXPECT_EQ(f.members.AdvanceEpoch("b", 2, 300), b);  // same epoch: no new restart
  EXPECT_EQ(f.restarted.size(), 1u);
  EXPECT_EQ(b->last_heard_ms, 200);
  EXPECT_EQ(f.members.AdvanceEpoch("a", 1, 300), nullptr);  // this node is never a member
}

TEST(Membership, RefusesMembersBeyondTheTableAndCountsThem) {
  Fixture f;
  EXPECT_NE(f.members.AcceptSender(From("b", 1, 1), 0), nullptr);
  EXPECT_NE(f.members.AcceptSender(From("c", 1, 1), 0), nullptr);
  EXPECT_EQ(f.members.AcceptSender(From("d", 1, 1), 0), nullptr);
  EXPECT_EQ(f.stats.members_refused, 1u);
  EXPECT_EQ(f.members.members().size(), 2u);
}

TEST(Membership, ForgetsTheDeadAfterTimeoutPlusForgetDelay) {
  Fixture f;
  f.members.AcceptSender(From("b", 1, 1), 100);
  EXPECT_TRUE(f.members.ForgettableDead(1600).empty());  // 1500 silent: not yet
  EXPECT_EQ(f.members.ForgettableDead(1601), (std::vector<std::string>{"b"}));
  // Linked both ways (its frames named no neighbour flag): no open link to report.
  EXPECT_EQ(f.members.Forget("b"), "");
  EXPECT_EQ(f.members.Find("b"), nullptr);
}

TEST(Membership, AnInboundLinkLastsTheFailureTimeoutOrUntilUnlinked) {
  Fixture f;
  WireHeader h = From("b", 1, 1);
  h.flags |= kWireFlagNeighbour;
  const Member* b = f.members.AcceptSender(h, 100);
  EXPECT_TRUE(f.members.IsLinked(*b, 1100));
  EXPECT_FALSE(f.members.IsLinked(*b, 1101));
  std::vector<LinkTarget> targets = f.members.Targets(500);
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_FALSE(targets[0].chosen);
  EXPECT_TRUE(targets[0].push);  // within the inbound cap
  h.flags = kWireFlagUnlink;
  h.sender_heartbeat = 2;
  f.members.AcceptSender(h, 200);
  EXPECT_FALSE(f.members.IsLinked(*b, 200));
  EXPECT_TRUE(f.members.Targets(500).empty());
}

TEST(Membership, FreshEntriesAreTakenOnce) {
  Fixture f;
  f.members.AcceptSender(From("b", 1, 1), 100);
  std::vector<std::pair<const Member*, bool>> fresh = f.members.TakeFresh();
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].first->id, "b");
  EXPECT_TRUE(fresh[0].second);  // its contact was learned
  EXPECT_TRUE(f.members.TakeFresh().empty());
}

TEST(Membership, ChoosesAtMostFanoutLiveReachableMembers) {
  GossipOptions o = Options();
  o.max_members = 10;
  o.fanout = 2;
  GossipStats stats;
  Membership members(o, &stats, [](const std::string&) {});
  for (const char* id : {"b", "c", "d", "e"}) members.AcceptSender(From(id, 1, 1), 100);
  Membership::NeighbourChange change = members.RefreshNeighbours(100);
  EXPECT_EQ(change.joined.size(), 2u);
  EXPECT_TRUE(change.unlinked.empty());
  for (const Member* m : change.joined) EXPECT_TRUE(m->chosen);
  // Dead members are unchosen, and live ones take their place.
  for (const char* id : {"b", "c", "d", "e"}) {
    const Member* m = members.Find(id);
    if (!m->chosen) members.AcceptSender(From(id, 1, 2), 1500);
  }
  change = members.RefreshNeighbours(1500);
  EXPECT_EQ(change.joined.size(), 2u);
  EXPECT_EQ(change.unlinked.size(), 2u);
}

// NO_PUSH on a frame to a member is the negation of PushesTo, which must agree with Targets():
// a chosen member is pushed to, and of the members that chose this node, the 2 x fanout of the
// lowest ranks.
TEST(Membership, PushesToAgreesWithTargets) {
  GossipOptions o = Options();
  o.max_members = 10;
  o.fanout = 1;
  GossipStats stats;
  Membership members(o, &stats, [](const std::string&) {});
  for (const char* id : {"b", "c", "d", "e", "f"}) {
    WireHeader h = From(id, 1, 1);
    h.flags |= kWireFlagNeighbour;  // it chose this node
    members.AcceptSender(h, 100);
  }
  members.AcceptSender(From("g", 1, 1), 100);
  ASSERT_EQ(members.RefreshNeighbours(100).joined.size(), 1u);
  int pushed = 0;
  const std::vector<LinkTarget> targets = members.Targets(100);
  for (const LinkTarget& t : targets) {
    SCOPED_TRACE(t.member_id);
    EXPECT_EQ(members.PushesTo(t.endpoint, 100), t.push);
    pushed += t.push;
  }
  EXPECT_EQ(pushed, 3);  // the chosen one and 2 x fanout inbound
  bool g_linked = false;
  for (const LinkTarget& t : targets) g_linked |= t.member_id == "g";
  EXPECT_EQ(members.PushesTo("tcp://g:1", 100), g_linked);  // linked only if chosen
  EXPECT_FALSE(members.PushesTo("tcp://nobody:1", 100));
}

// Whether a member's deltas may come here: a version 6 frame says so by NO_PUSH (or its
// absence); a member of an older version is taken to push, as before.
TEST(Membership, DeltasFromFollowTheLatestFrame) {
  Fixture f;
  WireHeader h = From("b", 1, 1);
  h.version = 6;
  h.flags |= kWireFlagNoPush;
  const Member* b = f.members.AcceptSender(h, 100);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(f.members.DeltasFrom(*b));
  h.flags &= ~kWireFlagNoPush;
  f.members.AcceptSender(h, 110);
  EXPECT_TRUE(f.members.DeltasFrom(*b));
  h.version = 5;  // a version 5 node: the flag means nothing to it
  h.flags |= kWireFlagNoPush;
  f.members.AcceptSender(h, 120);
  EXPECT_TRUE(f.members.DeltasFrom(*b));
}

}  // namespace
}  // namespace peerbloom
