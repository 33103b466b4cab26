// summary_cache_sim: ICP against peerbloom summaries against an exact directory, on one
// request stream, for several cluster sizes (bench/summary_cache/simulator.h has the model;
// docs/results/README.md the method). Prints one tab-separated row per cluster size.
//
// Usage:
//   summary_cache_sim [--nodes=4,8,16,32,64] [--cache-objects=20000] [--fpr=0.01]
//                     [--interval-ms=1000] [--warmup=0.1] [--seed=1]
//                     [--publish-delay-ms=0] [--publish-batch=0] [--publish-threshold=0.05]
//                     [--detector=probe|heartbeat]
//                     [--requests=1000000] [--objects=1000000] [--local-objects=100000]
//                     [--alpha=0.8] [--local-share=0.3] [--rate=50]
//                     [--access-log=FILE [--site-of=subnet|client] [--speed=F]]
//                     [--rates=R1,R2,...] [--by-type]
//   summary_cache_sim --write-access-log=FILE --sites=S [stream flags]
// Without --access-log the stream is synthetic Zipf, one site per proxy, regenerated for
// each cluster size from the same seed; with it, the log's GET requests are replayed and
// site s goes to proxy s % N; --speed=F replays it F times faster (0.1: ten times slower).
// --rates re-times the counted part of the stream (after the warm-up, which keeps its own
// clock) to each rate in turn, in requests per second per proxy, and prints a row per cluster
// size and rate: the same requests, so the same caches and hit ratios, at another pace (the
// column rate_per_proxy gives the rate measured over the counted part). A synthetic stream is
// then generated for each rate with --requests x --warmup requests of warm-up (at --rate) and
// enough counted ones for --counted-seconds (default 120) at that rate, at least 1,000 and at
// most 400,000. --interval-ms is the
// engines' gossip interval and the publication timer (the failure timeout and anti-entropy interval
// keep their default ratios to it). Exits 1 when a counting filter refused a remove or the counts
// do not add up: those are bugs, never tolerated.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/summary_cache/simulator.h"
#include "peerbloom/wire.h"

