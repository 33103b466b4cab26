// One geometry's bit-sliced rows: row p holds bit p of every column (peer) of the group.
// See peerbloom/peer_index.h for the layout and its memory cost.
#ifndef PEERBLOOM_LIB_INDEX_SLICE_GROUP_H_
#define PEERBLOOM_LIB_INDEX_SLICE_GROUP_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "peerbloom/bloom_filter.h"

namespace peerbloom::index_internal {

// Rows are read as native integers; the column <-> bit mapping assumes little-endian bytes.
static_assert(std::endian::native == std::endian::little, "bit-sliced rows assume little-endian");

inline constexpr uint32_t kFreeColumn = UINT32_MAX;

class SliceGroup {
 public:
  // REQUIRES: a valid filter geometry (BloomFilter::Create would accept it).
  SliceGroup(unsigned log2_bits, unsigned k, unsigned multiplier);

  unsigned log2_bits() const noexcept { return log2_bits_; }
  unsigned multiplier() const noexcept { return multiplier_; }
  unsigned k() const noexcept { return k_; }
  // Rows: one per filter bit.
  uint64_t bits() const noexcept { return reduce_.size(); }
  const SizeReduction& reduction() const noexcept { return reduce_; }
  bool Holds(const BloomFilter& filter) const noexcept {
    return filter.log2_bits() == log2_bits_ && filter.multiplier() == multiplier_ &&
           filter.k() == k_;
  }
  size_t stride() const noexcept { return stride_; }
  size_t used() const noexcept { return used_; }
  size_t memory_bytes() const noexcept {
    return rows_.capacity() + column_slot_.capacity() * sizeof(uint32_t);
  }
  const uint8_t* Row(uint64_t pos) const noexcept { return rows_.data() + pos * stride_; }
  // The slot of a column, kFreeColumn when free.
  uint32_t ColumnSlot(size_t column) const noexcept { return column_slot_[column]; }

  // Takes a free column for `slot` (widening the rows when all are taken). Its bits are 0.
  uint32_t AddColumn(uint32_t slot);
  // Clears a column's bits and frees it.
  void RemoveColumn(uint32_t column);
  // Sets the column's bits to the filter's. REQUIRES: the filter has this geometry.
  void WriteColumn(uint32_t column, const BloomFilter& filter);
  // WriteColumn for a column known to be all zero (just added): visits set bits only, about
  // fill-ratio x the cost.
  void FillColumn(uint32_t column, const BloomFilter& filter);
  // REQUIRES: *out has this geometry and is all zero.
  void ReadColumn(uint32_t column, BloomFilter* out) const;
  void FlipBit(uint32_t column, uint64_t pos) noexcept {
    rows_[pos * stride_ + column / 8] ^= static_cast<uint8_t>(1u << (column % 8));
  }

  // AND of the rows at `positions` (k of them), for the 64 columns starting at 64 * word.
  // Free columns are all zero, so they never match.
  uint64_t AndRows(const uint64_t* positions, size_t word) const noexcept {
    switch (stride_) {
      case 1:
        return AndNarrow<uint8_t>(positions);
      case 2:
        return AndNarrow<uint16_t>(positions);
      case 4:
        return AndNarrow<uint32_t>(positions);
      default:
        return AndWide(positions, word);
    }
  }
  size_t words() const noexcept { return (stride_ + 7) / 8; }

 private:
  template <typename Word>
  uint64_t AndNarrow(const uint64_t* positions) const noexcept {
    Word acc = static_cast<Word>(~Word{0});
    for (unsigned i = 0; i < k_; ++i) {
      Word w;
      std::memcpy(&w, rows_.data() + positions[i] * sizeof(Word), sizeof(Word));
      acc &= w;
    }
    return acc;
  }
  uint64_t AndWide(const uint64_t* positions, size_t word) const noexcept {
    uint64_t acc = ~uint64_t{0};
    const uint8_t* base = rows_.data() + word * 8;
    for (unsigned i = 0; i < k_; ++i) {
      uint64_t w;
      std::memcpy(&w, base + positions[i] * stride_, sizeof(w));
      acc &= w;
    }
    return acc;
  }
  void Widen();

  unsigned log2_bits_;
  unsigned multiplier_;
  unsigned k_;
  SizeReduction reduce_;
  size_t stride_ = 0;
  std::vector<uint8_t> rows_;
  std::vector<uint32_t> column_slot_;
  size_t used_ = 0;
};

}  // namespace peerbloom::index_internal

#endif  // PEERBLOOM_LIB_INDEX_SLICE_GROUP_H_
