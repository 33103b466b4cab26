// Request streams for the Summary Cache simulation: synthetic Zipf and Squid access.log.
//
// A stream is a list of (time, site, object) requests. Sites are the client groups whose
// requests one proxy serves: with N proxies, site s goes to proxy s % N. The synthetic
// generator gives each site a share of requests for objects only that site asks for (its
// "local" objects), the rest drawn from one cluster-wide Zipf popularity; a replayed log
// maps each client address to a site.
#ifndef PEERBLOOM_BENCH_SUMMARY_CACHE_WORKLOAD_H_
#define PEERBLOOM_BENCH_SUMMARY_CACHE_WORKLOAD_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bench/summary_cache/access_log.h"
#include "peerbloom/hash.h"
#include "peerbloom/status.h"

namespace peerbloom::sim {

struct Request {
  int64_t time_ms = 0;
  uint32_t site = 0;
  uint32_t object = 0;  // ObjectTable id
};

// Interns URLs as dense ids and keeps what the simulation needs of each: its key hash (as
// the daemon's raw key scheme hashes the URL) and its length (for ICP message sizes).
class ObjectTable {
 public:
  explicit ObjectTable(IndexHasher hasher = IndexHasher()) : hasher_(hasher) {}
  uint32_t Intern(std::string_view url) {
    auto [it, added] = ids_.try_emplace(std::string(url), static_cast<uint32_t>(hashes_.size()));
    if (added) {
      hashes_.push_back(hasher_.Hash(url));
      url_bytes_.push_back(static_cast<uint32_t>(url.size()));
    }
    return it->second;
  }
  const KeyHash& hash(uint32_t id) const { return hashes_[id]; }
  uint32_t url_bytes(uint32_t id) const { return url_bytes_[id]; }
  size_t size() const { return hashes_.size(); }
  const IndexHasher& hasher() const { return hasher_; }

