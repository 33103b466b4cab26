// The fuzz targets' seed corpora (tests/fuzz/corpus/summary/, tests/fuzz/corpus/delta/):
// valid messages of every body encoding plus truncated and corrupted ones. With
// PEERBLOOM_WRITE_FUZZ_CORPUS=1 in the environment this test (re)writes them from the current
// encoder; always, it checks that the committed valid-* seeds decode and trunc-* and
// corrupt-* seeds do not (the corpus replays check the same through the fuzz targets).
#include <zstd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "peerbloom/summary.h"
#include "tests/unit/summary/message_edit.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

namespace fs = std::filesystem;
using testing_util::FilterWithFill;
using testing_util::MakeSummary;

std::string EncodeFull(const Summary& s, BodyEncoding e) {
  std::string out;
  EXPECT_TRUE(EncodeSummary(s, &out, e).ok());
  return out;
}

std::string EncodeDeltaBetween(const Summary& from, int flips, uint64_t seed) {
  Summary to = from;
  ++to.version;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < flips; ++i) to.filter.FlipBit(rng() % to.filter.bits());
  SummaryDelta d;
  EXPECT_TRUE(ComputeDelta(from, to, &d).ok());
  std::string out;
  EXPECT_TRUE(EncodeDelta(d, &out).ok());
  return out;
}

std::string CorruptBody(std::string msg, size_t body_offset) {
  const size_t at = testing_util::HeaderLength(msg) + body_offset;
  msg[at] = static_cast<char>(msg[at] ^ 0x5a);
  testing_util::Reseal(&msg);
  return msg;
}

std::map<std::string, std::string> SummarySeeds() {
  std::map<std::string, std::string> seeds;
  const Summary sparse = MakeSummary(FilterWithFill(10, 1, 0.02, 1));
  const Summary dense = MakeSummary(FilterWithFill(9, 3, 0.4, 2));
  seeds["valid-raw"] = EncodeFull(sparse, BodyEncoding::kRaw);
  seeds["valid-zstd"] = EncodeFull(sparse, BodyEncoding::kZstd);
  seeds["valid-golomb"] = EncodeFull(sparse, BodyEncoding::kGolombRice);
  seeds["valid-golomb-dense"] = EncodeFull(dense, BodyEncoding::kGolombRice);
  seeds["valid-zstd-dense"] = EncodeFull(dense, BodyEncoding::kZstd);
  seeds["valid-golomb-empty"] =
      EncodeFull(MakeSummary(BloomFilter(12, 1)), BodyEncoding::kGolombRice);
  seeds["valid-raw-full"] =
      EncodeFull(MakeSummary(FilterWithFill(8, 2, 1.0, 3)), BodyEncoding::kRaw);
  const std::string golomb = seeds["valid-golomb"];
  seeds["trunc-golomb"] = golomb.substr(0, golomb.size() - 11);
  seeds["trunc-header"] = golomb.substr(0, 40);
  seeds["trunc-zstd-body"] = testing_util::WithBody(
      seeds["valid-zstd"], testing_util::Body(seeds["valid-zstd"]).substr(0, 10));
  seeds["corrupt-golomb-body"] = CorruptBody(golomb, 20);
  // A frame of 1 MiB of zeros (a few dozen bytes) in a 2^10-bit filter's message.
  const std::string zeros(size_t{1} << 20, '\0');
  std::string bomb(ZSTD_compressBound(zeros.size()), '\0');
  bomb.resize(ZSTD_compress(bomb.data(), bomb.size(), zeros.data(), zeros.size(), 3));
  seeds["corrupt-zstd-bomb"] = testing_util::WithBody(seeds["valid-zstd"], bomb);
  seeds["corrupt-zstd-body"] = CorruptBody(seeds["valid-zstd"], 12);
  // Format 2 (a size multiplier) is read; a minimum reader of 3 is not.
  const Summary exact = MakeSummary(FilterWithFill(8, 1, 0.02, 5, 5));
  seeds["valid-exact-golomb"] = EncodeFull(exact, BodyEncoding::kGolombRice);
  seeds["valid-exact-raw"] = EncodeFull(exact, BodyEncoding::kRaw);
  std::string even = seeds["valid-exact-raw"];
  even[15] = 6;  // the multiplier must be odd
  testing_util::Reseal(&even);
  seeds["corrupt-even-multiplier"] = even;
  std::string newer = golomb;
  newer[4] = 3;
  newer[5] = 3;
  testing_util::Reseal(&newer);
  seeds["corrupt-newer-reader"] = newer;
  return seeds;
}

