// Measured false-positive rate of a Bloom filter driven by the classic string hashes of older
// Bloom filter tutorials, next to the formula and to peerbloom's keyed hash, on one URL set
// with the same m, n and k for every hash.
//
// The hashes, written here from their published definitions (32-bit arithmetic, bytes read
// as unsigned): RS (Sedgewick), JS (Sobel), PJW (Weinberger), ELF (the System V ELF object
// hash), BKDR (Kernighan & Ritchie's multiplier 131), SDBM, DJB (Bernstein's times 33),
// DEK (Knuth, TAOCP vol. 3), AP (Partow), FNV-1a 32 (Fowler, Noll, Vo) and CRC-32 (IEEE
// 802.3, reflected, polynomial 0xEDB88320).
// k positions per URL, as tutorials derive them from one 32-bit hash:
//   string hashes   salted: position i = H(salt_i || url) mod m, salt_i 4 fixed bytes
//   crc32+draws     CRC-32 seeds a Park-Miller "minimal standard" generator (multiplier
//                   48271, modulus 2^31 - 1); the k positions are k draws mod m
//   crc32+double    the same generator's first two draws as h1, h2 of double hashing:
//                   position i = (h1 + i h2) mod m
//   peerbloom       SipHash-1-3-128 keyed (lib/hash), Kirsch-Mitzenmacher double hashing
//                   in the library's BloomFilter (bloom_probe.h)
// Two sizes: m = 2^20 (a power of two: mod m keeps only the low bits) and m = 15 x 2^16
// (not one); n = 100,000 URLs, k = 7. FPR measured over 1e6 URLs never added (standard
// error about 0.01 percentage points at 1 %).
//
// URLs: a deterministic mix of three shapes seen in proxy logs: numbered objects on one
// origin (http://origin.example.com/static/objects/item123.html), CDN assets with a hex
// content id and a size, and dated article pages on many sites. The absent URLs come from
// the same generator after the added ones, so none is added.
//
// Output: one row per (hash, m): row HASH M N K MEASURED THEORY STDERR NS_PER_URL
// (NS_PER_URL: the k positions of one URL, median of 3 passes over 1e5 URLs, thread CPU
// time).
// Usage: classic_hash_fpr_bench [--probes=1000000]
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/params.h"

namespace peerbloom {
namespace {

constexpr unsigned kK = 7;
constexpr uint64_t kN = 100000;

// --- The classic 32-bit string hashes --------------------------------------------------------

using Bytes = std::string_view;

uint32_t Rs(Bytes s) {
  uint32_t a = 63689, hash = 0;
  for (unsigned char c : s) {
    hash = hash * a + c;
    a *= 378551;
  }
  return hash;
}

uint32_t Js(Bytes s) {
  uint32_t hash = 1315423911u;
  for (unsigned char c : s) hash ^= (hash << 5) + c + (hash >> 2);
  return hash;
}

// Weinberger's hash for a 32-bit word: shift in an eighth, fold the top eighth back in.
uint32_t Pjw(Bytes s) {
  constexpr uint32_t kHigh = 0xF0000000u;
  uint32_t hash = 0;
  for (unsigned char c : s) {
    hash = (hash << 4) + c;
    if (const uint32_t top = hash & kHigh; top != 0) hash = (hash ^ (top >> 24)) & ~kHigh;
  }
  return hash;
}

uint32_t Elf(Bytes s) {
  uint32_t hash = 0;
  for (unsigned char c : s) {
    hash = (hash << 4) + c;
    const uint32_t top = hash & 0xF0000000u;
    if (top != 0) hash ^= top >> 24;
    hash &= ~top;
  }
  return hash;
}

uint32_t Bkdr(Bytes s) {
  uint32_t hash = 0;
  for (unsigned char c : s) hash = hash * 131 + c;
  return hash;
}

uint32_t Sdbm(Bytes s) {
  uint32_t hash = 0;
  for (unsigned char c : s) hash = c + (hash << 6) + (hash << 16) - hash;
  return hash;
}

uint32_t Djb(Bytes s) {
  uint32_t hash = 5381;
  for (unsigned char c : s) hash = (hash << 5) + hash + c;
  return hash;
}

uint32_t Dek(Bytes s) {
  auto hash = static_cast<uint32_t>(s.size());
  for (unsigned char c : s) hash = ((hash << 5) ^ (hash >> 27)) ^ c;
  return hash;
}

uint32_t Ap(Bytes s) {
  uint32_t hash = 0xAAAAAAAAu;
  for (size_t i = 0; i < s.size(); ++i) {
    const uint32_t c = static_cast<unsigned char>(s[i]);
    hash ^= (i & 1) == 0 ? (hash << 7) ^ (c * (hash >> 3)) : ~((hash << 11) + (c ^ (hash >> 5)));
  }
  return hash;
}

uint32_t Fnv1a32(Bytes s) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : s) hash = (hash ^ c) * 16777619u;
  return hash;
}

