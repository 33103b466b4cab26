#include <gtest/gtest.h>

#include <random>
#include <string>

#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

const std::string kKey(40, 'A');  // 40 Z85 characters
const std::string kStateSig(kWireSignatureBytes, 'S');
const std::string kDeltaSig(kWireSignatureBytes, 'D');

WireHeader SampleHeader() {
  WireHeader h;
  h.flags = kWireFlagNeighbour | kWireFlagContact;
  h.cluster_tag = 0x0123456789abcdefULL;
  h.sender_id = "node-a";
  h.sender_endpoint = "tcp://127.0.0.1:7401";
  h.sender_public_key = kKey;
  h.sender_epoch = 1700000000123ULL;
  h.sender_heartbeat = 42;
  return h;
}

DigestBody SampleDigest() {
  DigestBody body;
  body.flags = kDigestComplete | kDigestReplyWanted;
  DigestEntry a;
  a.origin = "node-a";
  a.epoch = 7;
  a.heartbeat = 1000;
  a.alive = true;
  a.has_summary = true;
  a.version = 300;
  a.filter_digest = 0xfeedfacecafebeefULL;
  a.has_contact = true;
  a.endpoint = "tcp://127.0.0.1:7401";
  a.public_key = kKey;
  DigestEntry b;
  b.origin = "node-b";
  b.epoch = UINT64_MAX;
  b.heartbeat = 0;
  b.epoch_cert = std::string(kWireSignatureBytes, 'Z');
  body.entries = {a, b};
  return body;
}

std::vector<std::string> SampleFrames() {
  std::vector<std::string> frames(11);
  EXPECT_TRUE(EncodeDigestFrame(SampleHeader(), SampleDigest(), &frames[0]).ok());
  EXPECT_TRUE(EncodeSummaryFrame(SampleHeader(), WireType::kDelta, "codec-bytes", &frames[1]).ok());
  EXPECT_TRUE(
      EncodeRequestFullFrame(SampleHeader(), {{"node-b", 9, 4}, {"node-c", 0, 0}}, &frames[2])
          .ok());
  EXPECT_TRUE(
      EncodeOriginsFrame(SampleHeader(), WireType::kPrune, {"node-b", "node-c"}, &frames[3]).ok());
  EXPECT_TRUE(EncodeSummaryFrame(SampleHeader(), WireType::kDelta, "codec-bytes", &frames[4],
                                 kStateSig, kDeltaSig)
                  .ok());
  EXPECT_TRUE(EncodeSummaryFrame(SampleHeader(), WireType::kFullSummary, "codec-bytes", &frames[5],
                                 kStateSig)
                  .ok());
  WireHeader probe = SampleHeader();
  probe.flags = 0;
  probe.sender_endpoint.clear();
  probe.sender_public_key.clear();
  EXPECT_TRUE(
      EncodeProbeFrame(probe, {ProbeKind::kPing, 77, "", kProbeSuspected, {}, {}}, &frames[6])
          .ok());
  EXPECT_TRUE(
      EncodeProbeFrame(probe, {ProbeKind::kPingReq, 300, "node-c", 0, {}, {}}, &frames[7]).ok());
  // frames[8]: entry flags (a checksum digest is checked in ProbesAndEntryFlagsRoundTrip).
  DigestBody flagged = SampleDigest();
  flagged.entries[0].probes = true;
  flagged.entries[1].suspect = true;
  EXPECT_TRUE(EncodeDigestFrame(SampleHeader(), flagged, &frames[8]).ok());
  // frames[9]: a numbered delta; frames[10]: a resend (version 5).
  EXPECT_TRUE(EncodeSummaryFrame(probe, WireType::kDelta, "codec-bytes", &frames[9], kStateSig,
                                 kDeltaSig, 300)
                  .ok());
  EXPECT_TRUE(EncodeResendFrame(probe, {7, 300, 301}, &frames[10]).ok());
  return frames;
}

