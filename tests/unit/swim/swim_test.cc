// SWIM membership (peerbloom/swim.h): the message body, and the protocol on a simulated
// network (tests/support/swim_sim.h) with a fixed seed, so each run is the same run.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "peerbloom/swim.h"
#include "tests/support/swim_sim.h"

namespace peerbloom {
namespace {

using sim::SwimNet;
using sim::SwimSim;

SwimMessage Sample() {
  SwimMessage m;
  m.kind = SwimKind::kPingReq;
  m.seq = 300;
  m.target = "node-b";
  m.events = {{"node-c", SwimState::kSuspect, 7, "node-a"},
              {"node-d", SwimState::kDead, 1, ""},
              {"node-e", SwimState::kAlive, 129, ""}};
  return m;
}

TEST(SwimCodec, RoundTripsEveryKindAndState) {
  for (const SwimKind kind : {SwimKind::kPing, SwimKind::kAck, SwimKind::kPingReq}) {
    SwimMessage m = Sample();
    m.kind = kind;
    if (kind != SwimKind::kPingReq) m.target.clear();
    SwimMessage back;
    ASSERT_TRUE(DecodeSwimMessage(EncodeSwimMessage(m), &back).ok());
    EXPECT_EQ(back, m);
  }
}

TEST(SwimCodec, EveryTruncationAndTrailingByteIsRefused) {
  const std::string bytes = EncodeSwimMessage(Sample());
  SwimMessage out;
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeSwimMessage(bytes.substr(0, n), &out).ok()) << n;
  }
  EXPECT_FALSE(DecodeSwimMessage(bytes + "x", &out).ok());
  std::string bad_state =
      EncodeSwimMessage({SwimKind::kAck, 1, "", {{"x", SwimState::kAlive, 0, ""}}});
  bad_state[bad_state.size() - 2] = 3;  // the state byte
  EXPECT_FALSE(DecodeSwimMessage(bad_state, &out).ok());
}

TEST(SwimOptionsCheck, RefusesWhatCannotWork) {
  SwimOptions o;
  o.self = "a";
  EXPECT_TRUE(ValidateSwimOptions(o).ok());
  SwimOptions t = o;
  t.probe_timeout_ms = t.probe_interval_ms;
  EXPECT_FALSE(ValidateSwimOptions(t).ok());
  t = o;
  t.self.clear();
  EXPECT_FALSE(ValidateSwimOptions(t).ok());
  t = o;
  t.max_events_per_message = 0;
  EXPECT_FALSE(ValidateSwimOptions(t).ok());
}

// A quiet cluster: each node probes exactly one member per interval, every probe is
// answered, nobody is ever suspected.
TEST(SwimCluster, AQuietClusterProbesOncePerIntervalAndSuspectsNoOne) {
  SwimSim c(8, SwimNet{});
  c.RunUntil(60000);
  for (size_t i = 0; i < c.size(); ++i) {
    const SwimStats& s = c.member(i).stats();
    EXPECT_GE(s.probes, 60u) << i;
    EXPECT_LE(s.probes, 61u) << i;
    EXPECT_EQ(s.suspicions, 0u) << i;
    EXPECT_EQ(s.indirect_probes, 0u) << i;
    EXPECT_EQ(c.member(i).incarnation(), 0u) << i;
    for (size_t j = 0; j < c.size(); ++j) {
      EXPECT_EQ(c.member(i).StateOf(SwimSim::Id(j)), SwimState::kAlive) << i << " " << j;
    }
  }
}

// A killed node is declared dead by every other node, and by none before the shortest
// suspicion timeout after it stopped answering.
TEST(SwimCluster, AKilledNodeIsDeclaredDeadEverywhere) {
  SwimSim c(8, SwimNet{});
  std::map<size_t, int64_t> dead_at;  // observer -> when it declared n3 dead
  c.OnChange([&](size_t at, const SwimEvent& e) {
    if (e.node == "n3" && e.state == SwimState::kDead && !dead_at.contains(at)) {
      dead_at[at] = c.now();
    }
  });
  c.RunUntil(10000);
  c.Kill(3);
  c.RunUntil(40000);
  EXPECT_EQ(dead_at.size(), 7u);
  for (const auto& [at, t] : dead_at) {
    EXPECT_GE(t, 10000 + 2000) << at;  // suspicion_mult 2 x log10 8 (< 1) x 1 s
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (i != 3) {
      EXPECT_EQ(c.member(i).StateOf("n3"), SwimState::kDead) << i;
    }
  }
}

