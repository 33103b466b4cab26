// Counting-filter and summary operations at 1e6 and 1e7 keys next to one random DRAM access,
// all measured in the same run (the figures of docs/results/bench.md, scripts/bench.sh).
//
// DRAM: a pointer chase over a buffer much larger than the last-level cache (default 1 GiB,
// one pointer per 64-byte line, the lines linked in one random cycle by Sattolo's algorithm),
// so each load depends on the previous one and misses every cache: ns per dependent load.
// Measured twice: on ordinary 4 KiB pages (as a std::vector of counters gets them, so the
// TLB misses too) and on a buffer advised MADV_HUGEPAGE (closer to the DRAM latency alone).
//
// Filters: per profile, the counting filter ChooseGeometry gives for n keys at 1 %, holding n
// random 16-byte keys (hashed in advance with SipHash-1-3-128); timed one key at a time:
//   add / remove         never-added keys added (then removed, untimed) / held keys removed
//                        (then put back, untimed): the filter stays within n +- 2 %
//   may_contain_present  held keys; may_contain_absent: never-added keys
//   may_contain_batch    MayContainBatch over 256 never-added keys per call, ns per key
//   hash16               SipHash-1-3-128 of one 16-byte key (not included in the above)
// and the summary a node publishes (the smallest power of two meeting 1 % at n keys):
//   summary_build        CountingBloomFilter::Project to that size
//   summary_fold         BloomFilter::FoldTo half of it
//   summary_encode       EncodeSummary with the smallest body; summary_decode: DecodeSummary
// Each figure is the median of `reps` runs, timed in the thread's CPU time (so that waiting
// for a core on a shared machine is not counted; stalls on memory are). Output: one tab-separated
// row per figure:
//   row  NAME  PROFILE  N  VALUE  UNIT
// Exits 1 on a false negative; never judges time.
//
// Usage: core_ops_bench [--dram-mib=1024] [--reps=7] [--max-n=10000000]
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/params.h"
#include "peerbloom/summary.h"

namespace peerbloom {
namespace {

constexpr double kTargetFpr = 0.01;
constexpr size_t kBatch = 256;
constexpr uint64_t kAbsent = uint64_t{1} << 20;

struct Flags {
  uint64_t dram_mib = 1024;
  int reps = 7;
  uint64_t max_n = 10000000;
};

// The calling thread's CPU time: on a machine shared with other work, time spent waiting for
// a core is not counted (time stalled on memory is: the thread is running then).
double NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Row(const char* name, const char* profile, uint64_t n, double value, const char* unit) {
  std::printf("row\t%s\t%s\t%llu\t%.3f\t%s\n", name, profile, static_cast<unsigned long long>(n),
              value, unit);
  std::fflush(stdout);
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "core_ops_bench: error: %s\n", what);
  std::exit(1);
}

// --- One random DRAM access -----------------------------------------------------------------

// ns per dependent load over `bytes` of lines linked in one random cycle.
double ChaseNs(uint64_t bytes, bool huge, int reps) {
  constexpr size_t kLine = 64 / sizeof(uint64_t);  // uint64 slots per cache line
  const uint64_t lines = bytes / 64;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) Fail("cannot map the pointer-chase buffer");
  if (huge) (void)madvise(mem, bytes, MADV_HUGEPAGE);
  auto* buf = static_cast<uint64_t*>(mem);
  // Sattolo's algorithm: a uniformly random permutation that is a single cycle, so the chase
  // visits every line before it repeats.
  std::vector<uint32_t> order(lines);
  for (uint64_t i = 0; i < lines; ++i) order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(7);
  for (uint64_t i = lines - 1; i > 0; --i) std::swap(order[i], order[rng() % i]);
  for (uint64_t i = 0; i < lines; ++i) buf[order[i] * kLine] = order[(i + 1) % lines] * kLine;
  order = {};
  const uint64_t loads = 2000000;
  uint64_t p = 0;
  for (uint64_t i = 0; i < loads / 4; ++i) p = buf[p];  // warm the page tables a little
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowNs();
    for (uint64_t i = 0; i < loads; ++i) p = buf[p];
    ns.push_back((NowNs() - t0) / static_cast<double>(loads));
  }
  if (p == ~uint64_t{0}) std::printf(" ");
  munmap(mem, bytes);
  return Median(ns);
}

