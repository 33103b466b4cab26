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
#include <string_view>
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

// The filters and queries every way of answering is timed on.
struct Fixture {
  IndexHasher hasher{DeriveIndexKey("who-has bench")};
  Geometry g;
  CountingBloomFilter local{10, 1};
  PeerIndex index;
  std::vector<std::string> queries;
  std::vector<int> owner;  // kPeers: this node; 0..kPeers-1: that peer; -1: nobody
  std::vector<PeerMatch> table;
  std::vector<PeerIndex::Slot> slots;  // reused, as the gossip engine's query does not
};

// This node's filter holds `keys` keys; each peer's summary in the index holds `keys` more.
bool FillFilters(uint64_t keys, Fixture* f) {
  if (!ChooseGeometry(Profile::kBalanced, keys, 0.01, &f->g).ok()) return false;
  if (!CountingBloomFilter::Create(f->g.log2_counters, f->g.k, &f->local).ok()) return false;
  for (uint64_t i = 0; i < keys; ++i) f->local.Add(f->hasher.Hash(KeyBytes(kPeers, i)));
  const unsigned log2_bits =
      SmallestLog2Bits(static_cast<double>(keys), f->g.k, DesignFpr(0.01), 10, 32);
  for (int p = 0; p < kPeers; ++p) {
    BloomFilter filter(log2_bits, f->g.k);
    for (uint64_t i = 0; i < keys; ++i) filter.Add(f->hasher.Hash(KeyBytes(p, i)));
    (void)f->index.Insert(filter);
  }
  return true;
}

// A third held here, a third by some peer, a third by nobody, in random order.
void MakeQueries(uint64_t keys, size_t nqueries, Fixture* f) {
  f->queries.resize(nqueries);
  f->owner.resize(nqueries);
  uint64_t state = 42;
  for (size_t q = 0; q < nqueries; ++q) {
    state = SplitMix64(state);
    const int kind = static_cast<int>(state % 3);
    f->owner[q] = kind == 0 ? kPeers : kind == 1 ? static_cast<int>((state >> 8) % kPeers) : -1;
    f->queries[q] = KeyBytes(f->owner[q] < 0 ? kPeers + 1 : f->owner[q], (state >> 20) % keys);
  }
  f->table.resize(kPeers);
  for (int p = 0; p < kPeers; ++p) f->table[p].node_id = "peer" + std::to_string(p);
}

// The peer query both ways use: the peers whose summaries in the index may hold the key.
struct PeerLookup {
  Fixture* f;
  void operator()(std::string_view key, const KeyHash& h, std::vector<PeerMatch>* out) const {
    f->slots.clear();
    f->index.QueryKey(key, h, &f->slots);
    for (PeerIndex::Slot s : f->slots) out->push_back(f->table[s]);
  }
};

// Per query: local bit | peers << 1, one key at a time and batched.
struct Answers {
  explicit Answers(size_t nqueries) : single(nqueries), batched(nqueries) {}
  std::vector<uint64_t> single, batched;
  size_t at = 0;          // answers the batch has delivered
  size_t local_hits = 0;  // local-only hits one at a time, less those batched
};

// ns per key of each run of kRun queries.
struct Timings {
  std::vector<double> single, batch, full, local_single, local_batch;
};

// One key at a time: hash, probe the filter, ask the index.
void TimeOneAtATime(const Fixture& f, const PeerLookup& peers, Timings* t, Answers* a) {
  std::vector<PeerMatch> matches;
  const size_t nqueries = f.queries.size();
  for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
    const double t0 = NowNs();
    for (size_t q = start; q < start + kRun; ++q) {
      const KeyHash h = f.hasher.Hash(f.queries[q]);
      matches.clear();
      const bool here = f.local.MayContain(h);
      peers(f.queries[q], h, &matches);
      a->single[q] = here | (matches.size() << 1);
    }
    t->single.push_back((NowNs() - t0) / kRun);
  }
}