// Canonical re-encoding of a decoded frame: decoding and encoding again gives the same bytes.
std::string Reencode(const WireFrame& f) {
  std::string out;
  Status s;
  switch (f.header.type) {
    case WireType::kDigest:
      s = EncodeDigestFrame(f.header, f.digest, &out);
      break;
    case WireType::kFullSummary:
    case WireType::kDelta:
      s = EncodeSummaryFrame(f.header, f.header.type, f.summary_bytes, &out, f.state_sig,
                             f.delta_sig, f.link_seq);
      break;
    case WireType::kResend:
      s = EncodeResendFrame(f.header, f.resend_seqs, &out);
      break;
    case WireType::kRequestFull:
      s = EncodeRequestFullFrame(f.header, f.requests, &out);
      break;
    case WireType::kPrune:
    case WireType::kGraft:
      s = EncodeOriginsFrame(f.header, f.header.type, f.origins, &out, f.link_seq);
      break;
    case WireType::kProbe:
      s = EncodeProbeFrame(f.header, f.probe, &out);
      break;
    default:
      break;
  }
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(WireFrame, DigestRoundTrip) {
  std::string bytes;
  ASSERT_TRUE(EncodeDigestFrame(SampleHeader(), SampleDigest(), &bytes).ok());
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kDigest);
  EXPECT_EQ(f.header.version, kWireVersion);
  EXPECT_EQ(f.header.sender_id, "node-a");
  EXPECT_EQ(f.header.sender_endpoint, "tcp://127.0.0.1:7401");
  EXPECT_EQ(f.header.sender_public_key, kKey);
  EXPECT_EQ(f.header.cluster_tag, 0x0123456789abcdefULL);
  EXPECT_EQ(f.header.sender_epoch, 1700000000123ULL);
  EXPECT_EQ(f.header.sender_heartbeat, 42u);
  EXPECT_EQ(f.header.flags, kWireFlagNeighbour | kWireFlagContact);
  EXPECT_EQ(f.digest, SampleDigest());
}

