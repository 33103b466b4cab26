// PeerIndex: slots over bit-sliced groups plus foreign summaries. See peer_index.h.
#include "peerbloom/peer_index.h"

#include <algorithm>
#include <bit>
#include <string>

#include "lib/index/slice_group.h"
#include "peerbloom/bloom_probe.h"
#include "peerbloom/summary.h"

namespace peerbloom {

struct PeerIndex::Group : index_internal::SliceGroup {
  using SliceGroup::SliceGroup;
};

struct PeerIndex::SlotInfo {
  bool used = false;
  Group* group = nullptr;  // bit-sliced slots
  uint32_t column = 0;
  uint64_t digest = 0;
  std::unique_ptr<ForeignSummary> foreign;
};

namespace {

// Appends the slots of the set bits of `acc`, the AND for columns 64 * word ... + 63.
template <typename GroupT>
void EmitColumns(const GroupT& g, uint64_t acc, size_t word, std::vector<uint32_t>* out) {
  while (acc != 0) {
    const size_t column = word * 64 + static_cast<size_t>(std::countr_zero(acc));
    acc &= acc - 1;
    const uint32_t slot = g.ColumnSlot(column);
    if (slot != index_internal::kFreeColumn) out->push_back(slot);
  }
}

template <typename GroupT>
void ComputePositions(const GroupT& g, const KeyHash& h, uint64_t* positions) {
  ForEachProbe(h, g.k(), g.reduction(), [&positions](uint64_t pos) { *positions++ = pos; });
}

template <typename GroupT>
void QueryGroup(const GroupT& g, const uint64_t* positions, std::vector<uint32_t>* out) {
  for (size_t w = 0; w < g.words(); ++w) EmitColumns(g, g.AndRows(positions, w), w, out);
}

}  // namespace

PeerIndex::PeerIndex() = default;
PeerIndex::~PeerIndex() = default;

PeerIndex::Group* PeerIndex::FindOrAddGroup(const BloomFilter& filter) {
  for (const auto& g : groups_) {
    if (g->Holds(filter)) return g.get();
  }
  groups_.push_back(std::make_unique<Group>(filter.log2_bits(), filter.k(), filter.multiplier()));
  return groups_.back().get();
}

PeerIndex::Slot PeerIndex::AllocateSlot() {
  Slot slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<Slot>(slots_.size());
    slots_.emplace_back();
  }
  slots_[slot].used = true;
  ++in_use_;
  return slot;
}

void PeerIndex::Place(Slot slot, const BloomFilter& filter) {
  SlotInfo& info = slots_[slot];
  info.group = FindOrAddGroup(filter);
  info.column = info.group->AddColumn(slot);
  info.group->FillColumn(info.column, filter);
  info.digest = FilterDigest(filter);
}

void PeerIndex::Unplace(Slot slot) {
  SlotInfo& info = slots_[slot];
  if (info.group != nullptr) {
    Group* g = info.group;
    g->RemoveColumn(info.column);
    if (g->used() == 0) {
      std::erase_if(groups_, [g](const std::unique_ptr<Group>& p) { return p.get() == g; });
    }
  }
  info.group = nullptr;
  info.foreign.reset();
  info.digest = 0;
}

PeerIndex::Slot PeerIndex::Insert(const BloomFilter& filter) {
  const Slot slot = AllocateSlot();
  Place(slot, filter);
  return slot;
}

PeerIndex::Slot PeerIndex::InsertForeign(std::unique_ptr<ForeignSummary> summary) {
  const Slot slot = AllocateSlot();
  slots_[slot].foreign = std::move(summary);
  return slot;
}

const PeerIndex::SlotInfo* PeerIndex::SlicedSlot(Slot slot) const noexcept {
  if (slot >= slots_.size() || !slots_[slot].used || slots_[slot].group == nullptr) {
    return nullptr;
  }
  return &slots_[slot];
}

Status PeerIndex::Replace(Slot slot, const BloomFilter& filter) {
  const SlotInfo* info = SlicedSlot(slot);
  if (info == nullptr) {
    return Status::InvalidArgument("slot '" + std::to_string(slot) + "' holds no summary");
  }
  if (info->group->Holds(filter)) {
    info->group->WriteColumn(info->column, filter);
    slots_[slot].digest = FilterDigest(filter);
    return Status::Ok();
  }
  Unplace(slot);
  Place(slot, filter);
  return Status::Ok();
}

Status PeerIndex::Flip(Slot slot, std::span<const uint64_t> positions) {
  const SlotInfo* info = SlicedSlot(slot);
  if (info == nullptr) {
    return Status::InvalidArgument("slot '" + std::to_string(slot) + "' holds no summary");
  }
  Group* g = info->group;
  for (uint64_t pos : positions) {
    if (pos >= g->bits()) {
      return Status::InvalidArgument("position '" + std::to_string(pos) + "' outside a filter of " +
                                     SizeText(g->log2_bits(), g->multiplier()) + " bits");
    }
  }
  uint64_t digest = info->digest;
  for (uint64_t pos : positions) {
    g->FlipBit(info->column, pos);
    digest ^= PositionDigest(pos);
  }
  slots_[slot].digest = digest;
  return Status::Ok();
}

