#include "peerbloom/client/curve_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace peerbloom::client {
namespace {

class CurveKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbkeys.XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CurveKeysTest, WrittenPairReadsBackWithPrivateMode) {
  CurveKeyPair pair;
  ASSERT_TRUE(GenerateCurveKeyPair(&pair).ok());
  EXPECT_TRUE(IsZ85Key(pair.public_key));
  const std::string path = dir_ + "/node.key";
  ASSERT_TRUE(WriteKeyFile(path, pair, false).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  CurveKeyPair read;
  Status s = ReadKeyFile(path, &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(read.public_key, pair.public_key);
  EXPECT_EQ(read.secret_key, pair.secret_key);
  std::string pub;
  std::getline(std::ifstream(path + ".pub") >> std::ws, pub);
  EXPECT_EQ(pub, pair.public_key);
}

TEST_F(CurveKeysTest, RefusesToOverwriteUnlessForced) {
  CurveKeyPair pair;
  ASSERT_TRUE(GenerateCurveKeyPair(&pair).ok());
  const std::string path = dir_ + "/node.key";
  ASSERT_TRUE(WriteKeyFile(path, pair, false).ok());
  EXPECT_TRUE(WriteKeyFile(path, pair, false).IsIOError());
  EXPECT_TRUE(WriteKeyFile(path, pair, true).ok());
}

TEST_F(CurveKeysTest, ReadableByOthersIsRefused) {
  CurveKeyPair pair;
  ASSERT_TRUE(GenerateCurveKeyPair(&pair).ok());
  const std::string path = dir_ + "/node.key";
  ASSERT_TRUE(WriteKeyFile(path, pair, false).ok());
  ::chmod(path.c_str(), 0644);
  CurveKeyPair read;
  EXPECT_EQ(ReadKeyFile(path, &read).message(),
            "key file '" + path + "' is readable by group or others; chmod 600 it");
}

TEST_F(CurveKeysTest, MismatchedPublicKeyIsRefused) {
  CurveKeyPair a, b;
  ASSERT_TRUE(GenerateCurveKeyPair(&a).ok());
  ASSERT_TRUE(GenerateCurveKeyPair(&b).ok());
  const std::string path = dir_ + "/node.key";
  ASSERT_TRUE(WriteKeyFile(path, {b.public_key, a.secret_key}, false).ok());
  CurveKeyPair read;
  EXPECT_EQ(ReadKeyFile(path, &read).message(),
            "key file '" + path + "': 'public-key' does not match 'secret-key'");
}

TEST_F(CurveKeysTest, AuthorizedKeysWithCommentsAndErrors) {
  CurveKeyPair a, b;
  ASSERT_TRUE(GenerateCurveKeyPair(&a).ok());
  ASSERT_TRUE(GenerateCurveKeyPair(&b).ok());
  std::set<std::string> keys;
  const std::string text =
      "# cluster keys\n\n" + a.public_key + " node-a\n" + b.public_key + "\t# node-b\n";
  ASSERT_TRUE(ParseAuthorizedKeys(text, "ak", &keys).ok());
  EXPECT_EQ(keys, (std::set<std::string>{a.public_key, b.public_key}));
  EXPECT_EQ(ParseAuthorizedKeys(text + "not-a-key\n", "ak", &keys).message(),
            "ak:5: not a 40-character Z85 public key: 'not-a-key'");
}

}  // namespace
}  // namespace peerbloom::client