// CRC-32 as in IEEE 802.3 and zlib: reflected, initial and final value all ones.
const std::array<uint32_t, 256>& CrcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t r = i;
      for (int b = 0; b < 8; ++b) r = (r & 1) != 0 ? (r >> 1) ^ 0xEDB88320u : r >> 1;
      t[i] = r;
    }
    return t;
  }();
  return table;
}

uint32_t Crc32(Bytes s) {
  const auto& table = CrcTable();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : s) crc = (crc >> 8) ^ table[(crc ^ c) & 0xFF];
  return ~crc;
}

// Park & Miller's minimal standard generator, multiplier 48271 (the later recommendation).
class MinStd {
 public:
  explicit MinStd(uint32_t seed) : state_(seed % kModulus == 0 ? 1 : seed % kModulus) {}
  uint32_t Next() {
    state_ = static_cast<uint32_t>(uint64_t{state_} * 48271 % kModulus);
    return state_;
  }

 private:
  static constexpr uint32_t kModulus = 2147483647u;
  uint32_t state_;
};

// --- Positions ------------------------------------------------------------------------------

enum class Scheme { kSalted, kCrcDraws, kCrcDouble, kPeerbloom };

struct HashCase {
  const char* name;
  uint32_t (*fn)(Bytes);
  Scheme scheme;
};

constexpr HashCase kCases[] = {
    {"RS", Rs, Scheme::kSalted},
    {"JS", Js, Scheme::kSalted},
    {"PJW", Pjw, Scheme::kSalted},
    {"ELF", Elf, Scheme::kSalted},
    {"BKDR", Bkdr, Scheme::kSalted},
    {"SDBM", Sdbm, Scheme::kSalted},
    {"DJB", Djb, Scheme::kSalted},
    {"DEK", Dek, Scheme::kSalted},
    {"AP", Ap, Scheme::kSalted},
    {"FNV-1a-32", Fnv1a32, Scheme::kSalted},
    {"CRC32+draws", Crc32, Scheme::kCrcDraws},
    {"CRC32+double", Crc32, Scheme::kCrcDouble},
    {"peerbloom", nullptr, Scheme::kPeerbloom},
};

// The k positions of `url` in a filter of m bits, for the 32-bit schemes.
void Positions(const HashCase& c, const std::string& url, uint64_t m, std::string* scratch,
               uint64_t* out) {
  if (c.scheme == Scheme::kSalted) {
    // salt_i || url, the salt overwritten in place.
    scratch->assign(4, '\0');
    scratch->append(url);
    for (unsigned i = 0; i < kK; ++i) {
      const uint32_t salt = 0x9E3779B9u * (i + 1);
      std::memcpy(scratch->data(), &salt, 4);
      out[i] = c.fn(*scratch) % m;
    }
    return;
  }
  MinStd rng(c.fn(url));
  if (c.scheme == Scheme::kCrcDraws) {
    for (unsigned i = 0; i < kK; ++i) out[i] = rng.Next() % m;
    return;
  }
  const uint64_t h1 = rng.Next(), h2 = rng.Next();
  for (unsigned i = 0; i < kK; ++i) out[i] = (h1 + i * h2) % m;
}

class BitArray {
 public:
  explicit BitArray(uint64_t m) : words_((m + 63) / 64) {}
  void Set(uint64_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool Test(uint64_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }

 private:
  std::vector<uint64_t> words_;
};

// --- URLs -----------------------------------------------------------------------------------

class UrlGenerator {
 public:
  std::string Next() {
    char buf[200];
    const uint64_t r = rng_();
    switch (count_++ % 3) {
      case 0:
        std::snprintf(buf, sizeof(buf), "http://origin.example.com/static/objects/item%llu.html",
                      static_cast<unsigned long long>(count_ / 3));
        break;
      case 1:
        std::snprintf(buf, sizeof(buf),
                      "https://cdn%u.example-cdn.net/assets/%08x%04llx/photo-%ux%u.jpg?v=%u",
                      static_cast<unsigned>(r % 8), static_cast<unsigned>(r >> 32),
                      static_cast<unsigned long long>(count_ / 3 % 65536),
                      static_cast<unsigned>(160 << (r >> 8) % 4),
                      static_cast<unsigned>(90 << (r >> 10) % 4), static_cast<unsigned>(r % 97));
        break;
      default:
        std::snprintf(buf, sizeof(buf), "http://www.site%u.org/news/2026/%02u/%02u/%s-%s-%llu",
                      static_cast<unsigned>(r % 5000), static_cast<unsigned>(1 + (r >> 13) % 12),
                      static_cast<unsigned>(1 + (r >> 17) % 28), Word(r >> 22), Word(r >> 30),
                      static_cast<unsigned long long>(count_ / 3));
    }
    return buf;
  }

