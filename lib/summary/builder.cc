// SummaryBuilder: keeps the published summary equal to the counting filter's projection.
//
// Why the projection can be updated bit by bit: summary bit j of a projection to m bits is
// the OR of counters j, j + m, j + 2m, ... (bloom_probe.h: positions are residues modulo
// the size, and m divides the counter count). A key's add or remove changes only its own k
// counters, so only its k summary positions (its probes reduced modulo m) can change;
// Publish() recomputes exactly those with ProjectedBit.
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "peerbloom/params.h"
#include "peerbloom/summary_builder.h"

namespace peerbloom {
namespace {

// Below this many dirty entries the vector is always kept; above it at most one entry per
// 64 summary bits (8 bytes per 64 bits: the size of the summary itself).
constexpr size_t kMinDirtyCap = 1024;

size_t DirtyCap(uint64_t bits) { return std::max(kMinDirtyCap, static_cast<size_t>(bits / 64)); }

}  // namespace

Status ValidateSummaryBuilderOptions(const SummaryBuilderOptions& options) {
  if (!IsValidNodeId(options.origin)) {
    return Status::InvalidArgument("origin '" + options.origin + "' is not a node id");
  }
  if (!(options.target_fpr > 0.0 && options.target_fpr < 1.0)) {
    return Status::InvalidArgument("summary false-positive target '" +
                                   std::to_string(options.target_fpr) + "' is outside (0, 1)");
  }
  if (!(options.shrink_headroom >= 0.0)) {
    return Status::InvalidArgument("shrink headroom '" + std::to_string(options.shrink_headroom) +
                                   "' is negative");
  }
  if (options.min_log2_bits < kMinLog2Bits || options.min_log2_bits > kMaxLog2Bits) {
    return Status::InvalidArgument("minimum summary log2 of bits '" +
                                   std::to_string(options.min_log2_bits) + "' is outside [" +
                                   std::to_string(kMinLog2Bits) + ", " +
                                   std::to_string(kMaxLog2Bits) + "]");
  }
  return Status::Ok();
}

SummaryBuilder::SummaryBuilder(const CountingBloomFilter* filter, SummaryBuilderOptions options)
    : filter_(filter),
      options_(std::move(options)),
      options_status_(ValidateSummaryBuilderOptions(options_)) {}

void SummaryBuilder::Touch(const KeyHash& hash) noexcept {
  touched_ += filter_->k();
  if (!published_ || dirty_overflow_) return;
  ForEachProbe(hash, filter_->k(), current_.filter.reduction(),
               [this](uint64_t pos) { dirty_.push_back(pos); });  // capacity reserved
  if (dirty_.size() > dirty_cap_) {
    dirty_overflow_ = true;
    dirty_.clear();
  }
}

uint64_t SummaryBuilder::pending() const noexcept { return touched_; }

// The smallest size that divides the counter count and meets the target, with the design
// margin (DesignFpr), for `items`; the whole counter count when none does.
FilterSize SummaryBuilder::Smallest(double items) const noexcept {
  const unsigned top = filter_->log2_counters();
  const unsigned bottom = std::min(options_.min_log2_bits, top);
  const FilterSize whole{top, filter_->multiplier()};
  return SmallestSize(items, filter_->k(), DesignFpr(options_.target_fpr), bottom, top,
                      OddDivisors(filter_->multiplier()))
      .value_or(whole);
}

// The smallest size meeting the target for the current item count, grown at once, shrunk
// only when the smaller size would still meet the target with shrink_headroom more items.
FilterSize SummaryBuilder::ChooseSize() const noexcept {
  const auto items = static_cast<double>(filter_->items());
  const FilterSize fit = Smallest(items);
  if (!published_) return fit;
  const FilterSize now{current_.filter.log2_bits(), current_.filter.multiplier()};
  if (fit.bits() >= now.bits()) return fit;
  const FilterSize roomy = Smallest(items * (1.0 + options_.shrink_headroom));
  return roomy.bits() < now.bits() ? roomy : now;
}

Status SummaryBuilder::Publish(Publication* out) {
  PEERBLOOM_RETURN_IF_ERROR(options_status_);
  *out = Publication{};
  const FilterSize size = ChooseSize();
  if (!published_ || size.log2 != current_.filter.log2_bits() ||
      size.multiplier != current_.filter.multiplier()) {
    return PublishFull(size, out);
  }
  PublishDelta(out);
  return Status::Ok();
}

Status SummaryBuilder::PublishFull(FilterSize size, Publication* out) {
  BloomFilter projected;
  PEERBLOOM_RETURN_IF_ERROR(filter_->Project(size.log2, size.multiplier, &projected));
  current_.origin = options_.origin;
  current_.epoch = options_.epoch;
  current_.version = published_ ? current_.version + 1 : 1;
  current_.key_scheme = options_.key_scheme;
  current_.hash_scheme = options_.hash_scheme;
  current_.estimated_items = filter_->items();
  current_.filter = std::move(projected);
  digest_ = FilterDigest(current_.filter);
  published_ = true;
  ResetDirty();
  out->changed = true;
  out->full = true;
  out->changed_fraction = 1.0;
  return Status::Ok();
}

std::vector<uint64_t> SummaryBuilder::CollectFlips() const {
  std::vector<uint64_t> flips;
  const BloomFilter& now = current_.filter;
  if (dirty_overflow_) {
    BloomFilter fresh;
    // The current size: cannot fail.
    if (!filter_->Project(now.log2_bits(), now.multiplier(), &fresh).ok()) return flips;
    const std::vector<uint64_t>& a = current_.filter.words();
    const std::vector<uint64_t>& b = fresh.words();
    for (size_t w = 0; w < a.size(); ++w) {
      for (uint64_t x = a[w] ^ b[w]; x != 0; x &= x - 1) {
        flips.push_back(uint64_t{w} * 64 + static_cast<unsigned>(std::countr_zero(x)));
      }
    }
    return flips;
  }
  std::vector<uint64_t> dirty = dirty_;
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (uint64_t pos : dirty) {
    if (filter_->ProjectedBit(pos, now.bits()) != now.TestBit(pos)) {
      flips.push_back(pos);
    }
  }
  return flips;
}

void SummaryBuilder::PublishDelta(Publication* out) {
  std::vector<uint64_t> flips = CollectFlips();
  ResetDirty();
  if (flips.empty()) return;
  SummaryDelta& d = out->delta;
  d.origin = current_.origin;
  d.epoch = current_.epoch;
  d.base_version = current_.version;
  d.version = current_.version + 1;
  d.key_scheme = current_.key_scheme;
  d.hash_scheme = current_.hash_scheme;
  d.k = current_.filter.k();
  d.log2_bits = current_.filter.log2_bits();
  d.multiplier = current_.filter.multiplier();
  d.estimated_items = filter_->items();
  for (uint64_t pos : flips) {
    current_.filter.FlipBit(pos);
    digest_ ^= PositionDigest(pos);
  }
  d.result_digest = digest_;
  current_.version = d.version;
  current_.estimated_items = d.estimated_items;
  out->changed = true;
  out->changed_fraction =
      static_cast<double>(flips.size()) / static_cast<double>(current_.filter.bits());
  d.flipped = std::move(flips);
}

void SummaryBuilder::ResetDirty() {
  dirty_.clear();
  dirty_overflow_ = false;
  touched_ = 0;
  dirty_cap_ = DirtyCap(current_.filter.bits());
  dirty_.reserve(dirty_cap_ + kMaxHashes);
}

}  // namespace peerbloom
