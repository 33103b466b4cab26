#include "lib/index/slice_group.h"

#include <algorithm>

namespace peerbloom::index_internal {
namespace {

// 1, 2, 4, 8 bytes, then whole 8-byte words: a group never wastes more than 63 columns
// (about 1/2 of its memory only while it holds 65..127 peers), and a wider row is a copy of
// every row, so it happens at most log2(8) + P/64 times.
size_t NextStride(size_t stride) { return stride == 0 ? 1 : stride < 8 ? stride * 2 : stride + 8; }

}  // namespace

SliceGroup::SliceGroup(unsigned log2_bits, unsigned k, unsigned multiplier)
    : log2_bits_(log2_bits), multiplier_(multiplier), k_(k), reduce_(log2_bits, multiplier) {}

void SliceGroup::Widen() {
  const size_t new_stride = NextStride(stride_);
  const uint64_t rows = bits();
  std::vector<uint8_t> wider(rows * new_stride, 0);
  for (uint64_t p = 0; p < rows && stride_ > 0; ++p) {
    std::memcpy(wider.data() + p * new_stride, rows_.data() + p * stride_, stride_);
  }
  rows_.swap(wider);
  column_slot_.resize(new_stride * 8, kFreeColumn);
  stride_ = new_stride;
}

uint32_t SliceGroup::AddColumn(uint32_t slot) {
  if (used_ == column_slot_.size()) Widen();
  const auto it = std::find(column_slot_.begin(), column_slot_.end(), kFreeColumn);
  const auto column = static_cast<uint32_t>(it - column_slot_.begin());
  *it = slot;
  ++used_;
  return column;
}

void SliceGroup::RemoveColumn(uint32_t column) {
  const uint8_t keep = static_cast<uint8_t>(~(1u << (column % 8)));
  uint8_t* p = rows_.data() + column / 8;
  for (uint64_t row = 0; row < bits(); ++row) p[row * stride_] &= keep;
  column_slot_[column] = kFreeColumn;
  --used_;
}

void SliceGroup::WriteColumn(uint32_t column, const BloomFilter& filter) {
  const unsigned shift = column % 8;
  const uint8_t keep = static_cast<uint8_t>(~(1u << shift));
  uint8_t* p = rows_.data() + column / 8;
  const std::vector<uint64_t>& words = filter.words();
  for (size_t i = 0; i < words.size(); ++i) {
    const uint64_t w = words[i];
    uint8_t* row = p + i * 64 * stride_;
    for (unsigned j = 0; j < 64; ++j, row += stride_) {
      *row = static_cast<uint8_t>((*row & keep) | (((w >> j) & 1) << shift));
    }
  }
}

void SliceGroup::FillColumn(uint32_t column, const BloomFilter& filter) {
  const uint8_t bit = static_cast<uint8_t>(1u << (column % 8));
  uint8_t* p = rows_.data() + column / 8;
  const std::vector<uint64_t>& words = filter.words();
  for (size_t i = 0; i < words.size(); ++i) {
    for (uint64_t w = words[i]; w != 0; w &= w - 1) {
      p[(i * 64 + static_cast<size_t>(std::countr_zero(w))) * stride_] |= bit;
    }
  }
}

void SliceGroup::ReadColumn(uint32_t column, BloomFilter* out) const {
  const unsigned shift = column % 8;
  const uint8_t* p = rows_.data() + column / 8;
  std::vector<uint64_t>& words = out->mutable_words();
  for (size_t i = 0; i < words.size(); ++i) {
    uint64_t w = 0;
    const uint8_t* row = p + i * 64 * stride_;
    for (unsigned j = 0; j < 64; ++j, row += stride_) w |= uint64_t{(*row >> shift) & 1u} << j;
    words[i] = w;
  }
}

}  // namespace peerbloom::index_internal
