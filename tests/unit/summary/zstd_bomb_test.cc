// zstd bodies that lie about their size or window are refused before the decoder allocates
// what they claim. This file replaces the global operator new to record the largest single
// allocation while a decode runs (zstd's own context comes from malloc and is bounded).
#include <zstd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "peerbloom/summary.h"
#include "tests/unit/summary/message_edit.h"
#include "tests/unit/summary/summary_test_util.h"

namespace {
std::atomic<bool> g_recording{false};
std::atomic<size_t> g_largest{0};
}  // namespace

void* operator new(size_t n) {
  if (g_recording.load(std::memory_order_relaxed)) {
    size_t seen = g_largest.load(std::memory_order_relaxed);
    while (n > seen && !g_largest.compare_exchange_weak(seen, n)) {
    }
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// g++ cannot see that this operator new is malloc underneath.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace peerbloom {
namespace {

using testing_util::FilterWithFill;
using testing_util::MakeSummary;

// One zstd frame of `size` zero bytes that declares its content size, built by streaming
// zeros so the test itself never holds `size` bytes.
std::string ZeroFrame(size_t size) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  EXPECT_FALSE(ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, size)));
  const std::string zeros(1 << 20, '\0');
  std::string frame;
  std::string chunk(ZSTD_CStreamOutSize(), '\0');
  size_t fed = 0;
  for (;;) {
    const size_t take = std::min(zeros.size(), size - fed);
    ZSTD_inBuffer in{zeros.data(), take, 0};
    const bool last = fed + take == size;
    size_t left;
    do {
      ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
      left = ZSTD_compressStream2(cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      EXPECT_FALSE(ZSTD_isError(left));
      frame.append(chunk.data(), out.pos);
    } while (in.pos < in.size || (last && left != 0));
    fed += take;
    if (last) break;
  }
  ZSTD_freeCCtx(cctx);
  return frame;
}

Status DecodeRecordingAllocations(const std::string& msg, const DecodeLimits& limits) {
  Summary out;
  g_largest = 0;
  g_recording = true;
  Status st = DecodeSummary(msg, limits, &out);
  g_recording = false;
  return st;
}

// An 8 KB frame that claims 256 MiB, inside the message of a 2^20-bit (128 KiB) filter.
TEST(ZstdBomb, FrameClaimingMoreThanTheFilterIsRefusedWithoutAllocating) {
  const std::string bomb = ZeroFrame(size_t{256} << 20);
  ASSERT_LT(bomb.size(), 16u << 10);
  ASSERT_EQ(ZSTD_getFrameContentSize(bomb.data(), bomb.size()), uint64_t{256} << 20);
  std::string msg;
  ASSERT_TRUE(EncodeSummary(MakeSummary(BloomFilter(20, 1)), &msg, BodyEncoding::kZstd).ok());
  const std::string bad = testing_util::WithBody(msg, bomb);
  const Status st = DecodeRecordingAllocations(bad, DecodeLimits{});
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_EQ(st.message(),
            "zstd body declares '268435456' bytes, a filter of 2^20 bits needs '131072'");
  EXPECT_LT(g_largest.load(), size_t{1} << 20);
}

// The same frame in a message that claims a 2^31-bit filter: within the format, but above
// the receiver's limit, so refused before the body is looked at.
TEST(ZstdBomb, FilterAboveTheLimitIsRefusedWithoutAllocating) {
  const std::string bomb = ZeroFrame(size_t{256} << 20);
  std::string msg;
  ASSERT_TRUE(EncodeSummary(MakeSummary(BloomFilter(6, 1)), &msg, BodyEncoding::kZstd).ok());
  std::string bad = testing_util::WithBody(msg, bomb);
  bad[12] = 31;  // log2 bits
  testing_util::Reseal(&bad);
  DecodeLimits limits;
  limits.max_log2_bits = 24;
  const Status st = DecodeRecordingAllocations(bad, limits);
  EXPECT_TRUE(st.IsResourceExhausted()) << st.ToString();
  EXPECT_LT(g_largest.load(), size_t{1} << 20);
}

// A hand-made frame: 128 KiB of zeros (one RLE block) whose header asks for a 1 GiB window.
// The reader decodes in one shot into the filter it sized from the geometry, so a declared
// window costs nothing: no allocation beyond the filter itself.
TEST(ZstdBomb, DeclaredWindowCostsNoMemory) {
  const std::string frame(
      "\x28\xb5\x2f\xfd"  // magic
      "\x80"              // descriptor: 4-byte content size, window descriptor present
      "\xa0"              // window: exponent 20 -> 2^30 bytes
      "\x00\x00\x02\x00"  // content size 131072
      "\x03\x00\x10"      // last block, RLE, 131072 bytes
      "\x00",             // the repeated byte
      14);
  std::string msg;
  ASSERT_TRUE(EncodeSummary(MakeSummary(BloomFilter(20, 1)), &msg, BodyEncoding::kZstd).ok());
  const Status st = DecodeRecordingAllocations(testing_util::WithBody(msg, frame), DecodeLimits{});
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_LE(g_largest.load(), size_t{131072});
}

TEST(ZstdBomb, ConcatenatedFramesAreRefused) {
  std::string msg;
  ASSERT_TRUE(
      EncodeSummary(MakeSummary(FilterWithFill(12, 1, 0.1, 3)), &msg, BodyEncoding::kZstd).ok());
  const std::string body(testing_util::Body(msg));
  Summary out;
  const Status st = DecodeSummary(testing_util::WithBody(msg, body + body), DecodeLimits{}, &out);
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_EQ(st.message(), "zstd body is not exactly one frame");
}

}  // namespace
}  // namespace peerbloom
