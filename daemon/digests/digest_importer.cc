// The loop's side of Squid digest imports; the fetching itself is DigestFetcher's.
#include "daemon/digests/digest_importer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <set>

namespace peerbloom::daemon {
namespace {

int64_t WallUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string SourceName(const SquidDigestConfig& d) { return d.host + ":" + std::to_string(d.port); }

bool SameSources(const std::vector<SquidDigestConfig>& a, const std::vector<SquidDigestConfig>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (SourceName(a[i]) != SourceName(b[i])) return false;
  }
  return true;
}

}  // namespace

Status DigestImporter::Start(const Config& config) {
  sources_ = config.squid_digests;
  min_refresh_ms_ = config.squid_digest_min_refresh_ms;
  max_refresh_ms_ = config.squid_digest_max_refresh_ms;
  fetcher_.reset();
  if (sources_.empty()) return Status::Ok();
  DigestFetcherOptions o;
  for (const SquidDigestConfig& d : sources_) o.sources.push_back({d.host, d.port});
  o.min_refresh_ms = min_refresh_ms_;
  o.max_refresh_ms = max_refresh_ms_;
  // Without a usable Expires: the fetcher's default (1 h), kept within the configured bounds.
  o.default_refresh_ms = std::clamp(o.default_refresh_ms, o.min_refresh_ms, o.max_refresh_ms);
  Status s = ValidateDigestFetcherOptions(o);
  if (!s.ok()) return Status::InvalidArgument("squid_digest: " + s.message());
  fetcher_ = std::make_unique<DigestFetcher>(std::move(o));
  spdlog::info("importing the Cache Digest of {} Squid node(s)", sources_.size());
  return Status::Ok();
}

void DigestImporter::Reload(const Config& fresh, int64_t now) {
  std::set<std::string> kept;
  for (const SquidDigestConfig& d : fresh.squid_digests) kept.insert(SourceName(d));
  for (const SquidDigestConfig& d : sources_) {
    const std::string source = SourceName(d);
    if (kept.count(source) == 0) {
      engine_->ForgetImport(source, now);
      spdlog::info("reload: no longer importing the digest of '{}'", source);
    }
  }
  if (SameSources(fresh.squid_digests, sources_) &&
      fresh.squid_digest_min_refresh_ms == min_refresh_ms_ &&
      fresh.squid_digest_max_refresh_ms == max_refresh_ms_) {
    return;  // keep the fetcher and its schedule
  }
  // Sources that stay keep their import in the engine until the new fetcher replaces it.
  Status s = Start(fresh);
  if (!s.ok()) spdlog::error("reload: {}", s.message());
}

void DigestImporter::Poll(int64_t now) {
  // Poll every pass: it is cheap (one lock), and while a fetch is in flight NextDeadline stays
  // ahead of `now`, so gating on it would never collect the result.
  if (!fetcher_) return;
  for (const DigestFetchResult& r : fetcher_->Poll(now, WallUnixMs())) {
    Status s = engine_->ImportDigest(r.import, now);
    if (s.ok()) {
      ++applied_;
      continue;
    }
    ++refused_;
    uint64_t suppressed = 0;
    if (log_.Allow(now, &suppressed)) {
      spdlog::warn("digest of '{}' refused: {} ({} similar messages suppressed)", r.import.source,
                   s.ToString(), suppressed);
    }
  }
}

int64_t DigestImporter::NextDeadline(int64_t now) const {
  return fetcher_ ? fetcher_->NextDeadline(now) : INT64_MAX;
}

}  // namespace peerbloom::daemon