TEST(WireFrame, SummaryAndRequestRoundTrip) {
  const std::vector<std::string> frames = SampleFrames();
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(frames[1], WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kDelta);
  EXPECT_EQ(f.summary_bytes, "codec-bytes");
  ASSERT_TRUE(DecodeFrame(frames[2], WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kRequestFull);
  EXPECT_EQ(f.requests, (std::vector<FullRequest>{{"node-b", 9, 4}, {"node-c", 0, 0}}));
  ASSERT_TRUE(DecodeFrame(frames[3], WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kPrune);
  EXPECT_EQ(f.origins, (std::vector<std::string>{"node-b", "node-c"}));
}

TEST(WireFrame, GoldenRequestFrame) {
  WireHeader h;
  h.flags = kWireFlagContact;
  h.cluster_tag = 0x1122334455667788ULL;
  h.sender_id = "a";
  h.sender_endpoint = "tcp://x:1";
  h.sender_epoch = 2;
  h.sender_heartbeat = 300;
  std::string bytes;
  ASSERT_TRUE(EncodeRequestFullFrame(h, {{"b", 300, 5}}, &bytes).ok());
  // magic, version 7, min reader 1, type 4, flags 0x02, tag (LE), "a", epoch 2,
  // heartbeat 300 (varint ac 02), "tcp://x:1", empty key, 1 request: "b", epoch 300, have 5.
  const std::string expected = std::string("PBGW\x07\x01\x04\x02", 8) +
                               "\x88\x77\x66\x55\x44\x33\x22\x11" +
                               std::string(
                                   "\x01"
                                   "a",
                                   2) +
                               std::string("\x02\xac\x02", 3) +
                               std::string(
                                   "\x09"
                                   "tcp://x:1"
                                   "\x00",
                                   11) +
                               std::string(
                                   "\x01\x01"
                                   "b"
                                   "\xac\x02\x05",
                                   6);
  EXPECT_EQ(bytes, expected);
}

// NO_PUSH is a version 6 flag: a frame of an older version that sets it is refused, as is any
// bit no version defines. A reader skips the flags of a newer version it does not know.
TEST(WireFrame, HeaderFlagsBelongToTheirVersion) {
  WireHeader h = SampleHeader();
  h.flags |= kWireFlagNoPush;
  std::string bytes;
  ASSERT_TRUE(EncodeDigestFrame(h, DigestBody(), &bytes).ok());
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.header.flags & kWireFlagNoPush, kWireFlagNoPush);

  std::string older = bytes;
  older[4] = 5;  // the version 6 frame, said to be of version 5
  EXPECT_EQ(DecodeFrame(older, WireLimits(), &f).message(), "unknown header flags '19'");
  h.version = 5;
  EXPECT_EQ(EncodeDigestFrame(h, DigestBody(), &bytes).message(), "unknown header flags '19'");

  h = SampleHeader();
  h.flags |= 0x20;
  EXPECT_EQ(EncodeDigestFrame(h, DigestBody(), &bytes).message(), "unknown header flags '35'");
  std::string newer = older;
  newer[4] = 8;
  newer[7] = static_cast<char>(0x20 | 0x13);
  ASSERT_TRUE(DecodeFrame(newer, WireLimits(), &f).ok());
  EXPECT_EQ(f.header.flags, 0x33);
}

TEST(WireFrame, ContactIsOptional) {
  WireHeader h = SampleHeader();
  h.flags = 0;
  std::string bytes;
  EXPECT_TRUE(EncodeDigestFrame(h, DigestBody(), &bytes).IsInvalidArgument());  // stray contact
  h.sender_endpoint.clear();
  h.sender_public_key.clear();
  ASSERT_TRUE(EncodeDigestFrame(h, DigestBody(), &bytes).ok());
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_TRUE(f.header.sender_endpoint.empty());
  EXPECT_EQ(f.header.sender_id, "node-a");
}

TEST(WireFrame, EveryTruncatedPrefixIsRefused) {
  for (const std::string& frame : SampleFrames()) {
    for (size_t n = 0; n < frame.size(); ++n) {
      WireFrame f;
      const Status s = DecodeFrame(std::string_view(frame).substr(0, n), WireLimits(), &f);
      EXPECT_TRUE(s.IsCorruption()) << "prefix " << n << ": " << s.ToString();
    }
  }
}

TEST(WireFrame, CorruptionsAreRefusedOrCanonical) {
  std::mt19937_64 rng(7);
  int refused = 0;
  for (const std::string& frame : SampleFrames()) {
    for (int trial = 0; trial < 3000; ++trial) {
      std::string bad = frame;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < flips; ++i) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      WireFrame f;
      const Status s = DecodeFrame(bad, WireLimits(), &f);
      if (!s.ok()) {
        ++refused;
        continue;
      }
      // Anything accepted is a well-formed frame with exactly these bytes (a frame of a newer
      // version may carry fields this reader skips: its known prefix must match).
      if (f.header.version > kWireVersion) {
        bad[4] = static_cast<char>(kWireVersion);
        bad[7] = static_cast<char>(f.header.flags & kWireKnownFlags);
        f.header.flags &= kWireKnownFlags;
        const std::string again = Reencode(f);
        EXPECT_EQ(again, bad.substr(0, again.size()));
      } else {
        EXPECT_EQ(Reencode(f), bad);
      }
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(WireFrame, VersionsAndTypes) {
  std::string frame = SampleFrames()[2];
  WireFrame f;
  std::string bad = frame;
  bad[6] = 99;  // type
  Status s = DecodeFrame(bad, WireLimits(), &f);
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_EQ(s.message(), "unknown message type '99'");

  bad = frame;
  bad[4] = 9;  // version 9, needs reader 8
  bad[5] = 8;
  s = DecodeFrame(bad, WireLimits(), &f);
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_EQ(s.message(), "frame needs reader version '8', this is '7'");

  bad = frame;
  bad[4] = 8;  // a newer writer readable by version 7 may append fields
  bad += "future";
  EXPECT_TRUE(DecodeFrame(bad, WireLimits(), &f).ok());
  EXPECT_EQ(f.requests.size(), 2u);

  bad = frame + "x";  // this version must not carry trailing bytes
  s = DecodeFrame(bad, WireLimits(), &f);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "'1' trailing bytes after the frame body");

  bad = frame;
  bad[0] = 'X';
  s = DecodeFrame(bad, WireLimits(), &f);
  EXPECT_EQ(s.message(), "bad frame magic");

  bad = frame;
  bad[5] = 0;  // minimum reader 0 is never written
  EXPECT_TRUE(DecodeFrame(bad, WireLimits(), &f).IsCorruption());
  bad[5] = 2;  // nor is minimum reader 2 by a writer of version 7
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(),
            "bad frame version '7' with minimum reader '2'");
}

TEST(WireFrame, LimitsAreEnforced) {
  DigestBody body;
  for (int i = 0; i < 20; ++i) {
    DigestEntry e;
    e.origin = "n" + std::to_string(i);
    body.entries.push_back(e);
  }
  std::string bytes;
  ASSERT_TRUE(EncodeDigestFrame(SampleHeader(), body, &bytes).ok());
  WireLimits limits;
  limits.max_entries = 19;
  WireFrame f;
  Status s = DecodeFrame(bytes, limits, &f);
  EXPECT_TRUE(s.IsResourceExhausted());
  EXPECT_EQ(s.message(), "digest entry count '20' exceeds the limit '19'");
  limits.max_entries = 20;
  EXPECT_TRUE(DecodeFrame(bytes, limits, &f).ok());
  limits.max_frame_bytes = bytes.size() - 1;
  EXPECT_TRUE(DecodeFrame(bytes, limits, &f).IsResourceExhausted());
}

TEST(WireFrame, EncoderRefusesBadFields) {
  std::string out;
  WireHeader h = SampleHeader();
  h.sender_id = "bad id";
  EXPECT_TRUE(EncodeDigestFrame(h, DigestBody(), &out).IsInvalidArgument());
  h = SampleHeader();
  h.sender_endpoint = "";
  EXPECT_TRUE(EncodeDigestFrame(h, DigestBody(), &out).IsInvalidArgument());
  h = SampleHeader();
  h.sender_public_key = "short";
  EXPECT_TRUE(EncodeDigestFrame(h, DigestBody(), &out).IsInvalidArgument());
  EXPECT_TRUE(EncodeSummaryFrame(SampleHeader(), WireType::kDigest, "x", &out).IsInvalidArgument());
  EXPECT_TRUE(EncodeSummaryFrame(SampleHeader(), WireType::kDelta, "", &out).IsInvalidArgument());
  DigestBody body;
  body.entries.resize(1);  // empty origin
  EXPECT_TRUE(EncodeDigestFrame(SampleHeader(), body, &out).IsInvalidArgument());
}

TEST(WireFrame, ClusterTagIsPinned) {
  EXPECT_EQ(ClusterTag(""), 0xb1841952a36b21ffULL);
  EXPECT_EQ(ClusterTag("secret"), 0xc98fab79fd001504ULL);
}

TEST(WireFrame, FieldChecks) {
  EXPECT_TRUE(IsValidEndpoint("tcp://127.0.0.1:1"));
  EXPECT_FALSE(IsValidEndpoint("tcp://a b"));
  EXPECT_FALSE(IsValidEndpoint(std::string(256, 'a')));
  EXPECT_TRUE(IsValidPublicKey(""));
  EXPECT_TRUE(IsValidPublicKey(kKey));
  EXPECT_FALSE(IsValidPublicKey(std::string(40, '"')));
  EXPECT_FALSE(IsValidPublicKey(std::string(39, 'A')));
}

// Version 2: signatures follow the codec bytes of summaries and deltas.
TEST(WireFrame, SignaturesRoundTripAfterTheCodecBytes) {
  const std::vector<std::string> frames = SampleFrames();
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(frames[4], WireLimits(), &f).ok());
  EXPECT_EQ(f.summary_bytes, "codec-bytes");
  EXPECT_EQ(f.state_sig, kStateSig);
  EXPECT_EQ(f.delta_sig, kDeltaSig);
  // The signatures, then the frame's number (0: not numbered).
  EXPECT_EQ(frames[4].substr(frames[4].size() - 130), "\x03" + kStateSig + kDeltaSig + '\0');
  ASSERT_TRUE(DecodeFrame(frames[5], WireLimits(), &f).ok());
  EXPECT_EQ(f.state_sig, kStateSig);
  EXPECT_TRUE(f.delta_sig.empty());
  ASSERT_TRUE(DecodeFrame(frames[1], WireLimits(), &f).ok());  // unsigned: flags 0
  EXPECT_EQ(frames[1][frames[1].size() - 2], '\0');
  EXPECT_TRUE(f.state_sig.empty());
  EXPECT_TRUE(f.delta_sig.empty());
}

