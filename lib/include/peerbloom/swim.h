// SWIM membership with the Lifeguard refinements (Das, Gupta, Motivala 2002; Dadgar, Phillips,
// Currey 2018): failure detection whose cost per node does not grow with the cluster.
//
// Each probe interval a node pings one member, taken in turn from a shuffled list. No ack
// within the probe timeout: it asks `indirect_probes` other members to ping the target for
// it. No ack, direct or relayed, by the end of the interval: the target becomes suspect, and
// the suspicion spreads. A suspect that hears of it refutes it by raising its incarnation;
// one that does not within the suspicion timeout is declared dead. The timeout starts at
// `suspicion_max` and falls towards `suspicion_min` as independent members confirm the
// suspicion (Lifeguard's dogpile), both scaled with log10 N. A node whose own probes fail
// raises its local health score, which stretches its probe timeout and interval (Lifeguard's
// local health awareness): a slow or stalled node suspects others less. State changes
// (alive, suspect, dead, each with an incarnation) ride on pings and acks, each sent about
// `retransmit_mult` x log10 N times; the ping to a suspect carries its suspicion first (the
// buddy system), so it learns of it at once.
//
// SwimMembership is the state machine of one node: transport-agnostic (it takes messages and
// returns sends), clock-injected (every call takes `now_ms`), deterministic for a seed. Its
// messages encode to a compact body (EncodeSwimMessage). Membership (who may be a member)
// is the caller's: it adds the members it knows.
//
// Thread-safety: none. Not copyable.
#ifndef PEERBLOOM_SWIM_H_
#define PEERBLOOM_SWIM_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom {

enum class SwimState : uint8_t { kAlive = 0, kSuspect = 1, kDead = 2 };

// A state change of `node`, as gossiped.
struct SwimEvent {
  std::string node;
  SwimState state = SwimState::kAlive;
  uint64_t incarnation = 0;
  std::string by;  // kSuspect: the member that suspects it (independent confirmations count)
  bool operator==(const SwimEvent&) const = default;
};

enum class SwimKind : uint8_t {
  kPing = 0,     // answer with an ack of `seq`
  kAck = 1,      // answers the ping (or the indirect probe) of `seq`
  kPingReq = 2,  // ping `target` for me and send me its ack as an ack of `seq`
};

struct SwimMessage {
  SwimKind kind = SwimKind::kPing;
  uint64_t seq = 0;
  std::string target;             // kPingReq only
  std::vector<SwimEvent> events;  // piggybacked state changes
  bool operator==(const SwimMessage&) const = default;
};

// The body of a message: kind u8 | seq varint | target str8 (kPingReq) | count u8 |
// (node str8 | state u8 | incarnation varint | by str8 (kSuspect)) * count.
std::string EncodeSwimMessage(const SwimMessage& m);
// Corruption for bytes that are not exactly one message.
Status DecodeSwimMessage(std::string_view bytes, SwimMessage* out);

struct SwimOptions {
  std::string self;
  uint64_t rng_seed = 1;
  // Default: 1 s. One member probed per interval.
  int64_t probe_interval_ms = 1000;
  // Default: 500 ms. Wait for a direct ack before the indirect probes.
  int64_t probe_timeout_ms = 500;
  // Default: 3. Members asked to probe a target that did not answer.
  unsigned indirect_probes = 3;
  // Default: 2. The shortest suspicion timeout is suspicion_mult x max(1, log10 N) probe
  // intervals; the longest, suspicion_max_mult times that.
  double suspicion_mult = 2.0;
  double suspicion_max_mult = 3.0;
  // Default: 4. An event rides on retransmit_mult x ceil(log10(N + 1)) messages.
  unsigned retransmit_mult = 4;
  // Default: 32. Events on one message at most (each 10-40 bytes). With 8, a cluster of
  // 5,000 under churn queued more events than its messages carried, refutations came late
  // and live nodes were declared dead by the thousand (bench/swim_sim_bench).
  size_t max_events_per_message = 32;
  // Default: 8. The local health score's ceiling: probe timeout and interval are multiplied
  // by score + 1.
  unsigned max_health_score = 8;
};
Status ValidateSwimOptions(const SwimOptions& o);

struct SwimSend {
  std::string to;
  SwimMessage message;
};

