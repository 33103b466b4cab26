// Quotas on imported digests per importer. A key holder could otherwise invent any number of
// Squid sources and make every node hold them: each import costs about twice its digest.
// Counted on what would be held after a frame, before any digest of it is parsed.
#include <map>
#include <string>
#include <utility>

#include "lib/gossip/imports.h"

namespace peerbloom {
namespace {

struct Usage {
  size_t count = 0;
  size_t bytes = 0;
};

std::string Quote(uint64_t value) { return "'" + std::to_string(value) + "'"; }

}  // namespace

Status Imports::CheckQuota(const std::vector<ImportedDigestEntry>& entries) const {
  // origin -> (importer, digest bytes) as it would be held after `entries`.
  std::map<std::string_view, std::pair<std::string_view, size_t>> after;
  for (const auto& [id, imp] : imports_) {
    if (!imp.withdrawn) after[id] = {imp.importer, imp.bytes.size()};
  }
  for (const ImportedDigestEntry& e : entries) {
    if ((e.flags & kImportHasDigest) == 0) continue;
    auto held = imports_.find(e.origin);
    if (held != imports_.end() && e.version <= held->second.version) continue;  // dropped
    if (e.importer != node_id_ && members_.Find(e.importer) == nullptr) {
      ++stats_->imports_over_quota;
      return Status::ResourceExhausted("import of '" + e.origin + "' by '" + e.importer +
                                       "', not a known member");
    }
    after[e.origin] = {e.importer, e.digest.size()};
  }
  std::map<std::string_view, Usage> use;
  for (const auto& [origin, held] : after) {
    Usage& u = use[held.first];
    ++u.count;
    u.bytes += held.second;
  }
  for (const ImportedDigestEntry& e : entries) {
    const auto it = use.find(e.importer);
    if (it == use.end()) continue;
    const Usage& u = it->second;
    if (u.count <= max_per_importer_ && u.bytes <= max_bytes_per_importer_) continue;
    ++stats_->imports_over_quota;
    const bool by_count = u.count > max_per_importer_;
    return Status::ResourceExhausted(
        "imports of '" + e.importer + "' would hold " +
        (by_count ? Quote(u.count) + " digests" : Quote(u.bytes) + " bytes") +
        ", above the limit of " + Quote(by_count ? max_per_importer_ : max_bytes_per_importer_));
  }
  return Status::Ok();
}

}  // namespace peerbloom
