// Signed origins on the simulated network: a cluster whose nodes sign converges exactly as
// one that does not (deltas relayed with their signatures, full summaries re-encoded by
// holders and served with the origin's state signature), and the policy of GossipOptions
// decides what happens to unsigned origins (docs/security.md, "Signed origins").
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "peerbloom/origin_sig.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom {
namespace {

using sim::NodeSpec;
using sim::SimCluster;

// Sign keys per node id; `signers` sign, `listed` are in everyone's ring.
struct Keys {
  std::map<std::string, std::shared_ptr<const OriginSigner>> signers;
  std::shared_ptr<SignKeyRing> ring = std::make_shared<SignKeyRing>();
  std::map<std::string, std::string> ring_public;  // the key listed in `ring` per node id

  void Add(const std::string& id, bool listed) {
    std::string pub, sec;
    EXPECT_TRUE(GenerateSignKeyPair(&pub, &sec).ok());
    std::unique_ptr<OriginSigner> signer;
    EXPECT_TRUE(OriginSigner::Create(sec, &signer).ok());
    signers[id] = std::move(signer);
    if (listed) {
      EXPECT_TRUE(ring->Add(id, pub).ok());
      ring_public[id] = pub;
    }
  }
};

std::string Id(int i) { return "node" + std::to_string(i); }

// A line: node i seeds on node i - 1, so what node 0 says reaches node n-1 only by relays.
void AddLine(SimCluster* c, int n) {
  for (int i = 0; i < n; ++i) {
    NodeSpec s;
    s.id = Id(i);
    if (i > 0) s.seeds = {Id(i - 1)};
    c->AddNode(s);
  }
}

void AddKeys(SimCluster* c, int node, int count, int first = 0) {
  for (int i = first; i < first + count; ++i) {
    c->AddKey(node, "http://n" + std::to_string(node) + "/" + std::to_string(i));
  }
  c->Publish(node);
}

void UseKeys(SimCluster* c, const Keys* keys, bool require) {
  c->SetBootHook([keys, require](GossipOptions* o) {
    auto it = keys->signers.find(o->node_id);
    if (it != keys->signers.end()) o->signer = it->second;
    o->sign_keys = keys->ring;
    o->require_signatures = require && o->signer != nullptr;  // it needs a signer
  });
}

TEST(SignedOrigins, SigningClusterConvergesThroughRelaysAndLateJoiners) {
  Keys keys;
  for (int i = 0; i < 5; ++i) keys.Add(Id(i), true);
  SimCluster c;
  UseKeys(&c, &keys, /*require=*/true);
  AddLine(&c, 4);
  for (int i = 0; i < 4; ++i) AddKeys(&c, i, 100);
  ASSERT_TRUE(c.RunUntilTrue([&] { return c.AllHoldAll(); }, 60000)) << "at " << c.now();
  for (int round = 1; round <= 3; ++round) {  // deltas, relayed hop by hop
    for (int i = 0; i < 4; ++i) AddKeys(&c, i, 20, 100 * round);
    ASSERT_TRUE(c.RunUntilTrue([&] { return c.AllHoldAll(); }, 60000)) << "round " << round;
  }
  // A joiner at the far end gets node0's summary from a holder that re-encoded it.
  NodeSpec late;
  late.id = Id(4);
  late.seeds = {Id(3)};
  c.AddNode(late);
  ASSERT_TRUE(c.RunUntilTrue([&] { return c.AllHoldAll(); }, 60000)) << "at " << c.now();
  EXPECT_EQ(c.FalseNegatives(), 0u);
  for (int i = 0; i < 5; ++i) {
    const GossipStats& st = c.engine(i).stats();
    EXPECT_EQ(st.signatures_refused, 0u) << Id(i);
    EXPECT_EQ(st.epochs_refused, 0u) << Id(i);
    EXPECT_GT(st.signatures_verified, 0u) << Id(i);
  }
  EXPECT_GT(c.engine(4).stats().full_summaries_in, 0u);
}

TEST(SignedOrigins, UnsignedOriginWithoutAKeyIsTakenUnlessRequired) {
  for (const bool require : {false, true}) {
    Keys keys;
    for (int i = 0; i < 2; ++i) keys.Add(Id(i), true);  // node2 has neither signer nor key
    SimCluster c;
    UseKeys(&c, &keys, require);
    AddLine(&c, 3);
    for (int i = 0; i < 3; ++i) AddKeys(&c, i, 50);
    c.RunFor(30000);
    Summary s;
    const Status held = c.engine(0).GetSummary(Id(2), &s);
    if (require) {
      EXPECT_FALSE(held.ok()) << "node2 is unsigned";
      EXPECT_GT(c.engine(1).stats().signatures_refused, 0u);
    } else {
      EXPECT_TRUE(held.ok()) << held.ToString();
      EXPECT_EQ(c.engine(1).stats().signatures_refused, 0u);
    }
  }
}

TEST(SignedOrigins, ListedOriginThatDoesNotSignIsRefused) {
  Keys keys;
  for (int i = 0; i < 3; ++i) keys.Add(Id(i), true);
  keys.signers.erase(Id(2));  // listed, but its engine has no signer (an old binary)
  SimCluster c;
  UseKeys(&c, &keys, /*require=*/false);
  AddLine(&c, 3);
  for (int i = 0; i < 3; ++i) AddKeys(&c, i, 50);
  ASSERT_TRUE(c.RunUntilTrue(
      [&] {
        Summary s;
        return c.engine(2).GetSummary(Id(0), &s).ok() && c.engine(0).GetSummary(Id(1), &s).ok();
      },
      60000));
  c.RunFor(10000);
  Summary s;
  EXPECT_FALSE(c.engine(1).GetSummary(Id(2), &s).ok());
  EXPECT_GT(c.engine(1).stats().signatures_refused, 0u);
}

// A sign key rotated by SIGHUP: node2 signs with a new key that the others do not list yet
// (its summaries are refused); once every engine is given a ring with the new key beside the
// old one, node2's summary is taken, without restarting anyone.
TEST(SignedOrigins, RotatedSignKeyIsTakenAfterSetSignKeys) {
  Keys keys;
  for (int i = 0; i < 3; ++i) keys.Add(Id(i), true);
  std::string new_pub, new_sec;
  ASSERT_TRUE(GenerateSignKeyPair(&new_pub, &new_sec).ok());
  std::unique_ptr<OriginSigner> new_signer;
  ASSERT_TRUE(OriginSigner::Create(new_sec, &new_signer).ok());
  keys.signers[Id(2)] = std::move(new_signer);  // the ring still has node2's old key only
  SimCluster c;
  UseKeys(&c, &keys, /*require=*/false);
  AddLine(&c, 3);
  for (int i = 0; i < 3; ++i) AddKeys(&c, i, 50);
  ASSERT_TRUE(c.RunUntilTrue(
      [&] {
        Summary s;
        return c.engine(2).GetSummary(Id(0), &s).ok() && c.engine(1).stats().signatures_refused > 0;
      },
      60000));
  Summary s;
  EXPECT_FALSE(c.engine(1).GetSummary(Id(2), &s).ok()) << "signed by a key not listed yet";

  auto rotated = std::make_shared<SignKeyRing>();
  for (const auto& [id, signer] : keys.signers)
    ASSERT_TRUE(rotated->Add(id, signer->public_key()).ok());
  ASSERT_TRUE(
      rotated->Add(Id(2), keys.ring_public.at(Id(2))).ok());  // old and new, as in a rollover
  for (int i = 0; i < 3; ++i) c.engine(i).SetSignKeys(rotated);
  AddKeys(&c, 2, 10, 50);
  ASSERT_TRUE(c.RunUntilTrue([&] { return c.AllHoldAll(); }, 60000)) << "at " << c.now();
  EXPECT_EQ(c.FalseNegatives(), 0u);
}

}  // namespace
}  // namespace peerbloom