struct SwimStats {
  uint64_t probes = 0;
  uint64_t indirect_probes = 0;  // ping-reqs sent
  uint64_t suspicions = 0;       // members this node suspected itself
  uint64_t refutations = 0;      // times this node raised its incarnation
  uint64_t deaths = 0;           // members this node saw declared dead
  uint64_t events_sent = 0;      // piggybacked events
  uint64_t messages_sent = 0;
};

class SwimMembership {
 public:
  // REQUIRES: ValidateSwimOptions(options).ok().
  explicit SwimMembership(SwimOptions options);
  SwimMembership(const SwimMembership&) = delete;
  SwimMembership& operator=(const SwimMembership&) = delete;

  // A member the caller knows of, alive at incarnation 0 unless already known.
  void AddMember(const std::string& id, int64_t now_ms);
  // Runs what is due at `now_ms`: probes, their timeouts, suspicion timeouts.
  void OnTick(int64_t now_ms);
  int64_t NextDeadline() const;
  // A message from member `from`.
  void OnMessage(const std::string& from, const SwimMessage& message, int64_t now_ms);
  // What to send, in order; the caller delivers or loses them.
  std::vector<SwimSend> TakeSends();
  // The members' state changes this node applied since the last call, in order (what the
  // caller acts on: a member dead here, alive again).
  std::vector<SwimEvent> TakeChanges();

  // kDead for a node never heard of.
  SwimState StateOf(std::string_view id) const;
  uint64_t incarnation() const { return incarnation_; }
  unsigned health_score() const { return health_; }
  size_t members() const { return members_.size(); }
  const SwimStats& stats() const { return stats_; }

 private:
  struct Member {
    SwimState state = SwimState::kAlive;
    uint64_t incarnation = 0;
    int64_t suspect_since_ms = 0;
    int64_t suspect_deadline_ms = 0;
    std::vector<std::string> confirmations;  // independent suspicions heard
  };
  struct Pending {  // a gossiped event and how often it still rides
    SwimEvent event;
    unsigned left = 0;
  };
  struct Probe {  // this node's probe under way
    std::string target;
    uint64_t seq = 0;
    int64_t indirect_at_ms = 0;  // when the indirect probes go out
    int64_t ends_at_ms = 0;      // suspect the target if still unanswered
    bool acked = false;
    bool indirect_sent = false;
  };
  struct Relayed {  // an indirect probe this node makes for another
    std::string requester;
    uint64_t requester_seq = 0;
    int64_t expires_ms = 0;
  };

  void StartProbe(int64_t now_ms);
  void ProbeTimeouts(int64_t now_ms);
  void SuspicionTimeouts(int64_t now_ms);
  std::string NextTarget();
  void Send(const std::string& to, SwimMessage m);
  void Piggyback(const std::string& to, SwimMessage* m);
  // Applies an event heard or made here; queues it to gossip when it changes anything.
  void Apply(const SwimEvent& e, const std::string& from, int64_t now_ms);
  void ApplySuspect(Member* m, const SwimEvent& e, const std::string& from, int64_t now_ms);
  void Refute(uint64_t heard, int64_t now_ms);
  void Gossip(SwimEvent e);
  void OnAck(uint64_t seq, int64_t now_ms);
  int64_t SuspicionTimeout(size_t confirmations) const;
  unsigned Retransmits() const;
  std::vector<std::string> RandomOthers(const std::string& exclude, size_t count);
  int64_t Scaled(int64_t ms) const { return ms * (health_ + 1); }

  SwimOptions o_;
  std::mt19937_64 rng_;
  uint64_t incarnation_ = 0;
  unsigned health_ = 0;
  std::unordered_map<std::string, Member> members_;
  std::vector<std::string> suspects_;  // members in kSuspect, with a deadline
  std::vector<std::string> order_;     // probe order, reshuffled each round
  size_t next_ = 0;
  bool probes_scheduled_ = false;  // from the first member on
  int64_t next_probe_ms_ = 0;
  uint64_t next_seq_ = 1;
  Probe probe_;
  bool probing_ = false;
  std::unordered_map<uint64_t, Relayed> relayed_;  // this node's ping seq -> requester
  std::vector<Pending> queue_;
  std::vector<SwimSend> sends_;
  std::vector<SwimEvent> changes_;
  SwimStats stats_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_SWIM_H_