// A node stopped for 1.5 s is suspected, hears it when it resumes (the ping to a suspect
// carries its suspicion) and refutes before the timeout: nobody declares it dead.
TEST(SwimCluster, AStalledNodeRefutesItsSuspicion) {
  SwimSim c(8, SwimNet{});
  int deaths = 0, suspected = 0;
  c.OnChange([&](size_t, const SwimEvent& e) {
    deaths += e.state == SwimState::kDead;
    suspected += e.node == "n5" && e.state == SwimState::kSuspect;
  });
  c.RunUntil(10000);
  c.Stall(5, 1500);
  c.RunUntil(40000);
  EXPECT_GT(suspected, 0);  // the stall was noticed
  EXPECT_EQ(deaths, 0);
  EXPECT_GE(c.member(5).incarnation(), 1u);
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c.member(i).StateOf("n5"), SwimState::kAlive) << i;
  }
}

// Lifeguard: more independent accusers, a shorter suspicion.
TEST(SwimMembershipUnit, ConfirmationsShortenTheSuspicion) {
  auto deadline_after = [](size_t accusers) {
    SwimOptions o;
    o.self = "a";
    SwimMembership m(o);
    for (const char* id : {"b", "c", "d", "e", "f", "g", "h", "x"}) m.AddMember(id, 0);
    m.OnTick(0);  // the first probe; its deadlines are not the suspicion's
    for (size_t i = 0; i < accusers; ++i) {
      SwimMessage msg{
          SwimKind::kAck, 999, "", {{"x", SwimState::kSuspect, 0, std::string(1, 'b' + i)}}};
      m.OnMessage("b", msg, 100);
    }
    EXPECT_EQ(m.StateOf("x"), SwimState::kSuspect);
    int64_t t = 100;
    while (m.StateOf("x") == SwimState::kSuspect && t < 100000) {
      t = std::max(t + 1, m.NextDeadline());
      m.OnTick(t);
      for (const SwimSend& s : m.TakeSends()) (void)s;  // nobody answers
    }
    return t;
  };
  const int64_t one = deadline_after(1);
  const int64_t four = deadline_after(4);
  EXPECT_LT(four, one);
  EXPECT_GE(four, 100 + 2000);  // never below the shortest timeout (n = 9: 2 x 1 x 1 s)
  EXPECT_LE(one, 100 + 6000);   // nor above the longest (3 x the shortest)
}

// A node told it is dead refutes with a higher incarnation, and others take it back.
TEST(SwimMembershipUnit, ANodeToldItIsDeadRefutesAndIsTakenBack) {
  SwimOptions oa;
  oa.self = "a";
  SwimMembership a(oa);
  a.AddMember("b", 0);
  a.OnMessage("b", {SwimKind::kPing, 1, "", {{"a", SwimState::kDead, 0, ""}}}, 10);
  EXPECT_EQ(a.incarnation(), 1u);
  std::vector<SwimSend> sends = a.TakeSends();
  // The refutation at once to b, its only other member (an ack of no probe), then the ack of
  // the ping: both carry it.
  ASSERT_EQ(sends.size(), 2u);
  for (const SwimSend& send : sends) {
    EXPECT_EQ(send.to, "b");
    ASSERT_FALSE(send.message.events.empty());
    EXPECT_EQ(send.message.events[0], (SwimEvent{"a", SwimState::kAlive, 1, ""}));
  }
  EXPECT_EQ(sends[1].message.kind, SwimKind::kAck);
  EXPECT_EQ(sends[1].message.seq, 1u);

  SwimOptions ob;
  ob.self = "b";
  SwimMembership b(ob);
  b.AddMember("a", 0);
  b.OnMessage("c", {SwimKind::kAck, 5, "", {{"a", SwimState::kDead, 0, ""}}}, 10);
  EXPECT_EQ(b.StateOf("a"), SwimState::kDead);
  b.OnMessage("a", sends[1].message, 20);
  EXPECT_EQ(b.StateOf("a"), SwimState::kAlive);
}

// The buddy system: the ping to a suspect names its suspicion first.
TEST(SwimMembershipUnit, ThePingToASuspectCarriesItsSuspicion) {
  SwimOptions o;
  o.self = "a";
  SwimMembership m(o);
  m.AddMember("b", 0);
  m.OnMessage("c", {SwimKind::kAck, 5, "", {{"b", SwimState::kSuspect, 0, "c"}}}, 1);
  (void)m.TakeSends();
  m.OnTick(1);  // probes b, the only member
  const std::vector<SwimSend> sends = m.TakeSends();
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].to, "b");
  ASSERT_FALSE(sends[0].message.events.empty());
  EXPECT_EQ(sends[0].message.events[0], (SwimEvent{"b", SwimState::kSuspect, 0, "c"}));
}

}  // namespace
}  // namespace peerbloom
