// Control token files: created once with a fresh secret, refused when others may read them.
#include "peerbloom/client/control_token.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace peerbloom::client {
namespace {

class ControlToken : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbtoken.XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ControlToken, CreatedOnceThenRead) {
  const std::string path = dir_ + "/control.token";
  std::string first, second;
  ASSERT_TRUE(EnsureControlToken(path, &first).ok());
  EXPECT_EQ(first.size(), kGeneratedTokenChars);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(EnsureControlToken(path, &second).ok());
  EXPECT_EQ(first, second);
  ASSERT_TRUE(ReadControlToken(path, &second).ok());
  EXPECT_EQ(first, second);
}

TEST_F(ControlToken, RefusesFilesOthersMayReadDirectoriesAndEmptyOnes) {
  const std::string path = dir_ + "/t";
  std::ofstream(path) << "  secret \n";
  std::string token;
  for (mode_t mode : {0644, 0604, 0660, 0610}) {
    ::chmod(path.c_str(), mode);
    EXPECT_EQ(ReadControlToken(path, &token).message(),
              "control token file '" + path +
                  "' is accessible by others or writable by its group; chmod 600 it (or 640 to "
                  "share it with its group)")
        << std::oct << mode;
  }
  for (mode_t mode : {0600, 0640, 0400}) {  // a group may share it
    ::chmod(path.c_str(), mode);
    ASSERT_TRUE(ReadControlToken(path, &token).ok()) << std::oct << mode;
    EXPECT_EQ(token, "secret");
  }
  Status s = ReadControlToken(dir_, &token);
  EXPECT_EQ(s.message(), "control token file '" + dir_ + "' is a directory");
  std::ofstream(path, std::ios::trunc) << "\n";
  EXPECT_EQ(ReadControlToken(path, &token).message(),
            "control token file '" + path + "' is empty");
}

TEST_F(ControlToken, NeverCreatedThroughALink) {
  const std::string target = dir_ + "/target";
  const std::string link = dir_ + "/control.token";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  std::string token;
  EXPECT_FALSE(EnsureControlToken(link, &token).ok());
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST(ControlTokenMatch, ExactOnly) {
  EXPECT_TRUE(TokenMatches("abc", "abc"));
  EXPECT_FALSE(TokenMatches("abd", "abc"));
  EXPECT_FALSE(TokenMatches("ab", "abc"));
  EXPECT_FALSE(TokenMatches("", ""));
  EXPECT_EQ(DefaultControlTokenFile("tcp://127.0.0.1:1", "/d"), "/d/control.token");
  EXPECT_EQ(DefaultControlTokenFile("ipc:///d/c.sock", "/d"), "");
}

}  // namespace
}  // namespace peerbloom::client