TEST(WireFrame, BadSignatureFieldsAreRefused) {
  std::string out;
  EXPECT_EQ(EncodeSummaryFrame(SampleHeader(), WireType::kDelta, "c", &out, "short").message(),
            "summary signature of '5' bytes in a version '7' frame");
  EXPECT_EQ(
      EncodeSummaryFrame(SampleHeader(), WireType::kFullSummary, "c", &out, kStateSig, kDeltaSig)
          .message(),
      "delta signature on a full summary");
  WireFrame f;
  std::string bad = SampleFrames()[5];
  bad[bad.size() - 66] = 0x03;  // a delta signature flag on a full summary (then the number)
  Status s = DecodeFrame(bad, WireLimits(), &f);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "unknown signature flags '3'");
  bad = SampleFrames()[1];
  bad[bad.size() - 2] = 0x04;  // the signature flags, before the frame's number
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "unknown signature flags '4'");
  DigestBody body = SampleDigest();
  body.entries[0].epoch_cert = "short";
  EXPECT_EQ(EncodeDigestFrame(SampleHeader(), body, &out).message(),
            "epoch certificate of '5' bytes");
  body = SampleDigest();
  body.entries[1].beat_sig = "short";
  EXPECT_EQ(EncodeDigestFrame(SampleHeader(), body, &out).message(), "beat signature of '5' bytes");
}

