// relay.seen, the relay's seen messages across a restart: the text round-trips exactly, and a
// file that is not what the daemon wrote is refused whole, naming the line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/relay/relay_seen_file.h"

namespace peerbloom::daemon {
namespace {

TEST(RelaySeenFile, RoundTrips) {
  std::vector<SeenSet::SavedOrigin> saved = {
      {"node-a", 20, {{30, 31}, {40, 40}}},
      {std::string("b\0\xff", 3), 0, {{7, 7}}},
      {"idle", 99, {}},
  };
  const std::string text = EncodeRelaySeen(saved);
  EXPECT_EQ(text.substr(0, text.find('\n')), "peerbloom-relay-seen 1");
  EXPECT_NE(text.find("6e6f64652d61 20 30-31 40-40\n"), std::string::npos) << text;
  std::vector<SeenSet::SavedOrigin> back;
  ASSERT_TRUE(DecodeRelaySeen(text, &back).ok());
  ASSERT_EQ(back.size(), saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    EXPECT_EQ(back[i].origin, saved[i].origin);
    EXPECT_EQ(back[i].floor, saved[i].floor);
    EXPECT_EQ(back[i].ranges, saved[i].ranges);
  }
  ASSERT_TRUE(DecodeRelaySeen("peerbloom-relay-seen 1\n", &back).ok());
  EXPECT_TRUE(back.empty());
}

TEST(RelaySeenFile, RefusesWhatItDidNotWrite) {
  std::vector<SeenSet::SavedOrigin> back;
  const std::string head = "peerbloom-relay-seen 1\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "cut short"},
      {"peerbloom-relay-seen 2\n", "line 1"},
      {head + "6161 20 30-31", "cut short"},  // truncated: no final newline
      {head + "zz 20\n", "line 2: the origin is not hex"},
      {head + "616 20\n", "line 2: the origin is not hex"},
      {head + "6161 x\n", "line 2: the floor is not a number"},
      {head + "6161 20 31-30\n", "line 2: ranges must ascend"},
      {head + "6161 20 10-12\n", "line 2: ranges must ascend"},  // below the floor
      {head + "6161 20 30-31 31-33\n", "line 2: ranges must ascend"},
      {head + "6161 20 30\n", "line 2: '30' is not a range"},
      {head + "6161 20 30-99999999999999999999999\n", "not a range"},
  };
  for (const auto& [text, why] : cases) {
    const Status s = DecodeRelaySeen(text, &back);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find(why), std::string::npos) << text << ": " << s.message();
  }
}

}  // namespace
}  // namespace peerbloom::daemon