void PeerIndex::Erase(Slot slot) {
  if (slot >= slots_.size() || !slots_[slot].used) return;
  Unplace(slot);
  slots_[slot].used = false;
  free_slots_.push_back(slot);
  --in_use_;
}

bool PeerIndex::InUse(Slot slot) const noexcept {
  return slot < slots_.size() && slots_[slot].used;
}

bool PeerIndex::IsForeign(Slot slot) const noexcept {
  return InUse(slot) && slots_[slot].foreign != nullptr;
}

unsigned PeerIndex::log2_bits(Slot slot) const noexcept {
  const SlotInfo* info = SlicedSlot(slot);
  return info == nullptr ? 0 : info->group->log2_bits();
}

unsigned PeerIndex::multiplier(Slot slot) const noexcept {
  const SlotInfo* info = SlicedSlot(slot);
  return info == nullptr ? 0 : info->group->multiplier();
}

unsigned PeerIndex::k(Slot slot) const noexcept {
  const SlotInfo* info = SlicedSlot(slot);
  return info == nullptr ? 0 : info->group->k();
}

uint64_t PeerIndex::digest(Slot slot) const noexcept {
  const SlotInfo* info = SlicedSlot(slot);
  return info == nullptr ? 0 : info->digest;
}

Status PeerIndex::Extract(Slot slot, BloomFilter* out) const {
  const SlotInfo* info = SlicedSlot(slot);
  if (info == nullptr) {
    return Status::InvalidArgument("slot '" + std::to_string(slot) + "' holds no summary");
  }
  *out = BloomFilter(info->group->log2_bits(), info->group->k(), info->group->multiplier());
  info->group->ReadColumn(info->column, out);
  return Status::Ok();
}

void PeerIndex::Query(const KeyHash& hash, std::vector<Slot>* out) const {
  uint64_t positions[kMaxHashes];
  for (const auto& g : groups_) {
    ComputePositions(*g, hash, positions);
    QueryGroup(*g, positions, out);
  }
}

void PeerIndex::Prefetch(const KeyHash& hash) const noexcept {
  uint64_t positions[kMaxHashes];
  for (const auto& g : groups_) {
    ComputePositions(*g, hash, positions);
    for (unsigned j = 0; j < g->k(); ++j) __builtin_prefetch(g->Row(positions[j]));
  }
}

void PeerIndex::QueryKey(std::string_view key_bytes, const KeyHash& hash,
                         std::vector<Slot>* out) const {
  Query(hash, out);
  for (Slot s = 0; s < slots_.size(); ++s) {
    const SlotInfo& info = slots_[s];
    if (info.used && info.foreign != nullptr && info.foreign->MayContain(key_bytes, hash)) {
      out->push_back(s);
    }
  }
}

void PeerIndex::QueryBatch(std::span<const KeyHash> hashes, std::vector<uint32_t>* offsets,
                           std::vector<Slot>* slots) const {
  // Keys go in runs: first every row address of the run is computed and prefetched, then the
  // rows are ANDed. 16 keys x k rows keeps enough misses in flight to cover DRAM latency.
  constexpr size_t kRun = 16;
  const size_t ngroups = groups_.size();
  std::vector<uint64_t> positions(kRun * std::max<size_t>(ngroups, 1) * kMaxHashes);
  offsets->clear();
  slots->clear();
  offsets->reserve(hashes.size() + 1);
  for (size_t start = 0; start < hashes.size(); start += kRun) {
    const size_t n = std::min(kRun, hashes.size() - start);
    for (size_t gi = 0; gi < ngroups; ++gi) {
      const Group& g = *groups_[gi];
      for (size_t i = 0; i < n; ++i) {
        uint64_t* pos = &positions[(gi * kRun + i) * kMaxHashes];
        ComputePositions(g, hashes[start + i], pos);
        for (unsigned j = 0; j < g.k(); ++j) __builtin_prefetch(g.Row(pos[j]));
      }
    }
    for (size_t i = 0; i < n; ++i) {
      offsets->push_back(static_cast<uint32_t>(slots->size()));
      for (size_t gi = 0; gi < ngroups; ++gi) {
        QueryGroup(*groups_[gi], &positions[(gi * kRun + i) * kMaxHashes], slots);
      }
    }
  }
  offsets->push_back(static_cast<uint32_t>(slots->size()));
}

size_t PeerIndex::groups() const noexcept { return groups_.size(); }

size_t PeerIndex::memory_bytes() const noexcept {
  size_t bytes = slots_.capacity() * sizeof(SlotInfo) + free_slots_.capacity() * sizeof(Slot);
  for (const auto& g : groups_) bytes += g->memory_bytes() + sizeof(Group);
  for (const auto& s : slots_) {
    if (s.foreign != nullptr) bytes += s.foreign->memory_bytes();
  }
  return bytes;
}

}  // namespace peerbloom
