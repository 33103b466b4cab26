// Squid integration costs, printed as medians of 5 runs (thread CPU time):
//  - store.log lines/s: parse only, and parse + live-key bookkeeping + counting filter
//    add/remove (SipHash index hash, 2^23 4-bit counters, k = 7) on a synthetic 1e6-line
//    log shaped like a busy cache (60 % new SWAPOUTs, 25 % RELEASEs of live keys, 10 %
//    RELEASEs of private keys, 5 % repeated SWAPOUTs);
//  - live-set memory per key at the end of the log, and its snapshot encode/decode time;
//  - Cache Digest MayContain ns for present and absent keys at 1e5 and 1e7 capacity
//    (61 KiB and 6 MiB masks: cache-resident vs DRAM-bound).
// It fails (exit 1) if the bookkeeping ever disagrees with the log or the digest misses a key.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/squid_digest.h"
#include "peerbloom/squid_store_log_state.h"

namespace peerbloom {
namespace {

constexpr int kRuns = 5;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// This thread's CPU time: the machine is shared, and wall time would count other
// processes' turns on the cores.
double CpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

template <typename Fn>
double MedianSeconds(Fn&& fn) {
  std::vector<double> runs;
  for (int r = 0; r < kRuns; ++r) {
    const double t0 = CpuSeconds();
    fn();
    runs.push_back(CpuSeconds() - t0);
  }
  return Median(runs);
}

SquidKey RandomKey(std::mt19937_64* rng) {
  SquidKey k;
  for (auto& b : k) b = static_cast<uint8_t>((*rng)());
  return k;
}

void AppendLine(std::string* log, const char* action, const SquidKey& key, uint64_t n) {
  char buf[512];
  const int len = std::snprintf(
      buf, sizeof(buf),
      "1795327317.643 %s 00 %08llX %s  200 1795327317 1795327306 1795413717 text/html; "
      "charset=utf-8 1354/1354 GET http://origin.example.com/static/objects/item%llu.html\n",
      action, static_cast<unsigned long long>(n), SquidKeyHex(key).c_str(),
      static_cast<unsigned long long>(n));
  log->append(buf, static_cast<size_t>(len));
}

// A synthetic store.log and the number of keys it leaves live.
std::string MakeLog(size_t lines, size_t* live_at_end) {
  std::mt19937_64 rng(1);
  std::string log;
  log.reserve(lines * 200);
  std::vector<SquidKey> live;
  for (size_t i = 0; i < lines; ++i) {
    const unsigned dice = rng() % 100;
    if (dice < 60 || live.empty()) {
      live.push_back(RandomKey(&rng));
      AppendLine(&log, "SWAPOUT", live.back(), i);
    } else if (dice < 85) {
      const size_t j = rng() % live.size();
      AppendLine(&log, "RELEASE", live[j], i);
      live[j] = live.back();
      live.pop_back();
    } else if (dice < 95) {
      AppendLine(&log, "RELEASE", RandomKey(&rng), i);  // a private key never stored
    } else {
      AppendLine(&log, "SWAPOUT", live[rng() % live.size()], i);
    }
  }
  *live_at_end = live.size();
  return log;
}

template <typename Fn>
void ForEachLine(const std::string& log, Fn&& fn) {
  size_t pos = 0;
  while (pos < log.size()) {
    const char* nl =
        static_cast<const char*>(std::memchr(log.data() + pos, '\n', log.size() - pos));
    const size_t end = static_cast<size_t>(nl - log.data());
    fn(std::string_view(log.data() + pos, end - pos));
    pos = end + 1;
  }
}

// Encoding and decoding the live set, as a daemon snapshot does.
bool BenchSnapshot(const std::string& log) {
  StoreLogState state;
  ForEachLine(log, [&](std::string_view line) {
    SquidKey key;
    (void)state.ApplyLine(line, &key);
  });
  std::string bytes;
  const double encode_s = MedianSeconds([&] {
    bytes.clear();
    state.EncodeTo(&bytes);
  });
  bool ok = true;
  const double decode_s = MedianSeconds([&] {
    StoreLogState back;
    ok &= back.DecodeFrom(bytes, state.live().size()).ok() &&
          back.live().size() == state.live().size();
  });
  std::printf("  live-set snapshot: %.1f MiB, encode %.1f ms, decode %.1f ms (%.0f ns/key)\n",
              bytes.size() / 1048576.0, encode_s * 1e3, decode_s * 1e3,
              decode_s / state.live().size() * 1e9);
  if (!ok) std::printf("FAIL: the snapshot did not decode to the same set\n");
  return ok;
}

bool BenchStoreLog() {
  constexpr size_t kLines = 1000000;
  size_t expected_live = 0;
  const std::string log = MakeLog(kLines, &expected_live);
  std::printf("store.log: %zu lines, %.1f MiB, %zu keys live at the end\n", kLines,
              log.size() / 1048576.0, expected_live);

  size_t parsed = 0;
  const double parse_s = MedianSeconds([&] {
    parsed = 0;
    ForEachLine(log, [&](std::string_view line) {
      StoreLogEntry e;
      parsed += ParseStoreLogLine(line, &e).ok();
    });
  });
  std::printf("  parse only:                        %8.0f ns/line  %6.2f M lines/s\n",
              parse_s / kLines * 1e9, kLines / parse_s / 1e6);

  const IndexHasher hasher;
  bool ok = parsed == kLines;
  size_t memory = 0;
  const double apply_s = MedianSeconds([&] {
    StoreLogState state;
    CountingBloomFilter filter(23, 7);
    ForEachLine(log, [&](std::string_view line) {
      SquidKey key;
      switch (state.ApplyLine(line, &key)) {
        case StoreLogDecision::kAdd:
          filter.Add(hasher.Hash(SquidKeyBytes(key)));
          break;
        case StoreLogDecision::kRemove:
          ok &= filter.Remove(hasher.Hash(SquidKeyBytes(key)));
          break;
        default:
          break;
      }
    });
    ok &= state.live().size() == expected_live && filter.items() == expected_live &&
          state.counters().malformed == 0;
    memory = state.live().memory_bytes();
  });
  std::printf("  parse + bookkeeping + filter:      %8.0f ns/line  %6.2f M lines/s\n",
              apply_s / kLines * 1e9, kLines / apply_s / 1e6);
  std::printf("  live set: %zu keys in %.1f MiB = %.1f bytes/key\n", expected_live,
              memory / 1048576.0, static_cast<double>(memory) / expected_live);
  if (!ok) std::printf("FAIL: bookkeeping disagrees with the log\n");
  return ok && BenchSnapshot(log);
}

// A digest as Squid builds it: capacity entries, 5 bits per entry, four positions per key.
std::string MakeDigest(const std::vector<SquidKey>& keys, uint32_t capacity) {
  const uint32_t mask_size = (capacity * 5u + 7) / 8;
  std::string d(kCacheDigestHeaderBytes + mask_size, '\0');
  auto put32 = [&](size_t off, uint32_t v) {
    for (int i = 0; i < 4; ++i) d[off + i] = static_cast<char>(v >> (24 - 8 * i));
  };
  d[1] = 5;
  d[3] = 3;
  put32(4, capacity);
  put32(8, static_cast<uint32_t>(keys.size()));
  put32(16, mask_size);
  d[20] = 5;
  d[21] = 4;
  for (const SquidKey& k : keys) {
    for (uint32_t bit : CacheDigestPositions(k, mask_size * 8)) {
      d[kCacheDigestHeaderBytes + bit / 8] |= static_cast<char>(1 << (bit % 8));
    }
  }
  return d;
}

bool BenchDigest(uint32_t capacity) {
  std::mt19937_64 rng(capacity);
  std::vector<SquidKey> present(capacity), absent(1000000);
  for (auto& k : present) k = RandomKey(&rng);
  for (auto& k : absent) k = RandomKey(&rng);
  CacheDigest digest;
  if (!CacheDigest::Parse(MakeDigest(present, capacity), &digest).ok()) return false;
  // Probe a fixed sample of the present keys in random order.
  std::vector<SquidKey> probe(1000000);
  for (auto& k : probe) k = present[rng() % present.size()];
  size_t hits = 0, false_hits = 0;
  const double present_s = MedianSeconds([&] {
    hits = 0;
    for (const SquidKey& k : probe) hits += digest.MayContain(k);
  });
  const double absent_s = MedianSeconds([&] {
    false_hits = 0;
    for (const SquidKey& k : absent) false_hits += digest.MayContain(k);
  });
  std::printf(
      "digest capacity %u (%u KiB mask, fill %.3f): MayContain present %.1f ns, absent %.1f "
      "ns; fpr %.4f (fill^4 %.4f)\n",
      capacity, digest.header().mask_size / 1024, digest.fill(), present_s / probe.size() * 1e9,
      absent_s / absent.size() * 1e9, static_cast<double>(false_hits) / absent.size(),
      digest.EstimatedFalsePositiveRate());
  if (hits != probe.size()) std::printf("FAIL: the digest missed a present key\n");
  return hits == probe.size();
}

}  // namespace
}  // namespace peerbloom

int main() {
  bool ok = peerbloom::BenchStoreLog();
  ok &= peerbloom::BenchDigest(100000);
  ok &= peerbloom::BenchDigest(10000000);
  return ok ? 0 : 1;
}