TEST(WireFrame, EpochCertificatesAreCanonical) {
  DigestBody body = SampleDigest();
  body.entries[0].epoch_cert = std::string(kWireSignatureBytes, 'A');
  std::string bytes;
  WireHeader v3 = SampleHeader();
  v3.version = 3;  // no entry flags after the beat signatures
  ASSERT_TRUE(EncodeDigestFrame(v3, body, &bytes).ok());
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.digest, body);
  // count 2, index 0, cert, index 1, cert, then no beat signatures (count 0): swapping the
  // indexes is not canonical.
  ASSERT_EQ(bytes.back(), '\0');
  const size_t tail = bytes.size() - 1 - 2 * (1 + kWireSignatureBytes);
  ASSERT_EQ(bytes[tail - 1], '\x02');
  std::string bad = bytes;
  bad[tail] = 1;
  bad[tail + 1 + kWireSignatureBytes] = 0;
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "epoch certificate index '0'");
  bad = bytes;
  bad[tail + 1 + kWireSignatureBytes] = 2;  // past the entries
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "epoch certificate index '2'");
  bad = bytes;
  bad[tail - 1] = 3;
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "more epoch certificates than entries");
}

// Version 3: each entry's beat signature, in a list after the epoch certificates.
TEST(WireFrame, BeatSignaturesFollowTheEpochCertificates) {
  DigestBody body = SampleDigest();
  body.entries[1].beat_sig = std::string(kWireSignatureBytes, 'B');
  std::string bytes;
  WireHeader v3 = SampleHeader();
  v3.version = 3;  // the beat signatures end the body
  ASSERT_TRUE(EncodeDigestFrame(v3, body, &bytes).ok());
  EXPECT_EQ(bytes.substr(bytes.size() - 2 - kWireSignatureBytes),
            std::string("\x01\x01", 2) + std::string(kWireSignatureBytes, 'B'));
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.digest, body);
  std::string bad = bytes;
  bad[bad.size() - 1 - kWireSignatureBytes] = 2;  // past the entries
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "beat signature index '2'");
  bad = bytes;
  bad[bad.size() - 2 - kWireSignatureBytes] = 3;
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "more beat signatures than entries");
  for (size_t n = bytes.size() - 2 - kWireSignatureBytes; n < bytes.size(); ++n) {
    EXPECT_TRUE(DecodeFrame(bytes.substr(0, n), WireLimits(), &f).IsCorruption()) << n;
  }
  // A version 2 writer has no place for them; a version 2 frame decodes without them.
  WireHeader v2 = SampleHeader();
  v2.version = 2;
  EXPECT_EQ(EncodeDigestFrame(v2, body, &bytes).message(), "beat signature in a version 2 frame");
  body.entries[1].beat_sig.clear();
  ASSERT_TRUE(EncodeDigestFrame(v2, body, &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.digest, body);
}

