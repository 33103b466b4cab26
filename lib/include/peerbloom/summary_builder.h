// SummaryBuilder: keeps a node's published summary in step with its counting filter.
//
// The summary is the counting filter projected onto the smallest size whose estimated
// false-positive rate, for the filter's current item count, meets the target with the design
// margin ChooseGeometry leaves too (SmallestSize at DesignFpr(target_fpr), params.h).
// The sizes on offer are d * 2^j for every odd divisor d of the counting filter's multiplier
// c and j up to its log2: exactly the sizes that divide its counter count, so that the
// projection equals the filter built directly at that size (bloom_probe.h). After every add or
// remove the caller passes the key's hash to Touch(), which marks the key's summary positions
// dirty; Publish() recomputes only those positions (each is the OR of the counters that fold onto
// it), so a publication costs O(changes), not O(filter). When the item count moves the best size
// (with hysteresis, so it does not flap), Publish() re-projects and emits a full summary of the new
// geometry instead of a delta.
//
// Thread-safety: none. The builder reads the counting filter it was given, which must outlive
// it and must not be replaced underneath it.
#ifndef PEERBLOOM_SUMMARY_BUILDER_H_
#define PEERBLOOM_SUMMARY_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/params.h"
#include "peerbloom/status.h"
#include "peerbloom/summary.h"

namespace peerbloom {

struct SummaryBuilderOptions {
  std::string origin;  // this node's id
  uint64_t epoch = 0;
  KeyScheme key_scheme = KeyScheme::kSquidMd5;
  // Default: kSipHash13x2. How the counting filter's positions were computed.
  HashScheme hash_scheme = HashScheme::kSipHash13x2;
  // Default: 0.01. The summary's false-positive target; sizes meet DesignFpr(target_fpr).
  double target_fpr = 0.01;
  // Default: 10. Summaries never fold below 2^min_log2_bits bits (times their multiplier).
  unsigned min_log2_bits = 10;
  // Default: 0.25. Shrink only when the smaller size meets the target even with this many
  // more items (1.25 x n), so a count hovering near a boundary does not flap.
  double shrink_headroom = 0.25;
};

struct Publication {
  bool changed = false;           // false: nothing to send
  bool full = false;              // true: current() is a new full summary (new geometry or first)
  SummaryDelta delta;             // when changed && !full
  double changed_fraction = 0.0;  // flipped bits / summary bits (1 for a full summary)
};

// InvalidArgument unless the origin is a node id, 0 < target_fpr < 1, shrink_headroom >= 0
// and kMinLog2Bits <= min_log2_bits <= kMaxLog2Bits.
Status ValidateSummaryBuilderOptions(const SummaryBuilderOptions& options);

class SummaryBuilder {
 public:
  // Publish() fails with ValidateSummaryBuilderOptions' error if the options are invalid.
  SummaryBuilder(const CountingBloomFilter* filter, SummaryBuilderOptions options);
  SummaryBuilder(const SummaryBuilder&) = delete;
  SummaryBuilder& operator=(const SummaryBuilder&) = delete;

  // Marks the summary positions of a key that was just added or removed.
  void Touch(const KeyHash& hash) noexcept;
  // Positions touched since the last publication (an upper bound on flips).
  uint64_t pending() const noexcept;
  // Brings the summary up to date. The first call always yields a full summary.
  Status Publish(Publication* out);
  // The summary as of the last Publish().
  const Summary& current() const noexcept { return current_; }
  // FilterDigest(current().filter).
  uint64_t digest() const noexcept { return digest_; }

 private:
  FilterSize ChooseSize() const noexcept;
  FilterSize Smallest(double items) const noexcept;
  Status PublishFull(FilterSize size, Publication* out);
  void PublishDelta(Publication* out);
  std::vector<uint64_t> CollectFlips() const;
  void ResetDirty();

  const CountingBloomFilter* filter_;
  SummaryBuilderOptions options_;
  Status options_status_;
  Summary current_;
  uint64_t digest_ = 0;  // FilterDigest(current_.filter), kept in O(flips)
  bool published_ = false;
  // Summary positions touched since the last publication, unsorted, with repeats. Bounded by
  // dirty_cap_ (capacity reserved up front, so Touch never allocates); past it the next
  // publication re-projects the whole filter and diffs, which is then as cheap.
  std::vector<uint64_t> dirty_;
  size_t dirty_cap_ = 0;
  bool dirty_overflow_ = false;
  uint64_t touched_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_SUMMARY_BUILDER_H_
