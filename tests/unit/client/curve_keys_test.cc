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
  ASSERT_TRUE(WriteKeyFile(path, {b.public_key, a.secret_key, "", ""}, false).ok());
  CurveKeyPair read;
  EXPECT_EQ(ReadKeyFile(path, &read).message(),
            "key file '" + path + "': 'public-key' does not match 'secret-key'");
}

TEST_F(CurveKeysTest, AuthorizedKeysBindKeysToNodeIds) {
  CurveKeyPair a, b, c, sign;
  for (CurveKeyPair* p : {&a, &b, &c, &sign}) ASSERT_TRUE(GenerateCurveKeyPair(p).ok());
  const std::string text = "# cluster keys\n\n" + a.public_key + " node-a\n" + b.public_key +
                           "\tnode-b sign=" + sign.public_key +
                           " endpoint=tcp://10.0.0.2:7400 # rack 2\n" + c.public_key +
                           " node-a   # node-a's next key\n";
  std::vector<AuthorizedKey> keys;
  ASSERT_TRUE(ParseAuthorizedKeys(text, "ak", &keys).ok());
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0].curve_key, a.public_key);
  EXPECT_EQ(keys[0].node_id, "node-a");
  EXPECT_EQ(keys[0].sign_key, "");
  EXPECT_EQ(keys[0].endpoint, "");
  EXPECT_EQ(keys[0].line, 3u);
  EXPECT_EQ(keys[1].node_id, "node-b");
  EXPECT_EQ(keys[1].sign_key, sign.public_key);
  EXPECT_EQ(keys[1].endpoint, "tcp://10.0.0.2:7400");
  EXPECT_EQ(keys[2].curve_key, c.public_key);
  EXPECT_EQ(keys[2].node_id, "node-a");
  EXPECT_EQ(keys[2].line, 5u);
}

TEST_F(CurveKeysTest, AuthorizedKeysErrorsNameTheLine) {
  CurveKeyPair a;
  ASSERT_TRUE(GenerateCurveKeyPair(&a).ok());
  const std::string k = a.public_key;
  std::vector<AuthorizedKey> keys;
  auto error = [&](const std::string& line) {
    return ParseAuthorizedKeys("# keys\n" + line + "\n", "ak", &keys).message();
  };
  EXPECT_EQ(error("not-a-key node-a"), "ak:2: not a 40-character Z85 public key: 'not-a-key'");
  EXPECT_EQ(error(k),
            "ak:2: the key needs the node id it speaks for: 'KEY NODE-ID' (authorized_keys "
            "format 2)");
  EXPECT_EQ(error(k + " # node-a"),
            "ak:2: the key needs the node id it speaks for: 'KEY NODE-ID' (authorized_keys "
            "format 2)");
  EXPECT_EQ(error(k + " endpoint=tcp://a:1"),
            "ak:2: the key needs the node id it speaks for: 'KEY NODE-ID' (authorized_keys "
            "format 2)");
  EXPECT_EQ(error(k + " node/a"),
            "ak:2: node id must be 1-64 characters of [A-Za-z0-9._:-], got 'node/a'");
  EXPECT_EQ(error(k + " squid:10.0.0.1:3128"),
            "ak:2: node id 'squid:10.0.0.1:3128' uses the prefix 'squid:', reserved for "
            "imported digests");
  EXPECT_EQ(error(k + " node-a colour=blue"),
            "ak:2: unknown field 'colour' (expected 'sign' or 'endpoint')");
  EXPECT_EQ(error(k + " node-a extra"),
            "ak:2: expected 'sign=KEY' or 'endpoint=tcp://HOST:PORT', got 'extra'");
  EXPECT_EQ(error(k + " node-a sign=short"), "ak:2: 'sign' is not a 40-character Z85 key: 'short'");
  EXPECT_EQ(error(k + " node-a endpoint=udp://h:1"),
            "ak:2: 'endpoint' must be tcp://HOST:PORT, got 'udp://h:1'");
  EXPECT_EQ(error(k + " node-a endpoint=tcp://h:0"),
            "ak:2: 'endpoint' must be tcp://HOST:PORT, got 'tcp://h:0'");
  EXPECT_EQ(error(k + " node-a\n" + k + " node-b"), "ak:3: key '" + k + "' is listed twice");
}

}  // namespace
}  // namespace peerbloom::client
