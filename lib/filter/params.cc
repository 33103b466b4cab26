#include "peerbloom/params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "peerbloom/bloom_probe.h"

namespace peerbloom {
namespace {

// Shortest readable form of a rate for messages: 0.01, 1e-06, nan.
std::string FormatRate(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

}  // namespace

double FalsePositiveRate(double bits, double items, unsigned k) noexcept {
  if (items <= 0) return 0.0;
  return std::pow(-std::expm1(-static_cast<double>(k) * items / bits), k);
}

uint64_t OptimalBits(double items, double fpr) noexcept {
  const double ln2 = std::log(2.0);
  return static_cast<uint64_t>(std::ceil(-items * std::log(fpr) / (ln2 * ln2)));
}

unsigned OptimalHashes(double bits, double items) noexcept {
  const double k = std::round(bits / items * std::log(2.0));
  return static_cast<unsigned>(std::clamp(k, 1.0, static_cast<double>(kMaxHashes)));
}

unsigned HashesForFpr(double fpr) noexcept {
  const double k = std::round(-std::log2(fpr));
  return static_cast<unsigned>(std::clamp(k, 1.0, static_cast<double>(kMaxHashes)));
}

double Capacity(double bits, unsigned k, double fpr) noexcept {
  return -(bits / k) * std::log1p(-std::pow(fpr, 1.0 / k));
}

unsigned SmallestLog2Bits(double items, unsigned k, double fpr, unsigned min_log2,
                          unsigned max_log2) noexcept {
  for (unsigned log2 = min_log2; log2 < max_log2; ++log2) {
    if (FalsePositiveRate(std::ldexp(1.0, static_cast<int>(log2)), items, k) <= fpr) return log2;
  }
  return max_log2;
}

std::vector<unsigned> OddDivisors(unsigned c) {
  std::vector<unsigned> out;
  for (unsigned d = 1; d <= c; d += 2) {
    if (c % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<unsigned> AllSizeMultipliers() {
  std::vector<unsigned> out;
  for (unsigned c = 1; c <= kMaxSizeMultiplier; c += 2) out.push_back(c);
  return out;
}

std::optional<FilterSize> SmallestSize(double items, unsigned k, double fpr, unsigned min_log2,
                                       unsigned max_log2,
                                       const std::vector<unsigned>& multipliers) noexcept {
  std::optional<FilterSize> best;
  for (unsigned c : multipliers) {
    // The rate falls as the size grows: the first j that meets it is this c's smallest.
    for (unsigned log2 = min_log2; log2 <= max_log2; ++log2) {
      const FilterSize size{log2, c};
      if (FalsePositiveRate(static_cast<double>(size.bits()), items, k) > fpr) continue;
      if (!best || size.bits() < best->bits()) best = size;
      break;
    }
  }
  return best;
}

std::string_view ProfileName(Profile profile) noexcept {
  switch (profile) {
    case Profile::kMemoryLean:
      return "memory-lean";
    case Profile::kBalanced:
      return "balanced";
    case Profile::kWireLean:
      return "wire-lean";
  }
  return "unknown";
}

std::optional<Profile> ParseProfile(std::string_view name) noexcept {
  for (Profile p : {Profile::kMemoryLean, Profile::kBalanced, Profile::kWireLean}) {
    if (name == ProfileName(p)) return p;
  }
  return std::nullopt;
}

namespace {

// ChooseGeometry with the formula rate held to `design_fpr` (<= fpr, which picks k and names
// the inputs in errors).
Status ChooseGeometryAt(Profile profile, uint64_t capacity, double fpr, double design_fpr,
                        Geometry* out, SizeSteps steps) {
  if (capacity == 0) return Status::InvalidArgument("capacity must be at least 1");
  if (!(fpr > 0.0 && fpr <= 0.5)) {
    return Status::InvalidArgument("false-positive rate '" + FormatRate(fpr) +
                                   "' is outside (0, 0.5]");
  }
  Geometry g;
  switch (profile) {
    case Profile::kMemoryLean:
      g.k = HashesForFpr(fpr);
      break;
    case Profile::kBalanced:
      g.k = 2;
      break;
    case Profile::kWireLean:
      g.k = 1;
      break;
  }
  const std::vector<unsigned> multipliers =
      steps == SizeSteps::kExact ? AllSizeMultipliers() : std::vector<unsigned>{1};
  const std::optional<FilterSize> size = SmallestSize(
      static_cast<double>(capacity), g.k, design_fpr, kMinLog2Bits, kMaxLog2Bits, multipliers);
  if (!size || size->bits() > (uint64_t{1} << kMaxLog2Bits)) {
    return Status::InvalidArgument(
        "capacity '" + std::to_string(capacity) + "' at false-positive rate '" + FormatRate(fpr) +
        "' needs more than 2^" + std::to_string(kMaxLog2Bits) + " counters");
  }
  g.log2_counters = size->log2;
  g.multiplier = size->multiplier;
  *out = g;
  return Status::Ok();
}

}  // namespace

Status ChooseGeometry(Profile profile, uint64_t capacity, double fpr, Geometry* out,
                      SizeSteps steps) {
  return ChooseGeometryAt(profile, capacity, fpr, DesignFpr(fpr), out, steps);
}

Status ChooseLegacyGeometry(Profile profile, uint64_t capacity, double fpr, Geometry* out,
                            SizeSteps steps) {
  return ChooseGeometryAt(profile, capacity, fpr, fpr, out, steps);
}

}  // namespace peerbloom
