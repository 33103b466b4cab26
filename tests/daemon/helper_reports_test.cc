#include "daemon/observe/helper_reports.h"

#include <gtest/gtest.h>

#include <string>

namespace peerbloom::daemon {
namespace {

std::string Line(const std::string& fields) { return std::string(kHelperReportPrefix) + fields; }

TEST(HelperReports, SumsTheLatestReportOfEveryProcess) {
  HelperReports r;
  ASSERT_TRUE(r.Report(Line("pid=7 peer=3 none=2 invalid=1 timeout=4"), 100));
  ASSERT_TRUE(r.Report(Line("pid=7 peer=5 none=2 invalid=1 timeout=4"), 200));  // cumulative
  ASSERT_TRUE(r.Report(Line("pid=9 denied=6 future_counter=3"), 300));  // unknown keys ignored
  const HelperCounts t = r.Totals();
  EXPECT_EQ(t.peer, 5u);
  EXPECT_EQ(t.none, 2u);
  EXPECT_EQ(t.invalid, 1u);
  EXPECT_EQ(t.timeout, 4u);
  EXPECT_EQ(t.denied, 6u);
  EXPECT_EQ(t.Errors(), 10u);
  EXPECT_EQ(r.reports(), 3u);
  EXPECT_EQ(r.Active(300, 50), 1u);
  EXPECT_EQ(r.Active(300, 1000), 2u);
  EXPECT_EQ(r.last_report_ms(), 300);
}

TEST(HelperReports, ANewProcessWithAnOldPidDoesNotLowerTheTotals) {
  HelperReports r;
  ASSERT_TRUE(r.Report(Line("pid=7 peer=10"), 100));
  ASSERT_TRUE(r.Report(Line("pid=7 peer=2"), 200));  // pid 7 again, counting from 0
  EXPECT_EQ(r.Totals().peer, 12u);
}

TEST(HelperReports, MalformedReportsChangeNothing) {
  HelperReports r;
  EXPECT_FALSE(r.Report(Line("peer=3"), 1));               // no pid
  EXPECT_FALSE(r.Report(Line("pid=1 peer=x"), 1));         // not a number
  EXPECT_FALSE(r.Report(Line("pid=1 peer=-3"), 1));
  EXPECT_FALSE(r.Report("peerbloom-helper pid=1 peer=3", 1));  // no prefix
  EXPECT_EQ(r.Totals().Answers(), 0u);
  EXPECT_EQ(r.malformed(), 3u);
}

TEST(HelperReports, CountsAreBoundedAndProcessesToo) {
  HelperReports r;
  ASSERT_TRUE(r.Report(Line("pid=1 peer=18446744073709551615"), 1));
  EXPECT_EQ(r.Totals().peer, uint64_t{1} << 53);
  for (int pid = 2; pid < 2 + static_cast<int>(HelperReports::kMaxHelpers) + 5; ++pid) {
    ASSERT_TRUE(r.Report(Line("pid=" + std::to_string(pid) + " none=1"), pid));
  }
  // The processes heard from least recently are folded into the totals, not lost.
  EXPECT_EQ(r.Totals().none, HelperReports::kMaxHelpers + 5);
  EXPECT_EQ(r.Totals().peer, uint64_t{1} << 53);
}

}  // namespace
}  // namespace peerbloom::daemon