namespace peerbloom::sim {
namespace {

struct Flags {
  std::vector<int> nodes = {4, 8, 16, 32, 64};
  SimOptions sim;
  ZipfOptions zipf;
  std::string access_log;
  SiteOf site_of = SiteOf::kSubnet;
  double speed = 1;
  std::vector<double> rates;  // empty: the stream's own clock
  double counted_seconds = 120;
  std::string write_log;
  uint32_t sites = 0;
  bool by_type = false;  // --by-type: frames per proxy per second by wire type, on stderr
};

bool Take(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name || arg.size() <= name.size() || arg[name.size()] != '=') {
    return false;
  }
  *value = std::string(arg.substr(name.size() + 1));
  return true;
}

bool ParseNodes(const std::string& v, std::vector<int>* out) {
  out->clear();
  size_t i = 0;
  while (i <= v.size()) {
    const size_t comma = std::min(v.find(',', i), v.size());
    const int n = std::atoi(v.substr(i, comma - i).c_str());
    if (n < 2 || n > 64) return false;
    out->push_back(n);
    i = comma + 1;
  }
  return !out->empty();
}

bool ParseRates(const std::string& v, std::vector<double>* out) {
  out->clear();
  size_t i = 0;
  while (i <= v.size()) {
    const size_t comma = std::min(v.find(',', i), v.size());
    const double r = std::atof(v.substr(i, comma - i).c_str());
    if (!(r > 0)) return false;
    out->push_back(r);
    i = comma + 1;
  }
  return !out->empty();
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    std::string v;
    if (Take(a, "--nodes", &v)) {
      if (!ParseNodes(v, &f->nodes)) return false;
    } else if (Take(a, "--cache-objects", &v)) {
      f->sim.cache_objects = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Take(a, "--fpr", &v)) {
      f->sim.target_fpr = std::atof(v.c_str());
    } else if (Take(a, "--interval-ms", &v)) {
      f->sim.gossip_interval_ms = std::atoll(v.c_str());
    } else if (Take(a, "--publish-delay-ms", &v)) {
      f->sim.publish_delay_ms = std::atoll(v.c_str());
    } else if (Take(a, "--publish-batch", &v)) {
      f->sim.publish_batch = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Take(a, "--publish-threshold", &v)) {
      f->sim.publish_threshold = std::atof(v.c_str());
    } else if (Take(a, "--detector", &v)) {
      if (v != "probe" && v != "heartbeat") return false;
      f->sim.detector = v == "probe" ? FailureDetector::kProbe : FailureDetector::kHeartbeat;
    } else if (Take(a, "--warmup", &v)) {
      f->sim.warmup = std::atof(v.c_str());
    } else if (Take(a, "--seed", &v)) {
      f->sim.seed = f->zipf.seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Take(a, "--requests", &v)) {
      f->zipf.requests = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Take(a, "--objects", &v)) {
      f->zipf.objects = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Take(a, "--local-objects", &v)) {
      f->zipf.local_objects = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Take(a, "--alpha", &v)) {
      f->zipf.alpha = std::atof(v.c_str());
    } else if (Take(a, "--local-share", &v)) {
      f->zipf.local_share = std::atof(v.c_str());
    } else if (Take(a, "--rate", &v)) {
      f->zipf.rate_per_site = std::atof(v.c_str());
    } else if (Take(a, "--access-log", &v)) {
      f->access_log = v;
    } else if (Take(a, "--site-of", &v)) {
      if (v != "subnet" && v != "client") return false;
      f->site_of = v == "subnet" ? SiteOf::kSubnet : SiteOf::kClient;
    } else if (Take(a, "--speed", &v)) {
      f->speed = std::atof(v.c_str());
    } else if (Take(a, "--counted-seconds", &v)) {
      f->counted_seconds = std::atof(v.c_str());
    } else if (Take(a, "--rates", &v)) {
      if (!ParseRates(v, &f->rates)) return false;
    } else if (Take(a, "--write-access-log", &v)) {
      f->write_log = v;
    } else if (a == "--by-type") {
      f->by_type = true;
    } else if (Take(a, "--sites", &v)) {
      f->sites = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    } else {
      std::fprintf(stderr, "summary_cache_sim: error: unknown flag '%s'\n", argv[i]);
      return false;
    }
  }
  return f->sim.cache_objects > 0 && f->sim.target_fpr > 0 && f->sim.target_fpr < 0.5 &&
         f->sim.gossip_interval_ms > 0 && f->zipf.requests > 0 && f->zipf.objects > 0 &&
         f->zipf.alpha > 0 && f->zipf.rate_per_site > 0 && f->sim.warmup >= 0 &&
         f->sim.warmup < 1 && f->speed > 0;
}

const char kHeader[] =
    "nodes\trequests\tsim_seconds\tcache_objects\ttarget_fpr\tk\tsummary_log2_bits"
    "\ticp_hit\ticp_remote_hit\ticp_msgs_per_req\ticp_bytes_per_req"
    "\tpb_hit\tpb_remote_hit\tpb_msgs_per_req\tpb_bytes_per_req\tpb_update_msgs_per_req"
    "\tpb_false_hit_msgs_per_req\tfalse_hits\tfalse_hits_per_req\tdelay_misses"
    "\tdelay_misses_per_req\tnonholder_pairs\tlisted_bloom\tlisted_stale\tmeasured_fpr"
    "\testimated_fpr\toracle_hit\toracle_remote_hit\tfetch_msgs_per_req_icp"
    "\tfetch_msgs_per_req_pb\tsummary_kib_per_node\tcbf_kib_per_node\tmsg_ratio\tbyte_ratio"
    "\trate_per_proxy\n";

// One stderr line: the counted window's frames per proxy per second, by wire type.
void ReportTypes(int nodes, const SimResult& r) {
  const double per = 1000.0 / static_cast<double>(std::max<int64_t>(1, r.simulated_ms)) / nodes;
  std::fprintf(stderr, "summary_cache_sim: N=%d frames/s per proxy:", nodes);
  for (int t = 1; t < 16; ++t) {
    if (r.frames_by_type[t] == 0) continue;
    const std::string_view name = WireTypeName(static_cast<WireType>(t));
    std::fprintf(stderr, " %.*s %.3f", static_cast<int>(name.size()), name.data(),
                 static_cast<double>(r.frames_by_type[t]) * per);
  }
  std::fprintf(stderr, "\n");
}

