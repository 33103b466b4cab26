// Who-has over 64 peers: the bit-sliced PeerIndex next to a scan of the same 64 BloomFilters
// one peer at a time, in the same run, on the same queries.
//
// Each peer holds 1e6 random keys in a summary sized for a 1 % false-positive rate with the
// design margin (SmallestLog2Bits at DesignFpr), for k = 7 (memory-lean profile at 1 %) and
// k = 2 (balanced). Queries are half keys some peer holds, half absent keys, in random order.
// Timing: batches of 256 queries timed together, ns per query = batch time / 256, median over
// all batches. The run fails (exit 1) if the index and the scan ever disagree or a held key is
// not found.
//
// Usage: peer_index_bench [keys_per_peer] [queries]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lib/util/splitmix64.h"
#include "peerbloom/bloom_filter.h"
#include "peerbloom/params.h"
#include "peerbloom/peer_index.h"

namespace peerbloom {
namespace {

constexpr int kPeers = 64;
constexpr size_t kBatch = 256;

// Key i of peer p (p = kPeers: keys nobody holds).
KeyHash PeerKey(uint64_t p, uint64_t i) {
  const uint64_t a = SplitMix64((p << 40) ^ i);
  return KeyHash{a, SplitMix64(a)};
}

double Now() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename Fn>
double MedianNsPerQuery(const std::vector<KeyHash>& queries, Fn&& fn) {
  std::vector<double> per_query;
  for (size_t start = 0; start + kBatch <= queries.size(); start += kBatch) {
    const double t0 = Now();
    for (size_t i = start; i < start + kBatch; ++i) fn(queries[i]);
    per_query.push_back((Now() - t0) / kBatch);
  }
  std::nth_element(per_query.begin(), per_query.begin() + per_query.size() / 2, per_query.end());
  return per_query[per_query.size() / 2];
}

struct Result {
  double index_ns = 0, scan_ns = 0, batch_ns = 0;
};

// Every peer's filter, and the index built from them.
struct Peers {
  std::vector<BloomFilter> filters;
  PeerIndex index;
};

// kPeers filters of 2^log2_bits bits, each holding `keys` keys of its own, and their index.
void BuildPeers(unsigned k, unsigned log2_bits, uint64_t keys, Peers* peers) {
  std::vector<BloomFilter>& filters = peers->filters;
  filters.reserve(kPeers);
  for (int p = 0; p < kPeers; ++p) {
    filters.emplace_back(log2_bits, k);
    for (uint64_t i = 0; i < keys; ++i) filters.back().Add(PeerKey(p, i));
  }
  for (const BloomFilter& f : filters) (void)peers->index.Insert(f);
}

// Half keys some peer holds, half absent keys, in random order.
struct Queries {
  std::vector<KeyHash> hashes;
  std::vector<int> owner;  // the peer holding the key, or -1
};

Queries MakeQueries(uint64_t keys, size_t nqueries) {
  Queries out;
  out.hashes.resize(nqueries);
  out.owner.resize(nqueries);
  uint64_t state = 12345;
  for (size_t q = 0; q < nqueries; ++q) {
    state = SplitMix64(state);
    const bool held = (state & 1) != 0;
    out.owner[q] = held ? static_cast<int>((state >> 1) % kPeers) : -1;
    out.hashes[q] = PeerKey(held ? out.owner[q] : kPeers, (state >> 8) % keys);
  }
  return out;
}

// Correctness first: the index equals the scan and finds every held key.
bool CheckAnswers(const Peers& peers, const Queries& queries, std::vector<PeerIndex::Slot>* got) {
  for (size_t q = 0; q < queries.hashes.size(); ++q) {
    got->clear();
    peers.index.Query(queries.hashes[q], got);
    std::sort(got->begin(), got->end());
    std::vector<PeerIndex::Slot> want;
    for (int p = 0; p < kPeers; ++p) {
      if (peers.filters[p].MayContain(queries.hashes[q])) {
        want.push_back(static_cast<PeerIndex::Slot>(p));
      }
    }
    const int owner = queries.owner[q];
    const bool found = owner < 0 || std::binary_search(got->begin(), got->end(),
                                                       static_cast<PeerIndex::Slot>(owner));
    if (*got != want || !found) {
      std::fprintf(stderr, "peer_index_bench: error: answers differ at query %zu\n", q);
      return false;
    }
  }
  return true;
}

// One query at a time, through the index and by scanning the filters.
void TimeOneAtATime(const Peers& peers, const std::vector<KeyHash>& queries,
                    std::vector<PeerIndex::Slot>* got, size_t* sink, Result* r) {
  r->index_ns = MedianNsPerQuery(queries, [&index = peers.index, got, sink](const KeyHash& h) {
    got->clear();
    index.Query(h, got);
    *sink += got->size();
  });
  r->scan_ns = MedianNsPerQuery(queries, [&filters = peers.filters, got, sink](const KeyHash& h) {
    got->clear();
    for (int p = 0; p < kPeers; ++p) {
      if (filters[p].MayContain(h)) got->push_back(static_cast<PeerIndex::Slot>(p));
    }
    *sink += got->size();
  });
}

// QueryBatch over 4096 queries at a time: median ns per query.
double TimeBatched(const PeerIndex& index, const std::vector<KeyHash>& queries, size_t* sink) {
  std::vector<uint32_t> offsets;
  std::vector<PeerIndex::Slot> slots;
  std::vector<double> batch;
  for (size_t start = 0; start + 4096 <= queries.size(); start += 4096) {
    const double t0 = Now();
    index.QueryBatch(std::span<const KeyHash>(queries.data() + start, 4096), &offsets, &slots);
    batch.push_back((Now() - t0) / 4096);
    *sink += slots.size();
  }
  std::sort(batch.begin(), batch.end());
  return batch[batch.size() / 2];
}

void Print(const char* name, unsigned k, unsigned log2_bits, uint64_t keys, size_t nqueries,
           const Peers& peers, const Result& r) {
  size_t filter_bytes = 0;
  for (const BloomFilter& f : peers.filters) filter_bytes += f.bytes();
  const PeerIndex& index = peers.index;
  std::printf(
      "%-12s k=%u bits=2^%u peers=%d keys/peer=%llu queries=%zu (half held)\n"
      "  memory: index %.1f MiB (%.2f MiB/peer), the 64 filters %.1f MiB\n"
      "  median ns/query: index %.1f, scan %.1f, speed-up %.1fx\n"
      "  batched (4096/batch): %.1f ns/query median, %.2f M queries/s\n",
      name, k, log2_bits, kPeers, static_cast<unsigned long long>(keys), nqueries,
      index.memory_bytes() / 1048576.0, index.memory_bytes() / 1048576.0 / kPeers,
      filter_bytes / 1048576.0, r.index_ns, r.scan_ns, r.scan_ns / r.index_ns, r.batch_ns,
      1e3 / r.batch_ns);
}

bool RunProfile(const char* name, unsigned k, uint64_t keys, size_t nqueries) {
  const unsigned log2_bits =
      SmallestLog2Bits(static_cast<double>(keys), k, DesignFpr(0.01), 10, 32);
  Peers peers;
  BuildPeers(k, log2_bits, keys, &peers);
  const Queries queries = MakeQueries(keys, nqueries);
  std::vector<PeerIndex::Slot> got;
  if (!CheckAnswers(peers, queries, &got)) return false;
  Result r;
  size_t sink = 0;
  TimeOneAtATime(peers, queries.hashes, &got, &sink, &r);
  r.batch_ns = TimeBatched(peers.index, queries.hashes, &sink);
  Print(name, k, log2_bits, keys, nqueries, peers, r);
  if (sink == 42) std::printf(" ");
  return true;
}

}  // namespace
}  // namespace peerbloom

int main(int argc, char** argv) {
  const uint64_t keys = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const size_t queries = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1 << 20;
  if (keys == 0 || queries < 4096) {
    std::fprintf(stderr, "usage: peer_index_bench [keys_per_peer>0] [queries>=4096]\n");
    return 2;
  }
  bool ok = peerbloom::RunProfile("memory-lean", 7, keys, queries);
  ok = peerbloom::RunProfile("balanced", 2, keys, queries) && ok;
  return ok ? 0 : 1;
}
