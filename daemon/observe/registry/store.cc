// The local counting filter, the summary published from it, snapshots and noticed faults.
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

const CountingBloomFilter& F(const Context& c) { return c.s.parts.store.filter(); }

constexpr std::array<Stat<Context>, 13> kFilter = {{
    {"k", "hash functions", kGauge, kStatsOnly, [](const Context& c) -> Json { return F(c).k(); }},
    {"log2_counters", "log2 of the counter count", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return F(c).log2_counters(); }},
    {"counters", "4-bit counters of the local filter", kGauge, Metric("peerbloom_filter_counters"),
     [](const Context& c) -> Json { return F(c).counters(); }},
    {"bytes", "memory of the counters", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return F(c).bytes(); }},
    {"items", "keys the local counting filter holds", kGauge, Metric("peerbloom_filter_keys"),
     [](const Context& c) -> Json { return F(c).items(); }},
    {"capacity", "the configured capacity", kGauge, Metric("peerbloom_filter_capacity_keys"),
     [](const Context& c) -> Json { return c.s.parts.config.capacity; }},
    {"profile", "the configured profile", kValue, kStatsOnly,
     [](const Context& c) -> Json { return std::string(ProfileName(c.s.parts.config.profile)); }},
    {"key_scheme", "the configured key scheme", kValue, kStatsOnly,
     [](const Context& c) -> Json {
       return std::string(KeySchemeName(c.s.parts.config.key_scheme));
     }},
    {"saturated_counters", "counters stuck at 15", kGauge,
     Metric("peerbloom_filter_saturated_counters"),
     [](const Context& c) -> Json { return F(c).saturated_counters(); }},
    {"saturation_events", "increments that met a saturated counter", kCounter,
     Metric("peerbloom_filter_saturation_events_total"),
     [](const Context& c) -> Json { return F(c).saturation_events(); }},
    {"refused_removes", "removes of keys the filter does not hold", kCounter,
     Metric("peerbloom_filter_refused_removes_total"),
     [](const Context& c) -> Json { return F(c).refused_removes(); }},
    {"adds", "keys added (feeds and control)", kCounter, Metric("peerbloom_filter_adds_total"),
     [](const Context& c) -> Json { return c.s.parts.store.stats().adds; }},
    {"removes", "keys removed (feeds and control)", kCounter,
     Metric("peerbloom_filter_removes_total"),
     [](const Context& c) -> Json { return c.s.parts.store.stats().removes; }},
}};

constexpr char kPublications[] = "peerbloom_publications_total";

constexpr std::array<Stat<Context>, 15> kSummary = {{
    {"epoch", "epoch of this incarnation", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.summary.epoch; }},
    {"version", "version of the latest local summary", kGauge,
     Metric("peerbloom_published_version"),
     [](const Context& c) -> Json { return c.summary.version; }},
    {"k", "hash functions", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.summary.filter.k(); }},
    {"log2_bits", "log2 of the power of two in the summary's size (bits = m x 2^log2_bits)", kGauge,
     kStatsOnly, [](const Context& c) -> Json { return c.summary.filter.log2_bits(); }},
    {"bits", "the summary's bits (exact sizes: an odd multiple of 2^log2_bits)", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.summary.filter.bits(); }},
    {nullptr, "size of the local summary (its bits / 8)", kGauge,
     Metric("peerbloom_published_size_bytes"),
     [](const Context& c) -> Json { return c.summary.filter.bits() / 8; }},
    {"set_bits", "bits set", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.summary.filter.PopCount(); }},
    {nullptr, "fraction of the local summary's bits set", kGauge,
     Metric("peerbloom_published_fill_ratio"),
     [](const Context& c) -> Json { return c.summary.filter.FillRatio(); }},
    {"estimated_fpr", "false-positive rate of the local summary, estimated from its fill", kGauge,
     Metric("peerbloom_published_estimated_fpr"),
     [](const Context& c) -> Json { return c.summary.filter.EstimatedFpr(); }},
    {"pending", "summary positions changed since the last publication", kGauge,
     Metric("peerbloom_published_pending_positions"),
     [](const Context& c) -> Json { return c.s.parts.store.builder()->pending(); }},
    {"published_full", "full summaries published", kCounter,
     Metric(kPublications, {"kind", "full"}),
     [](const Context& c) -> Json { return c.s.publish.full; }},
    {"published_deltas", "deltas published", kCounter, Metric(kPublications, {"kind", "delta"}),
     [](const Context& c) -> Json { return c.s.publish.deltas; }},
    {"published_immediately", "publications of a full batch (publish_batch or publish_threshold)",
     kCounter, Metric("peerbloom_publications_immediate_total"),
     [](const Context& c) -> Json { return c.s.publish.immediate; }},
    {"deltas_refused_by_engine", "deltas the gossip engine did not take (a full summary followed)",
     kCounter, kStatsOnly, [](const Context& c) -> Json { return c.s.publish.refused_deltas; }},
    {"epochs_superseded", "epochs started because peers knew this node in a higher one", kCounter,
     kStatsOnly, [](const Context& c) -> Json { return c.s.publish.new_epochs; }},
}};

