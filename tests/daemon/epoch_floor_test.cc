// The epoch floor and the snapshot writer thread: epochs never go down whatever the clock
// says, and a snapshot written off the loop reads back as written.
#include "daemon/store/epoch_floor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon/store/snapshot_writer.h"

namespace peerbloom::daemon {
namespace {

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbepoch.XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

using EpochFloor = TempDir;
using SnapshotWriterTest = TempDir;

TEST_F(EpochFloor, NeverGoesDownWhenTheClockStepsBack) {
  const std::string path = dir_ + "/epoch";
  uint64_t epoch = 0;
  ASSERT_TRUE(ClaimEpoch(path, 5000, &epoch).ok());
  EXPECT_EQ(epoch, 5000u);
  ASSERT_TRUE(ClaimEpoch(path, 1000, &epoch).ok());  // the clock went back
  EXPECT_EQ(epoch, 5001u);
  ASSERT_TRUE(ClaimEpoch(path, 9000, &epoch).ok());  // and forward
  EXPECT_EQ(epoch, 9000u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_F(EpochFloor, RefusesAFileThatIsNotANumber) {
  const std::string path = dir_ + "/epoch";
  std::ofstream(path) << "12x\n";
  uint64_t epoch = 0;
  const Status s = ClaimEpoch(path, 5000, &epoch);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "epoch file '" + path + "' does not hold a number");
}

TEST_F(SnapshotWriterTest, WritesOffTheCallersThreadAndReportsTheResult) {
  const std::string path = dir_ + "/state.snapshot";
  SnapshotWriter writer(path);
  SnapshotState state;
  state.node_id = "a";
  state.epoch = 3;
  state.k = 2;
  state.log2_counters = 10;
  state.cells.assign(512, '\x11');
  Status result;
  EXPECT_FALSE(writer.TakeResult(&result));  // nothing started
  writer.Start(state);
  EXPECT_TRUE(writer.busy());
  EXPECT_TRUE(writer.Wait().ok());
  EXPECT_FALSE(writer.busy());
  SnapshotState back;
  ASSERT_TRUE(ReadSnapshot(path, &back).ok());
  EXPECT_EQ(back.cells, state.cells);
  EXPECT_EQ(back.epoch, 3u);
}

TEST_F(SnapshotWriterTest, AFailedWriteIsReported) {
  SnapshotWriter writer(dir_ + "/missing-dir/state.snapshot");
  SnapshotState state;
  state.node_id = "a";
  writer.Start(state);
  Status result;
  while (!writer.TakeResult(&result)) std::this_thread::yield();
  EXPECT_TRUE(result.IsIOError());
  EXPECT_FALSE(writer.busy());
}

}  // namespace
}  // namespace peerbloom::daemon