bool Report(int nodes, const SimOptions& so, const SimResult& r) {
  const double q = static_cast<double>(r.requests);
  auto hit = [&](const SchemeCounts& s) {
    return static_cast<double>(s.local_hits + s.remote_hits) / q;
  };
  auto remote = [&](const SchemeCounts& s) { return static_cast<double>(s.remote_hits) / q; };
  bool ok = r.refused_removes == 0;
  for (const SchemeCounts* s : {&r.icp, &r.peerbloom, &r.oracle}) {
    ok = ok && s->local_hits + s->remote_hits + s->misses == r.requests;
  }
  const double icp_msgs = static_cast<double>(r.icp.query_msgs) / q;
  const double false_hit_msgs = 2.0 * static_cast<double>(r.false_hits) / q;
  const double pb_msgs = static_cast<double>(r.update_msgs) / q + false_hit_msgs;
  const double fetch_icp = static_cast<double>(r.icp.fetch_msgs) / q;
  const double fetch_pb = static_cast<double>(r.peerbloom.fetch_msgs) / q - false_hit_msgs;
  const double icp_bytes = static_cast<double>(r.icp.query_bytes) / q;
  const double pb_bytes = static_cast<double>(r.update_bytes) / q;
  const double rate =
      q * 1000.0 / static_cast<double>(std::max<int64_t>(1, r.simulated_ms)) / nodes;
  std::printf(
      "%d\t%llu\t%.1f\t%zu\t%g\t%u\t%u\t%.5f\t%.5f\t%.4f\t%.1f\t%.5f\t%.5f\t%.4f\t%.1f\t%.4f"
      "\t%.4f\t%llu\t%.5f\t%llu\t%.5f\t%llu\t%llu\t%llu\t%.6f\t%.6f\t%.5f\t%.5f\t%.4f\t%.4f"
      "\t%.1f\t%.1f\t%.4g\t%.4g\t%.4g\n",
      nodes, static_cast<unsigned long long>(r.requests), r.simulated_ms / 1000.0, so.cache_objects,
      so.target_fpr, r.k, r.summary_log2_bits, hit(r.icp), remote(r.icp), icp_msgs, icp_bytes,
      hit(r.peerbloom), remote(r.peerbloom), pb_msgs, pb_bytes,
      static_cast<double>(r.update_msgs) / q, false_hit_msgs,
      static_cast<unsigned long long>(r.false_hits), static_cast<double>(r.false_hits) / q,
      static_cast<unsigned long long>(r.delay_misses), static_cast<double>(r.delay_misses) / q,
      static_cast<unsigned long long>(r.nonholder_pairs),
      static_cast<unsigned long long>(r.listed_bloom),
      static_cast<unsigned long long>(r.listed_stale),
      static_cast<double>(r.listed_bloom) /
          static_cast<double>(std::max<uint64_t>(1, r.nonholder_pairs)),
      r.estimated_fpr, hit(r.oracle), remote(r.oracle), fetch_icp, fetch_pb, r.summary_bytes / 1024,
      static_cast<double>(r.cbf_bytes) / 1024, pb_msgs > 0 ? icp_msgs / pb_msgs : 0.0,
      pb_bytes > 0 ? icp_bytes / pb_bytes : 0.0, rate);
  std::fflush(stdout);
  if (!ok)
    std::fprintf(stderr, "summary_cache_sim: error: counts do not add up at %d nodes\n", nodes);
  return ok;
}

// Times from `from` on, stretched by `factor` about the time of request `from`.
void Retime(std::vector<Request>* s, size_t from, double factor) {
  if (from >= s->size()) return;
  const int64_t t0 = (*s)[from].time_ms;
  for (size_t i = from; i < s->size(); ++i) {
    const double dt = static_cast<double>((*s)[i].time_ms - t0) * factor;
    (*s)[i].time_ms = t0 + static_cast<int64_t>(dt);
  }
}

// The requests per second per proxy of the stream from `from` on.
double RatePerProxy(const std::vector<Request>& s, size_t from, int nodes) {
  if (from + 1 >= s.size()) return 0;
  const double span_ms = static_cast<double>(s.back().time_ms - s[from].time_ms);
  return static_cast<double>(s.size() - from - 1) * 1000.0 / std::max(1.0, span_ms) / nodes;
}

