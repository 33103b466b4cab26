#include "peerbloom/who_has_batch.h"

#include <utility>

namespace peerbloom {

WhoHasBatch::WhoHasBatch(const CountingBloomFilter& local, const IndexHasher& hasher,
                         PeerQuery peers, PeerPrefetch prefetch, Sink sink)
    : local_(local),
      hasher_(hasher),
      peers_(std::move(peers)),
      prefetch_(std::move(prefetch)),
      sink_(std::move(sink)) {}

void WhoHasBatch::Add(std::string_view key_bytes) {
  const size_t g = filled_++;
  keys_[g].assign(key_bytes);
  hashes_[g] = hasher_.Hash(key_bytes);
  valid_[g] = true;
  local_.Prefetch(hashes_[g]);
  if (prefetch_) prefetch_(hashes_[g]);
  if (filled_ == kGroup) AnswerGroup();
}

void WhoHasBatch::AddInvalid() {
  valid_[filled_++] = false;
  if (filled_ == kGroup) AnswerGroup();
}

void WhoHasBatch::Finish() { AnswerGroup(); }

void WhoHasBatch::AnswerGroup() {
  for (size_t g = 0; g < filled_; ++g) {
    matches_.clear();
    WhoHasAnswer answer;
    answer.peers = &matches_;
    answer.valid = valid_[g];
    if (answer.valid) {
      answer.local = local_.MayContain(hashes_[g]);
      peers_(keys_[g], hashes_[g], &matches_);
    }
    sink_(answer);
  }
  filled_ = 0;
}

}  // namespace peerbloom