// Version 4: the probe message and the entries' detector flags.
TEST(WireFrame, ProbesAndEntryFlagsRoundTrip) {
  const std::vector<std::string> frames = SampleFrames();
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(frames[6], WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kProbe);
  EXPECT_EQ(f.probe, (ProbeBody{ProbeKind::kPing, 77, "", kProbeSuspected, {}, {}}));
  ASSERT_TRUE(DecodeFrame(frames[7], WireLimits(), &f).ok());
  EXPECT_EQ(f.probe, (ProbeBody{ProbeKind::kPingReq, 300, "node-c", 0, {}, {}}));
  ASSERT_TRUE(DecodeFrame(frames[8], WireLimits(), &f).ok());
  EXPECT_TRUE(f.digest.entries[0].probes);
  EXPECT_FALSE(f.digest.entries[0].suspect);
  EXPECT_TRUE(f.digest.entries[1].suspect);
  // One flag list entry (index 0, probes), then (index 1, suspect).
  EXPECT_EQ(frames[8].substr(frames[8].size() - 5), std::string("\x02\x00\x01\x01\x02", 5));

  WireHeader h = SampleHeader();
  const WireHeader h2 = SampleHeader();
  std::string bytes;
  ProbeBody relayed{ProbeKind::kAck, 5, "node-c", 0, {}, {}};
  ASSERT_TRUE(EncodeProbeFrame(h, relayed, &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.probe, relayed);
  EXPECT_TRUE(
      EncodeProbeFrame(h, {ProbeKind::kPingReq, 1, "", 0, {}, {}}, &bytes).IsInvalidArgument());
  EXPECT_TRUE(EncodeProbeFrame(h, {ProbeKind::kAck, 1, "", kProbeSuspected, {}, {}}, &bytes)
                  .IsInvalidArgument());
  h.version = 3;  // older writers have neither
  EXPECT_EQ(EncodeProbeFrame(h, relayed, &bytes).message(), "probe frame of version 3");
  DigestBody body = SampleDigest();
  body.entries[0].suspect = true;
  EXPECT_EQ(EncodeDigestFrame(h, body, &bytes).message(), "entry flags in a version 3 frame");

  std::string bad = frames[8];
  bad[bad.size() - 1] = 4;  // an unknown flag
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "entry flags '4'");
  bad[bad.size() - 1] = 0;  // an entry listed without a flag
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "entry flags '0'");
  bad = frames[8];
  bad[bad.size() - 2] = 0;  // not ascending
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "entry flags index '0'");
  bad = frames[6];
  bad[4] = 3;  // a probe in a version 3 frame
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "probe frame of version below 4");
  bad = frames[6];
  bad[bad.size() - 3] = 2;  // the flags, before empty lists of versions and relayed versions
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "probe flags '2'");

  // Versions ride on probes.
  ProbeBody with_versions{
      ProbeKind::kAck, 9, "", 0, {{"node-b", 7, 300, 0xabcdef}, {"n", 1, 2, 3}}, {}};
  ASSERT_TRUE(EncodeProbeFrame(h2, with_versions, &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.probe, with_versions);
  for (size_t n = bytes.size() - 30; n < bytes.size(); ++n) {
    EXPECT_TRUE(DecodeFrame(bytes.substr(0, n), WireLimits(), &f).IsCorruption()) << n;
  }
  WireLimits one;
  one.max_entries = 1;
  EXPECT_TRUE(DecodeFrame(bytes, one, &f).IsResourceExhausted());
  with_versions.versions[1].origin = "bad id";
  EXPECT_TRUE(EncodeProbeFrame(h2, with_versions, &bytes).IsInvalidArgument());

  // Version 7: other origins' versions follow without their filter digest. A version 6 frame
  // has no place for them, and is what a version 6 reader reads of a version 7 one (it skips
  // what a newer frame appends).
  ProbeBody relaying{ProbeKind::kPing,       9, "", 0, {{"node-a", 3, 8, 0x1234}},
                     {{"node-b", 7, 300, 0}}};
  ASSERT_TRUE(EncodeProbeFrame(h2, relaying, &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.probe, relaying);
  // One relayed version: "node-b", epoch 7, version 300 (varint ac 02).
  EXPECT_EQ(bytes.substr(bytes.size() - 11), std::string("\x01\x06node-b\x07\xac\x02", 11));
  WireHeader v6 = SampleHeader();
  v6.version = 6;
  EXPECT_EQ(EncodeProbeFrame(v6, relaying, &bytes).message(),
            "relayed versions in a version '6' frame");
  ProbeBody own = relaying;
  own.relayed_versions.clear();
  std::string v6_bytes, v7_bytes;
  ASSERT_TRUE(EncodeProbeFrame(v6, own, &v6_bytes).ok());
  ASSERT_TRUE(EncodeProbeFrame(h2, own, &v7_bytes).ok());
  v6_bytes[4] = 7;
  EXPECT_EQ(v7_bytes, v6_bytes + std::string(1, '\0'));  // the version 6 layout, then count 0
  ProbeBody self_relayed = relaying;
  self_relayed.relayed_versions[0].origin = "node-a";  // the sender's own version
  EXPECT_TRUE(EncodeProbeFrame(h2, self_relayed, &bytes).IsInvalidArgument());
  ProbeBody with_digest = relaying;
  with_digest.relayed_versions[0].filter_digest = 1;  // a digest it cannot carry
  EXPECT_TRUE(EncodeProbeFrame(h2, with_digest, &bytes).IsInvalidArgument());
  // A hostile writer that names the sender among the relayed: refused, not taken for the
  // sender's own word without its digest.
  ASSERT_TRUE(EncodeProbeFrame(h2, relaying, &bytes).ok());
  bad = bytes;
  bad.replace(bad.size() - 9, 6, "node-a");
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(),
            "relayed announcement of the sender's own version");
  for (size_t n = bytes.size() - 11; n < bytes.size(); ++n) {
    EXPECT_TRUE(DecodeFrame(bytes.substr(0, n), WireLimits(), &f).IsCorruption()) << n;
  }

  // The checksum digest: the sender's entry and a hash of its table.
  DigestBody sum;
  sum.flags = kDigestReplyWanted | kDigestChecksum;
  sum.entries = {SampleDigest().entries[0]};
  sum.checksum = 0x1122334455667788ULL;
  ASSERT_TRUE(EncodeDigestFrame(SampleHeader(), sum, &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.digest, sum);
  EXPECT_EQ(bytes.substr(bytes.size() - 8), std::string("\x88\x77\x66\x55\x44\x33\x22\x11", 8));
  EXPECT_TRUE(DecodeFrame(bytes.substr(0, bytes.size() - 1), WireLimits(), &f).IsCorruption());
  EXPECT_EQ(EncodeDigestFrame(h, sum, &bytes).message(), "digest checksum in a version 3 frame");
  sum.flags = kDigestReplyWanted;
  EXPECT_EQ(EncodeDigestFrame(SampleHeader(), sum, &bytes).message(),
            "digest checksum without its flag");
}

// Version 5: summary frames carry their number on the sender's stream to the receiver, and the
// resend frame asks for numbers again.
TEST(WireFrame, NumberedFramesAndResendsRoundTrip) {
  const std::vector<std::string> frames = SampleFrames();
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(frames[9], WireLimits(), &f).ok());
  EXPECT_EQ(f.link_seq, 300u);
  EXPECT_EQ(f.summary_bytes, "codec-bytes");
  EXPECT_EQ(frames[9].substr(frames[9].size() - 2), "\xac\x02");  // varint 300, last
  ASSERT_TRUE(DecodeFrame(frames[1], WireLimits(), &f).ok());
  EXPECT_EQ(f.link_seq, 0u);  // not numbered
  ASSERT_TRUE(DecodeFrame(frames[10], WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kResend);
  EXPECT_EQ(f.resend_seqs, (std::vector<uint64_t>{7, 300, 301}));
  EXPECT_EQ(WireTypeName(WireType::kResend), "resend");

  WireHeader h = SampleHeader();
  h.flags = 0;
  h.sender_endpoint.clear();
  h.sender_public_key.clear();
  std::string bytes;
  EXPECT_TRUE(EncodeResendFrame(h, {}, &bytes).IsInvalidArgument());
  EXPECT_TRUE(EncodeResendFrame(h, {1, 0}, &bytes).IsInvalidArgument());
  EXPECT_TRUE(EncodeResendFrame(h, std::vector<uint64_t>(kMaxResendSeqs + 1, 5), &bytes)
                  .IsInvalidArgument());
  ASSERT_TRUE(EncodeResendFrame(h, std::vector<uint64_t>(kMaxResendSeqs, 5), &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  h.version = 4;  // older writers have neither
  EXPECT_EQ(EncodeResendFrame(h, {1}, &bytes).message(), "resend frame of version 4");
  EXPECT_EQ(EncodeSummaryFrame(h, WireType::kDelta, "c", &bytes, {}, {}, 9).message(),
            "link sequence number in a version '4' frame");
  ASSERT_TRUE(EncodeSummaryFrame(h, WireType::kDelta, "c", &bytes).ok());
  ASSERT_TRUE(DecodeFrame(bytes, WireLimits(), &f).ok());
  EXPECT_EQ(f.link_seq, 0u);

  std::string bad = frames[10];
  bad[4] = 4;  // a resend in a version 4 frame
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "resend frame of version below 5");
  // count 3 -> 0, then 65; a number 0 (the body: count 3, then 7, 300 and 301 as varints).
  const size_t count_at = frames[10].size() - 6;
  bad = frames[10];
  bad[count_at] = 0;
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "resend count '0' outside 1..64");
  bad[count_at] = 65;
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "resend count '65' outside 1..64");
  bad = frames[10];
  bad[count_at + 1] = 0;
  EXPECT_EQ(DecodeFrame(bad, WireLimits(), &f).message(), "resend sequence number 0");
}

