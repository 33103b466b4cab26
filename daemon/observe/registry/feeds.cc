// A feed: the file it follows, what it applied, and for a store.log the live set and its
// rebuilds.
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

constexpr std::array<Stat<StoreLogState>, 6> kStoreLog = {{
    {"live_keys", "keys Squid holds by the log", kGauge, kStatsOnly,
     [](const StoreLogState& s) -> Json { return s.live().size(); }},
    {"duplicate_swapouts", "SWAPOUTs of a key already live", kCounter, kStatsOnly,
     [](const StoreLogState& s) -> Json { return s.counters().duplicate_swapouts; }},
    {"unknown_releases", "RELEASEs of a key not live", kCounter, kStatsOnly,
     [](const StoreLogState& s) -> Json { return s.counters().unknown_releases; }},
    {"swapout_failures", "SWAPOUT failures", kCounter, kStatsOnly,
     [](const StoreLogState& s) -> Json { return s.counters().swapout_failures; }},
    {"other_actions", "lines with other actions", kCounter, kStatsOnly,
     [](const StoreLogState& s) -> Json { return s.counters().other_actions; }},
    {"internal", "Squid's internal objects skipped", kCounter, kStatsOnly,
     [](const StoreLogState& s) -> Json { return s.counters().internal; }},
}};

constexpr std::array<Stat<RebuildStats>, 11> kRebuild = {{
    {"running", "whether a rebuild is reading", kValue, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.running; }},
    {"started", "rebuilds started", kCounter, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.started; }},
    {"finished", "rebuilds finished", kCounter, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.finished; }},
    {"failed", "rebuilds failed", kCounter, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.failed; }},
    {"held", "log lines held while the rebuild read", kGauge, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.held; }},
    {"journal", "keys in the last rebuild's journal", kGauge, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.journal; }},
    {"added", "keys the last rebuild added", kGauge, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.added; }},
    {"removed", "keys the last rebuild removed", kGauge, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.removed; }},
    {"duration_ms", "time the last rebuild took", kGauge, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.duration_ms; }},
    {"trigger", "what started the last rebuild", kValue, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.trigger; }},
    {"last_error", "why the last rebuild failed", kValue, kStatsOnly,
     [](const RebuildStats& r) -> Json { return r.last_error; }},
}};

const FileFollowerStats& Fo(const Feed& f) { return f.follower_stats(); }

constexpr std::array<Stat<Feed>, 26> kFeed = {{
    {"path", "the feed's path", kValue, kStatsOnly,
     [](const Feed& f) -> Json { return f.config().path; }},
    {"format", "line or squid-store-log", kValue, kStatsOnly,
     [](const Feed& f) -> Json { return f.config().format; }},
    {"store_log", "store.log feeds: the live set's counters, null otherwise", Type::kGroup,
     kStatsOnly, nullptr,
     [](const Feed& f, Sink& s, Place p) {
       if (f.store_log() == nullptr) return s.Null(p.key);
       Object(kStoreLog, *f.store_log(), s, p.key);
     },
     [] { return Docs(kStoreLog); }},
    {"fifo", "whether the path is a FIFO", kValue, kStatsOnly,
     [](const Feed& f) -> Json { return f.is_fifo(); }},
    {"open", "whether the path is open", kValue, kStatsOnly,
     [](const Feed& f) -> Json { return f.is_open(); }},
    {"offset", "bytes read of the current file", kGauge, kStatsOnly,
     [](const Feed& f) -> Json { return f.position().offset; }},
    {"lag_bytes", "bytes not read yet: the rest of the current file and queued rotated files",
     kGauge, Metric("peerbloom_feed_lag_bytes"),
     [](const Feed& f) -> Json { return f.unread_bytes(); }},
    {"lines", "lines read", kCounter, Metric("peerbloom_feed_lines_total"),
     [](const Feed& f) -> Json { return f.stats().lines; }},
    {"adds", "adds applied", kCounter, Metric("peerbloom_feed_adds_total"),
     [](const Feed& f) -> Json { return f.stats().adds; }},
    {"removes", "removes applied", kCounter, Metric("peerbloom_feed_removes_total"),
     [](const Feed& f) -> Json { return f.stats().removes; }},
    {"removes_refused", "removes the filter refused", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return f.stats().removes_refused; }},
    {"malformed", "lines refused", kCounter, Metric("peerbloom_feed_malformed_total"),
     [](const Feed& f) -> Json { return f.stats().malformed; }},
    {"bytes", "bytes read", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).bytes; }},
    {"long_lines_skipped", "lines over the length limit", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).long_lines_skipped; }},
    {"opens", "opens of the path", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).opens; }},
    {"rotations", "rotations followed", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).rotations; }},
    {"truncations", "truncations seen", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).truncations; }},
    {"resumes", "saved positions resumed", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).resumes; }},
    {"resume_mismatches", "saved positions not found at the path", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).resume_mismatches; }},
    {"resumes_rotated", "saved positions found under a rotated name", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).resumes_rotated; }},
    {"resumes_lost", "saved positions whose file's tail is gone", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).resumes_lost; }},
    {"resume_lost", "which file and byte were lost", kValue, kStatsOnly,
     [](const Feed& f) -> Json { return f.resume_lost(); }},
    {"rotated_files_read", "rotated files read after a resume", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).rotated_files_read; }},
    {"dropped_partial_lines", "unterminated lines dropped", kCounter, kStatsOnly,
     [](const Feed& f) -> Json { return Fo(f).dropped_partial_lines; }},
    {"rebuild", "the live set's rebuilds from cache_dirs", Type::kGroup, kStatsOnly, nullptr,
     [](const Feed& f, Sink& s, Place p) { Object(kRebuild, f.rebuild_stats(), s, p.key); },
     [] { return Docs(kRebuild); }},
    {"read_errors", "read errors", kCounter, Metric("peerbloom_feed_read_errors_total"),
     [](const Feed& f) -> Json { return Fo(f).read_errors; }},
}};

}  // namespace

Table<Feed> FeedTable() { return kFeed; }

}  // namespace peerbloom::daemon::registry
