#include "daemon/store/local_store.h"

#include <cstring>

namespace peerbloom::daemon {
namespace {

Status NewFilter(const Geometry& geometry, std::unique_ptr<CountingBloomFilter>* out) {
  auto filter = std::make_unique<CountingBloomFilter>(kMinLog2Bits, 1);
  PEERBLOOM_RETURN_IF_ERROR(CountingBloomFilter::Create(geometry.log2_counters, geometry.k,
                                                        geometry.multiplier, filter.get()));
  *out = std::move(filter);
  return Status::Ok();
}

}  // namespace

Status LocalStore::Create(const LocalStoreOptions& options, std::unique_ptr<LocalStore>* out) {
  Geometry geometry;
  PEERBLOOM_RETURN_IF_ERROR(ChooseGeometry(options.profile, options.capacity, options.target_fpr,
                                           &geometry, options.filter_sizes));
  std::unique_ptr<CountingBloomFilter> filter;
  PEERBLOOM_RETURN_IF_ERROR(NewFilter(geometry, &filter));
  out->reset(new LocalStore(options, std::move(filter)));
  return Status::Ok();
}

LocalStore::LocalStore(const LocalStoreOptions& options,
                       std::unique_ptr<CountingBloomFilter> filter)
    : options_(options),
      hasher_(DeriveIndexKey(options.cluster_secret)),
      encoder_(options.key_scheme, options.squid_url, options.nginx_key),
      filter_(std::move(filter)) {}

Status LocalStore::UseGeometry(const Geometry& geometry) {
  // The builder keeps a pointer to the filter: swapping the filter under it would leave the
  // pointer dangling.
  if (builder_) {
    return Status::InvalidArgument("the filter's geometry cannot change once it is published");
  }
  return NewFilter(geometry, &filter_);
}

void LocalStore::StartSummaries(uint64_t epoch) {
  epoch_ = epoch;
  SummaryBuilderOptions o;
  o.origin = options_.node_id;
  o.epoch = epoch;
  o.key_scheme = options_.key_scheme;
  o.target_fpr = options_.target_fpr;
  builder_ = std::make_unique<SummaryBuilder>(filter_.get(), o);
}

void LocalStore::Add(std::string_view key_bytes) noexcept {
  const KeyHash h = hasher_.Hash(key_bytes);
  filter_->Add(h);
  ++stats_.adds;
  if (builder_) builder_->Touch(h);
}

bool LocalStore::Remove(std::string_view key_bytes) noexcept {
  const KeyHash h = hasher_.Hash(key_bytes);
  if (!filter_->Remove(h)) {
    ++stats_.removes_refused;
    return false;
  }
  ++stats_.removes;
  if (builder_) builder_->Touch(h);
  return true;
}

uint64_t LocalStore::IndexKeyFingerprint() const {
  // The hash of a fixed string under the index key: equal keys give equal fingerprints.
  const KeyHash h = hasher_.Hash("peerbloom snapshot fingerprint");
  return h.h1 ^ h.h2;
}

}  // namespace peerbloom::daemon