bool ReadLog(const Flags& f, ObjectTable* table, std::vector<Request>* stream) {
  std::ifstream in(f.access_log);
  if (!in) {
    std::fprintf(stderr, "summary_cache_sim: error: cannot open '%s'\n", f.access_log.c_str());
    return false;
  }
  LogReplayStats st;
  ReplayLines(in, f.site_of, table, stream, &st);
  std::fprintf(stderr,
               "summary_cache_sim: '%s': %llu lines, %llu replayed, %llu malformed%s%s, "
               "%llu not GET, %llu internal\n",
               f.access_log.c_str(), static_cast<unsigned long long>(st.lines),
               static_cast<unsigned long long>(st.replayed),
               static_cast<unsigned long long>(st.malformed), st.malformed ? " (first: " : "",
               st.malformed ? (st.first_error + ")").c_str() : "",
               static_cast<unsigned long long>(st.skipped_method),
               static_cast<unsigned long long>(st.skipped_internal));
  if (f.speed != 1) Retime(stream, 0, 1 / f.speed);
  return true;
}

bool RunOnce(const Flags& f, int n, size_t warm, const ObjectTable& table,
             const std::vector<Request>& stream) {
  SimOptions so = f.sim;
  so.nodes = n;
  so.warmup_requests = warm;
  SummaryCacheSim sim(so, &table);
  sim.Run(stream);
  if (f.by_type) ReportTypes(n, sim.result());
  return Report(n, so, sim.result());
}

// The access log at `n` nodes, re-timed to each of --rates in turn (or as it is).
bool RunLog(const Flags& f, int n) {
  ObjectTable table;
  std::vector<Request> stream;
  if (!ReadLog(f, &table, &stream)) return false;
  const size_t warm = static_cast<size_t>(f.sim.warmup * static_cast<double>(stream.size()));
  if (f.rates.empty()) return RunOnce(f, n, warm, table, stream);
  bool ok = true;
  for (double rate : f.rates) {
    Retime(&stream, warm, RatePerProxy(stream, warm, n) / rate);
    ok = RunOnce(f, n, warm, table, stream) && ok;
  }
  return ok;
}

// The synthetic stream at `n` nodes: as generated, or for each of --rates a stream whose
// counted part lasts --counted-seconds at that rate (see the head of this file).
bool RunZipf(const Flags& f, int n) {
  ZipfOptions z = f.zipf;
  z.sites = static_cast<uint32_t>(n);
  const size_t warm = static_cast<size_t>(f.sim.warmup * static_cast<double>(z.requests));
  std::vector<double> rates = f.rates;
  if (rates.empty()) rates.push_back(0);
  bool ok = true;
  for (double rate : rates) {
    ObjectTable table;
    if (rate > 0) {
      const double want = rate * n * f.counted_seconds;
      z.requests = warm + static_cast<uint64_t>(std::clamp(want, 1e3, 4e5));
    }
    std::vector<Request> stream = ZipfStream(z, &table);
    if (rate > 0) Retime(&stream, warm, RatePerProxy(stream, warm, n) / rate);
    ok = RunOnce(f, n, warm, table, stream) && ok;
  }
  return ok;
}

int Main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fprintf(stderr, "usage: see the head of bench/summary_cache_sim.cc\n");
    return 2;
  }
  if (!f.write_log.empty()) {
    ObjectTable table;
    std::vector<std::string> urls;
    f.zipf.sites = f.sites > 0 ? f.sites : 64;
    const std::vector<Request> s = ZipfStream(f.zipf, &table, &urls);
    std::ofstream out(f.write_log);
    WriteAccessLog(s, urls, int64_t{1700000000} * 1000, out);
    return out.good() ? 0 : 1;
  }
  std::printf("%s", kHeader);
  bool ok = true;
  for (int n : f.nodes) {
    const bool ran = f.access_log.empty() ? RunZipf(f, n) : RunLog(f, n);
    ok = ran && ok;
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace peerbloom::sim

int main(int argc, char** argv) { return peerbloom::sim::Main(argc, argv); }