// --- Counting filter --------------------------------------------------------------------------

std::vector<KeyHash> RandomHashes(const IndexHasher& hasher, uint64_t count, uint64_t seed) {
  std::vector<KeyHash> out(count);
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t words[2] = {rng(), rng()};
    out[i] = hasher.Hash(std::string_view(reinterpret_cast<const char*>(words), sizeof(words)));
  }
  return out;
}

// Median ns per key over `reps` runs of `op(i)` for i in [0, count); `undo` runs untimed
// after each run.
template <typename Op, typename Undo>
double TimePerKey(int reps, uint64_t count, Op&& op, Undo&& undo) {
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowNs();
    for (uint64_t i = 0; i < count; ++i) op(i);
    ns.push_back((NowNs() - t0) / static_cast<double>(count));
    undo();
  }
  return Median(ns);
}

struct Keys {
  std::vector<KeyHash> present;  // the first n are held at size n
  std::vector<KeyHash> absent;
};

void TimeFilterOps(const char* name, CountingBloomFilter& f, uint64_t n, const Keys& keys,
                   int reps) {
  const uint64_t run = std::min<uint64_t>(n / 50, 200000);
  const auto& absent = keys.absent;
  const auto& present = keys.present;
  const auto nothing = [] {};
  Row("cbf_add", name, n,
      TimePerKey(
          reps, run, [&](uint64_t i) { f.Add(absent[i]); },
          [&] {
            for (uint64_t i = 0; i < run; ++i) f.Remove(absent[i]);
          }),
      "ns");
  uint64_t refused = 0;
  Row("cbf_remove", name, n,
      TimePerKey(
          reps, run, [&](uint64_t i) { refused += !f.Remove(present[i]); },
          [&] {
            for (uint64_t i = 0; i < run; ++i) f.Add(present[i]);
          }),
      "ns");
  if (refused > 0) Fail("a held key's remove was refused (false negative)");
  uint64_t missed = 0, hits = 0;
  Row("cbf_may_contain_present", name, n,
      TimePerKey(
          reps, run, [&](uint64_t i) { missed += !f.MayContain(present[i]); }, nothing),
      "ns");
  Row("cbf_may_contain_absent", name, n,
      TimePerKey(
          reps, run, [&](uint64_t i) { hits += f.MayContain(absent[i]); }, nothing),
      "ns");
  bool out[kBatch];
  Row("cbf_may_contain_batch_absent", name, n,
      TimePerKey(
          reps, run / kBatch,
          [&](uint64_t i) {
            f.MayContainBatch(&absent[i * kBatch], kBatch, out);
            hits += out[0];
          },
          nothing) /
          kBatch,
      "ns");
  if (missed > 0) Fail("a held key was not found (false negative)");
  uint64_t fp_hits = 0;
  for (const KeyHash& h : absent) fp_hits += f.MayContain(h);
  Row("cbf_fpr", name, n, static_cast<double>(fp_hits) / static_cast<double>(absent.size()), "");
  if (hits == ~uint64_t{0}) std::printf(" ");
}

template <typename Fn>
double MedianMs(int reps, Fn&& fn) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowNs();
    fn();
    ms.push_back((NowNs() - t0) / 1e6);
  }
  return Median(ms);
}