// Runs of kRun keys through `batch`; the caller resets where its sink writes.
void TimeBatch(const std::vector<std::string>& queries, WhoHasBatch* batch,
               std::vector<double>* ns) {
  const size_t nqueries = queries.size();
  for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
    const double t0 = NowNs();
    for (size_t q = start; q < start + kRun; ++q) batch->Add(queries[q]);
    batch->Finish();
    ns->push_back((NowNs() - t0) / kRun);
  }
}

// The batch: runs of 256 keys through one WhoHasBatch, without and with the peer index's
// rows prefetched too.
void TimeBatches(const Fixture& f, const PeerLookup& peers, Timings* t, Answers* a) {
  auto sink = [a](const WhoHasAnswer& w) {
    a->batched[a->at++] = w.local | (w.peers->size() << 1);
  };
  a->at = 0;
  WhoHasBatch local_only_prefetch(f.local, f.hasher, peers, nullptr, sink);
  TimeBatch(f.queries, &local_only_prefetch, &t->batch);
  a->at = 0;
  WhoHasBatch batch(
      f.local, f.hasher, peers, [&f](const KeyHash& h) { f.index.Prefetch(h); }, sink);
  TimeBatch(f.queries, &batch, &t->full);
}

// The local filter alone (no peers), both ways: what grouping buys where it applies.
void TimeLocalOnly(const Fixture& f, Timings* t, Answers* a) {
  const size_t nqueries = f.queries.size();
  auto no_peers = [](std::string_view, const KeyHash&, std::vector<PeerMatch>*) {};
  for (size_t start = 0; start + kRun <= nqueries; start += kRun) {
    const double t0 = NowNs();
    for (size_t q = start; q < start + kRun; ++q)
      a->local_hits += f.local.MayContain(f.hasher.Hash(f.queries[q]));
    t->local_single.push_back((NowNs() - t0) / kRun);
  }
  WhoHasBatch local_batch(f.local, f.hasher, no_peers, nullptr,
                          [a](const WhoHasAnswer& w) { a->local_hits -= w.local; });
  TimeBatch(f.queries, &local_batch, &t->local_batch);
}

void Print(uint64_t keys, const Fixture& f, const Timings& t, size_t differ, size_t missed) {
  const double mib = static_cast<double>(f.local.counters()) / 2 / (1 << 20);
  std::printf("who-has: %llu keys here (k=%u, %.0f MiB of counters), %d peers of %llu keys\n",
              static_cast<unsigned long long>(keys), f.g.k, mib, kPeers,
              static_cast<unsigned long long>(keys));
  std::printf("  medians of %zu runs of %zu keys\n", t.single.size(), kRun);
  std::printf("  one key at a time                             %7.1f ns/key\n", Median(t.single));
  std::printf("  WhoHasBatch, local counters prefetched        %7.1f ns/key\n", Median(t.batch));
  std::printf("  WhoHasBatch, local and peer index prefetched  %7.1f ns/key\n", Median(t.full));
  std::printf("  local filter only: one at a time %.1f ns/key, WhoHasBatch %.1f ns/key\n",
              Median(t.local_single), Median(t.local_batch));
  std::printf("  answers differing: %zu, held keys missed: %zu\n", differ, missed);
}

int Run(uint64_t keys, size_t nqueries) {
  Fixture f;
  if (!FillFilters(keys, &f)) return 1;
  MakeQueries(keys, nqueries, &f);
  const PeerLookup peers{&f};
  Timings t;
  Answers a(nqueries);
  TimeOneAtATime(f, peers, &t, &a);
  TimeBatches(f, peers, &t, &a);
  TimeLocalOnly(f, &t, &a);
  size_t missed = 0, differ = a.local_hits;
  for (size_t q = 0; q < a.at; ++q) {
    differ += a.single[q] != a.batched[q];
    missed += f.owner[q] == kPeers && (a.batched[q] & 1) == 0;
    missed += f.owner[q] >= 0 && f.owner[q] < kPeers && (a.batched[q] >> 1) == 0;
  }
  Print(keys, f, t, differ, missed);
  return differ == 0 && missed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  const uint64_t keys = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const size_t queries = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200000;
  return peerbloom::Run(keys, queries);
}