// The summary the delta seeds apply to.
Summary DeltaBase() { return MakeSummary(FilterWithFill(14, 1, 0.01, 4), 8); }

std::map<std::string, std::string> DeltaSeeds() {
  std::map<std::string, std::string> seeds;
  const Summary base = DeltaBase();
  seeds["valid-delta-few"] = EncodeDeltaBetween(base, 5, 1);
  seeds["valid-delta-many"] = EncodeDeltaBetween(base, 800, 2);
  seeds["valid-delta-empty"] = EncodeDeltaBetween(base, 0, 3);
  seeds["valid-delta-small-filter"] = EncodeDeltaBetween(MakeSummary(BloomFilter(6, 4), 1), 9, 4);
  const std::string many = seeds["valid-delta-many"];
  seeds["trunc-delta"] = many.substr(0, many.size() / 2);
  seeds["trunc-delta-body"] = testing_util::WithBody(many, testing_util::Body(many).substr(0, 100));
  // A changed position code behind a resealed checksum: a delta's positions carry no
  // redundancy, so it decodes; ApplyDelta refuses it by its result digest. Named for neither
  // verdict of the decoder (the corpus replay checks valid-, corrupt- and trunc- names).
  seeds["resealed-delta-body"] = CorruptBody(many, 40);
  seeds["corrupt-delta-count"] = CorruptBody(many, 3);
  return seeds;
}

fs::path CorpusDir(const char* name) {
  return fs::path(PEERBLOOM_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / name;
}

void MaybeWrite(const fs::path& dir, const std::map<std::string, std::string>& seeds) {
  const char* write = std::getenv("PEERBLOOM_WRITE_FUZZ_CORPUS");
  if (write == nullptr || std::string(write) != "1") return;
  fs::create_directories(dir);
  for (const auto& [name, bytes] : seeds) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }
}

std::map<std::string, std::string> ReadCorpus(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

template <typename Decode>
void CheckCorpus(const fs::path& dir, Decode decode) {
  const auto files = ReadCorpus(dir);
  int valid = 0;
  for (const auto& [name, bytes] : files) {
    EXPECT_LT(bytes.size(), 20u << 10) << name;
    if (name.starts_with("valid-")) {
      EXPECT_TRUE(decode(bytes).ok()) << name;
      ++valid;
    }
    if (name.starts_with("trunc-") || name.starts_with("corrupt-")) {
      EXPECT_FALSE(decode(bytes).ok()) << name;
    }
  }
  EXPECT_GE(valid, 4) << dir;
}

TEST(FuzzCorpus, SummarySeedsDecodeAsNamed) {
  MaybeWrite(CorpusDir("summary"), SummarySeeds());
  CheckCorpus(CorpusDir("summary"), [](const std::string& bytes) {
    Summary s;
    return DecodeSummary(bytes, DecodeLimits{}, &s);
  });
}

TEST(FuzzCorpus, DeltaSeedsDecodeAsNamed) {
  MaybeWrite(CorpusDir("delta"), DeltaSeeds());
  CheckCorpus(CorpusDir("delta"), [](const std::string& bytes) {
    SummaryDelta d;
    return DecodeDelta(bytes, DecodeLimits{}, &d);
  });
}

// The resealed body corruption gets past the decoder and is refused where deltas are
// checked, on apply, leaving the base as it was; the valid delta it was made from applies.
TEST(FuzzCorpus, ResealedDeltaBodyIsRefusedOnApply) {
  const auto files = ReadCorpus(CorpusDir("delta"));
  ASSERT_EQ(files.count("resealed-delta-body"), 1u);
  const Summary base = DeltaBase();
  SummaryDelta d;
  ASSERT_TRUE(DecodeDelta(files.at("valid-delta-many"), DecodeLimits{}, &d).ok());
  Summary applied = base;
  EXPECT_TRUE(ApplyDelta(d, &applied).ok());
  ASSERT_TRUE(DecodeDelta(files.at("resealed-delta-body"), DecodeLimits{}, &d).ok());
  applied = base;
  EXPECT_TRUE(ApplyDelta(d, &applied).IsCorruption());
  EXPECT_TRUE(applied.filter == base.filter);
}

}  // namespace
}  // namespace peerbloom
