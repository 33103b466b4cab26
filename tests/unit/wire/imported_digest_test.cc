// kImportedDigest frames: round trip, every truncation, hostile fields.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

WireHeader TestHeader() {
  WireHeader h;
  h.cluster_tag = 0x1122334455667788ULL;
  h.sender_id = "node-a";
  h.sender_epoch = 3;
  h.sender_heartbeat = 99;
  return h;
}

class ImportedDigestFrame : public ::testing::Test {
 protected:
  ImportedDigestFrame() : digest_(300, '\x5a') {
    ImportedDigestEntry full;
    full.origin = "squid:127.0.0.2:3128";
    full.importer = "node-a";
    full.version = 1795327317643ULL;
    full.fetched_unix_ms = 1795327317643ULL;
    full.lifetime_ms = 3610000;
    full.source_url = "http://127.0.0.2:3128/squid-internal-periodic/store_digest";
    full.flags = kImportHasDigest;
    full.digest = digest_;
    ImportedDigestEntry announce = full;
    announce.origin = "squid:10.0.0.9:3128";
    announce.flags = 0;
    announce.digest = {};
    ImportedDigestEntry withdrawn = announce;
    withdrawn.origin = "squid:10.0.0.10:3128";
    withdrawn.flags = kImportWithdrawn;
    entries_ = {full, announce, withdrawn};
    const Status s = EncodeImportedDigestFrame(TestHeader(), entries_, &frame_);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  Status Decode(std::string_view bytes) {
    WireFrame f;
    return DecodeFrame(bytes, WireLimits(), &f);
  }

  std::string digest_;
  std::vector<ImportedDigestEntry> entries_;
  std::string frame_;
};

TEST_F(ImportedDigestFrame, RoundTrips) {
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(frame_, WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kImportedDigest);
  EXPECT_EQ(WireTypeName(f.header.type), "imported-digest");
  ASSERT_EQ(f.imports.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(f.imports[i].origin, entries_[i].origin);
    EXPECT_EQ(f.imports[i].importer, entries_[i].importer);
    EXPECT_EQ(f.imports[i].version, entries_[i].version);
    EXPECT_EQ(f.imports[i].fetched_unix_ms, entries_[i].fetched_unix_ms);
    EXPECT_EQ(f.imports[i].lifetime_ms, entries_[i].lifetime_ms);
    EXPECT_EQ(f.imports[i].source_url, entries_[i].source_url);
    EXPECT_EQ(f.imports[i].flags, entries_[i].flags);
    EXPECT_EQ(f.imports[i].digest, entries_[i].digest);
  }
}

TEST_F(ImportedDigestFrame, EveryTruncationIsRefused) {
  for (size_t n = 0; n < frame_.size(); ++n) {
    EXPECT_FALSE(Decode(std::string_view(frame_).substr(0, n)).ok()) << n;
  }
  EXPECT_EQ(Decode(frame_ + "x").ToString(),
            Status::Corruption("'1' trailing bytes after the frame body").ToString());
}

TEST_F(ImportedDigestFrame, EveryByteFlipDecodesOrFailsCleanly) {
  for (size_t i = 0; i < frame_.size(); ++i) {
    std::string bad = frame_;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    WireFrame f;
    const Status s = DecodeFrame(bad, WireLimits(), &f);
    if (s.ok()) {
      EXPECT_EQ(f.imports.size(), 3u) << i;  // a flipped digest or number byte
    }
  }
}

TEST_F(ImportedDigestFrame, EncoderRefusesBadEntries) {
  std::string out;
  EXPECT_FALSE(EncodeImportedDigestFrame(TestHeader(), {}, &out).ok());
  auto with = [&](auto edit) {
    std::vector<ImportedDigestEntry> e = entries_;
    edit(&e[0]);
    return EncodeImportedDigestFrame(TestHeader(), e, &out);
  };
  EXPECT_EQ(with([](ImportedDigestEntry* e) { e->origin = "node-b"; }).ToString(),
            Status::InvalidArgument("invalid imported origin").ToString());
  EXPECT_FALSE(with([](ImportedDigestEntry* e) { e->importer = ""; }).ok());
  EXPECT_FALSE(with([](ImportedDigestEntry* e) { e->source_url = "has space"; }).ok());
  EXPECT_FALSE(with([](ImportedDigestEntry* e) { e->flags = 0x04 | kImportHasDigest; }).ok());
  EXPECT_FALSE(with([](ImportedDigestEntry* e) { e->flags |= kImportWithdrawn; }).ok());
  EXPECT_FALSE(with([](ImportedDigestEntry* e) { e->digest = {}; }).ok());
  const std::string huge(kMaxImportedDigestBytes + 1, '\0');
  EXPECT_EQ(
      with([&](ImportedDigestEntry* e) { e->digest = huge; }).ToString(),
      Status::InvalidArgument("imported digest of '16777217' bytes (limit '16777216')").ToString());
}

TEST_F(ImportedDigestFrame, DecoderRefusesOversizedDigestLength) {
  // Only the announcement entry: rewrite it to claim a digest of 16 MiB + 1 bytes.
  std::string out;
  ASSERT_TRUE(EncodeImportedDigestFrame(TestHeader(), {entries_[1]}, &out).ok());
  const size_t flags_at = out.find("squid:10.0.0.9:3128") + 19 + 1 + 6;
  ASSERT_EQ(out[flags_at], 0);
  out[flags_at] = kImportHasDigest;
  ASSERT_EQ(out.back(), 0);  // version 2: no import signatures; the length goes in its place
  out.pop_back();
  out += std::string("\x01\x00\x00\x01", 4);  // little-endian 16 MiB + 1
  EXPECT_EQ(Decode(out).ToString(),
            Status::ResourceExhausted("imported digest of '16777217' bytes (limit '16777216')")
                .ToString());
}

TEST_F(ImportedDigestFrame, CountOverLimitIsRefused) {
  WireLimits small;
  small.max_entries = 2;
  WireFrame f;
  EXPECT_EQ(DecodeFrame(frame_, small, &f).code(), Status::Code::kResourceExhausted);
}

}  // namespace
}  // namespace peerbloom