constexpr char kSnapshots[] = "peerbloom_snapshots_total";

constexpr std::array<Stat<Context>, 10> kSnapshot = {{
    {"path", "the snapshot file", kValue, kStatsOnly,
     [](const Context& c) -> Json { return c.s.snapshot_path; }},
    {"restored", "whether this start restored a snapshot", kValue, kStatsOnly,
     [](const Context& c) -> Json { return c.s.snapshot.restored; }},
    {"legacy_geometry",
     "whether the filter keeps the restored snapshot's geometry of an earlier sizing rule", kValue,
     kStatsOnly, [](const Context& c) -> Json { return c.s.snapshot.legacy_geometry; }},
    {"written", "snapshots written", kCounter, Metric(kSnapshots, {"result", "written"}),
     [](const Context& c) -> Json { return c.s.snapshot.written; }},
    {"failed", "snapshots that failed", kCounter, Metric(kSnapshots, {"result", "failed"}),
     [](const Context& c) -> Json { return c.s.snapshot.failed; }},
    {"failure_episodes", "runs of failed snapshots, each ended by a write that succeeded", kCounter,
     Metric("peerbloom_snapshot_failure_episodes_total"),
     [](const Context& c) -> Json { return c.s.snapshot.failure_episodes; }},
    {"failing", "whether the last snapshot failed (1 while it did)", kGauge,
     Metric("peerbloom_snapshot_failing"),
     [](const Context& c) -> Json { return c.s.snapshot.failing; }},
    {"last_duration_ms", "time the last write took", kGauge,
     MetricSeconds("peerbloom_snapshot_duration_seconds"),
     [](const Context& c) -> Json { return c.s.snapshot.last_duration_ms; }},
    {"last_unix_ms", "wall time of the last write", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.s.snapshot.last_unix_ms; }},
    {nullptr, "time since the last snapshot was written (absent before the first)", kGauge,
     MetricSeconds("peerbloom_snapshot_age_seconds"),
     [](const Context& c) -> Json {
       const int64_t last = c.s.snapshot.last_unix_ms;
       return last > 0 ? c.now_unix_ms - last : int64_t{-1};
     }},
}};

constexpr char kInjected[] = "peerbloom_test_faults_injected_total";

constexpr std::array<Stat<Context>, 5> kFaults = {{
    {"injected_dropped", "peer messages dropped by test_fault_drop or test_fault_blocked", kCounter,
     Metric(kInjected, {"kind", "drop"}),
     [](const Context& c) -> Json { return c.s.transport.stats().fault_dropped; }},
    {"injected_duplicated", "peer messages sent twice by test_fault_duplicate", kCounter,
     Metric(kInjected, {"kind", "duplicate"}),
     [](const Context& c) -> Json { return c.s.transport.stats().fault_duplicated; }},
    {"injected_reordered", "peer messages held back by test_fault_reorder", kCounter,
     Metric(kInjected, {"kind", "reorder"}),
     [](const Context& c) -> Json { return c.s.transport.stats().fault_reordered; }},
    {"clock_jumps", "steps of the wall clock against the monotonic clock", kCounter,
     Metric("peerbloom_clock_jumps_total"),
     [](const Context& c) -> Json { return c.s.faults.clock_jumps; }},
    {"last_clock_jump_ms", "the last step, negative when the clock went back", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.s.faults.last_clock_jump_ms; }},
}};

constexpr std::array<Family, 3> kFamilies = {{
    {kPublications, "local summaries handed to gossip"},
    {kSnapshots, "snapshot writes"},
    {kInjected,
     "peer messages the test_fault_* settings dropped, duplicated or held back (tests only)"},
}};

}  // namespace

Table<Context> FilterTable() { return kFilter; }
Table<Context> SummaryTable() { return kSummary; }
Table<Context> SnapshotTable() { return kSnapshot; }
Table<Context> FaultsTable() { return kFaults; }
std::span<const Family> StoreFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