void TimeSummaryOps(const char* name, const CountingBloomFilter& f, uint64_t n, int reps) {
  const unsigned log2 = SmallestLog2Bits(static_cast<double>(n), f.k(), DesignFpr(kTargetFpr),
                                         kMinLog2Bits, f.log2_counters());
  Summary s;
  s.origin = "bench";
  s.estimated_items = n;
  Row("summary_log2_bits", name, n, log2, "");
  Row("summary_build", name, n,
      MedianMs(reps,
               [&] {
                 if (!f.Project(log2, &s.filter).ok()) Fail("project");
               }),
      "ms");
  std::vector<BloomFilter> copies(static_cast<size_t>(reps), s.filter);
  size_t next = 0;
  Row("summary_fold", name, n,
      MedianMs(reps,
               [&] {
                 if (!copies[next++].FoldTo(log2 - 1).ok()) Fail("fold");
               }),
      "ms");
  copies.clear();
  std::string bytes;
  Row("summary_encode", name, n,
      MedianMs(reps,
               [&] {
                 bytes.clear();
                 if (!EncodeSummary(s, &bytes).ok()) Fail("encode");
               }),
      "ms");
  Row("summary_bytes", name, n, static_cast<double>(bytes.size()), "B");
  Summary back;
  Row("summary_decode", name, n,
      MedianMs(reps,
               [&] {
                 if (!DecodeSummary(bytes, DecodeLimits{}, &back).ok()) Fail("decode");
               }),
      "ms");
  if (!(back.filter == s.filter)) Fail("decoded summary differs");
}

void RunProfile(Profile profile, uint64_t n, const Keys& keys, int reps) {
  Geometry g;
  if (!ChooseGeometry(profile, n, kTargetFpr, &g).ok()) Fail("geometry");
  const std::string name(ProfileName(profile));
  CountingBloomFilter f(g.log2_counters, g.k, g.multiplier);
  f.AddBatch(keys.present.data(), n);
  Row("cbf_k", name.c_str(), n, g.k, "");
  Row("cbf_mib", name.c_str(), n, static_cast<double>(f.bytes()) / (1 << 20), "MiB");
  TimeFilterOps(name.c_str(), f, n, keys, reps);
  TimeSummaryOps(name.c_str(), f, n, reps);
}

uint64_t FlagValue(const char* arg, const char* name, uint64_t fallback) {
  const size_t len = std::strlen(name);
  return std::strncmp(arg, name, len) == 0 ? std::strtoull(arg + len, nullptr, 10) : fallback;
}

int Main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    flags.dram_mib = FlagValue(argv[i], "--dram-mib=", flags.dram_mib);
    flags.reps = static_cast<int>(FlagValue(argv[i], "--reps=", flags.reps));
    flags.max_n = FlagValue(argv[i], "--max-n=", flags.max_n);
  }
  if (flags.reps < 1 || flags.dram_mib < 64 || flags.max_n < 1000) Fail("bad flags");
  const uint64_t bytes = flags.dram_mib << 20;
  Row("dram_load_4k_pages", "-", flags.dram_mib, ChaseNs(bytes, false, flags.reps), "ns");
  Row("dram_load_huge_pages", "-", flags.dram_mib, ChaseNs(bytes, true, flags.reps), "ns");

  const IndexHasher hasher(DeriveIndexKey("core ops bench"));
  Keys keys{RandomHashes(hasher, flags.max_n, 1), RandomHashes(hasher, kAbsent, 2)};
  const uint64_t key_words[2] = {1, 2};
  const std::string_view key16(reinterpret_cast<const char*>(key_words), sizeof(key_words));
  uint64_t sink = 0;
  Row("hash16", "-", 16,
      TimePerKey(
          flags.reps, 1000000, [&](uint64_t i) { sink += hasher.Hash(key16).h1 + i; }, [] {}),
      "ns");
  if (sink == 42) std::printf(" ");
  for (uint64_t n : {flags.max_n / 10, flags.max_n}) {
    for (Profile p : {Profile::kMemoryLean, Profile::kBalanced, Profile::kWireLean}) {
      RunProfile(p, n, keys, flags.reps);
    }
  }
  // Again at the end: the machine is shared, and a drift between the two shows it.
  Row("dram_load_4k_pages_end", "-", flags.dram_mib, ChaseNs(bytes, false, flags.reps), "ns");
  return 0;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) { return peerbloom::Main(argc, argv); }