 private:
  IndexHasher hasher_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<KeyHash> hashes_;
  std::vector<uint32_t> url_bytes_;
};

// Ranks 1..n with P(r) proportional to r^-alpha, by inverting the cumulative table.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double alpha) : cdf_(n) {
    double sum = 0;
    for (uint64_t r = 0; r < n; ++r) cdf_[r] = sum += std::pow(static_cast<double>(r + 1), -alpha);
    for (double& c : cdf_) c /= sum;
  }
  template <typename Rng>
  uint64_t Sample(Rng& rng) const {  // 0-based rank
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    return static_cast<uint64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

struct ZipfOptions {
  uint64_t requests = 1000000;      // Default: 1e6.
  uint64_t objects = 1000000;       // Default: 1e6 shared objects.
  uint64_t local_objects = 100000;  // Default: 1e5 objects per site.
  double alpha = 0.8;               // Default: 0.8 (web traces measure 0.6-0.85).
  double local_share = 0.3;         // Default: 0.3 of a site's requests are for its own objects.
  uint32_t sites = 16;              // Default: 16.
  double rate_per_site = 50;        // Default: 50 requests/s per site, evenly spaced overall.
  uint64_t seed = 1;
};

inline std::string SharedUrl(uint64_t rank) {
  return "http://www" + std::to_string(rank % 997) + ".example.com/obj/" + std::to_string(rank);
}
inline std::string LocalUrl(uint32_t site, uint64_t rank) {
  return "http://site" + std::to_string(site) + ".example.net/page/" + std::to_string(rank);
}

// Site uniform at random per request; time advances evenly at rate_per_site * sites.
inline std::vector<Request> ZipfStream(const ZipfOptions& o, ObjectTable* table,
                                       std::vector<std::string>* urls = nullptr) {
  std::mt19937_64 rng(o.seed);
  const ZipfSampler shared(o.objects, o.alpha);
  const ZipfSampler local(std::max<uint64_t>(1, o.local_objects), o.alpha);
  std::vector<Request> out;
  out.reserve(o.requests);
  const double step_ms = 1000.0 / (o.rate_per_site * o.sites);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (uint64_t i = 0; i < o.requests; ++i) {
    Request r;
    r.time_ms = static_cast<int64_t>(static_cast<double>(i) * step_ms);
    r.site = static_cast<uint32_t>(rng() % o.sites);
    const bool is_local = o.local_objects > 0 && coin(rng) < o.local_share;
    const std::string url =
        is_local ? LocalUrl(r.site, local.Sample(rng)) : SharedUrl(shared.Sample(rng));
    r.object = table->Intern(url);
    if (urls != nullptr) urls->push_back(url);
    out.push_back(r);
  }
  return out;
}

// How a replayed log's clients become sites: kSubnet takes an IPv4 client's /24 (a site is a
// network), kClient each distinct client address.
enum class SiteOf { kSubnet, kClient };

struct LogReplayStats {
  uint64_t lines = 0;
  uint64_t replayed = 0;
  uint64_t malformed = 0;
  uint64_t skipped_method = 0;    // not GET: Squid caches GET replies only (HEAD is not stored)
  uint64_t skipped_internal = 0;  // Squid's own URLs (cache digests, icons)
  std::string first_error;        // "line N: why" for the first malformed line
};

inline uint32_t SiteOfClient(std::string_view client, SiteOf how,
                             std::unordered_map<std::string, uint32_t>* clients) {
  unsigned a, b, c, d;
  if (how == SiteOf::kSubnet &&
      std::sscanf(std::string(client).c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) == 4) {
    return (b << 8 | c) & 0xffffu;  // the /24 within its /8: 10.S.S.h gives back S
  }
  auto [it, added] =
      clients->try_emplace(std::string(client), static_cast<uint32_t>(clients->size()));
  return it->second;
}

// Requests from log lines: GET requests only, times relative to the first line replayed.
inline void ReplayLines(std::istream& in, SiteOf how, ObjectTable* table, std::vector<Request>* out,
                        LogReplayStats* stats) {
  std::unordered_map<std::string, uint32_t> clients;
  std::string line;
  int64_t t0 = -1;
  while (std::getline(in, line)) {
    ++stats->lines;
    if (line.empty()) continue;
    AccessLogRecord rec;
    const Status s = ParseAccessLogLine(line, &rec);
    if (!s.ok()) {
      if (stats->malformed++ == 0) {
        stats->first_error = "line " + std::to_string(stats->lines) + ": " + s.message();
      }
      continue;
    }
    if (rec.method != "GET") {
      ++stats->skipped_method;
      continue;
    }
    if (rec.url.find("/squid-internal-") != std::string_view::npos) {
      ++stats->skipped_internal;
      continue;
    }
    if (t0 < 0) t0 = rec.time_ms;
    Request r;
    r.time_ms = std::max<int64_t>(0, rec.time_ms - t0);
    r.site = SiteOfClient(rec.client, how, &clients);
    r.object = table->Intern(rec.url);
    out->push_back(r);
    ++stats->replayed;
  }
}

// Writes a stream as a Squid native access.log (client 10.S.S.h for site S: one /24 per site;
// status and sizes are placeholders, the replay reads time, client, method and URL).
inline void WriteAccessLog(const std::vector<Request>& requests,
                           const std::vector<std::string>& urls, int64_t start_unix_ms,
                           std::ostream& out) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    const int64_t t = start_unix_ms + r.time_ms;
    char head[96];
    std::snprintf(head, sizeof(head), "%lld.%03lld %6d 10.%u.%u.%u TCP_MISS/200 %u GET ",
                  static_cast<long long>(t / 1000), static_cast<long long>(t % 1000), 1,
                  (r.site >> 8) & 255u, r.site & 255u, 1u + static_cast<unsigned>(i % 200), 1000u);
    out << head << urls[i] << " - HIER_DIRECT/192.0.2.1 text/html\n";
  }
}

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_BENCH_SUMMARY_CACHE_WORKLOAD_H_
