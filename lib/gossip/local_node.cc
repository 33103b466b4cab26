// This node's heartbeat and summary. Publication is checked against the held summary so that
// what neighbours receive always rebuilds it exactly (invariant: no false negatives).
#include "lib/gossip/local_node.h"

#include <algorithm>
#include <utility>

#include "lib/gossip/origin_sigs.h"

namespace peerbloom {
namespace {

// The positions flipped an odd number of times: a run of deltas collapsed into one.
std::vector<uint64_t> NetFlips(std::vector<uint64_t> flips) {
  std::sort(flips.begin(), flips.end());
  std::vector<uint64_t> out;
  for (size_t i = 0; i < flips.size();) {
    size_t j = i;
    while (j < flips.size() && flips[j] == flips[i]) ++j;
    if ((j - i) % 2 == 1) out.push_back(flips[i]);
    i = j;
  }
  return out;
}

}  // namespace

LocalNode::LocalNode(const GossipOptions& options)
    : node_id_(options.node_id),
      endpoint_(options.endpoint),
      public_key_(options.public_key),
      key_scheme_(options.key_scheme),
      recent_delta_bytes_(options.recent_delta_bytes),
      probes_(options.failure_detector == FailureDetector::kProbe && options.wire_version >= 4),
      signer_(options.signer),
      cluster_tag_(options.cluster_tag) {
  own_.origin = node_id_;
  own_.key_scheme = key_scheme_;
}

void LocalNode::Start() {
  heartbeat_ = std::max<uint64_t>(heartbeat_, 1);
  SignBeat();
}

void LocalNode::Beat() {
  ++heartbeat_;
  SignBeat();
  fresh_ = true;
}

void LocalNode::SignBeat() {
  beat_sig_ = SignBeatWith(signer_.get(), cluster_tag_, node_id_, own_.epoch, heartbeat_);
}

bool LocalNode::TakeFresh() { return std::exchange(fresh_, false); }

bool LocalNode::PublishFull(const Summary& summary) {
  if (summary.origin != node_id_ || summary.key_scheme != key_scheme_) return false;
  own_ = summary;
  own_digest_ = FilterDigest(own_.filter);
  has_own_ = true;
  own_full_pending_ = true;
  pending_flips_.clear();
  own_encoded_.clear();
  own_state_sig_.clear();
  if (own_epoch_cert_.empty() || own_cert_epoch_ != own_.epoch) {
    own_epoch_cert_ = SignEpochWith(signer_.get(), cluster_tag_, node_id_, own_.epoch);
    own_cert_epoch_ = own_.epoch;
    SignBeat();
  }
  fresh_ = true;
  return true;
}

bool LocalNode::PublishDelta(const SummaryDelta& d) {
  BloomFilter& f = own_.filter;
  bool fits = has_own_ && d.origin == own_.origin && d.epoch == own_.epoch &&
              d.base_version == own_.version && d.version > d.base_version && d.k == f.k() &&
              d.log2_bits == f.log2_bits() && d.multiplier == f.multiplier();
  for (size_t i = 0; fits && i < d.flipped.size(); ++i) fits = d.flipped[i] < f.bits();
  if (!fits) return false;
  uint64_t digest = own_digest_;
  for (uint64_t p : d.flipped) digest ^= PositionDigest(p);
  if (digest != d.result_digest) return false;
  for (uint64_t p : d.flipped) f.FlipBit(p);
  own_digest_ = digest;
  own_.version = d.version;
  own_.estimated_items = d.estimated_items;
  pending_flips_.insert(pending_flips_.end(), d.flipped.begin(), d.flipped.end());
  own_encoded_.clear();
  own_state_sig_.clear();
  return true;
}

bool LocalNode::PendingUpdate(WireType* type, std::string* codec_bytes) {
  if (!has_own_) return false;
  if (own_full_pending_) {
    *type = WireType::kFullSummary;
    return Encoded(codec_bytes);
  }
  if (own_.version <= announced_version_) return false;
  SummaryDelta d;
  d.origin = own_.origin;
  d.epoch = own_.epoch;
  d.base_version = announced_version_;
  d.version = own_.version;
  d.key_scheme = own_.key_scheme;
  d.hash_scheme = own_.hash_scheme;
  d.k = own_.filter.k();
  d.log2_bits = own_.filter.log2_bits();
  d.multiplier = own_.filter.multiplier();
  d.estimated_items = own_.estimated_items;
  d.flipped = NetFlips(std::move(pending_flips_));
  d.result_digest = own_digest_;
  *type = WireType::kDelta;
  if (EncodeDelta(d, codec_bytes).ok()) return true;
  // Cannot happen for a delta built from our own state; a full summary still works.
  *type = WireType::kFullSummary;
  return Encoded(codec_bytes);
}

UpdateSigs LocalNode::SignPending(WireType type, std::string_view codec_bytes) {
  UpdateSigs sigs;
  if (signer_ == nullptr) return sigs;
  sigs.state = StateSig();
  if (type == WireType::kDelta) {
    SummaryDelta d;
    d.origin = own_.origin;
    d.epoch = own_.epoch;
    d.base_version = announced_version_;
    d.version = own_.version;
    sigs.delta = SignDeltaWith(signer_.get(), cluster_tag_, d, codec_bytes, sigs.state);
  }
  return sigs;
}

const std::string& LocalNode::StateSig() {
  if (own_state_sig_.empty() && has_own_) {
    own_state_sig_ = SignStateWith(signer_.get(), cluster_tag_, own_);
  }
  return own_state_sig_;
}

void LocalNode::MarkAnnounced(WireType type, const std::string& codec_bytes, int64_t now_ms,
                              const UpdateSigs& sigs) {
  if (type == WireType::kDelta) {
    own_recent_.Add(announced_version_, own_.version, codec_bytes, recent_delta_bytes_, sigs.state,
                    sigs.delta);
  } else {
    own_recent_.Clear();
  }
  own_full_pending_ = false;
  pending_flips_.clear();
  announced_version_ = own_.version;
  announced_digest_ = own_digest_;
  announced_ms_ = now_ms;
}

bool LocalNode::Encoded(std::string* codec_bytes) {
  if (!has_own_) return false;
  if (own_encoded_.empty() && !EncodeSummary(own_, &own_encoded_).ok()) return false;
  *codec_bytes = own_encoded_;
  return true;
}

std::vector<const CachedDelta*> LocalNode::DeltasFrom(uint64_t have) const {
  return own_recent_.From(have, announced_version_);
}

DigestEntry LocalNode::Entry() const {
  DigestEntry e;
  e.origin = node_id_;
  e.epoch = own_.epoch;
  e.heartbeat = heartbeat_;
  e.alive = true;
  e.has_summary = has_own_ && !own_full_pending_;
  e.version = e.has_summary ? announced_version_ : 0;
  e.filter_digest = e.has_summary ? announced_digest_ : 0;
  e.has_contact = true;
  e.endpoint = endpoint_;
  e.public_key = public_key_;
  if (own_cert_epoch_ == own_.epoch) e.epoch_cert = own_epoch_cert_;
  e.beat_sig = beat_sig_;
  e.probes = probes_;
  return e;
}

}  // namespace peerbloom