// What an older node writes: the version 1 layout, without signatures, decodes and
// re-encodes to the same bytes.
TEST(WireFrame, Version1FramesCarryNoSignatures) {
  WireHeader h = SampleHeader();
  h.version = 1;
  std::string v1;
  ASSERT_TRUE(EncodeSummaryFrame(h, WireType::kDelta, "codec-bytes", &v1).ok());
  EXPECT_EQ(v1[4], '\x01');
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(v1, WireLimits(), &f).ok());
  EXPECT_EQ(f.summary_bytes, "codec-bytes");
  EXPECT_TRUE(f.state_sig.empty());
  EXPECT_EQ(Reencode(f), v1);
  EXPECT_TRUE(EncodeSummaryFrame(h, WireType::kDelta, "c", &v1, kStateSig).IsInvalidArgument());
  DigestBody body = SampleDigest();
  EXPECT_EQ(EncodeDigestFrame(h, body, &v1).message(), "epoch certificate in a version 1 frame");
  body.entries[1].epoch_cert.clear();
  ASSERT_TRUE(EncodeDigestFrame(h, body, &v1).ok());
  ASSERT_TRUE(DecodeFrame(v1, WireLimits(), &f).ok());
  EXPECT_EQ(f.digest, body);
  EXPECT_EQ(Reencode(f), v1);
}

}  // namespace
}  // namespace peerbloom
