// LocalStore: this node's own truth. The counting filter of the keys its cache holds, the
// hasher and key encoder that turn URLs into filter positions, and the summary builder that
// keeps the published summary in step (Touch after every change).
//
// Thread-safety: none; the event loop owns it. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_STORE_LOCAL_STORE_H_
#define PEERBLOOM_DAEMON_STORE_LOCAL_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/nginx_cache.h"
#include "peerbloom/params.h"
#include "peerbloom/summary_builder.h"

namespace peerbloom::daemon {

struct LocalStoreOptions {
  std::string node_id;
  Profile profile = Profile::kBalanced;
  uint64_t capacity = 1000000;
  double target_fpr = 0.01;
  // Default: kPowerOfTwo. Which counter counts the geometry may take.
  SizeSteps filter_sizes = SizeSteps::kPowerOfTwo;
  KeyScheme key_scheme = KeyScheme::kSquidMd5;
  SquidUrlOptions squid_url;   // how squid-md5 canonicalizes URLs
  NginxKeyTemplate nginx_key;  // how nginx-md5 turns a URL into nginx's cache key
  std::string cluster_secret;
};

struct LocalStoreStats {
  uint64_t adds = 0;
  uint64_t removes = 0;
  uint64_t removes_refused = 0;  // the key was not in the filter
};

class LocalStore {
 public:
  // Sizes the counting filter from (profile, capacity, target_fpr).
  static Status Create(const LocalStoreOptions& options, std::unique_ptr<LocalStore>* out);
  LocalStore(const LocalStore&) = delete;
  LocalStore& operator=(const LocalStore&) = delete;

  // Replaces the counting filter by an empty one of `geometry`, for a restored snapshot whose
  // geometry an earlier version's sizing rule chose (ChooseLegacyGeometry): the filter, and so
  // the summaries, stats and lookups that read it, then keep that geometry.
  // REQUIRES: before StartSummaries.
  Status UseGeometry(const Geometry& geometry);
  // Starts summary publication for `epoch`. Call once, after any snapshot restore.
  void StartSummaries(uint64_t epoch);

  void Add(std::string_view key_bytes) noexcept;
  // False (counted, nothing changed) when the filter cannot hold the key.
  bool Remove(std::string_view key_bytes) noexcept;
  bool Contains(std::string_view key_bytes) const noexcept {
    return filter_->MayContain(hasher_.Hash(key_bytes));
  }

  const LocalStoreOptions& options() const { return options_; }
  const IndexHasher& hasher() const { return hasher_; }
  KeyEncoder* encoder() { return &encoder_; }
  CountingBloomFilter* mutable_filter() { return filter_.get(); }
  const CountingBloomFilter& filter() const { return *filter_; }
  Geometry geometry() const {
    return {filter_->k(), filter_->log2_counters(), filter_->multiplier()};
  }
  SummaryBuilder* builder() { return builder_.get(); }  // null before StartSummaries
  uint64_t epoch() const { return epoch_; }
  const LocalStoreStats& stats() const { return stats_; }
  LocalStoreStats* mutable_stats() { return &stats_; }
  // 8 bytes that change when the index key changes: snapshots of another secret are refused.
  uint64_t IndexKeyFingerprint() const;

 private:
  LocalStore(const LocalStoreOptions& options, std::unique_ptr<CountingBloomFilter> filter);

  LocalStoreOptions options_;
  IndexHasher hasher_;
  KeyEncoder encoder_;
  std::unique_ptr<CountingBloomFilter> filter_;
  std::unique_ptr<SummaryBuilder> builder_;
  uint64_t epoch_ = 0;
  LocalStoreStats stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STORE_LOCAL_STORE_H_
