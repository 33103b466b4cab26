// Squid Cache Digests: the sources this daemon fetches and every imported digest it knows.
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

constexpr char kFetches[] = "peerbloom_squid_digest_fetches_total";
constexpr char kImports[] = "peerbloom_squid_digest_imports_total";

using SourceAt = At<DigestSourceStats>;
constexpr std::array<Stat<SourceAt>, 17> kDigestSource = {{
    {"source", "HOST:PORT", kValue, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.source; }},
    {"url", "the digest's URL", kValue, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.url; }},
    {"fetches", "fetches done", kCounter, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.fetches; }},
    {nullptr, "fetches that succeeded", kCounter, Metric(kFetches, {"result", "ok"}),
     [](const SourceAt& d) -> Json { return d.v.fetches - d.v.failures; }},
    {"failures", "fetches failed", kCounter, Metric(kFetches, {"result", "failed"}),
     [](const SourceAt& d) -> Json { return d.v.failures; }},
    {"consecutive_failures", "failures since the last success", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.consecutive_failures; }},
    {"bytes", "bytes of accepted digests", kCounter, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.bytes; }},
    {"in_flight", "whether a fetch runs", kValue, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.in_flight; }},
    {"last_error", "why the last fetch failed", kValue, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.last_error; }},
    {"age_ms", "age of the last accepted digest (absent before the first)", kGauge,
     MetricSeconds("peerbloom_squid_digest_age_seconds"),
     [](const SourceAt& d) -> Json { return d.v.age_ms; }},
    {"next_fetch_in_ms", "time to the next fetch", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.next_fetch_ms - d.now; }},
    {"digest_bytes", "size of the last digest", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.digest_bytes; }},
    {"capacity", "the last digest's capacity", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.capacity; }},
    {"count", "the last digest's entry count", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.count; }},
    {"fill", "the last digest's fill", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.fill; }},
    {"estimated_fpr", "the last digest's estimated false-positive rate", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.estimated_fpr; }},
    {"valid_for_ms", "time until the last digest's refresh", kGauge, kStatsOnly,
     [](const SourceAt& d) -> Json { return d.v.valid_for_ms; }},
}};

int64_t AgeMs(int64_t now, int64_t then) { return then > 0 ? now - then : -1; }

using PeerAt = At<PeerInfo>;
constexpr std::array<Stat<PeerAt>, 8> kImported = {{
    {"node_id", "squid:HOST:PORT", kValue, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.node_id; }},
    {"url", "the digest's URL", kValue, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.endpoint; }},
    {"imported_by", "the node that fetches it", kValue, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.imported_by; }},
    {"alive", "whether it is refreshed", kValue, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.alive; }},
    {"capacity", "the digest's capacity", kGauge, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.digest_capacity; }},
    {"fill", "the digest's fill", kGauge, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.digest_fill; }},
    {"estimated_fpr", "the digest's estimated false-positive rate", kGauge, kStatsOnly,
     [](const PeerAt& p) -> Json { return p.v.digest_fpr; }},
    {"age_ms", "age of the digest held", kGauge, kStatsOnly,
     [](const PeerAt& p) -> Json { return AgeMs(p.now, p.v.summary_received_ms); }},
}};

void WalkSources(const Context& c, Sink& s, Place p) {
  const DigestFetcher* f = c.s.digests.fetcher();
  s.BeginArray(p.key, p.label);
  for (const DigestSourceStats& d : f ? f->Stats(c.now) : std::vector<DigestSourceStats>()) {
    Object(kDigestSource, SourceAt{d, c.now}, s, nullptr, d.source);
  }
  s.EndArray();
}

void WalkImported(const Context& c, Sink& s, Place p) {
  s.BeginArray(p.key, p.label);
  for (const PeerInfo& peer : c.peers) {
    if (peer.imported) Object(kImported, PeerAt{peer, c.now}, s, nullptr);
  }
  s.EndArray();
}

const GossipStats& G(const Context& c) { return c.s.parts.engine.stats(); }

constexpr std::array<Stat<Context>, 9> kDigests = {{
    {"sources", "this daemon's [[squid_digest]] entries", Type::kGroup, ByElement("source"),
     nullptr, &WalkSources, [] { return Docs(kDigestSource); }},
    {"imported", "every imported digest this node knows, its own and gossiped", Type::kGroup,
     kStatsOnly, nullptr, &WalkImported, [] { return Docs(kImported); }},
    {"applied", "fetched digests the engine took", kCounter,
     Metric(kImports, {"result", "applied"}),
     [](const Context& c) -> Json { return c.s.digests.applied(); }},
    {"refused", "fetched digests the engine refused", kCounter,
     Metric(kImports, {"result", "refused"}),
     [](const Context& c) -> Json { return c.s.digests.refused(); }},
    {"imports_in", "imported digests received", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).imports_in; }},
    {"imports_out", "imported digests sent", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).imports_out; }},
    {"imports_refused", "imported digests refused", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).imports_refused; }},
    {"imports_expired", "imported digests expired unrefreshed", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).imports_expired; }},
    {"imports_over_quota", "import frames refused for an importer's quota", kCounter,
     Metric(kGossipRefused, {"reason", "import_quota"}),
     [](const Context& c) -> Json { return G(c).imports_over_quota; }},
}};

constexpr std::array<Family, 2> kFamilies = {{
    {kFetches, "Cache Digest fetches"},
    {kImports, "fetched digests the gossip engine took or refused"},
}};

}  // namespace

Table<Context> DigestsTable() { return kDigests; }
std::span<const Family> DigestFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
