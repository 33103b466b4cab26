// who-has over this node's counting filter and a peer index, one key at a time next to
// WhoHasBatch, in the same run on the same queries.
//
// The local filter is sized for 1e6 keys at 1 % (balanced profile) and holds 1e6 keys; 16
// peers hold 1e6 keys each in summaries sized for 1 %. Queries are 16-byte keys, a third
// held here, a third by some peer, a third by nobody, in random order. Timing: runs of 256
// queries timed together, ns per key = run time / 256, median over all runs. The run fails
// (exit 1) if the two ways ever answer differently or a held key is missed.
//
// Usage: who_has_bench [keys] [queries]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lib/util/splitmix64.h"
#include "peerbloom/bloom_filter.h"
#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/params.h"
#include "peerbloom/peer_index.h"
#include "peerbloom/who_has_batch.h"

namespace peerbloom {
namespace {

constexpr int kPeers = 16;
constexpr size_t kRun = 256;

// 16 key bytes of key i of owner p (p = kPeers: this node; p > kPeers: nobody).
std::string KeyBytes(uint64_t p, uint64_t i) {
  std::string bytes(16, '\0');
  const uint64_t a = SplitMix64((p << 40) ^ i), b = SplitMix64(a);
  for (int j = 0; j < 8; ++j) {
    bytes[j] = static_cast<char>(a >> (8 * j));
    bytes[8 + j] = static_cast<char>(b >> (8 * j));
  }
  return bytes;
}

double NowNs() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

int Run(uint64_t keys, size_t nqueries) {
  const IndexHasher hasher(DeriveIndexKey("who-has bench"));
  Geometry g;
  if (!ChooseGeometry(Profile::kBalanced, keys, 0.01, &g).ok()) return 1;
  CountingBloomFilter local(10, 1);
  if (!CountingBloomFilter::Create(g.log2_counters, g.k, &local).ok()) return 1;
  for (uint64_t i = 0; i < keys; ++i) local.Add(hasher.Hash(KeyBytes(kPeers, i)));
  const unsigned log2_bits =
      SmallestLog2Bits(static_cast<double>(keys), g.k, DesignFpr(0.01), 10, 32);
  PeerIndex index;
  for (int p = 0; p < kPeers; ++p) {
    BloomFilter f(log2_bits, g.k);
    for (uint64_t i = 0; i < keys; ++i) f.Add(hasher.Hash(KeyBytes(p, i)));
    (void)index.Insert(f);
  }
  std::vector<std::string> queries(nqueries);
  std::vector<int> owner(nqueries);
  uint64_t state = 42;
  for (size_t q = 0; q < nqueries; ++q) {
    state = SplitMix64(state);
    const int kind = static_cast<int>(state % 3);
    owner[q] = kind == 0 ? kPeers : kind == 1 ? static_cast<int>((state >> 8) % kPeers) : -1;
    queries[q] = KeyBytes(owner[q] < 0 ? kPeers + 1 : owner[q], (state >> 20) % keys);
  }
  std::vector<PeerMatch> table(kPeers);
  for (int p = 0; p < kPeers; ++p) table[p].node_id = "peer" + std::to_string(p);
  std::vector<PeerIndex::Slot> slots;  // reused, as the gossip engine's query does not
  auto peers = [&](std::string_view key, const KeyHash& h, std::vector<PeerMatch>* out) {
    slots.clear();
    index.QueryKey(key, h, &slots);
    for (PeerIndex::Slot s : slots) out->push_back(table[s]);
  };

  // One key at a time: hash, probe the filter, ask the index.
  std::vector<uint64_t> single(nqueries), batched(nqueries);  // local bit | peers << 1
  std::vector<double> single_ns, batch_ns;
  std::vector<PeerMatch> matches;
  for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
    const double t0 = NowNs();
    for (size_t q = start; q < start + kRun; ++q) {
      const KeyHash h = hasher.Hash(queries[q]);
      matches.clear();
      const bool here = local.MayContain(h);
      peers(queries[q], h, &matches);
      single[q] = here | (matches.size() << 1);
    }
    single_ns.push_back((NowNs() - t0) / kRun);
  }
  // The batch: runs of 256 keys through one WhoHasBatch, without and with the peer index's
  // rows prefetched too.
  size_t at = 0;
  auto sink = [&](const WhoHasAnswer& a) { batched[at++] = a.local | (a.peers->size() << 1); };
  auto time_batch = [&](WhoHasBatch* batch, std::vector<double>* ns) {
    at = 0;
    for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
      const double t0 = NowNs();
      for (size_t q = start; q < start + kRun; ++q) batch->Add(queries[q]);
      batch->Finish();
      ns->push_back((NowNs() - t0) / kRun);
    }
  };
  WhoHasBatch local_only_prefetch(local, hasher, peers, nullptr, sink);
  time_batch(&local_only_prefetch, &batch_ns);
  std::vector<double> full_ns;
  WhoHasBatch batch(
      local, hasher, peers, [&](const KeyHash& h) { index.Prefetch(h); }, sink);
  time_batch(&batch, &full_ns);
  // The local filter alone (no peers), both ways: what grouping buys where it applies.
  std::vector<double> local_single_ns, local_batch_ns;
  auto no_peers = [](std::string_view, const KeyHash&, std::vector<PeerMatch>*) {};
  size_t local_hits = 0;
  for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
    const double t0 = NowNs();
    for (size_t q = start; q < start + kRun; ++q)
      local_hits += local.MayContain(hasher.Hash(queries[q]));
    local_single_ns.push_back((NowNs() - t0) / kRun);
  }
  WhoHasBatch local_batch(local, hasher, no_peers, nullptr,
                          [&](const WhoHasAnswer& a) { local_hits -= a.local; });
  for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
    const double t0 = NowNs();
    for (size_t q = start; q < start + kRun; ++q) local_batch.Add(queries[q]);
    local_batch.Finish();
    local_batch_ns.push_back((NowNs() - t0) / kRun);
  }
  size_t missed = 0, differ = local_hits;
  for (size_t q = 0; q < at; ++q) {
    differ += single[q] != batched[q];
    missed += owner[q] == kPeers && (batched[q] & 1) == 0;
    missed += owner[q] >= 0 && owner[q] < kPeers && (batched[q] >> 1) == 0;
  }
  const double mib = static_cast<double>(local.counters()) / 2 / (1 << 20);
  std::printf("who-has: %llu keys here (k=%u, %.0f MiB of counters), %d peers of %llu keys\n",
              static_cast<unsigned long long>(keys), g.k, mib, kPeers,
              static_cast<unsigned long long>(keys));
  std::printf("  medians of %zu runs of %zu keys\n", single_ns.size(), kRun);
  std::printf("  one key at a time                             %7.1f ns/key\n", Median(single_ns));
  std::printf("  WhoHasBatch, local counters prefetched        %7.1f ns/key\n", Median(batch_ns));
  std::printf("  WhoHasBatch, local and peer index prefetched  %7.1f ns/key\n", Median(full_ns));
  std::printf("  local filter only: one at a time %.1f ns/key, WhoHasBatch %.1f ns/key\n",
              Median(local_single_ns), Median(local_batch_ns));
  std::printf("  answers differing: %zu, held keys missed: %zu\n", differ, missed);
  return differ == 0 && missed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  const uint64_t keys = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const size_t queries = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200000;
  return peerbloom::Run(keys, queries);
}
