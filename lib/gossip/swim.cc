// SWIM with Lifeguard (swim.h): probes, indirect probes, suspicion and refutation, and the
// piggybacked events.
#include <algorithm>
#include <cmath>
#include <utility>

#include "peerbloom/swim.h"

namespace peerbloom {
namespace {

// A message only for what it carries: an ack no probe waits for (sequence number 0 is never
// a probe's).
SwimMessage AckOfNoProbe() {
  SwimMessage m;
  m.kind = SwimKind::kAck;
  return m;
}

}  // namespace

Status ValidateSwimOptions(const SwimOptions& o) {
  if (o.self.empty()) return Status::InvalidArgument("swim: no node id");
  if (o.probe_interval_ms <= 0 || o.probe_timeout_ms <= 0 ||
      o.probe_timeout_ms >= o.probe_interval_ms) {
    return Status::InvalidArgument("swim: the probe timeout must be below the probe interval");
  }
  if (!(o.suspicion_mult > 0) || !(o.suspicion_max_mult >= 1)) {
    return Status::InvalidArgument("swim: suspicion multipliers out of range");
  }
  if (o.retransmit_mult == 0 || o.max_events_per_message == 0 || o.max_events_per_message > 255) {
    return Status::InvalidArgument("swim: retransmits and events per message must be positive");
  }
  return Status::Ok();
}

SwimMembership::SwimMembership(SwimOptions options) : o_(std::move(options)), rng_(o_.rng_seed) {}

void SwimMembership::AddMember(const std::string& id, int64_t now_ms) {
  if (id == o_.self || members_.contains(id)) return;
  members_.emplace(id, Member{});
  // A random place in the probe order, so a member added late is not always probed last:
  // it swaps with the member there, which moves to the end.
  order_.push_back(id);
  const size_t at = std::uniform_int_distribution<size_t>(0, order_.size() - 1)(rng_);
  std::swap(order_[at], order_.back());
  if (!probes_scheduled_) {
    probes_scheduled_ = true;
    next_probe_ms_ = now_ms;
  }
}

SwimState SwimMembership::StateOf(std::string_view id) const {
  if (id == o_.self) return SwimState::kAlive;
  const auto it = members_.find(std::string(id));
  return it == members_.end() ? SwimState::kDead : it->second.state;
}

void SwimMembership::OnTick(int64_t now_ms) {
  ProbeTimeouts(now_ms);
  SuspicionTimeouts(now_ms);
  if (probes_scheduled_ && now_ms >= next_probe_ms_) StartProbe(now_ms);
}

int64_t SwimMembership::NextDeadline() const {
  int64_t t = probes_scheduled_ ? next_probe_ms_ : INT64_MAX;
  if (probing_) t = std::min(t, probe_.indirect_sent ? probe_.ends_at_ms : probe_.indirect_at_ms);
  for (const std::string& id : suspects_) {
    t = std::min(t, members_.at(id).suspect_deadline_ms);
  }
  return t;
}

// The members in a shuffled order, each once per round; the dead are skipped and dropped
// from the order when it is shuffled again.
std::string SwimMembership::NextTarget() {
  for (size_t tries = 0; tries <= order_.size(); ++tries) {
    if (next_ >= order_.size()) {
      std::erase_if(
          order_, [&](const std::string& id) { return members_.at(id).state == SwimState::kDead; });
      std::shuffle(order_.begin(), order_.end(), rng_);
      next_ = 0;
      if (order_.empty()) return "";
    }
    const std::string& id = order_[next_++];
    if (members_.at(id).state != SwimState::kDead) return id;
  }
  return "";
}

void SwimMembership::StartProbe(int64_t now_ms) {
  next_probe_ms_ = now_ms + Scaled(o_.probe_interval_ms);
  std::erase_if(relayed_, [&](const auto& r) { return r.second.expires_ms <= now_ms; });
  const std::string target = NextTarget();
  if (target.empty()) return;
  probe_ = Probe{target, next_seq_++, now_ms + Scaled(o_.probe_timeout_ms), next_probe_ms_};
  probing_ = true;
  ++stats_.probes;
  SwimMessage ping;
  ping.kind = SwimKind::kPing;
  ping.seq = probe_.seq;
  Send(target, std::move(ping));
}

void SwimMembership::ProbeTimeouts(int64_t now_ms) {
  if (!probing_) return;
  if (!probe_.indirect_sent && now_ms >= probe_.indirect_at_ms) {
    probe_.indirect_sent = true;
    for (const std::string& helper : RandomOthers(probe_.target, o_.indirect_probes)) {
      SwimMessage req;
      req.kind = SwimKind::kPingReq;
      req.seq = probe_.seq;
      req.target = probe_.target;
      ++stats_.indirect_probes;
      Send(helper, std::move(req));
    }
  }
  if (now_ms < probe_.ends_at_ms) return;
  probing_ = false;
  health_ = std::min(health_ + 1, o_.max_health_score);  // no answer at all: maybe it is us
  const auto it = members_.find(probe_.target);
  if (it == members_.end() || it->second.state != SwimState::kAlive) return;
  ++stats_.suspicions;
  Apply({probe_.target, SwimState::kSuspect, it->second.incarnation, o_.self}, o_.self, now_ms);
}

void SwimMembership::SuspicionTimeouts(int64_t now_ms) {
  std::vector<std::string> expired;
  for (const std::string& id : suspects_) {
    if (members_.at(id).suspect_deadline_ms <= now_ms) expired.push_back(id);
  }
  for (const std::string& id : expired) {
    Apply({id, SwimState::kDead, members_.at(id).incarnation, ""}, o_.self, now_ms);
  }
}

void SwimMembership::OnMessage(const std::string& from, const SwimMessage& message,
                               int64_t now_ms) {
  for (const SwimEvent& e : message.events) Apply(e, from, now_ms);
  // A member suspected or dead here that writes to this node is alive: it is told at once
  // (the reply carries its suspicion or death, see Piggyback) and refutes it. A ping's ack
  // carries it anyway.
  if (message.kind != SwimKind::kPing) {
    const auto it = members_.find(from);
    if (it != members_.end() && it->second.state != SwimState::kAlive) {
      Send(from, AckOfNoProbe());
    }
  }
  switch (message.kind) {
    case SwimKind::kPing: {
      SwimMessage ack;
      ack.kind = SwimKind::kAck;
      ack.seq = message.seq;
      Send(from, std::move(ack));
      return;
    }
    case SwimKind::kAck:
      OnAck(message.seq, now_ms);
      return;
    case SwimKind::kPingReq: {
      if (message.target == o_.self) return;
      const uint64_t seq = next_seq_++;
      relayed_[seq] = Relayed{from, message.seq, now_ms + Scaled(o_.probe_interval_ms)};
      SwimMessage ping;
      ping.kind = SwimKind::kPing;
      ping.seq = seq;
      Send(message.target, std::move(ping));
      return;
    }
  }
}

void SwimMembership::OnAck(uint64_t seq, int64_t now_ms) {
  if (probing_ && seq == probe_.seq) {
    probing_ = false;
    if (health_ > 0) --health_;
    return;
  }
  const auto it = relayed_.find(seq);
  if (it == relayed_.end() || it->second.expires_ms < now_ms) return;
  SwimMessage ack;
  ack.kind = SwimKind::kAck;
  ack.seq = it->second.requester_seq;
  const std::string requester = it->second.requester;
  relayed_.erase(it);
  Send(requester, std::move(ack));
}

void SwimMembership::Apply(const SwimEvent& e, const std::string& from, int64_t now_ms) {
  if (e.node == o_.self) {
    if (e.state != SwimState::kAlive && e.incarnation >= incarnation_) {
      Refute(e.incarnation, now_ms);
      // The refutation goes out at once, to the accuser (its timer started first) and to a
      // few others, each on an ack of no probe: waiting for this node's next probe would
      // leave it to one message, and a stalled node's probes are stretched.
      std::vector<std::string> to = RandomOthers(e.by, o_.indirect_probes);
      if (!e.by.empty() && members_.contains(e.by)) to.push_back(e.by);
      for (const std::string& id : to) Send(id, AckOfNoProbe());
    }
    return;
  }
  const auto it = members_.find(e.node);
  if (it == members_.end()) return;  // who may be a member is the caller's
  Member& m = it->second;
  switch (e.state) {
    case SwimState::kAlive:
      if (e.incarnation <= m.incarnation) return;
      if (m.state == SwimState::kSuspect) std::erase(suspects_, e.node);
      if (m.state == SwimState::kDead &&
          std::find(order_.begin(), order_.end(), e.node) == order_.end()) {
        order_.push_back(e.node);  // refuted its death: probed again
      }
      m = Member{SwimState::kAlive, e.incarnation, 0, 0, {}};
      Gossip(e);
      return;
    case SwimState::kSuspect:
      ApplySuspect(&m, e, from, now_ms);
      return;
    case SwimState::kDead:
      if (m.state == SwimState::kDead || e.incarnation < m.incarnation) return;
      if (m.state == SwimState::kSuspect) std::erase(suspects_, e.node);
      m.state = SwimState::kDead;
      m.incarnation = e.incarnation;
      ++stats_.deaths;
      Gossip(e);
      return;
  }
}

// A suspicion of a member alive at that incarnation starts its timer; one more of the same
// incarnation by another accuser is a confirmation that shortens it (Lifeguard).
void SwimMembership::ApplySuspect(Member* m, const SwimEvent& e, const std::string& from,
                                  int64_t now_ms) {
  if (m->state == SwimState::kDead || e.incarnation < m->incarnation) return;
  const std::string& by = e.by.empty() ? from : e.by;
  if (m->state == SwimState::kSuspect && e.incarnation == m->incarnation) {
    if (std::find(m->confirmations.begin(), m->confirmations.end(), by) != m->confirmations.end() ||
        m->confirmations.size() > o_.indirect_probes) {
      return;
    }
    m->confirmations.push_back(by);
    m->suspect_deadline_ms = m->suspect_since_ms + SuspicionTimeout(m->confirmations.size() - 1);
    if (by == o_.self) Gossip(e);  // its own accusation: others count it as well
    return;
  }
  if (m->state != SwimState::kSuspect) suspects_.push_back(e.node);
  m->state = SwimState::kSuspect;
  m->incarnation = e.incarnation;
  m->suspect_since_ms = now_ms;
  m->confirmations = {by};
  m->suspect_deadline_ms = now_ms + SuspicionTimeout(0);
  Gossip(e);
}

void SwimMembership::Refute(uint64_t heard, int64_t /*now_ms*/) {
  incarnation_ = std::max(incarnation_, heard) + 1;
  ++stats_.refutations;
  Gossip({o_.self, SwimState::kAlive, incarnation_, ""});
}

// Lifeguard: from the longest timeout with no confirmation down to the shortest once the
// expected number of independent suspicions (indirect_probes, fewer in a small cluster)
// arrived, falling with the log of the confirmations.
int64_t SwimMembership::SuspicionTimeout(size_t confirmations) const {
  const double n = static_cast<double>(members_.size() + 1);
  const double min =
      o_.suspicion_mult * std::max(1.0, std::log10(n)) * static_cast<double>(o_.probe_interval_ms);
  const double max = min * o_.suspicion_max_mult;
  const double expected = std::min(static_cast<double>(o_.indirect_probes), std::max(0.0, n - 2.0));
  if (expected < 1.0) return static_cast<int64_t>(min);
  const double frac = std::log(static_cast<double>(confirmations) + 1.0) / std::log(expected + 1.0);
  return static_cast<int64_t>(std::max(min, max - frac * (max - min)));
}

unsigned SwimMembership::Retransmits() const {
  const double n = static_cast<double>(members_.size() + 1);
  return o_.retransmit_mult * static_cast<unsigned>(std::ceil(std::log10(n + 1.0)));
}

void SwimMembership::Gossip(SwimEvent e) {
  if (e.node != o_.self) changes_.push_back(e);
  std::erase_if(queue_, [&](const Pending& p) {
    return p.event.node == e.node && p.event.incarnation <= e.incarnation;
  });
  queue_.push_back(Pending{std::move(e), Retransmits()});
}

// The buddy system first (a suspect hears of its suspicion in the ping itself), then the
// queued events that have ridden least.
void SwimMembership::Piggyback(const std::string& to, SwimMessage* m) {
  const auto it = members_.find(to);
  if (it != members_.end() && it->second.state == SwimState::kSuspect) {
    m->events.push_back(
        {to, SwimState::kSuspect, it->second.incarnation, it->second.confirmations.front()});
  } else if (it != members_.end() && it->second.state == SwimState::kDead) {
    // Writing to a member held dead (it probed this node): it learns it and refutes.
    m->events.push_back({to, SwimState::kDead, it->second.incarnation, ""});
  }
  std::stable_sort(queue_.begin(), queue_.end(),
                   [](const Pending& a, const Pending& b) { return a.left > b.left; });
  for (Pending& p : queue_) {
    if (m->events.size() >= o_.max_events_per_message) break;
    if (p.event.node == to && p.event.state != SwimState::kAlive) continue;  // sent above
    m->events.push_back(p.event);
    --p.left;
  }
  std::erase_if(queue_, [](const Pending& p) { return p.left == 0; });
}

void SwimMembership::Send(const std::string& to, SwimMessage m) {
  Piggyback(to, &m);
  ++stats_.messages_sent;
  stats_.events_sent += m.events.size();
  sends_.push_back(SwimSend{to, std::move(m)});
}

std::vector<SwimEvent> SwimMembership::TakeChanges() {
  std::vector<SwimEvent> out;
  out.swap(changes_);
  return out;
}

std::vector<SwimSend> SwimMembership::TakeSends() {
  std::vector<SwimSend> out;
  out.swap(sends_);
  return out;
}

// Up to `count` members alive here, other than `exclude`, at random.
std::vector<std::string> SwimMembership::RandomOthers(const std::string& exclude, size_t count) {
  std::vector<std::string> out;
  if (order_.empty()) return out;
  std::uniform_int_distribution<size_t> pick(0, order_.size() - 1);
  for (size_t tries = 0; tries < 4 * count + 8 && out.size() < count; ++tries) {
    const std::string& id = order_[pick(rng_)];
    if (id == exclude || members_.at(id).state != SwimState::kAlive) continue;
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

}  // namespace peerbloom
