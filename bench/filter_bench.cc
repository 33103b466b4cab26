// Counting-filter and summary hot paths at 1e6 and 1e7 keys, per geometry profile (and at
// 1e5 keys, memory-lean, whose counters fit in L2: the cost of the code without DRAM misses).
//
// For each profile (ChooseGeometry at capacity n, local fpr 0.01) the counting filter is filled
// with n random 16-byte keys (the size of a Squid store key), then timed:
//   add, remove                 the filter stays within n +- 10 % (keys are taken back out /
//                               put back in, untimed, every n/10 operations)
//   may-contain present/absent  cycling through all present keys / 2^20 never-added keys
//   *_batch                     AddBatch / RemoveBatch / MayContainBatch over 256 keys per
//                               iteration (counter loads prefetched a few keys ahead);
//                               read "ns_per_key"
//   variants "/hash"            include SipHash-1-3-128 of the 16-byte key in the timing
//   summary may-contain         the Bloom summary the node would publish (projection to the
//                               smallest size meeting 1 % at n keys)
// After the timings it prints, per profile, memory per key and the achieved local FPR next to
// the formula. Any false negative aborts the run; time never fails it.
//
// Usage: filter_bench [Google Benchmark flags]. Without flags it runs with
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2
// (medians reported; about 170 benchmarks, 10-15 minutes on 2 shared cores).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/params.h"

