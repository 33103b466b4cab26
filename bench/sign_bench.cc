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

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 3 : 7;
  const int iters = quick ? 200 : 2000;
  std::string pub, sec;
  if (!peerbloom::GenerateSignKeyPair(&pub, &sec).ok()) return 1;
  std::unique_ptr<peerbloom::OriginSigner> signer;
  if (!peerbloom::OriginSigner::Create(sec, &signer).ok()) return 1;
  peerbloom::SignKeyRing ring;
  if (!ring.Add("node-a", pub).ok()) return 1;
  std::mt19937_64 rng(1);

  OriginClaim claim;
  claim.kind = SignedKind::kEpoch;
  claim.origin = "node-a";
  claim.epoch = 12;
  std::string sig;
  bool ok = true;
  std::printf("%-44s %12s\n", "operation", "ns/op (median, thread CPU)");
  auto row = [](const std::string& name, double ns) {
    std::printf("%-44s %12.0f\n", name.c_str(), ns);
  };
  row("sign claim (epoch certificate)",
      MedianNs(reps, iters, [&] { ok &= signer->Sign(kTag, claim, &sig).ok(); }));
  row("verify claim (epoch certificate)", MedianNs(reps, iters, [&] {
        ok &= ring.Verify(kTag, claim, sig) == peerbloom::SigVerdict::kValid;
      }));
  std::string bad = sig;
  bad[5] ^= 1;
  row("verify claim, bad signature", MedianNs(reps, iters, [&] {
        ok &= ring.Verify(kTag, claim, bad) == peerbloom::SigVerdict::kInvalid;
      }));

  // A delta is hashed (its codec bytes and the state signature) and signed or verified once.
  for (size_t bytes : {size_t{64}, size_t{4096}, size_t{65536}}) {
    const std::string delta = RandomBytes(bytes, &rng);
    OriginClaim d;
    d.kind = SignedKind::kDelta;
    d.origin = "node-a";
    d.epoch = 12;
    d.base_version = 7;
    d.version = 8;
    std::string dsig;
    const std::string label = " (" + std::to_string(bytes) + " B delta)";
    row("sign delta" + label, MedianNs(reps, iters / 2, [&] {
          d.body_hash = peerbloom::Sha256(delta);
          ok &= signer->Sign(kTag, d, &dsig).ok();
        }));
    row("verify delta" + label, MedianNs(reps, iters / 2, [&] {
          d.body_hash = peerbloom::Sha256(delta);
          ok &= ring.Verify(kTag, d, dsig) == peerbloom::SigVerdict::kValid;
        }));
  }

  // A full summary's state hash covers the filter: O(filter) on top of one verification.
  for (unsigned log2 : {16u, 20u, 23u}) {
    peerbloom::Summary s;
    s.origin = "node-a";
    s.epoch = 12;
    s.version = 9;
    s.filter = peerbloom::BloomFilter(log2, 4);
    for (uint64_t& w : s.filter.mutable_words()) w = rng();
    OriginClaim st;
    st.kind = SignedKind::kSummaryState;
    st.origin = "node-a";
    st.epoch = 12;
    st.version = 9;
    std::string ssig;
    const int n = log2 >= 23 ? std::max(4, iters / 200) : iters / 10;
    const std::string label = " (2^" + std::to_string(log2) + " bits, " +
                              std::to_string((size_t{1} << log2) / 8192) + " KiB)";
    row("state hash" + label, MedianNs(reps, n, [&] { st.body_hash = peerbloom::StateHash(s); }));
    row("sign full summary" + label, MedianNs(reps, n, [&] {
          st.body_hash = peerbloom::StateHash(s);
          ok &= signer->Sign(kTag, st, &ssig).ok();
        }));
    row("verify full summary" + label, MedianNs(reps, n, [&] {
          st.body_hash = peerbloom::StateHash(s);
          ok &= ring.Verify(kTag, st, ssig) == peerbloom::SigVerdict::kValid;
        }));
  }
  if (!ok) {
    std::fprintf(stderr, "sign_bench: a signature did not verify\n");
    return 1;
  }
  return 0;
}
