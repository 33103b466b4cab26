#include "peerbloom/squid_key_set.h"

#include <xxhash.h>

#include <cstring>

#include "peerbloom/byte_io.h"

namespace peerbloom {
namespace {

constexpr size_t kMinSlots = 16;

}  // namespace

SquidKeySet::SquidKeySet(const SipKey& seed) : seed_(seed), slots_(kMinSlots) {}

bool SquidKeySet::IsEmptySlot(const SquidKey& slot) noexcept {
  uint64_t a, b;
  std::memcpy(&a, slot.data(), 8);
  std::memcpy(&b, slot.data() + 8, 8);
  return (a | b) == 0;
}

size_t SquidKeySet::Home(const SquidKey& key) const noexcept {
  return SipHash64(1, 3, seed_, key.data(), key.size()) & (slots_.size() - 1);
}

size_t SquidKeySet::FindSlot(const SquidKey& key) const noexcept {
  const size_t mask = slots_.size() - 1;
  size_t i = Home(key);
  // Terminates: the load stays below 3/4, so an empty slot exists.
  while (!IsEmptySlot(slots_[i]) && slots_[i] != key) i = (i + 1) & mask;
  return i;
}

bool SquidKeySet::Contains(const SquidKey& key) const noexcept {
  if (IsEmptySlot(key)) return has_zero_key_;
  return !IsEmptySlot(slots_[FindSlot(key)]);
}

bool SquidKeySet::Insert(const SquidKey& key) {
  if (IsEmptySlot(key)) {
    if (has_zero_key_) return false;
    has_zero_key_ = true;
    return true;
  }
  size_t i = FindSlot(key);
  if (!IsEmptySlot(slots_[i])) return false;
  if ((size_ + 1) * 4 > slots_.size() * 3) {
    Rehash(slots_.size() * 2);
    i = FindSlot(key);
  }
  slots_[i] = key;
  ++size_;
  return true;
}

bool SquidKeySet::Erase(const SquidKey& key) {
  if (IsEmptySlot(key)) {
    const bool had = has_zero_key_;
    has_zero_key_ = false;
    return had;
  }
  const size_t i = FindSlot(key);
  if (IsEmptySlot(slots_[i])) return false;
  ShiftBack(i);
  --size_;
  if (slots_.size() > kMinSlots && size_ * 8 < slots_.size()) Rehash(slots_.size() / 2);
  return true;
}

// Backward-shift deletion (Knuth, TAOCP vol. 3, 6.4 Algorithm R): walk the cluster after the
// hole and move back every entry whose home does not lie cyclically in (hole, j].
void SquidKeySet::ShiftBack(size_t hole) noexcept {
  const size_t mask = slots_.size() - 1;
  size_t j = hole;
  for (;;) {
    j = (j + 1) & mask;
    if (IsEmptySlot(slots_[j])) break;
    const size_t home = Home(slots_[j]);
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = SquidKey{};
}

void SquidKeySet::Rehash(size_t new_slot_count) {
  std::vector<SquidKey> old(new_slot_count);
  old.swap(slots_);
  for (const SquidKey& key : old) {
    if (!IsEmptySlot(key)) slots_[FindSlot(key)] = key;
  }
}

void SquidKeySet::Clear() {
  std::vector<SquidKey>(kMinSlots).swap(slots_);
  size_ = 0;
  has_zero_key_ = false;
}

void SquidKeySet::EncodeTo(std::string* out) const {
  const size_t start = out->size();
  out->reserve(start + kHeaderBytes + 16 * size() + kTrailerBytes);
  out->append(kMagic, sizeof(kMagic));
  out->push_back(static_cast<char>(kFormatVersion));
  out->push_back(static_cast<char>(kFormatVersion));  // minimum reader version
  out->append(2, '\0');
  PutU64(out, size());
  ForEach([out](const SquidKey& key) {
    out->append(reinterpret_cast<const char*>(key.data()), key.size());
  });
  PutU64(out, XXH64(out->data() + start, out->size() - start, 0));
}

Status SquidKeySet::DecodeFrom(std::string_view bytes, size_t max_keys) {
  if (bytes.size() < kHeaderBytes + kTrailerBytes) {
    return Status::Corruption("key set snapshot of '" + std::to_string(bytes.size()) +
                              "' bytes is shorter than its header and checksum");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("key set snapshot has a bad magic");
  }
  const uint8_t min_reader = static_cast<uint8_t>(bytes[5]);
  if (min_reader > kFormatVersion) {
    return Status::NotSupported("key set snapshot needs reader version '" +
                                std::to_string(min_reader) + "'; this reader is '" +
                                std::to_string(kFormatVersion) + "'");
  }
  const uint64_t count = LoadFixed(bytes.data() + 8, 8);
  const size_t body = bytes.size() - kHeaderBytes - kTrailerBytes;
  if (body % 16 != 0 || count != body / 16) {
    return Status::Corruption("key set snapshot declares '" + std::to_string(count) +
                              "' keys but holds '" + std::to_string(body) + "' key bytes");
  }
  if (count > max_keys) {
    return Status::ResourceExhausted("key set snapshot holds '" + std::to_string(count) +
                                     "' keys, more than the limit of '" + std::to_string(max_keys) +
                                     "'");
  }
  const size_t checked = bytes.size() - kTrailerBytes;
  if (XXH64(bytes.data(), checked, 0) != LoadFixed(bytes.data() + checked, 8)) {
    return Status::Corruption("key set snapshot checksum mismatch");
  }
  SquidKeySet fresh(seed_);
  size_t slots = kMinSlots;
  while (slots * 3 < count * 4 + 4) slots *= 2;
  fresh.Rehash(slots);
  for (uint64_t i = 0; i < count; ++i) {
    SquidKey key;
    std::memcpy(key.data(), bytes.data() + kHeaderBytes + 16 * i, 16);
    if (!fresh.Insert(key)) {
      return Status::Corruption("key set snapshot repeats key '" + SquidKeyHex(key) + "'");
    }
  }
  *this = std::move(fresh);
  return Status::Ok();
}

}  // namespace peerbloom
