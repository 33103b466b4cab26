// The readable output of `stats`, `peers` and `top`: units from field names, alignment, and
// columns that appear only when the daemon sends their field.
#include "cli/table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace peerbloom::cli {
namespace {

using nlohmann::json;

TEST(CliTable, UnitsComeFromFieldNames) {
  EXPECT_EQ(UnitOf("summary_age_ms"), Unit::kMs);
  EXPECT_EQ(UnitOf("last_heard_ms_ago"), Unit::kMs);
  EXPECT_EQ(UnitOf("last_unix_ms"), Unit::kUnixMs);
  EXPECT_EQ(UnitOf("bytes"), Unit::kBytes);
  EXPECT_EQ(UnitOf("bytes_in"), Unit::kBytes);
  EXPECT_EQ(UnitOf("lag_bytes"), Unit::kBytes);
  EXPECT_EQ(UnitOf("estimated_fpr"), Unit::kRatio);
  EXPECT_EQ(UnitOf("false_hit_rate"), Unit::kRatio);
  EXPECT_EQ(UnitOf("fill"), Unit::kRatio);
  EXPECT_EQ(UnitOf("log2_bits"), Unit::kLog2Bits);
  EXPECT_EQ(UnitOf("items"), Unit::kPlain);
  EXPECT_EQ(UnitOf("log2_counters"), Unit::kPlain);
}

TEST(CliTable, FormatsValuesWithUnits) {
  EXPECT_EQ(FormatValue(512, Unit::kBytes), "512 B");
  EXPECT_EQ(FormatValue(1536, Unit::kBytes), "1.50 KiB");
  EXPECT_EQ(FormatValue(16 << 20, Unit::kBytes), "16.0 MiB");
  EXPECT_EQ(FormatValue(int64_t{300} << 30, Unit::kBytes), "300 GiB");
  EXPECT_EQ(FormatValue(850, Unit::kMs), "850 ms");
  EXPECT_EQ(FormatValue(1530, Unit::kMs), "1.53 s");
  EXPECT_EQ(FormatValue(12345, Unit::kMs), "12.3 s");
  EXPECT_EQ(FormatValue(95000, Unit::kMs), "1m 35s");
  EXPECT_EQ(FormatValue(7'530'000, Unit::kMs), "2h 05m");
  EXPECT_EQ(FormatValue(int64_t{3} * 86'400'000 + 3'600'000, Unit::kMs), "3d 01h");
  EXPECT_EQ(FormatValue(-1, Unit::kMs), "-");
  EXPECT_EQ(FormatValue(int64_t{1795445225000}, Unit::kUnixMs), "2026-11-23 14:47:05 UTC");
  EXPECT_EQ(FormatValue(0, Unit::kUnixMs), "-");
  EXPECT_EQ(FormatValue(0.0123, Unit::kRatio), "1.23 %");
  EXPECT_EQ(FormatValue(0.0000153, Unit::kRatio), "0.0015 %");
  EXPECT_EQ(FormatValue(0.0, Unit::kRatio), "0.00 %");
  EXPECT_EQ(FormatValue(20, Unit::kLog2Bits), "128 KiB");
  EXPECT_EQ(FormatValue(true, Unit::kPlain), "yes");
  EXPECT_EQ(FormatValue(json(nullptr), Unit::kBytes), "-");
  EXPECT_EQ(FormatValue("squid-md5", Unit::kPlain), "squid-md5");
  EXPECT_EQ(FormatValue(2097152, Unit::kPlain), "2097152");
  EXPECT_EQ(FormatValue(0.25, Unit::kPlain), "0.25");
}

TEST(CliTable, PeersAlignAndLeaveOutFieldsNoRowHas) {
  const json peers = json::parse(R"([
    {"node_id": "node-a", "endpoint": "tcp://127.0.0.1:7401", "alive": true, "version": 12,
     "estimated_items": 1000, "log2_bits": 14, "k": 2, "summary_age_ms": 985,
     "last_heard_ms_ago": 96, "public_key": "x"},
    {"node_id": "squid:10.0.0.21:3128", "endpoint": "http://10.0.0.21:3128/d", "alive": false,
     "version": 3, "estimated_items": 52, "log2_bits": 0, "k": 0, "summary_age_ms": -1,
     "last_heard_ms_ago": 120000}
  ])");
  EXPECT_EQ(RenderTable(PeerColumns(), peers),
            "NODE                  ENDPOINT                 STATE  VERSION  ITEMS   SUMMARY  K  "
            "SUMMARY AGE   HEARD\n"
            "node-a                tcp://127.0.0.1:7401     alive       12   1000  2.00 KiB  2  "
            "     985 ms   96 ms\n"
            "squid:10.0.0.21:3128  http://10.0.0.21:3128/d  dead         3     52         0  0  "
            "          -  2m 00s\n");
}

TEST(CliTable, RoutingOutcomesAreColumnsFromTheNestedObject) {
  const json peers = json::parse(R"([
    {"node_id": "b", "routing": {"routed": 200, "hits": 190, "false_hits": 10,
                                 "false_hit_rate": 0.05, "estimated_fpr": 0.0123}},
    {"node_id": "c", "routing": {}}
  ])");
  EXPECT_EQ(RenderTable(PeerColumns(), peers),
            "NODE  ROUTED  HITS  FALSE HITS  FALSE-HIT RATE  EST. FPR\n"
            "b        200   190          10          5.00 %    1.23 %\n"
            "c          -     -           -               -         -\n");
}

TEST(CliTable, NoPeersIsSaidInWords) {
  EXPECT_EQ(RenderTable(PeerColumns(), json::array()), "");
  EXPECT_EQ(RenderPeers(json::array()), "no members known\n");
}

TEST(CliTable, StatsAreSectionsOfAlignedValues) {
  const json stats = json::parse(R"({
    "node_id": "n", "uptime_ms": 95000,
    "control": {"requests": 2, "internal_errors": 0},
    "feeds": [{"path": "/f", "lag_bytes": 2048, "rebuild": {"running": false}}],
    "squid_digests": {"sources": [], "applied": 0}
  })");
  EXPECT_EQ(RenderStats(stats),
            "node_id    n\n"
            "uptime_ms  1m 35s\n"
            "control\n"
            "  internal_errors  0\n"
            "  requests         2\n"
            "feeds[0]\n"
            "  lag_bytes  2.00 KiB\n"
            "  path       /f\n"
            "  rebuild\n"
            "    running  no\n"
            "squid_digests\n"
            "  applied  0\n"
            "  sources  -\n");
}

TEST(CliTable, AlignColumnsPadsAndTrims) {
  EXPECT_EQ(AlignColumns({"", "TOTAL", "RATE"}, {{"adds", "12", "3.00/s"}, {"keys", "1000", ""}},
                         {false, true, true}),
            "      TOTAL    RATE\n"
            "adds     12  3.00/s\n"
            "keys   1000\n");
}

}  // namespace
}  // namespace peerbloom::cli
