// The summaries held of peers, their recent deltas and encoded bytes.
#include "lib/gossip/peer_summaries.h"

#include <utility>

namespace peerbloom {

PeerSummaries::PeerSummaries(const GossipOptions& options)
    : recent_delta_bytes_(options.recent_delta_bytes),
      encoded_cache_bytes_(options.encoded_cache_bytes) {}

const HeldSummary* PeerSummaries::Find(std::string_view id) const {
  auto it = held_.find(id);
  return it == held_.end() ? nullptr : &it->second;
}

bool PeerSummaries::HoldsEpoch(std::string_view id, uint64_t epoch) const {
  const HeldSummary* h = Find(id);
  return h != nullptr && h->held && h->epoch == epoch;
}

uint64_t PeerSummaries::digest(std::string_view id) const { return index_.digest(Find(id)->slot); }
unsigned PeerSummaries::k(std::string_view id) const { return index_.k(Find(id)->slot); }
unsigned PeerSummaries::log2_bits(std::string_view id) const {
  return index_.log2_bits(Find(id)->slot);
}
unsigned PeerSummaries::multiplier(std::string_view id) const {
  return index_.multiplier(Find(id)->slot);
}

void PeerSummaries::SetOwner(PeerIndex::Slot slot, const std::string& id) {
  if (slot_owner_.size() <= slot) slot_owner_.resize(slot + 1);
  slot_owner_[slot] = id;
}

void PeerSummaries::Store(const std::string& id, const Summary& s, int64_t now_ms) {
  HeldSummary& h = held_[id];
  if (h.slot == PeerIndex::kNoSlot) {
    h.slot = index_.Insert(s.filter);
    SetOwner(h.slot, id);
  } else {
    (void)index_.Replace(h.slot, s.filter);  // the slot is ours and in use
  }
  h.held = true;
  h.epoch = s.epoch;
  h.version = s.version;
  h.estimated_items = s.estimated_items;
  h.key_scheme = s.key_scheme;
  h.received_ms = now_ms;
  h.recent.Clear();
  h.state_sig.clear();
}

bool PeerSummaries::ApplyDelta(const std::string& id, const SummaryDelta& d, std::string_view bytes,
                               int64_t now_ms, std::string_view state_sig,
                               std::string_view delta_sig) {
  HeldSummary& h = held_[id];
  if (!index_.Flip(h.slot, d.flipped).ok()) return false;
  if (index_.digest(h.slot) != d.result_digest) {
    (void)index_.Flip(h.slot, d.flipped);  // undo: the same positions, known in range
    return false;
  }
  h.version = d.version;
  h.estimated_items = d.estimated_items;
  h.received_ms = now_ms;
  ClearEncoded(&h);
  h.recent.Add(d.base_version, d.version, bytes, recent_delta_bytes_, state_sig, delta_sig);
  h.state_sig.assign(state_sig);
  return true;
}

void PeerSummaries::SetStateSig(const std::string& id, std::string_view state_sig) {
  held_[id].state_sig.assign(state_sig);
}

void PeerSummaries::Drop(const std::string& id) {
  auto it = held_.find(id);
  if (it == held_.end()) return;
  HeldSummary& h = it->second;
  EraseSlot(h.slot);
  h.slot = PeerIndex::kNoSlot;
  ClearEncoded(&h);
  h.held = false;
  h.state_sig.clear();
  h.epoch = 0;
  h.version = 0;
  h.estimated_items = 0;
}

void PeerSummaries::ForgetDeltas(const std::string& id) {
  auto it = held_.find(id);
  if (it == held_.end()) return;
  ClearEncoded(&it->second);
  it->second.recent.Clear();
}

void PeerSummaries::Erase(const std::string& id) {
  Drop(id);
  held_.erase(id);
}

void PeerSummaries::ClearEncoded(HeldSummary* h) {
  encoded_bytes_ -= h->encoded.size();
  h->encoded.clear();
  h->encoded.shrink_to_fit();
}

void PeerSummaries::SetEncoded(const std::string& id, std::string_view bytes) {
  HeldSummary& h = held_[id];
  ClearEncoded(&h);
  if (encoded_bytes_ + bytes.size() > encoded_cache_bytes_) return;
  h.encoded.assign(bytes);
  encoded_bytes_ += bytes.size();
}

bool PeerSummaries::Encoded(const std::string& id, std::string* codec_bytes) {
  const HeldSummary* h = Find(id);
  if (h == nullptr || !h->held) return false;
  if (!h->encoded.empty()) {
    *codec_bytes = h->encoded;
    return true;
  }
  Summary s;
  if (!Extract(id, &s).ok() || !EncodeSummary(s, codec_bytes).ok()) return false;
  SetEncoded(id, *codec_bytes);
  return true;
}

Status PeerSummaries::Extract(std::string_view id, Summary* out) const {
  const HeldSummary* h = Find(id);
  if (h == nullptr || !h->held) {
    return Status::NotFound("no summary of node '" + std::string(id) + "'");
  }
  out->origin = std::string(id);
  out->epoch = h->epoch;  // a stand-in keeps its own epoch: never relabelled
  out->version = h->version;
  out->key_scheme = h->key_scheme;
  out->hash_scheme = HashScheme::kSipHash13x2;
  out->estimated_items = h->estimated_items;
  return index_.Extract(h->slot, &out->filter);
}

std::vector<const CachedDelta*> PeerSummaries::DeltasFrom(std::string_view id,
                                                          uint64_t have) const {
  const HeldSummary* h = Find(id);
  if (h == nullptr) return {};
  return h->recent.From(have, h->version);
}

PeerIndex::Slot PeerSummaries::InsertForeign(const std::string& id,
                                             std::unique_ptr<ForeignSummary> summary) {
  const PeerIndex::Slot slot = index_.InsertForeign(std::move(summary));
  SetOwner(slot, id);
  return slot;
}

void PeerSummaries::EraseSlot(PeerIndex::Slot slot) {
  if (slot == PeerIndex::kNoSlot) return;
  index_.Erase(slot);
  slot_owner_[slot].clear();
}

uint64_t PeerSummaries::BitsHeldExcept(std::string_view id) const {
  uint64_t bits = 0;
  for (const auto& [member, h] : held_) {
    if (!h.held || member == id) continue;
    bits += uint64_t{index_.multiplier(h.slot)} << index_.log2_bits(h.slot);
  }
  return bits;
}

const std::string& PeerSummaries::Owner(PeerIndex::Slot slot) const {
  static const std::string kNone;
  return slot < slot_owner_.size() ? slot_owner_[slot] : kNone;
}

}  // namespace peerbloom
