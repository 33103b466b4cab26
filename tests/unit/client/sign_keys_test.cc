// Ed25519 sign keys in the node's key file (docs/security.md, "Signed origins").
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "peerbloom/client/curve_keys.h"
#include "peerbloom/origin_sig.h"

namespace peerbloom::client {
namespace {

class SignKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbsign.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    path_ = dir_ + "/node.key";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  std::string path_;
};

TEST_F(SignKeysTest, WrittenSignKeysReadBackAndMatch) {
  CurveKeyPair pair;
  ASSERT_TRUE(GenerateCurveKeyPair(&pair).ok());
  ASSERT_TRUE(GenerateSignKeys(&pair).ok());
  EXPECT_TRUE(IsZ85Key(pair.sign_public_key));
  ASSERT_TRUE(WriteKeyFile(path_, pair, false).ok());
  CurveKeyPair read;
  ASSERT_TRUE(ReadKeyFile(path_, &read).ok());
  EXPECT_EQ(read.sign_public_key, pair.sign_public_key);
  EXPECT_EQ(read.sign_secret_key, pair.sign_secret_key);
  std::string raw_secret, raw_public, derived;
  ASSERT_TRUE(Z85Decode32(read.sign_secret_key, &raw_secret).ok());
  ASSERT_TRUE(Z85Decode32(read.sign_public_key, &raw_public).ok());
  ASSERT_TRUE(SignPublicKeyOf(raw_secret, &derived).ok());
  EXPECT_EQ(derived, raw_public);
  EXPECT_EQ(Z85Encode32(raw_public), read.sign_public_key);
  std::string pub;
  std::getline(std::ifstream(path_ + ".pub"), pub);
  EXPECT_EQ(pub, pair.public_key);  // the CURVE key alone, as seeds read it
  EXPECT_EQ(PublicLine(pair), pair.public_key + " NODE-ID sign=" + pair.sign_public_key);
}

TEST_F(SignKeysTest, KeyFileWithoutSignKeysReadsWithEmptyOnes) {
  CurveKeyPair pair;
  ASSERT_TRUE(GenerateCurveKeyPair(&pair).ok());
  ASSERT_TRUE(WriteKeyFile(path_, pair, false).ok());
  CurveKeyPair read;
  ASSERT_TRUE(ReadKeyFile(path_, &read).ok());
  EXPECT_TRUE(read.sign_public_key.empty());
  EXPECT_TRUE(read.sign_secret_key.empty());
  std::string pub;
  std::getline(std::ifstream(path_ + ".pub"), pub);
  EXPECT_EQ(pub, pair.public_key);
}

TEST_F(SignKeysTest, MismatchedOrHalfSignKeysAreRefused) {
  CurveKeyPair a, b;
  ASSERT_TRUE(GenerateCurveKeyPair(&a).ok());
  ASSERT_TRUE(GenerateSignKeys(&a).ok());
  ASSERT_TRUE(GenerateSignKeys(&b).ok());
  a.sign_public_key = b.sign_public_key;
  ASSERT_TRUE(WriteKeyFile(path_, a, false).ok());
  CurveKeyPair read;
  EXPECT_EQ(ReadKeyFile(path_, &read).message(),
            "key file '" + path_ + "': 'sign-public-key' does not match 'sign-secret-key'");
  std::ofstream(path_, std::ios::app) << "sign-secret-key = tooshort\n";
  EXPECT_EQ(ReadKeyFile(path_, &read).message(),
            "key file '" + path_ + "' has no valid 'sign-secret-key'");
  CurveKeyPair half;
  ASSERT_TRUE(GenerateCurveKeyPair(&half).ok());
  ASSERT_TRUE(WriteKeyFile(path_, half, true).ok());
  std::ofstream(path_, std::ios::app) << "sign-public-key = " << b.sign_public_key << "\n";
  EXPECT_EQ(ReadKeyFile(path_, &read).message(),
            "key file '" + path_ + "' has 'sign-public-key' without 'sign-secret-key'");
}

TEST_F(SignKeysTest, AddSignKeysKeepsTheCurvePairAndRefusesTwice) {
  CurveKeyPair pair;
  ASSERT_TRUE(GenerateCurveKeyPair(&pair).ok());
  ASSERT_TRUE(WriteKeyFile(path_, pair, false).ok());
  CurveKeyPair added;
  ASSERT_TRUE(AddSignKeys(path_, &added).ok());
  EXPECT_EQ(added.public_key, pair.public_key);
  EXPECT_EQ(added.secret_key, pair.secret_key);
  CurveKeyPair read;
  ASSERT_TRUE(ReadKeyFile(path_, &read).ok());
  EXPECT_EQ(read.sign_public_key, added.sign_public_key);
  EXPECT_EQ(read.secret_key, pair.secret_key);
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(AddSignKeys(path_, &added).message(), "key file '" + path_ + "' already has sign keys");
}

}  // namespace
}  // namespace peerbloom::client
