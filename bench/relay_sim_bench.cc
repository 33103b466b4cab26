// Broadcast relay simulator: the real RelayNode state machine of every node over generated
// topologies with failed nodes and message loss (tests/support/relay_sim.h), next to flooding with
// a seen set and flooding bounded only by the hop limit. Prints one row per topology and size.
// Exits non-zero if a reachable node missed a broadcast or delivered one twice.
// Usage: relay_sim_bench [MAX_NODES [BROADCASTS]]   (defaults: 10000, 20)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/relay_sim.h"

namespace {

using peerbloom::SeenSet;
using peerbloom::relay_sim::Config;
using peerbloom::relay_sim::Result;
using peerbloom::relay_sim::Simulator;
using peerbloom::relay_sim::Topology;

void PrintHeader() {
  std::printf("%-14s %6s %5s %4s %6s %8s %5s | %9s %8s %8s %6s %6s %5s | %9s %6s | %9s | %9s %8s\n",
              "topology", "nodes", "live", "hopL", "filtB", "deliver", "dups", "payl/bc", "x(N-1)",
              "ctrl/bc", "graft", "lastH", "ms", "flood/bc", "fdeliv", "hopflood", "fp-rate",
              "fp-lost");
}

bool Row(Topology t, size_t nodes, size_t broadcasts, double failed, double loss) {
  Config c;
  c.topology = t;
  c.nodes = nodes;
  c.broadcasts = broadcasts;
  c.warmup = broadcasts / 4;
  c.failed = failed;
  c.loss = loss;
  Simulator sim(c);
  const Result r = sim.Run();
  const double fp = r.filter_probes == 0 ? 0
                                         : static_cast<double>(r.filter_false_hits) /
                                               static_cast<double>(r.filter_probes);
  std::printf(
      "%-14s %6zu %5zu %4u %6zu %7.3f%% %5llu | %9.1f %8.3f %8.1f %6.2f %6u %5.0f | %9.1f "
      "%5.1f%% | %9.3g | %8.3f%% %8llu\n",
      peerbloom::relay_sim::TopologyName(t), nodes, r.live, r.hop_limit, r.filter_bytes,
      100 * r.delivery(), static_cast<unsigned long long>(r.duplicate_deliveries),
      r.steady_payloads, r.steady_payloads / static_cast<double>(r.live - 1), r.steady_control,
      r.grafts, r.max_last_hops, r.mean_last_ms, r.flood_payloads, 100 * r.flood_delivery,
      r.hop_flood_payloads, 100 * fp,
      static_cast<unsigned long long>(r.filter_only_exact - r.filter_only_bloom));
  std::fflush(stdout);
  return r.delivered == r.reachable && r.duplicate_deliveries == 0;
}

}  // namespace

// What keeping the seen set across a restart costs the loop (docs/relay.md, "Replays across a
// restart"): SeenSet::Save of `entries` ids spread over `origins` origins (consecutive ids per
// origin, as one run of an origin sends them), median of 5.
void SeenSaveRow(size_t entries, size_t origins) {
  SeenSet seen(uint64_t{1} << 40, entries + 1);
  for (size_t i = 0; i < entries; ++i) {
    (void)seen.Insert("origin-" + std::to_string(i % origins), (uint64_t{1} << 40) + i / origins,
                      0);
  }
  std::vector<double> ms;
  size_t ranges = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<SeenSet::SavedOrigin> saved = seen.Save();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    ranges = 0;
    for (const SeenSet::SavedOrigin& o : saved) ranges += o.ranges.size();
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%10zu %8zu %8zu %10.2f\n", entries, origins, ranges, ms[ms.size() / 2]);
}

int main(int argc, char** argv) {
  const size_t max_nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
  const size_t broadcasts = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20;
  bool ok = true;
  std::printf("steady state, no failures, no loss (payload copies per broadcast vs N - 1)\n");
  PrintHeader();
  ok &= Row(Topology::kRandomRegular, 1000, broadcasts, 0, 0);
  std::printf("\n10 %% of nodes failed, 5 %% of packets lost\n");
  PrintHeader();
  for (size_t n = 1000; n <= max_nodes; n *= 10) {
    for (Topology t :
         {Topology::kRing, Topology::kGrid, Topology::kRandomRegular, Topology::kScaleFree}) {
      ok &= Row(t, n, broadcasts, 0.10, 0.05);
    }
  }
  std::printf(
      "\ncolumns: filtB visited-filter bytes per DATA packet; payl/bc payload copies per "
      "broadcast after warmup and x(N-1) that over live nodes - 1; ctrl/bc IHAVE+GRAFT+PRUNE "
      "packets; graft GRAFT entries per broadcast; lastH hops to the last delivery (worst), ms "
      "mean time to it; flood/bc, fdeliv: flooding with a seen set; hopflood: copies of "
      "flooding bounded by the hop limit only; fp-rate: visited-filter false hits per probe; "
      "fp-lost: deliveries the filter's false positives cost when it floods alone without "
      "repair (sum over broadcasts)\n");
  std::printf("\nseen set kept across a restart: SeenSet::Save (median of 5)\n");
  std::printf("%10s %8s %8s %10s\n", "ids", "origins", "ranges", "save ms");
  for (size_t entries : {size_t{10000}, size_t{100000}, size_t{1} << 20}) {
    for (size_t origins : {size_t{1}, size_t{32}}) SeenSaveRow(entries, origins);
  }
  if (!ok)
    std::fprintf(stderr, "relay_sim_bench: a reachable node missed or repeated a delivery\n");
  return ok ? 0 : 1;
}
