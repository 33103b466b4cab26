// Cost of signed origins (docs/security.md, "Signed origins"): Ed25519 sign and verify of one
// claim, and what a summary or delta adds on top (SHA-256 of its bytes or state). Prints the
// median ns/op (thread CPU time) of several runs. A verification failure exits 1; time never
// does.
// Usage: sign_bench [--quick]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "peerbloom/origin_sig.h"
#include "peerbloom/summary.h"

namespace {

using peerbloom::OriginClaim;
using peerbloom::SignedKind;

constexpr uint64_t kTag = 0x5eed;

// This thread's CPU time: on a shared machine, time the thread spent waiting for a core would
// otherwise count as work.
double ThreadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <typename F>
double MedianNs(int reps, int iters, F&& f) {
  std::vector<double> runs;
  for (int r = 0; r < reps; ++r) {
    const double t0 = ThreadCpuNs();
    for (int i = 0; i < iters; ++i) f();
    runs.push_back((ThreadCpuNs() - t0) / iters);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

std::string RandomBytes(size_t n, std::mt19937_64* rng) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>((*rng)() & 0xff);
  return s;
}

void Row(const std::string& name, double ns) { std::printf("%-44s %12.0f\n", name.c_str(), ns); }

// One signing key, the ring that verifies it, and whether every verdict so far was right.
struct Bench {
  int reps = 0;
  int iters = 0;
  std::unique_ptr<peerbloom::OriginSigner> signer;
  peerbloom::SignKeyRing ring;
  std::mt19937_64 rng{1};
  bool ok = true;
};

bool MakeKeys(Bench* b) {
  std::string pub, sec;
  if (!peerbloom::GenerateSignKeyPair(&pub, &sec).ok()) return false;
  if (!peerbloom::OriginSigner::Create(sec, &b->signer).ok()) return false;
  return b->ring.Add("node-a", pub).ok();
}

// One claim alone: sign, verify, and verify a corrupted signature.
void TimeClaims(Bench* b) {
  OriginClaim claim;
  claim.kind = SignedKind::kEpoch;
  claim.origin = "node-a";
  claim.epoch = 12;
  std::string sig;
  Row("sign claim (epoch certificate)",
      MedianNs(b->reps, b->iters, [&] { b->ok &= b->signer->Sign(kTag, claim, &sig).ok(); }));
  Row("verify claim (epoch certificate)", MedianNs(b->reps, b->iters, [&] {
        b->ok &= b->ring.Verify(kTag, claim, sig) == peerbloom::SigVerdict::kValid;
      }));
  std::string bad = sig;
  bad[5] ^= 1;
  Row("verify claim, bad signature", MedianNs(b->reps, b->iters, [&] {
        b->ok &= b->ring.Verify(kTag, claim, bad) == peerbloom::SigVerdict::kInvalid;
      }));
}

// A delta is hashed (its codec bytes and the state signature) and signed or verified once.
void TimeDelta(size_t bytes, Bench* b) {
  const std::string delta = RandomBytes(bytes, &b->rng);
  OriginClaim d;
  d.kind = SignedKind::kDelta;
  d.origin = "node-a";
  d.epoch = 12;
  d.base_version = 7;
  d.version = 8;
  std::string dsig;
  const std::string label = " (" + std::to_string(bytes) + " B delta)";
  Row("sign delta" + label, MedianNs(b->reps, b->iters / 2, [&] {
        d.body_hash = peerbloom::Sha256(delta);
        b->ok &= b->signer->Sign(kTag, d, &dsig).ok();
      }));
  Row("verify delta" + label, MedianNs(b->reps, b->iters / 2, [&] {
        d.body_hash = peerbloom::Sha256(delta);
        b->ok &= b->ring.Verify(kTag, d, dsig) == peerbloom::SigVerdict::kValid;
      }));
}

// A summary of 2^log2 bits with random words.
peerbloom::Summary RandomSummary(unsigned log2, std::mt19937_64* rng) {
  peerbloom::Summary s;
  s.origin = "node-a";
  s.epoch = 12;
  s.version = 9;
  s.filter = peerbloom::BloomFilter(log2, 4);
  for (uint64_t& w : s.filter.mutable_words()) w = (*rng)();
  return s;
}

// A full summary's state hash covers the filter: O(filter) on top of one verification.
void TimeFullSummary(unsigned log2, Bench* b) {
  const peerbloom::Summary s = RandomSummary(log2, &b->rng);
  OriginClaim st;
  st.kind = SignedKind::kSummaryState;
  st.origin = "node-a";
  st.epoch = 12;
  st.version = 9;
  std::string ssig;
  const int n = log2 >= 23 ? std::max(4, b->iters / 200) : b->iters / 10;
  const std::string label = " (2^" + std::to_string(log2) + " bits, " +
                            std::to_string((size_t{1} << log2) / 8192) + " KiB)";
  Row("state hash" + label, MedianNs(b->reps, n, [&] { st.body_hash = peerbloom::StateHash(s); }));
  Row("sign full summary" + label, MedianNs(b->reps, n, [&] {
        st.body_hash = peerbloom::StateHash(s);
        b->ok &= b->signer->Sign(kTag, st, &ssig).ok();
      }));
  Row("verify full summary" + label, MedianNs(b->reps, n, [&] {
        st.body_hash = peerbloom::StateHash(s);
        b->ok &= b->ring.Verify(kTag, st, ssig) == peerbloom::SigVerdict::kValid;
      }));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  Bench b;
  b.reps = quick ? 3 : 7;
  b.iters = quick ? 200 : 2000;
  if (!MakeKeys(&b)) return 1;
  std::printf("%-44s %12s\n", "operation", "ns/op (median, thread CPU)");
  TimeClaims(&b);
  for (size_t bytes : {size_t{64}, size_t{4096}, size_t{65536}}) TimeDelta(bytes, &b);
  for (unsigned log2 : {16u, 20u, 23u}) TimeFullSummary(log2, &b);
  if (!b.ok) {
    std::fprintf(stderr, "sign_bench: a signature did not verify\n");
    return 1;
  }
  return 0;
}
