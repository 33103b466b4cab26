// nginx: the nginx-cache feeds (the live set read from the cache directory) and the route
// socket nginx's miss router asks (docs/nginx.md).
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

constexpr char kNginxDrift[] = "peerbloom_nginx_cache_drift_total";
constexpr char kNginxRoutes[] = "peerbloom_nginx_routes_total";

const NginxFeedStats& F(const NginxCacheFeed& f) { return f.stats(); }

constexpr std::array<Stat<NginxCacheFeed>, 21> kNginxFeed = {{
    {"path", "the proxy_cache_path read", kValue, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return f.config().path; }},
    {"levels", "its levels", kValue, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return f.config().levels; }},
    {"files", "cache files counted: the live set", kGauge, Metric("peerbloom_nginx_cache_files"),
     [](const NginxCacheFeed& f) -> Json { return F(f).files; }},
    {"names_xor", "XOR of the counted files' names (hex): compare with the files present", kValue,
     kStatsOnly, [](const NginxCacheFeed& f) -> Json { return NginxKeyHex(F(f).names_xor); }},
    {"adds", "files counted, by events and scans", kCounter,
     Metric("peerbloom_nginx_cache_adds_total"),
     [](const NginxCacheFeed& f) -> Json { return F(f).adds; }},
    {"removes", "files uncounted", kCounter, Metric("peerbloom_nginx_cache_removes_total"),
     [](const NginxCacheFeed& f) -> Json { return F(f).removes; }},
    {"events", "inotify events read", kCounter, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).events; }},
    {"overflows", "times the kernel's event queue overflowed (a scan followed)", kCounter,
     Metric("peerbloom_nginx_cache_overflows_total"),
     [](const NginxCacheFeed& f) -> Json { return F(f).overflows; }},
    {"ignored", "names that are not cache files (temporary files and others)", kCounter, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).ignored; }},
    {"foreign", "files with a cache file's name whose header could not be read", kCounter,
     Metric("peerbloom_nginx_cache_foreign_files_total"),
     [](const NginxCacheFeed& f) -> Json { return F(f).foreign; }},
    {"retries", "reads of a file shorter than its header, tried again", kCounter, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).retries; }},
    {"watches", "directories watched", kGauge, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).watches; }},
    {"watch_errors", "directories that could not be watched (scans every 10 s instead)", kCounter,
     Metric("peerbloom_nginx_cache_watch_errors_total"),
     [](const NginxCacheFeed& f) -> Json { return F(f).watch_errors; }},
    {"scanning", "whether a scan runs", kValue, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).scanning; }},
    {"scans", "scans finished", kCounter, Metric("peerbloom_nginx_cache_scans_total"),
     [](const NginxCacheFeed& f) -> Json { return F(f).scans; }},
    {"drift_added", "files scans found that the events had not counted", kCounter,
     Metric(kNginxDrift, {"kind", "added"}),
     [](const NginxCacheFeed& f) -> Json { return F(f).drift_added; }},
    {"drift_removed", "counted files scans did not find", kCounter,
     Metric(kNginxDrift, {"kind", "removed"}),
     [](const NginxCacheFeed& f) -> Json { return F(f).drift_removed; }},
    {"last_scan_ms", "time the last scan took", kGauge, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).last_scan_ms; }},
    {"last_scan_trigger", "what started the last scan", kValue, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).last_scan_trigger; }},
    {"last_error", "the last directory or file error", kValue, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return F(f).last_error; }},
    {"rescan_interval_ms", "periodic scans, 0: none", kGauge, kStatsOnly,
     [](const NginxCacheFeed& f) -> Json { return f.config().rescan_interval_ms; }},
}};

// Read only when the socket is on: the group is null otherwise (top.cc).
const NginxRouteStats& R(const Context& c) { return c.s.nginx_routes->stats(); }
const WhoHasSocket& S(const Context& c) { return *c.s.route_socket; }

constexpr std::array<Stat<Context>, 8> kNginxRoutesTable = {{
    {"requests", "route requests answered", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return R(c).requests; }},
    {"to_peer", "misses sent to a peer's sibling", kCounter,
     Metric(kNginxRoutes, {"result", "peer"}),
     [](const Context& c) -> Json { return R(c).to_peer; }},
    {"no_holder", "misses no live peer holds: the origin", kCounter,
     Metric(kNginxRoutes, {"result", "no_holder"}),
     [](const Context& c) -> Json { return R(c).no_holder; }},
    {"no_sibling", "misses whose holders have no nginx_siblings address: the origin", kCounter,
     Metric(kNginxRoutes, {"result", "no_sibling"}),
     [](const Context& c) -> Json { return R(c).no_sibling; }},
    {"bad_requests", "requests answered 400, 404 or 405", kCounter,
     Metric(kNginxRoutes, {"result", "bad_request"}),
     [](const Context& c) -> Json { return R(c).bad_requests; }},
    {"connections", "connections accepted", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return S(c).stats().connections; }},
    {"open", "connections open", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return S(c).open_connections(); }},
    {"evicted", "connections closed to make room for a new one", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return S(c).stats().evicted; }},
}};

constexpr std::array<Family, 2> kFamilies = {{
    {kNginxDrift,
     "nginx cache files a scan found that the events had not counted (added), and counted files "
     "it did not find (removed)"},
    {kNginxRoutes,
     "nginx misses the route socket answered: sent to a peer, no holder, holders without a "
     "sibling address, bad requests"},
}};

}  // namespace

Table<NginxCacheFeed> NginxFeedTable() { return kNginxFeed; }
Table<Context> NginxRoutesTable() { return kNginxRoutesTable; }
std::span<const Family> NginxFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
