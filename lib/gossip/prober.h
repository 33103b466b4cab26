// Prober: the probing half of the probe failure detector (docs/gossip.md, "Probe failure
// detection").
//
// Every probe interval (GossipOptions::probe_interval_ms) it pings one linked member that probes,
// taken in turn from a shuffled list of the links (every link once per turn). No ack within half an
// interval: it asks `indirect_probes` other linked members to ping the target and relay its ack. No
// ack at all by the end of the interval: the target is suspected (Membership::Suspect), and the
// engine announces the suspicion. It also answers the pings and ping-reqs of others, and pings a
// member whose suspicion it heard of (a confirmation: the ping tells the member it is
// suspected, so it refutes at once).
//
// Every probe frame also carries the versions of summaries this node took lately
// (Dissemination::TakePiggyback), so announcing a version costs no frame of its own.
//
// A relayed ack only keeps this node from raising a suspicion; it never clears one, since the
// relay's word is not the member's. Only the member's own frames and newer heartbeats do.
#ifndef PEERBLOOM_LIB_GOSSIP_PROBER_H_
#define PEERBLOOM_LIB_GOSSIP_PROBER_H_

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "lib/gossip/dissemination.h"
#include "lib/gossip/membership.h"
#include "lib/gossip/outbox.h"
#include "peerbloom/gossip.h"
#include "peerbloom/wire.h"

namespace peerbloom {

class Prober {
 public:
  // Uses node_id, wire_version, probe_interval_ms (ProbeIntervalMs), indirect_probes and
  // rng_seed of `options`.
  // The rest must outlive it. `versions`: the versions taken lately, which ride on every probe
  // frame sent.
  Prober(const GossipOptions& options, Membership* members, Dissemination* versions, Outbox* outbox,
         GossipStats* stats);
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  // Starts, escalates and ends this node's probe.
  void OnTick(int64_t now_ms);
  int64_t NextDeadline() const;
  // A probe frame from `sender`. Returns true when the sender says this node is suspected.
  bool OnProbe(const ProbeBody& probe, const Member& sender, int64_t now_ms);
  // Pings a member whose suspicion was heard of (at most once per interval per member).
  void Confirm(const Member& m, int64_t now_ms);

 private:
  struct Probe {
    std::string target;
    uint64_t seq = 0;
    int64_t indirect_at_ms = 0;
    int64_t ends_at_ms = 0;
    bool acked = false;
    bool indirect_sent = false;
  };
  struct Relayed {  // a ping sent for another node's indirect probe
    std::string requester;
    uint64_t requester_seq = 0;
    std::string target;
    int64_t expires_ms = 0;
  };

  void Start(int64_t now_ms);
  void Escalate(int64_t now_ms);
  void End(int64_t now_ms);
  // The next linked member that probes, in a shuffled turn.
  const Member* NextTarget(int64_t now_ms);
  // `contact`: the frame carries this node's endpoint and key (the member may not know them:
  // every ping does, so that a member that learned of this node from a relayed entry without
  // its contact, or forgot it, can answer).
  void Ping(const Member& to, uint64_t seq, bool suspected, int64_t now_ms);
  void Send(const Member& to, ProbeBody body, int64_t now_ms, bool contact = false);
  static constexpr size_t kVersionsPerProbe = 256;

  const std::string id_;
  const uint8_t wire_version_;
  const int64_t interval_ms_;
  const unsigned indirect_;
  Membership* const members_;
  Dissemination* const versions_;
  Outbox* const outbox_;
  GossipStats* const stats_;
  std::mt19937_64 rng_;
  std::vector<std::string> order_;
  size_t next_ = 0;
  int64_t next_probe_ms_ = 0;
  bool started_ = false;
  bool probing_ = false;
  Probe probe_;
  uint64_t next_seq_ = 1;
  std::unordered_map<uint64_t, Relayed> relayed_;
  std::unordered_map<std::string, int64_t> confirmed_ms_;  // last confirmation ping per member
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_PROBER_H_
