#include <string>

#include "gtest/gtest.h"
#include "peerbloom/relay_message.h"
#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

WireHeader Header() {
  WireHeader h;
  h.cluster_tag = 0x1122334455667788ULL;
  h.sender_id = "node-a";
  h.sender_epoch = 2;
  h.sender_heartbeat = 300;
  return h;
}

std::string RelayIHave() {
  RelayPacket p;
  p.kind = RelayKind::kIHave;
  p.refs = {{"node-a", 7, 1}};
  std::string out;
  EXPECT_TRUE(EncodeRelayPacket(p, RelayLimits(), &out).ok());
  return out;
}

TEST(BroadcastFrame, CarriesOneRelayPacket) {
  std::string frame;
  ASSERT_TRUE(EncodeBroadcastFrame(Header(), RelayIHave(), &frame).ok());
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(frame, WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kBroadcast);
  EXPECT_EQ(f.relay_bytes, RelayIHave());
  RelayPacket p;
  ASSERT_TRUE(DecodeRelayPacket(f.relay_bytes, RelayLimits(), &p).ok());
  EXPECT_EQ(p.refs.size(), 1u);
}

TEST(BroadcastFrame, EveryTruncationIsRefused) {
  std::string frame;
  ASSERT_TRUE(EncodeBroadcastFrame(Header(), RelayIHave(), &frame).ok());
  for (size_t n = 0; n < frame.size(); ++n) {
    WireFrame f;
    EXPECT_TRUE(DecodeFrame(frame.substr(0, n), WireLimits(), &f).IsCorruption()) << n;
  }
  WireFrame f;
  EXPECT_EQ(DecodeFrame(frame + "x", WireLimits(), &f).ToString(),
            "corruption: '1' trailing bytes after the frame body");
}

TEST(BroadcastFrame, EmptyBodyIsRefused) {
  std::string frame;
  EXPECT_EQ(EncodeBroadcastFrame(Header(), "", &frame).ToString(),
            "invalid argument: broadcast body of '0' bytes");
  ASSERT_TRUE(EncodeBroadcastFrame(Header(), "x", &frame).ok());
  frame.resize(frame.size() - 5);
  frame.append(4, '\0');  // length 0
  WireFrame f;
  EXPECT_EQ(DecodeFrame(frame, WireLimits(), &f).ToString(), "corruption: empty broadcast body");
}

}  // namespace
}  // namespace peerbloom
