// Parameter math for Bloom filters and the geometry profiles of a node's filters.
//
// With m bits, n keys and k probes (Bloom 1970; Broder & Mitzenmacher 2004 survey):
//   false-positive rate  f(m, n, k) = (1 - e^(-kn/m))^k
//   optimal bits         m = -n ln p / (ln 2)^2         (9.585 bits per key at p = 1 %)
//   optimal probes       k = (m / n) ln 2
//   capacity             n(m, k, p) = -(m / k) ln(1 - p^(1/k))   (f solved for n)
#ifndef PEERBLOOM_PARAMS_H_
#define PEERBLOOM_PARAMS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom {

double FalsePositiveRate(double bits, double items, unsigned k) noexcept;
// REQUIRES: items > 0, 0 < fpr < 1.
uint64_t OptimalBits(double items, double fpr) noexcept;
// At least 1, at most kMaxHashes. REQUIRES: items > 0.
unsigned OptimalHashes(double bits, double items) noexcept;
// The k that gives the smallest filter for false-positive rate `fpr`: at the optimal size
// each probe halves the rate, so k = round(log2(1/fpr)), clamped to [1, kMaxHashes]. The
// memory-lean profile's k. REQUIRES: 0 < fpr < 1.
unsigned HashesForFpr(double fpr) noexcept;
// The most keys a filter of `bits` bits and k probes holds at false-positive rate `fpr`.
double Capacity(double bits, unsigned k, double fpr) noexcept;

// Smallest power-of-two log2 size in [min_log2, max_log2] whose false-positive rate for
// `items` keys is at most `fpr`; max_log2 when none is. This sizes a summary: folding to it
// keeps the target while spending the fewest bits.
unsigned SmallestLog2Bits(double items, unsigned k, double fpr, unsigned min_log2,
                          unsigned max_log2) noexcept;

// Sizing for a false-positive target p leaves a margin below it: ChooseGeometry and the
// summary builder pick the smallest size whose formula rate f(m, n, k) is at most
// kFprDesignMargin x p, not p itself. The formula is the rate a filter is expected to have;
// a filter sized to meet p exactly measures above p about half the time (the fill of the
// filter at hand, and the probes that measure it, scatter around the formula). 2 % is four
// standard errors of a rate measured over 4e6 absent keys (0.5 % of it at p = 1 %), and
// costs about 0.03 bits per key on the wire with exact sizes (docs/profiles.md).
inline constexpr double kFprDesignMargin = 0.98;

// The formula rate a filter sized for false-positive target `target` is held to.
inline double DesignFpr(double target) noexcept { return target * kFprDesignMargin; }

// A filter size c * 2^log2 (c odd, see bloom_probe.h).
struct FilterSize {
  unsigned log2 = 0;
  unsigned multiplier = 1;
  uint64_t bits() const noexcept { return uint64_t{multiplier} << log2; }
  bool operator==(const FilterSize&) const = default;
};

// The odd divisors of c in ascending order (1 first). REQUIRES: c >= 1.
std::vector<unsigned> OddDivisors(unsigned c);
// Every valid size multiplier: 1, 3, 5, ..., kMaxSizeMultiplier.
std::vector<unsigned> AllSizeMultipliers();

// The fewest bits d * 2^j, with d in `multipliers` and min_log2 <= j <= max_log2, whose
// false-positive rate for `items` keys is at most `fpr`; nullopt when none is. Each bit count
// has one such form, so the answer is unique.
std::optional<FilterSize> SmallestSize(double items, unsigned k, double fpr, unsigned min_log2,
                                       unsigned max_log2,
                                       const std::vector<unsigned>& multipliers) noexcept;

// How a node trades counter memory against wire size. All use 4-bit counters.
//  kMemoryLean  k = round(log2(1/p)): the fewest counters per key (about 10-19 at 1 %),
//               summaries near half full that compress poorly (about 10-19 bits per key).
//  kBalanced    k = 2: about 19-38 counters per key, sparse summaries (about 9-10 bits per
//               key gap-coded) and deltas near 2-3 bytes per changed key.
//  kWireLean    k = 1: about 100-200 counters per key, the smallest summaries (about 8.1-9.1
//               bits per key gap-coded) and deltas; costly in counter and receiver memory.
// docs/profiles.md has the measured figures and why the default is what it is.
enum class Profile : uint8_t { kMemoryLean = 0, kBalanced = 1, kWireLean = 2 };
std::string_view ProfileName(Profile profile) noexcept;
std::optional<Profile> ParseProfile(std::string_view name) noexcept;

struct Geometry {
  unsigned k = 0;
  unsigned log2_counters = 0;
  unsigned multiplier = 1;  // counters = multiplier * 2^log2_counters
  uint64_t counters() const noexcept { return uint64_t{multiplier} << log2_counters; }
  bool operator==(const Geometry&) const = default;
};

// Which counter counts ChooseGeometry may pick.
enum class SizeSteps : uint8_t {
  kPowerOfTwo = 0,  // 2^j: the sizes of summary format 1 and snapshot format 2
  kExact = 1,       // c * 2^j, c odd <= kMaxSizeMultiplier: within 1/32 of the need
};

// The counting filter geometry for `capacity` keys at local false-positive target `fpr`:
// the profile's k (memory-lean: HashesForFpr(fpr)) and the smallest counter count of the
// given steps whose formula rate at capacity is at most DesignFpr(fpr). InvalidArgument for
// capacity 0, fpr outside (0, 0.5], or a size above 2^kMaxLog2Bits counters.
Status ChooseGeometry(Profile profile, uint64_t capacity, double fpr, Geometry* out,
                      SizeSteps steps = SizeSteps::kPowerOfTwo);

// The geometry versions before the design margin chose for the same inputs: the smallest
// counter count whose formula rate at capacity is at most `fpr` itself (same k, same steps,
// same errors as ChooseGeometry). Never larger than ChooseGeometry's, and equal to it unless
// its own formula rate lies in (DesignFpr(fpr), fpr]. Only for recognizing a snapshot an
// earlier version wrote, so that an upgraded node keeps its content (docs/operations.md,
// "Snapshots"); never for sizing a new filter.
Status ChooseLegacyGeometry(Profile profile, uint64_t capacity, double fpr, Geometry* out,
                            SizeSteps steps = SizeSteps::kPowerOfTwo);

}  // namespace peerbloom

#endif  // PEERBLOOM_PARAMS_H_