namespace peerbloom {
namespace {

constexpr uint64_t kAbsentKeys = uint64_t{1} << 20;
constexpr size_t kBatch = 256;
constexpr double kTargetFpr = 0.01;

const IndexHasher& Hasher() {
  static const IndexHasher hasher(DeriveIndexKey("filter bench secret"));
  return hasher;
}

std::string_view Bytes(const SquidKey& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

const char* NLabel(uint64_t n) { return n >= 10000000 ? "1e7" : n >= 1000000 ? "1e6" : "1e5"; }

[[noreturn]] void FalseNegative(const char* where) {
  std::fprintf(stderr, "filter_bench: FALSE NEGATIVE in %s\n", where);
  std::abort();
}

// Random 16-byte keys (MD5 outputs look like this) and their index hashes.
struct KeySet {
  std::vector<SquidKey> keys;
  std::vector<KeyHash> hashes;

  KeySet(uint64_t count, uint64_t seed) : keys(count), hashes(count) {
    std::mt19937_64 rng(seed);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t words[2] = {rng(), rng()};
      std::memcpy(keys[i].data(), words, sizeof(words));
      hashes[i] = Hasher().Hash(Bytes(keys[i]));
    }
  }
};

const KeySet& PresentKeys() {  // the first n are the ones added at size n
  static const KeySet set(10000000, 1);
  return set;
}
const KeySet& AbsentKeys() {
  static const KeySet set(kAbsentKeys, 2);
  return set;
}

struct Figures {
  Profile profile;
  uint64_t n;
  Geometry geometry;
  size_t counter_bytes;
  unsigned summary_log2;
  uint64_t fp_hits;
  uint64_t probes;
  double theory;
};
std::vector<Figures>& AllFigures() {
  static std::vector<Figures> figures;
  return figures;
}

// The filter of one (profile, n), built on first use; one is held at a time.
struct Loaded {
  Profile profile;
  uint64_t n;
  CountingBloomFilter filter;
  BloomFilter summary;
};

Loaded& Load(Profile profile, uint64_t n) {
  static std::unique_ptr<Loaded> held;
  if (held && held->profile == profile && held->n == n) return *held;
  held.reset();
  Geometry g;
  if (!ChooseGeometry(profile, n, kTargetFpr, &g).ok()) std::abort();
  held = std::make_unique<Loaded>(
      Loaded{profile, n, CountingBloomFilter(g.log2_counters, g.k), BloomFilter()});
  const KeySet& present = PresentKeys();
  for (uint64_t i = 0; i < n; ++i) held->filter.Add(present.hashes[i]);
  const unsigned summary_log2 = SmallestLog2Bits(static_cast<double>(n), g.k, DesignFpr(kTargetFpr),
                                                 kMinLog2Bits, g.log2_counters);
  if (!held->filter.Project(summary_log2, &held->summary).ok()) std::abort();

  Figures fig{
      profile,
      n,
      g,
      held->filter.bytes(),
      summary_log2,
      0,
      kAbsentKeys,
      FalsePositiveRate(static_cast<double>(held->filter.counters()), static_cast<double>(n), g.k)};
  for (const KeyHash& h : AbsentKeys().hashes) fig.fp_hits += held->filter.MayContain(h);
  for (uint64_t i = 0; i < n; ++i) {
    if (!held->filter.MayContain(present.hashes[i])) FalseNegative("fill check");
  }
  AllFigures().push_back(fig);
  return *held;
}

KeyHash HashOf(const KeySet& set, uint64_t i, bool with_hash) {
  return with_hash ? Hasher().Hash(Bytes(set.keys[i])) : set.hashes[i];
}

// Adds never-added keys; every n/10 adds they are removed again, untimed.
void CbfAdd(benchmark::State& state, Profile profile, uint64_t n, bool with_hash) {
  CountingBloomFilter& f = Load(profile, n).filter;
  const KeySet& pool = AbsentKeys();
  const uint64_t round = n / 10;
  uint64_t i = 0;
  for (auto _ : state) {
    f.Add(HashOf(pool, i, with_hash));
    if (++i == round) {
      state.PauseTiming();
      for (uint64_t j = 0; j < round; ++j) f.Remove(pool.hashes[j]);
      i = 0;
      state.ResumeTiming();
    }
  }
  for (uint64_t j = 0; j < i; ++j) f.Remove(pool.hashes[j]);
}

// Removes present keys; every n/10 removes they are added back, untimed.
void CbfRemove(benchmark::State& state, Profile profile, uint64_t n, bool with_hash) {
  CountingBloomFilter& f = Load(profile, n).filter;
  const KeySet& pool = PresentKeys();
  const uint64_t round = n / 10;
  uint64_t i = 0;
  for (auto _ : state) {
    if (!f.Remove(HashOf(pool, i, with_hash))) FalseNegative("remove");
    if (++i == round) {
      state.PauseTiming();
      for (uint64_t j = 0; j < round; ++j) f.Add(pool.hashes[j]);
      i = 0;
      state.ResumeTiming();
    }
  }
  for (uint64_t j = 0; j < i; ++j) f.Add(pool.hashes[j]);
}

template <typename Filter>
void MayContainPresent(benchmark::State& state, const Filter& f, uint64_t n, bool with_hash) {
  const KeySet& keys = PresentKeys();
  uint64_t i = 0;
  for (auto _ : state) {
    if (!f.MayContain(HashOf(keys, i, with_hash))) FalseNegative("may-contain");
    if (++i == n) i = 0;
  }
}

template <typename Filter>
void MayContainAbsent(benchmark::State& state, const Filter& f, bool with_hash) {
  const KeySet& keys = AbsentKeys();
  uint64_t i = 0;
  uint64_t hits = 0;
  for (auto _ : state) {
    hits += f.MayContain(HashOf(keys, i, with_hash));
    if (++i == kAbsentKeys) i = 0;
  }
  benchmark::DoNotOptimize(hits);
}

void SetPerKeyCounter(benchmark::State& state) {
  // Iteration time divided by kBatch: printed as e.g. "ns_per_key=21.3ns".
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(kBatch),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The kBatch hashes starting at key i: precomputed, or computed now into `scratch` (timed),
// the way a caller hashes a burst of keys before handing them to a batch call.
const KeyHash* BatchHashes(const KeySet& set, uint64_t i, bool with_hash, KeyHash* scratch) {
  if (!with_hash) return &set.hashes[i];
  for (size_t j = 0; j < kBatch; ++j) scratch[j] = Hasher().Hash(Bytes(set.keys[i + j]));
  return scratch;
}

// One iteration tests kBatch keys; the "ns_per_key" counter is the figure to read.
void CbfMayContainBatch(benchmark::State& state, Profile profile, uint64_t n, bool present,
                        bool with_hash) {
  const CountingBloomFilter& f = Load(profile, n).filter;
  const KeySet& keys = present ? PresentKeys() : AbsentKeys();
  const uint64_t limit = present ? n : kAbsentKeys;
  KeyHash scratch[kBatch];
  bool out[kBatch];
  uint64_t i = 0;
  uint64_t hits = 0;
  for (auto _ : state) {
    f.MayContainBatch(BatchHashes(keys, i, with_hash, scratch), kBatch, out);
    for (size_t j = 0; j < kBatch; ++j) {
      if (present && !out[j]) FalseNegative("may-contain batch");
      hits += out[j];
    }
    i += kBatch;
    if (i + kBatch > limit) i = 0;
  }
  benchmark::DoNotOptimize(hits);
  SetPerKeyCounter(state);
}

// AddBatch / RemoveBatch of kBatch keys per iteration, rounds as in CbfAdd / CbfRemove.
void CbfAddBatch(benchmark::State& state, Profile profile, uint64_t n, bool with_hash) {
  CountingBloomFilter& f = Load(profile, n).filter;
  const KeySet& pool = AbsentKeys();
  const uint64_t round = n / 10 / kBatch * kBatch;
  KeyHash scratch[kBatch];
  uint64_t i = 0;
  for (auto _ : state) {
    f.AddBatch(BatchHashes(pool, i, with_hash, scratch), kBatch);
    if ((i += kBatch) == round) {
      state.PauseTiming();
      if (f.RemoveBatch(pool.hashes.data(), round, nullptr) != round) FalseNegative("undo");
      i = 0;
      state.ResumeTiming();
    }
  }
  if (f.RemoveBatch(pool.hashes.data(), i, nullptr) != i) FalseNegative("undo");
  SetPerKeyCounter(state);
}

void CbfRemoveBatch(benchmark::State& state, Profile profile, uint64_t n, bool with_hash) {
  CountingBloomFilter& f = Load(profile, n).filter;
  const KeySet& pool = PresentKeys();
  const uint64_t round = n / 10 / kBatch * kBatch;
  KeyHash scratch[kBatch];
  uint64_t i = 0;
  for (auto _ : state) {
    if (f.RemoveBatch(BatchHashes(pool, i, with_hash, scratch), kBatch, nullptr) != kBatch) {
      FalseNegative("remove batch");
    }
    if ((i += kBatch) == round) {
      state.PauseTiming();
      f.AddBatch(pool.hashes.data(), round);
      i = 0;
      state.ResumeTiming();
    }
  }
  f.AddBatch(pool.hashes.data(), i);
  SetPerKeyCounter(state);
}

void Register(Profile profile, uint64_t n) {
  const std::string prefix = std::string(ProfileName(profile)) + "/n=" + NLabel(n) + "/";
  for (bool with_hash : {false, true}) {
    const std::string suffix = with_hash ? "/hash" : "";
    benchmark::RegisterBenchmark((prefix + "cbf_add" + suffix).c_str(), CbfAdd, profile, n,
                                 with_hash);
    benchmark::RegisterBenchmark((prefix + "cbf_remove" + suffix).c_str(), CbfRemove, profile, n,
                                 with_hash);
    benchmark::RegisterBenchmark(
        (prefix + "cbf_may_contain_present" + suffix).c_str(),
        [=](benchmark::State& s) { MayContainPresent(s, Load(profile, n).filter, n, with_hash); });
    benchmark::RegisterBenchmark(
        (prefix + "cbf_may_contain_absent" + suffix).c_str(),
        [=](benchmark::State& s) { MayContainAbsent(s, Load(profile, n).filter, with_hash); });
  }
  for (bool with_hash : {false, true}) {
    const std::string suffix = with_hash ? "/hash" : "";
    benchmark::RegisterBenchmark((prefix + "cbf_add_batch" + suffix).c_str(), CbfAddBatch, profile,
                                 n, with_hash);
    benchmark::RegisterBenchmark((prefix + "cbf_remove_batch" + suffix).c_str(), CbfRemoveBatch,
                                 profile, n, with_hash);
    benchmark::RegisterBenchmark((prefix + "cbf_may_contain_batch_present" + suffix).c_str(),
                                 CbfMayContainBatch, profile, n, true, with_hash);
    benchmark::RegisterBenchmark((prefix + "cbf_may_contain_batch_absent" + suffix).c_str(),
                                 CbfMayContainBatch, profile, n, false, with_hash);
  }
  benchmark::RegisterBenchmark(
      (prefix + "summary_may_contain_present").c_str(),
      [=](benchmark::State& s) { MayContainPresent(s, Load(profile, n).summary, n, false); });
  benchmark::RegisterBenchmark(
      (prefix + "summary_may_contain_absent").c_str(),
      [=](benchmark::State& s) { MayContainAbsent(s, Load(profile, n).summary, false); });
}

void PrintFigures() {
  std::printf("\n%-12s %-4s %3s %9s %11s %11s %11s %12s %12s %8s\n", "profile", "n", "k",
              "counters", "counter MiB", "bytes/key", "summary", "local FPR", "theory", "ratio");
  for (const Figures& f : AllFigures()) {
    const double measured = static_cast<double>(f.fp_hits) / static_cast<double>(f.probes);
    std::printf("%-12s %-4s %3u %6s2^%u %11.1f %11.2f %6s2^%u %12.6f %12.6f %8.3f\n",
                std::string(ProfileName(f.profile)).c_str(), NLabel(f.n), f.geometry.k, "",
                f.geometry.log2_counters, static_cast<double>(f.counter_bytes) / (1 << 20),
                static_cast<double>(f.counter_bytes) / static_cast<double>(f.n), "", f.summary_log2,
                measured, f.theory, measured / f.theory);
  }
  std::printf("local FPR: false positives among %llu never-added keys at n keys\n",
              static_cast<unsigned long long>(kAbsentKeys));
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  using peerbloom::Profile;
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=5";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  std::string min_time = "--benchmark_min_time=0.2";
  if (argc == 1) {
    args.push_back(reps.data());
    args.push_back(aggregates.data());
    args.push_back(min_time.data());
  }
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;
  // 1e5 keys, memory-lean: 512 KiB of counters that stay in L2, the cost without DRAM misses.
  peerbloom::Register(Profile::kMemoryLean, 100000);
  for (uint64_t n : {uint64_t{1000000}, uint64_t{10000000}}) {
    for (Profile p : {Profile::kMemoryLean, Profile::kBalanced, Profile::kWireLean}) {
      peerbloom::Register(p, n);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  peerbloom::PrintFigures();
  return 0;
}
