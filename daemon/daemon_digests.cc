// Imported Squid digests: the `[[squid_digest]]` sources are fetched by DigestFetcher on its
// worker thread; the loop hands every accepted digest to GossipEngine::ImportDigest, which
// names it "squid:HOST:PORT" and gossips it (docs/squid.md, "Importing digests of Squid nodes
// without peerbloomd").
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "daemon/daemon.h"

namespace peerbloom::daemon {
namespace {

int64_t WallUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string SourceName(const SquidDigestConfig& d) { return d.host + ":" + std::to_string(d.port); }

DigestFetcherOptions FetcherOptions(const Config& config) {
  DigestFetcherOptions o;
  for (const SquidDigestConfig& d : config.squid_digests) o.sources.push_back({d.host, d.port});
  o.min_refresh_ms = config.squid_digest_min_refresh_ms;
  o.max_refresh_ms = config.squid_digest_max_refresh_ms;
  // Without a usable Expires: the fetcher's default (1 h), kept within the configured bounds.
  o.default_refresh_ms = std::clamp(o.default_refresh_ms, o.min_refresh_ms, o.max_refresh_ms);
  return o;
}

}  // namespace

Status Daemon::StartDigestFetcher() {
  fetcher_.reset();
  if (config_.squid_digests.empty()) return Status::Ok();
  DigestFetcherOptions o = FetcherOptions(config_);
  Status s = ValidateDigestFetcherOptions(o);
  if (!s.ok()) return Status::InvalidArgument("squid_digest: " + s.message());
  fetcher_ = std::make_unique<DigestFetcher>(std::move(o));
  spdlog::info("importing the Cache Digest of {} Squid node(s)", config_.squid_digests.size());
  return Status::Ok();
}

void Daemon::ReloadDigestSources(const Config& fresh, int64_t now) {
  std::set<std::string> kept;
  for (const SquidDigestConfig& d : fresh.squid_digests) kept.insert(SourceName(d));
  for (const SquidDigestConfig& d : config_.squid_digests) {
    const std::string source = SourceName(d);
    if (kept.count(source) == 0) {
      engine_->ForgetImport(source, now);
      spdlog::info("reload: no longer importing the digest of '{}'", source);
    }
  }
  const bool same =
      fresh.squid_digests.size() == config_.squid_digests.size() &&
      fresh.squid_digest_min_refresh_ms == config_.squid_digest_min_refresh_ms &&
      fresh.squid_digest_max_refresh_ms == config_.squid_digest_max_refresh_ms && [&] {
        for (size_t i = 0; i < fresh.squid_digests.size(); ++i) {
          if (SourceName(fresh.squid_digests[i]) != SourceName(config_.squid_digests[i])) {
            return false;
          }
        }
        return true;
      }();
  if (same) return;  // keep the fetcher and its schedule
  config_.squid_digests = fresh.squid_digests;
  config_.squid_digest_min_refresh_ms = fresh.squid_digest_min_refresh_ms;
  config_.squid_digest_max_refresh_ms = fresh.squid_digest_max_refresh_ms;
  // Sources that stay keep their import in the engine until the new fetcher replaces it.
  Status s = StartDigestFetcher();
  if (!s.ok()) spdlog::error("reload: {}", s.message());
}

void Daemon::PollDigests(int64_t now) {
  // Poll every pass: it is cheap (one lock), and while a fetch is in flight NextDeadline stays
  // ahead of `now`, so gating on it would never collect the result.
  if (!fetcher_) return;
  for (const DigestFetchResult& r : fetcher_->Poll(now, WallUnixMs())) {
    Status s = engine_->ImportDigest(r.import, now);
    if (s.ok()) {
      ++imports_applied_;
      continue;
    }
    ++imports_refused_;
    uint64_t suppressed = 0;
    if (import_log_.Allow(now, &suppressed)) {
      spdlog::warn("digest of '{}' refused: {} ({} similar messages suppressed)", r.import.source,
                   s.ToString(), suppressed);
    }
  }
}

nlohmann::json Daemon::DigestStats(int64_t now) const {
  nlohmann::json sources = nlohmann::json::array();
  if (fetcher_) {
    for (const DigestSourceStats& d : fetcher_->Stats(now)) {
      sources.push_back({{"source", d.source},
                         {"url", d.url},
                         {"fetches", d.fetches},
                         {"failures", d.failures},
                         {"consecutive_failures", d.consecutive_failures},
                         {"bytes", d.bytes},
                         {"in_flight", d.in_flight},
                         {"last_error", d.last_error},
                         {"age_ms", d.age_ms},
                         {"next_fetch_in_ms", d.next_fetch_ms - now},
                         {"digest_bytes", d.digest_bytes},
                         {"capacity", d.capacity},
                         {"count", d.count},
                         {"fill", d.fill},
                         {"estimated_fpr", d.estimated_fpr},
                         {"valid_for_ms", d.valid_for_ms}});
    }
  }
  nlohmann::json known = nlohmann::json::array();
  for (const PeerInfo& p : engine_->Peers(now)) {
    if (!p.imported) continue;
    known.push_back({{"node_id", p.node_id},
                     {"url", p.endpoint},
                     {"imported_by", p.imported_by},
                     {"alive", p.alive},
                     {"capacity", p.digest_capacity},
                     {"fill", p.digest_fill},
                     {"estimated_fpr", p.digest_fpr},
                     {"age_ms", p.summary_received_ms > 0 ? now - p.summary_received_ms : -1}});
  }
  const GossipStats& g = engine_->stats();
  return {{"sources", sources},
          {"imported", known},
          {"applied", imports_applied_},
          {"refused", imports_refused_},
          {"imports_in", g.imports_in},
          {"imports_out", g.imports_out},
          {"imports_refused", g.imports_refused},
          {"imports_expired", g.imports_expired}};
}

}  // namespace peerbloom::daemon
