// Summary sizes, false-positive rates, delta sizes and codec speed per geometry profile.
//
//   summary_bench            all tables (about a minute on 2 cores)
//   summary_bench --quick    capacity 1e5 instead of 1e6, for a smoke run
//   summary_bench --sweep    only the wire sweeps (exact against power-of-two sizes)
//
// FPRs are measured on 4 x capacity absent keys (4e6): the standard error at 1 % is then
// 0.005 points, a quarter of the design margin ChooseGeometry leaves below the target
// (kFprDesignMargin), so a point sized for 1 % that measures above it is a sizing error, not
// noise.
//
// Prints figures; never judges time. Exits 1 on any false negative (a held key that a
// decoded summary, or a receiver's copy after a delta, does not report).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/params.h"
#include "peerbloom/summary.h"
#include "peerbloom/summary_builder.h"

namespace peerbloom {
namespace {

constexpr double kTargetFpr = 0.01;
constexpr uint64_t kAbsentPerCapacity = 4;
constexpr BodyEncoding kEncodings[] = {BodyEncoding::kRaw, BodyEncoding::kZstd,
                                       BodyEncoding::kGolombRice};

uint64_t g_false_negatives = 0;

void Die(const char* what, const Status& st) {
  std::fprintf(stderr, "summary_bench: error: %s: %s\n", what, st.ToString().c_str());
  std::exit(1);
}

std::vector<KeyHash> Keys(const IndexHasher& hasher, const char* prefix, uint64_t first,
                          uint64_t count) {
  std::vector<KeyHash> keys;
  keys.reserve(count);
  for (uint64_t i = first; i < first + count; ++i) {
    keys.push_back(hasher.Hash(std::string(prefix) + std::to_string(i)));
  }
  return keys;
}

// Counts held keys the filter misses; every one is a broken invariant.
template <typename Filter>
void CheckNoFalseNegatives(const Filter& filter, const std::vector<KeyHash>& held,
                           const char* where) {
  uint64_t missed = 0;
  for (const KeyHash& h : held) missed += !filter.MayContain(h);
  if (missed > 0) {
    std::fprintf(stderr, "FALSE NEGATIVES: %llu held keys missing in %s\n",
                 static_cast<unsigned long long>(missed), where);
  }
  g_false_negatives += missed;
}

template <typename Filter>
double MeasuredFpr(const Filter& filter, const std::vector<KeyHash>& absent) {
  uint64_t hits = 0;
  for (const KeyHash& h : absent) hits += filter.MayContain(h);
  return static_cast<double>(hits) / static_cast<double>(absent.size());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Fn>
double MedianMs(int reps, Fn&& fn) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return Median(ms);
}

std::string EncodeOrDie(const Summary& s, std::optional<BodyEncoding> force) {
  std::string out;
  const Status st = EncodeSummary(s, &out, force);
  if (!st.ok()) Die("encode", st);
  return out;
}

double BitsPerKey(size_t bytes, uint64_t keys) {
  return 8.0 * static_cast<double>(bytes) / static_cast<double>(keys);
}

// Encode/decode speed of one summary per body encoding: median of `reps` runs.
void PrintSpeed(const Summary& s, int reps) {
  const double raw_mb = static_cast<double>(s.filter.bytes()) / (1 << 20);
  for (BodyEncoding e : kEncodings) {
    std::string bytes;
    const double enc = MedianMs(reps, [&] { bytes = EncodeOrDie(s, e); });
    Summary back;
    const double dec = MedianMs(reps, [&] {
      const Status st = DecodeSummary(bytes, DecodeLimits{}, &back);
      if (!st.ok()) Die("decode", st);
    });
    std::printf("    %-12s encode %8.2f ms (%7.0f MB/s)   decode %8.2f ms (%7.0f MB/s)\n",
                std::string(BodyEncodingName(e)).c_str(), enc, raw_mb / enc * 1000, dec,
                raw_mb / dec * 1000);
  }
}

// 0.5 % of the held keys leave and as many new keys arrive: changed keys = 1 % of n.
struct ChurnResult {
  uint64_t changed_keys = 0;
  uint64_t flips = 0;
  size_t delta_bytes = 0;
  bool full = false;
  double publish_ms = 0;
};

ChurnResult Churn(CountingBloomFilter* cbf, SummaryBuilder* builder, std::vector<KeyHash>* held,
                  const IndexHasher& hasher, Summary* receiver, std::mt19937_64& rng) {
  const uint64_t moves = held->size() / 200;
  for (uint64_t i = 0; i < moves; ++i) {
    const size_t at = rng() % held->size();
    if (!cbf->Remove((*held)[at])) Die("churn", Status::Corruption("refused remove"));
    builder->Touch((*held)[at]);
    (*held)[at] = held->back();
    held->pop_back();
  }
  for (const KeyHash& h : Keys(hasher, "churn-", rng(), moves)) {
    cbf->Add(h);
    builder->Touch(h);
    held->push_back(h);
  }
  Publication p;
  const auto start = std::chrono::steady_clock::now();
  const Status st = builder->Publish(&p);
  const auto stop = std::chrono::steady_clock::now();
  if (!st.ok()) Die("publish", st);
  ChurnResult r;
  r.publish_ms = std::chrono::duration<double, std::milli>(stop - start).count();
  r.changed_keys = 2 * moves;
  r.full = p.full;
  if (p.full || !p.changed) return r;
  std::string bytes;
  if (!EncodeDelta(p.delta, &bytes).ok()) Die("encode delta", Status::Corruption("delta"));
  SummaryDelta d;
  Status dst = DecodeDelta(bytes, DecodeLimits{}, &d);
  if (!dst.ok()) Die("decode delta", dst);
  dst = ApplyDelta(d, receiver);
  if (!dst.ok()) Die("apply delta", dst);
  r.flips = d.flipped.size();
  r.delta_bytes = bytes.size();
  return r;
}

// The profile's header line, counter bytes per key and each encoding's full-summary size;
// returns the summary in the encoding a sender would choose.
std::string PrintFullSizes(Profile profile, const Geometry& g, const CountingBloomFilter& cbf,
                           const Summary& s, uint64_t capacity) {
  const auto n = static_cast<double>(capacity);
  std::printf("\n== %s: k=%u, 2^%u counters, n=%llu, summary 2^%u bits (fill %.3f)\n",
              std::string(ProfileName(profile)).c_str(), g.k, g.log2_counters,
              static_cast<unsigned long long>(capacity), s.filter.log2_bits(),
              s.filter.FillRatio());
  std::printf("  counter bytes per key           %8.2f\n", cbf.bytes() / n);
  for (BodyEncoding e : kEncodings) {
    std::printf("  full summary %-12s bits/key %8.2f\n", std::string(BodyEncodingName(e)).c_str(),
                BitsPerKey(EncodeOrDie(s, e).size(), capacity));
  }
  std::string chosen = EncodeOrDie(s, std::nullopt);
  MessageHeader h;
  const Status st = PeekHeader(chosen, DecodeLimits{}, &h);
  if (!st.ok()) Die("peek", st);
  std::printf(
      "  full summary chosen (%s) bits/key %6.2f   (bound log2(1/p) = %.2f, optimal "
      "Bloom %.2f)\n",
      std::string(BodyEncodingName(h.body_encoding)).c_str(), BitsPerKey(chosen.size(), capacity),
      std::log2(1 / kTargetFpr), -std::log(kTargetFpr) / (std::log(2.0) * std::log(2.0)));
  return chosen;
}

// Five rounds of 1 % churn, each delta applied to the receiver's copy, which must then equal
// the builder's summary and hold every key; prints the medians.
void RunChurnRounds(Profile profile, const IndexHasher& hasher, CountingBloomFilter* cbf,
                    SummaryBuilder* builder, std::vector<KeyHash>* held, Summary* receiver) {
  std::mt19937_64 rng(static_cast<uint64_t>(profile) + 1);
  std::vector<double> per_key, flips_per_key, publish_ms;
  for (int round = 0; round < 5; ++round) {
    const ChurnResult r = Churn(cbf, builder, held, hasher, receiver, rng);
    if (r.full || r.delta_bytes == 0) continue;
    per_key.push_back(static_cast<double>(r.delta_bytes) / static_cast<double>(r.changed_keys));
    flips_per_key.push_back(static_cast<double>(r.flips) / static_cast<double>(r.changed_keys));
    publish_ms.push_back(r.publish_ms);
  }
  if (!(receiver->filter == builder->current().filter)) {
    Die("receiver", Status::Corruption("receiver's filter differs from the builder's"));
  }
  CheckNoFalseNegatives(receiver->filter, *held, "receiver after deltas");
  if (!per_key.empty()) {
    std::printf(
        "  delta at 1%% churn: %.2f bytes per changed key (%.2f flipped bits per "
        "changed key; median of %zu rounds)\n",
        Median(per_key), Median(flips_per_key), per_key.size());
    std::printf("  builder publish of that delta: %.2f ms (median)\n", Median(publish_ms));
  }
}

void RunProfile(Profile profile, uint64_t capacity, const std::vector<KeyHash>& absent) {
  Geometry g;
  Status st = ChooseGeometry(profile, capacity, kTargetFpr, &g);
  if (!st.ok()) Die("geometry", st);
  const IndexHasher hasher;
  CountingBloomFilter cbf(g.log2_counters, g.k);
  SummaryBuilderOptions options;
  options.origin = "bench";
  SummaryBuilder builder(&cbf, options);
  std::vector<KeyHash> held = Keys(hasher, "key-", 0, capacity);
  for (const KeyHash& h : held) cbf.Add(h);
  Publication p;
  if (!(st = builder.Publish(&p)).ok()) Die("publish", st);
  const Summary& s = builder.current();
  const std::string chosen = PrintFullSizes(profile, g, cbf, s, capacity);
  Summary receiver;
  if (!(st = DecodeSummary(chosen, DecodeLimits{}, &receiver)).ok()) Die("decode", st);
  CheckNoFalseNegatives(receiver.filter, held, "decoded full summary");
  std::printf("  summary FPR measured %.4f%%  theory %.4f%%  (over %zu absent keys)\n",
              100 * MeasuredFpr(receiver.filter, absent),
              100 * FalsePositiveRate(static_cast<double>(s.filter.bits()),
                                      static_cast<double>(capacity), g.k),
              absent.size());
  std::printf("  local CBF FPR measured %.4f%%\n", 100 * MeasuredFpr(cbf, absent));
  RunChurnRounds(profile, hasher, &cbf, &builder, &held, &receiver);
  PrintSpeed(builder.current(), 3);
}

// One point of a sweep: a node whose counting filter is sized for n keys (ChooseGeometry
// with the given steps), holding n keys, publishes its summary; the chosen encoding is
// decoded as a receiver would and measured.
struct SweepPoint {
  FilterSize size;
  double bits_per_key = 0;
  double fpr = 0;
};

SweepPoint SweepOne(Profile profile, SizeSteps steps, const std::vector<KeyHash>& keys,
                    const std::vector<KeyHash>& absent) {
  Geometry g;
  Status st = ChooseGeometry(profile, keys.size(), kTargetFpr, &g, steps);
  if (!st.ok()) Die("geometry", st);
  CountingBloomFilter cbf(g.log2_counters, g.k, g.multiplier);
  cbf.AddBatch(keys.data(), keys.size());
  SummaryBuilderOptions options;
  options.origin = "sweep";
  SummaryBuilder builder(&cbf, options);
  Publication p;
  if (!(st = builder.Publish(&p)).ok()) Die("publish", st);
  const std::string chosen = EncodeOrDie(builder.current(), std::nullopt);
  Summary back;
  if (!(st = DecodeSummary(chosen, DecodeLimits{}, &back)).ok()) Die("decode", st);
  CheckNoFalseNegatives(back.filter, keys, "sweep summary");
  SweepPoint out;
  out.size = {back.filter.log2_bits(), back.filter.multiplier()};
  out.bits_per_key = BitsPerKey(chosen.size(), keys.size());
  out.fpr = MeasuredFpr(back.filter, absent);
  return out;
}

std::string SizeLabel(FilterSize size) {
  return size.multiplier == 1 ? "2^" + std::to_string(size.log2)
                              : std::to_string(size.multiplier) + "x2^" + std::to_string(size.log2);
}

// Wire bits per key at a 1 % target for n over two octaves (top / 4 .. top, steps of
// 2^(1/8)): exact sizes (c x 2^j, c odd <= 63) against power-of-two sizes, each a node whose
// counting filter is sized for n and whose summary is its projection, encoded with the
// smallest body and decoded. Next to the optimal Bloom filter (9.59) and the bound (6.64).
void RunSweep(Profile profile, const std::vector<KeyHash>& absent, uint64_t top) {
  std::printf("\n== %s sweep (target 1%%): wire bits per key over two octaves of n\n",
              std::string(ProfileName(profile)).c_str());
  std::printf(
      "  sized for a formula FPR <= %.4f%% (design margin %.2f); FPR measured over %zu "
      "absent keys\n",
      100 * DesignFpr(kTargetFpr), kFprDesignMargin, absent.size());
  std::printf("  %9s | %-10s %8s %8s | %-10s %8s %8s\n", "n", "exact m", "bits/key", "FPR %",
              "pow2 m", "bits/key", "FPR %");
  const IndexHasher hasher;
  const std::vector<KeyHash> all = Keys(hasher, "sweep-", 0, top);
  std::vector<double> exact_bpk, pow2_bpk;
  double exact_fpr = 0, pow2_fpr = 0;
  for (int step = 0; step <= 16; ++step) {
    const auto n = static_cast<uint64_t>(static_cast<double>(top) / 4 * std::pow(2.0, step / 8.0));
    const std::vector<KeyHash> keys(all.begin(), all.begin() + static_cast<ptrdiff_t>(n));
    const SweepPoint e = SweepOne(profile, SizeSteps::kExact, keys, absent);
    const SweepPoint q = SweepOne(profile, SizeSteps::kPowerOfTwo, keys, absent);
    exact_bpk.push_back(e.bits_per_key);
    pow2_bpk.push_back(q.bits_per_key);
    exact_fpr = std::max(exact_fpr, e.fpr);
    pow2_fpr = std::max(pow2_fpr, q.fpr);
    std::printf("  %9llu | %-10s %8.3f %8.4f | %-10s %8.3f %8.4f\n",
                static_cast<unsigned long long>(n), SizeLabel(e.size).c_str(), e.bits_per_key,
                100 * e.fpr, SizeLabel(q.size).c_str(), q.bits_per_key, 100 * q.fpr);
  }
  auto summary = [](const char* what, std::vector<double> v, double fpr) {
    std::sort(v.begin(), v.end());
    std::printf("  %-6s bits/key min %.3f  median %.3f  max %.3f;  measured FPR max %.4f%%\n", what,
                v.front(), v[v.size() / 2], v.back(), 100 * fpr);
  };
  summary("exact", exact_bpk, exact_fpr);
  summary("pow2", pow2_bpk, pow2_fpr);
  std::printf("  for reference: optimal Bloom filter %.2f bits/key, bound log2(1/p) %.2f\n",
              -std::log(kTargetFpr) / (std::log(2.0) * std::log(2.0)), std::log2(1 / kTargetFpr));
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  using namespace peerbloom;
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const uint64_t capacity = quick ? 100000 : 1000000;
  const IndexHasher hasher;
  const std::vector<KeyHash> absent = Keys(hasher, "absent-", 0, kAbsentPerCapacity * capacity);
  std::printf("summary_bench: target FPR 1%%, nominal capacity %llu, n = capacity\n",
              static_cast<unsigned long long>(capacity));
  const bool sweep_only = argc > 1 && std::strcmp(argv[argc - 1], "--sweep") == 0;
  for (Profile p : {Profile::kMemoryLean, Profile::kBalanced, Profile::kWireLean}) {
    if (!sweep_only) RunProfile(p, capacity, absent);
  }
  RunSweep(Profile::kWireLean, absent, capacity);
  RunSweep(Profile::kBalanced, absent, capacity);
  if (g_false_negatives > 0) {
    std::fprintf(stderr, "summary_bench: FAILED: %llu false negatives\n",
                 static_cast<unsigned long long>(g_false_negatives));
    return 1;
  }
  std::printf("\nno false negatives\n");
  return 0;
}
