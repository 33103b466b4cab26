// The relay state machine (relay.h, docs/relay.md).
//
// Per message this node keeps, for each link, whether the link has shown it holds the message
// (it sent the payload, announced it or asked for it). Every link that is not known to hold a
// message is told once (payload or announcement) and announced to again after 1, 2, 4, ...
// ticks until it shows it holds it or the rounds run out: that is what makes a lost payload,
// a lost announcement or a filter false positive a repair instead of a missed delivery.
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <utility>

#include "peerbloom/relay.h"
#include "peerbloom/summary.h"

namespace peerbloom {

struct RelayNode::Link {
  std::string peer;
  KeyHash hash;
  bool present = true;  // still configured
  bool up = true;
  bool eager = true;
  std::vector<RelayRef> pending_ihave;  // flushed as one IHAVE per link per event
};

struct RelayNode::Cached {
  RelayData received;     // as it arrived (hops, filter of the path so far)
  std::string out_bytes;  // the DATA packet this node forwards (hops + 1, itself added)
  uint64_t cached_ms = 0;
  int first_from = -1;       // the link of the first copy (-1: our own message)
  bool forwardable = false;  // hops < hop_limit
  std::vector<uint8_t> has;  // per link: it holds the message
  unsigned rounds = 0;       // announcement rounds done
  uint64_t next_round_tick = 0;
};

struct RelayNode::Missing {
  std::string origin;
  uint64_t id = 0;
  int first_link = -1;  // the link whose announcement made the entry (counted there)
  std::vector<std::pair<uint32_t, int>> announcers;  // (hops, link), fewest hops first
  uint64_t deadline_ms = 0;
  unsigned attempts = 0;
};

Status ValidateRelayOptions(const RelayOptions& o) {
  if (!IsValidNodeId(o.node_id)) return Status::InvalidArgument("invalid relay node id");
  if (o.hop_limit == 0 || o.hop_limit > kMaxRelayHopLimit) {
    return Status::InvalidArgument("relay hop limit '" + std::to_string(o.hop_limit) +
                                   "' out of range");
  }
  if (!(o.filter_fp_rate > 0 && o.filter_fp_rate < 1)) {
    return Status::InvalidArgument("relay filter false-positive rate out of range");
  }
  if (o.max_graft_attempts == 0 || o.announce_rounds == 0 || o.announce_rounds > 32) {
    return Status::InvalidArgument("relay repair rounds out of range");
  }
  if (o.max_cached == 0 || o.seen_ttl_ms < o.cache_ttl_ms) {
    return Status::InvalidArgument("relay cache must be non-empty and within the seen window");
  }
  return ValidateFlowOptions(o.flow);
}

RelayNode::RelayNode(const RelayOptions& options)
    : options_(options),
      self_hash_(IndexHasher(options.key).Hash(options.node_id)),
      filter_size_(SizeVisitedFilter(options.hop_limit, options.filter_fp_rate)),
      next_id_(options.first_id),
      seen_(options.seen_ttl_ms, options.max_cached * 4),
      meter_(options.flow, options.meter_key.value_or(options.key)) {}

RelayNode::~RelayNode() = default;

std::string RelayNode::Key(std::string_view origin, uint64_t id) {
  std::string key(origin);
  key.push_back('\0');
  key.append(std::to_string(id));
  return key;
}

// Links keep their index for life (per-message state is indexed by it): a dropped link is
// marked absent and revived in place if it comes back.
void RelayNode::SetLinks(const std::vector<std::string>& peers) {
  for (Link& l : links_) l.present = false;
  const IndexHasher hasher(options_.key);
  for (const std::string& peer : peers) {
    if (peer == options_.node_id) continue;
    const int i = LinkIndex(peer);
    if (i >= 0) {
      links_[i].present = true;
      continue;
    }
    Link l;
    l.peer = peer;
    l.hash = hasher.Hash(peer);
    links_.push_back(std::move(l));
  }
}

void RelayNode::SetLinkUp(std::string_view peer, bool up) {
  const int i = LinkIndex(peer);
  if (i >= 0) links_[i].up = up;
}

int RelayNode::LinkIndex(std::string_view peer) const {
  for (size_t i = 0; i < links_.size(); ++i) {
    if (links_[i].peer == peer) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> RelayNode::EagerLinks() const {
  std::vector<std::string> out;
  for (const Link& l : links_) {
    if (l.present && l.eager) out.push_back(l.peer);
  }
  return out;
}

Status RelayNode::Broadcast(std::string_view payload, uint64_t now_ms, uint64_t* id) {
  if (payload.size() > options_.limits.max_payload_bytes) {
    return Status::InvalidArgument("broadcast payload of '" + std::to_string(payload.size()) +
                                   "' bytes exceeds the limit '" +
                                   std::to_string(options_.limits.max_payload_bytes) + "'");
  }
  if (!meter_.Admit(options_.node_id, now_ms)) {
    ++stats_.throttled;
    return Status::ResourceExhausted("broadcast rate of this node exceeded");
  }
  RelayData d;
  d.origin = options_.node_id;
  d.id = next_id_++;
  d.hop_limit = options_.hop_limit;
  d.filter_k = static_cast<uint8_t>(filter_size_.k);
  d.filter.assign(filter_size_.bytes, '\0');
  d.payload.assign(payload);
  if (options_.sign) {
    const Status s = options_.sign(&d);
    if (!s.ok()) {
      --next_id_;
      return s;
    }
  }
  if (id != nullptr) *id = d.id;
  (void)seen_.Insert(d.origin, d.id, now_ms);
  Accept(-1, std::move(d), now_ms);
  FlushAnnouncements();
  return Status::Ok();
}

void RelayNode::OnPacket(std::string_view from, std::string_view bytes, uint64_t now_ms) {
  const int link = LinkIndex(from);
  if (link < 0 || !links_[link].present) {
    ++stats_.unknown_link;
    return;
  }
  links_[link].up = true;  // it spoke
  RelayPacket p;
  if (!DecodeRelayPacket(bytes, options_.limits, &p).ok()) {
    ++stats_.malformed;
    return;
  }
  switch (p.kind) {
    case RelayKind::kData:
      OnData(link, std::move(p.data), now_ms);
      break;
    case RelayKind::kIHave:
      OnIHave(link, p.refs, now_ms);
      break;
    case RelayKind::kGraft:
      OnGraft(link, p.refs, now_ms);
      break;
    case RelayKind::kPrune:
      links_[link].eager = false;
      break;
  }
  FlushAnnouncements();
}

void RelayNode::OnData(int from, RelayData data, uint64_t now_ms) {
  const std::string key = Key(data.origin, data.id);
  const auto it = cache_.find(key);
  if (it != cache_.end()) MarkHas(it->second.get(), from);
  if (seen_.Contains(data.origin, data.id)) {
    if (it == cache_.end()) {
      ++stats_.stale;
      return;
    }
    ++stats_.duplicates;
    OnDuplicate(from, data.hops, it->second.get());
    Shorten(from, it->second.get(), data.hops, now_ms);
    return;
  }
  // Checked before the meter, so forged copies do not use up the origin's rate. Not recorded
  // as seen: the genuine message of that id is still taken (from this link or another).
  if (options_.verify && !options_.verify(data)) {
    ++stats_.signatures_refused;
    return;
  }
  if (!meter_.Admit(data.origin, now_ms)) {
    // Remembered as seen so that announcements of it are not chased.
    ++stats_.throttled;
    (void)seen_.Insert(data.origin, data.id, now_ms);
    if (const auto m = missing_.find(key); m != missing_.end()) EraseMissing(m);
    return;
  }
  (void)seen_.Insert(data.origin, data.id, now_ms);
  links_[from].eager = true;  // the first copy came this way: the link is on the tree
  Accept(from, std::move(data), now_ms);
}

// The false-positive rate of a filter as filled: (set bits / bits)^k.
double RelayNode::FilterFpRate(std::string_view filter, unsigned k) {
  uint64_t set = 0;
  for (const char c : filter) set += std::popcount(static_cast<unsigned char>(c));
  return std::pow(static_cast<double>(set) / (static_cast<double>(filter.size()) * 8), k);
}

// A second copy: the two copies came by two paths, which close a cycle through this node, so
// either of the two links can leave the tree without disconnecting anyone (Plumtree's PRUNE).
// The one whose copy travelled more hops goes: after repairs have grafted links at random,
// this brings the tree back towards shortest paths instead of letting it grow deeper.
void RelayNode::OnDuplicate(int from, uint32_t hops, Cached* msg) {
  int drop = from;
  if (hops < msg->received.hops && msg->first_from >= 0 && msg->first_from != from) {
    drop = msg->first_from;
    msg->first_from = from;
  }
  if (!links_[drop].eager) return;
  links_[drop].eager = false;
  SendControl(drop, RelayKind::kPrune, {});
  ++stats_.prunes_sent;
}

// Delivers, caches and forwards a message seen for the first time (from < 0: our own).
void RelayNode::EraseMissing(std::map<std::string, Missing>::iterator it) {
  const auto n = missing_by_link_.find(it->second.first_link);
  if (n != missing_by_link_.end() && --n->second == 0) missing_by_link_.erase(n);
  missing_.erase(it);
}

void RelayNode::Accept(int from, RelayData data, uint64_t now_ms) {
  const std::string key = Key(data.origin, data.id);
  if (const auto m = missing_.find(key); m != missing_.end()) EraseMissing(m);
  deliveries_.push_back({data.origin, data.id, data.hops, data.payload});
  ++stats_.delivered;

  auto msg = std::make_unique<Cached>();
  msg->cached_ms = now_ms;
  msg->has.assign(links_.size(), 0);
  if (from >= 0) msg->has[from] = 1;
  msg->first_from = from;
  msg->received = std::move(data);
  PrepareForward(msg.get());
  Cached* raw = msg.get();
  const std::string origin = raw->received.origin;
  const size_t bytes = raw->received.payload.size() + raw->out_bytes.size();
  cache_.emplace(key, std::move(msg));
  cache_order_.push_back(key);
  cached_bytes_ += bytes;
  OriginCache& oc = cache_by_origin_[origin];
  oc.bytes += bytes;
  oc.keys.push_back(key);
  while (cache_order_.size() > options_.max_cached) {
    Uncache(cache_order_.front());
    cache_order_.pop_front();
  }
  if (raw->forwardable) {
    Forward(from, raw, now_ms);
    if (options_.announce_rounds > 1) announcing_.push_back(key);
  }
  // After forwarding: a message over a bound by itself still goes on, it is only not kept.
  EvictOverBytes(origin);
}

// Removes a cached message and its bytes from the counts (no-op when already gone).
void RelayNode::Uncache(const std::string& key) {
  const auto it = cache_.find(key);
  if (it == cache_.end()) return;
  const RelayData& d = it->second->received;
  const size_t bytes = d.payload.size() + it->second->out_bytes.size();
  cached_bytes_ -= bytes;
  const auto oc = cache_by_origin_.find(d.origin);
  if (oc != cache_by_origin_.end()) {
    // Messages leave in caching order, which is also each origin's order: this one is the
    // front of its origin's keys unless the origin's own eviction took it off already.
    if (!oc->second.keys.empty() && oc->second.keys.front() == key) oc->second.keys.pop_front();
    oc->second.bytes -= bytes;
    if (oc->second.bytes == 0 && oc->second.keys.empty()) cache_by_origin_.erase(oc);
  }
  cache_.erase(it);
}

// The origin's oldest go first while it is over its own bound, then the cluster's oldest while
// the total is over. Keys of evicted messages stay in the order deques until they reach the
// front (Uncache of a key already gone does nothing).
void RelayNode::EvictOverBytes(const std::string& origin) {
  auto oc = cache_by_origin_.find(origin);
  while (oc != cache_by_origin_.end() && oc->second.bytes > options_.max_cached_bytes_per_origin &&
         !oc->second.keys.empty()) {
    const std::string key = std::move(oc->second.keys.front());
    oc->second.keys.pop_front();
    if (cache_.count(key) != 0) ++stats_.cache_evicted;
    Uncache(key);
    oc = cache_by_origin_.find(origin);
  }
  while (cached_bytes_ > options_.max_cached_bytes && !cache_order_.empty()) {
    if (cache_.count(cache_order_.front()) != 0) ++stats_.cache_evicted;
    Uncache(cache_order_.front());
    cache_order_.pop_front();
  }
}

// Builds the packet this node forwards: one more hop, itself added to the visited filter.
void RelayNode::PrepareForward(Cached* msg) {
  const RelayData& data = msg->received;
  msg->forwardable = data.hops < data.hop_limit;
  if (!msg->forwardable) {
    ++stats_.hop_limited;
    return;
  }
  RelayPacket out;
  out.data = data;
  out.data.hops = data.hops + 1;
  const uint64_t salt = VisitedFilterSalt(options_.key, data.origin, data.id);
  // A path longer than the filter was sized for (its size is capped) would fill it until
  // it named every neighbour; clearing it then keeps the most recent part of the path and
  // the false-positive rate bounded. Loops are still cut by the seen set.
  if (FilterFpRate(out.data.filter, data.filter_k) > 2 * options_.filter_fp_rate) {
    std::fill(out.data.filter.begin(), out.data.filter.end(), '\0');
    ++stats_.filter_resets;
  }
  VisitedFilterAdd(self_hash_, salt, data.filter_k, &out.data.filter);
  if (!EncodeRelayPacket(out, options_.limits, &msg->out_bytes).ok()) msg->forwardable = false;
}

// A message that came to this node by a long way round, announced (or sent again) by a
// neighbour that holds it fewer hops from the origin: this node could have had it by that
// neighbour, so it takes that hop count. The eager tree is shared by all origins, so its paths
// can be twice the shortest or more; without this, nodes near the limit on the tree would
// leave nodes unserved that are within the limit of the origin.
//  - A node that got the message at the limit forwards it now (it had forwarded nothing).
//  - A node in the upper half of the hop range announces the new count on every link, so
//    shorter counts spread to where they are needed. Nodes further from the limit keep
//    theirs: re-announcing every improvement would cost announcements everywhere.
void RelayNode::Shorten(int from, Cached* msg, uint32_t hops, uint64_t now_ms) {
  const uint32_t limit = msg->received.hop_limit;
  if (hops >= msg->received.hops || msg->received.hops < limit - limit / 2) return;
  const bool was_forwardable = msg->forwardable;
  msg->received.hops = hops;
  PrepareForward(msg);
  if (!msg->forwardable) return;
  ++stats_.shortened;
  if (!was_forwardable) {
    Forward(from, msg, now_ms);
    if (options_.announce_rounds > 1) {
      announcing_.push_back(Key(msg->received.origin, msg->received.id));
    }
    return;
  }
  for (size_t i = 0; i < links_.size(); ++i) {
    if (static_cast<int>(i) != from && links_[i].present && links_[i].up) {
      QueueAnnouncement(static_cast<int>(i), *msg);
    }
  }
}

// Pushes the payload on eager links whose peer the visited filter does not name and
// announces it on every other link (the sender included: that tells it we hold it).
void RelayNode::Forward(int from, Cached* msg, uint64_t /*now_ms*/) {
  SizeLinkState(msg);  // links may have been added since it was cached
  const RelayData& d = msg->received;
  const uint64_t salt = VisitedFilterSalt(options_.key, d.origin, d.id);
  for (size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    if (!l.present || !l.up) continue;
    const int link = static_cast<int>(i);
    if (link != from && l.eager) {
      if (!VisitedFilterMayContain(l.hash, salt, d.filter_k, d.filter)) {
        SendData(link, *msg);
        continue;
      }
      ++stats_.filter_skips;
    }
    QueueAnnouncement(link, *msg);
  }
  msg->rounds = 1;
  msg->next_round_tick = tick_ + 1;
}

// Links added after the message was cached get their per-link state on first use.
void RelayNode::SizeLinkState(Cached* msg) const {
  if (msg->has.size() < links_.size()) msg->has.resize(links_.size(), 0);
}

void RelayNode::MarkHas(Cached* msg, int link) {
  SizeLinkState(msg);
  msg->has[link] = 1;
}

void RelayNode::OnIHave(int from, const std::vector<RelayRef>& refs, uint64_t now_ms) {
  for (const RelayRef& ref : refs) {
    const std::string key = Key(ref.origin, ref.id);
    const auto it = cache_.find(key);
    if (it != cache_.end()) {
      MarkHas(it->second.get(), from);
      Shorten(from, it->second.get(), ref.hops, now_ms);
    }
    if (seen_.Contains(ref.origin, ref.id)) continue;
    // Bounded: announcements of messages that never come (invented by a member) must not
    // fill the table or make this node send GRAFTs without end. One link may hold a quarter.
    if (missing_.find(key) == missing_.end() &&
        (missing_.size() >= options_.max_missing ||
         missing_by_link_[from] >= std::max<size_t>(1, options_.max_missing / 4))) {
      ++stats_.ihave_dropped;
      continue;
    }
    auto [m, fresh] = missing_.try_emplace(key);
    if (fresh) {
      m->second.first_link = from;
      ++missing_by_link_[from];
      m->second.origin = ref.origin;
      m->second.id = ref.id;
      // The eager copy is usually on its way. Deeper nodes wait longer, so that after a lost
      // payload the node nearest the loss repairs first and its subtree gets the payload
      // from it on the tree instead of each node repairing on its own.
      m->second.deadline_ms =
          now_ms + options_.graft_timeout_ms + uint64_t{ref.hops} * options_.graft_hop_delay_ms;
    }
    auto& a = m->second.announcers;
    const bool known =
        std::any_of(a.begin(), a.end(), [from](const auto& e) { return e.second == from; });
    if (!known) {
      a.insert(std::upper_bound(a.begin(), a.end(), std::pair{ref.hops, from}), {ref.hops, from});
    }
  }
}

void RelayNode::OnGraft(int from, const std::vector<RelayRef>& refs, uint64_t /*now_ms*/) {
  links_[from].eager = true;
  for (const RelayRef& ref : refs) {
    const auto it = cache_.find(Key(ref.origin, ref.id));
    if (it == cache_.end() || !it->second->forwardable) {
      ++stats_.grafts_missed;
      continue;
    }
    SendData(from, *it->second);
    ++stats_.grafts_served;
  }
}

void RelayNode::SendData(int link, const Cached& msg) {
  sends_.push_back({links_[link].peer, RelayKind::kData, msg.out_bytes});
  ++stats_.payloads_sent;
}

void RelayNode::SendControl(int link, RelayKind kind, std::vector<RelayRef> refs) {
  RelayPacket p;
  p.kind = kind;
  p.refs = std::move(refs);
  std::string bytes;
  if (!EncodeRelayPacket(p, options_.limits, &bytes).ok()) return;
  sends_.push_back({links_[link].peer, kind, std::move(bytes)});
  ++stats_.control_packets_sent;
}

void RelayNode::QueueAnnouncement(int link, const Cached& msg) {
  links_[link].pending_ihave.push_back(
      {msg.received.origin, msg.received.id, msg.received.hops + 1});
  ++stats_.announcements_sent;
}

void RelayNode::FlushAnnouncements() {
  for (size_t i = 0; i < links_.size(); ++i) {
    std::vector<RelayRef>& pending = links_[i].pending_ihave;
    while (!pending.empty()) {
      const size_t n = std::min(pending.size(), options_.limits.max_refs);
      std::vector<RelayRef> batch(pending.end() - static_cast<ptrdiff_t>(n), pending.end());
      pending.resize(pending.size() - n);
      SendControl(static_cast<int>(i), RelayKind::kIHave, std::move(batch));
    }
  }
}

void RelayNode::OnTick(uint64_t now_ms) {
  ++tick_;
  AnnounceDue(now_ms);
  GraftDue(now_ms);
  ExpireCache(now_ms);
  FlushAnnouncements();
}

void RelayNode::Keep(size_t* kept, size_t j) {
  if (*kept != j) announcing_[*kept] = std::move(announcing_[j]);
  ++*kept;
}

// Announces again, with doubling gaps, on every link not known to hold the message. Only
// messages with rounds left are visited (announcing_), not the whole cache.
void RelayNode::AnnounceDue(uint64_t /*now_ms*/) {
  size_t kept = 0;
  for (size_t j = 0; j < announcing_.size(); ++j) {
    const auto it = cache_.find(announcing_[j]);
    if (it == cache_.end() || it->second->rounds >= options_.announce_rounds) continue;
    Cached* msg = it->second.get();
    if (msg->next_round_tick > tick_) {
      Keep(&kept, j);
      continue;
    }
    SizeLinkState(msg);
    for (size_t i = 0; i < links_.size(); ++i) {
      if (msg->has[i] || !links_[i].present || !links_[i].up) continue;
      QueueAnnouncement(static_cast<int>(i), *msg);
    }
    msg->next_round_tick = tick_ + (uint64_t{1} << msg->rounds);
    ++msg->rounds;
    Keep(&kept, j);
  }
  announcing_.resize(kept);
}

// Asks for announced messages whose payload did not come, rotating over the announcers.
void RelayNode::GraftDue(uint64_t now_ms) {
  std::vector<std::vector<RelayRef>> grafts(links_.size());
  for (auto it = missing_.begin(); it != missing_.end();) {
    Missing& m = it->second;
    if (m.deadline_ms > now_ms) {
      ++it;
      continue;
    }
    if (m.attempts >= options_.max_graft_attempts || m.announcers.empty()) {
      ++stats_.gave_up;
      const auto next = std::next(it);
      EraseMissing(it);
      it = next;
      continue;
    }
    const int link = m.announcers[m.attempts % m.announcers.size()].second;
    ++m.attempts;
    m.deadline_ms = now_ms + options_.graft_timeout_ms;
    if (links_[link].present && links_[link].up) grafts[link].push_back({m.origin, m.id, 0});
    ++it;
  }
  for (size_t i = 0; i < grafts.size(); ++i) {
    if (grafts[i].empty()) continue;
    links_[i].eager = true;
    stats_.grafts_sent += grafts[i].size();
    SendControl(static_cast<int>(i), RelayKind::kGraft, std::move(grafts[i]));
  }
}

void RelayNode::ExpireCache(uint64_t now_ms) {
  while (!cache_order_.empty()) {
    const auto it = cache_.find(cache_order_.front());
    if (it != cache_.end() && it->second->cached_ms + options_.cache_ttl_ms > now_ms) break;
    Uncache(cache_order_.front());
    cache_order_.pop_front();
  }
  seen_.Expire(now_ms);
}

std::vector<RelaySend> RelayNode::TakeSends() { return std::exchange(sends_, {}); }

std::vector<RelayDelivery> RelayNode::TakeDeliveries() { return std::exchange(deliveries_, {}); }

}  // namespace peerbloom