 private:
  static const char* Word(uint64_t r) {
    static const char* const kWords[] = {"city",  "council", "votes", "new",    "budget",
                                         "storm", "season",  "opens", "market", "report",
                                         "local", "team",    "wins",  "school", "plan"};
    return kWords[r % 15];
  }
  std::mt19937_64 rng_{2026};
  uint64_t count_ = 0;
};

// --- Measurement ----------------------------------------------------------------------------

// The thread's CPU time, so that waiting for a core on a shared machine is not counted.
double NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct Outcome {
  double fpr = 0;
  double ns_per_url = 0;
};

Outcome Measure32(const HashCase& c, uint64_t m, const std::vector<std::string>& added,
                  const std::vector<std::string>& absent) {
  BitArray bits(m);
  std::string scratch;
  uint64_t pos[kK];
  for (const std::string& url : added) {
    Positions(c, url, m, &scratch, pos);
    for (uint64_t p : pos) bits.Set(p);
  }
  uint64_t hits = 0;
  for (const std::string& url : absent) {
    Positions(c, url, m, &scratch, pos);
    bool all = true;
    for (uint64_t p : pos) all = all && bits.Test(p);
    hits += all;
  }
  std::vector<double> ns;
  uint64_t sink = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double t0 = NowNs();
    for (const std::string& url : added) {
      Positions(c, url, m, &scratch, pos);
      sink += pos[kK - 1];
    }
    ns.push_back((NowNs() - t0) / static_cast<double>(added.size()));
  }
  std::sort(ns.begin(), ns.end());
  if (sink == 42) std::printf(" ");
  return {static_cast<double>(hits) / static_cast<double>(absent.size()), ns[1]};
}

Outcome MeasurePeerbloom(unsigned log2, unsigned multiplier, const std::vector<std::string>& added,
                         const std::vector<std::string>& absent) {
  const IndexHasher hasher(DeriveIndexKey("classic hash bench"));
  BloomFilter filter(log2, kK, multiplier);
  for (const std::string& url : added) filter.Add(hasher.Hash(url));
  uint64_t hits = 0;
  for (const std::string& url : absent) hits += filter.MayContain(hasher.Hash(url));
  std::vector<double> ns;
  uint64_t sink = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double t0 = NowNs();
    for (const std::string& url : added) sink += hasher.Hash(url).h1;
    ns.push_back((NowNs() - t0) / static_cast<double>(added.size()));
  }
  std::sort(ns.begin(), ns.end());
  if (sink == 42) std::printf(" ");
  return {static_cast<double>(hits) / static_cast<double>(absent.size()), ns[1]};
}

int Main(int argc, char** argv) {
  uint64_t probes = 1000000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--probes=", 9) == 0)
      probes = std::strtoull(argv[i] + 9, nullptr, 10);
  }
  if (probes < 1000) {
    std::fprintf(stderr, "usage: classic_hash_fpr_bench [--probes=N>=1000]\n");
    return 2;
  }
  UrlGenerator gen;
  std::vector<std::string> added(kN), absent(probes);
  for (std::string& u : added) u = gen.Next();
  for (std::string& u : absent) u = gen.Next();
  std::printf("# urls: %s | %s | %s\n", added[0].c_str(), added[1].c_str(), added[2].c_str());
  struct Size {
    unsigned log2, multiplier;
  };
  for (const Size size : {Size{20, 1}, Size{16, 15}}) {
    const uint64_t m = uint64_t{size.multiplier} << size.log2;
    const double theory = FalsePositiveRate(static_cast<double>(m), kN, kK);
    for (const HashCase& c : kCases) {
      const Outcome o = c.scheme == Scheme::kPeerbloom
                            ? MeasurePeerbloom(size.log2, size.multiplier, added, absent)
                            : Measure32(c, m, added, absent);
      const double stderr_fpr = std::sqrt(o.fpr * (1 - o.fpr) / static_cast<double>(probes));
      std::printf("row\t%s\t%llu\t%llu\t%u\t%.6f\t%.6f\t%.6f\t%.1f\n", c.name,
                  static_cast<unsigned long long>(m), static_cast<unsigned long long>(kN), kK,
                  o.fpr, theory, stderr_fpr, o.ns_per_url);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) { return peerbloom::Main(argc, argv); }
