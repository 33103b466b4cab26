#include "lib/summary/body.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <string>

#include "lib/summary/format.h"
#include "lib/summary/golomb.h"
#include "peerbloom/byte_io.h"

namespace peerbloom::summary_internal {
namespace {

std::string Quote(uint64_t value) { return "'" + std::to_string(value) + "'"; }

uint64_t RawBytes(FilterSize size) { return size.bits() / 8; }

std::string SizeOf(FilterSize size) { return SizeText(size.log2, size.multiplier); }

// Smallest window that covers `bytes` of content, within zstd's and the format's bounds.
unsigned WindowLogFor(uint64_t bytes, unsigned cap) {
  const auto log = static_cast<unsigned>(std::bit_width(bytes - 1));
  return std::clamp(log, kZstdMinWindowLog, cap);
}

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// The filter's words as little-endian bytes: a view of the words themselves on
// little-endian hosts, else a copy kept in `scratch`.
std::string_view LittleEndianBytes(const BloomFilter& filter, std::string* scratch) {
  const std::vector<uint64_t>& words = filter.words();
  if constexpr (std::endian::native == std::endian::little) {
    return {reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint64_t)};
  }
  scratch->clear();
  for (uint64_t word : words) PutU64(scratch, word);
  return *scratch;
}

template <typename Fn>
void ForEachSetBit(const BloomFilter& filter, Fn&& fn) {
  const std::vector<uint64_t>& words = filter.words();
  for (size_t w = 0; w < words.size(); ++w) {
    for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      fn(uint64_t{w} * 64 + static_cast<unsigned>(std::countr_zero(bits)));
    }
  }
}

// Writes count, divisor and the gaps of the positions fn(emit) produces.
template <typename Producer>
void EncodeGaps(uint64_t count, uint64_t universe, Producer&& produce, std::string* out) {
  const uint64_t divisor = GolombDivisor(universe, count);
  PutU64(out, count);
  PutU64(out, divisor);
  GolombWriter writer(divisor, out);
  uint64_t next = 0;  // smallest position the next one may take
  produce([&](uint64_t pos) {
    writer.Add(pos - next);
    next = pos + 1;
  });
  writer.Finish();
}

// Reads count and divisor and checks that the codes can hold `count` gaps.
Status ReadGapPrefix(std::string_view body, uint64_t universe, uint64_t max_count, uint64_t* count,
                     GolombReader* reader) {
  ByteReader in(body);
  uint64_t divisor = 0;
  if (!in.ReadU64(count) || !in.ReadU64(&divisor)) {
    return Status::Corruption("gap-coded body of " + Quote(body.size()) + " bytes is truncated");
  }
  if (*count > std::min(universe, max_count)) {
    return Status::Corruption("gap-coded body claims " + Quote(*count) + " positions, at most " +
                              Quote(std::min(universe, max_count)) + " allowed");
  }
  if (divisor < 1 || divisor > universe) {
    return Status::Corruption("gap-coded body divisor " + Quote(divisor) + " is outside [1, " +
                              std::to_string(universe) + "]");
  }
  const uint64_t code_bytes = in.remaining();
  if (*count * MinGolombCodeBits(divisor) > code_bytes * 8) {
    return Status::Corruption("gap-coded body claims " + Quote(*count) + " positions in " +
                              Quote(code_bytes) + " bytes");
  }
  *reader = GolombReader(body.substr(kGolombBodyPrefixBytes), divisor);
  return Status::Ok();
}

// Decodes `count` gaps into strictly ascending positions below `universe`.
template <typename Fn>
Status DecodeGaps(GolombReader* reader, uint64_t count, uint64_t universe, Fn&& fn) {
  uint64_t next = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t gap = 0;
    if (next >= universe || !reader->Next(universe - 1 - next, &gap)) {
      return Status::Corruption("gap-coded body is corrupt at position " + Quote(i) + " of " +
                                Quote(count));
    }
    fn(next + gap);
    next += gap + 1;
  }
  if (!reader->AtCleanEnd()) {
    return Status::Corruption("gap-coded body has trailing bits");
  }
  return Status::Ok();
}

Status CheckRawSize(std::string_view body, FilterSize size) {
  if (body.size() != RawBytes(size)) {
    return Status::Corruption("raw body of " + Quote(body.size()) + " bytes, a filter of " +
                              SizeOf(size) + " bits needs " + Quote(RawBytes(size)));
  }
  return Status::Ok();
}

Status DecodeRaw(std::string_view body, FilterSize size, unsigned k, BloomFilter* out) {
  PEERBLOOM_RETURN_IF_ERROR(CheckRawSize(body, size));
  BloomFilter filter(size.log2, k, size.multiplier);
  std::vector<uint64_t>& words = filter.mutable_words();
  for (size_t w = 0; w < words.size(); ++w) words[w] = LoadFixed(body.data() + 8 * w, 8);
  *out = std::move(filter);
  return Status::Ok();
}

// Checks the frame's declared size against the geometry before anything is allocated.
Status CheckZstdFrame(std::string_view body, FilterSize size) {
  const unsigned long long declared = ZSTD_getFrameContentSize(body.data(), body.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN) {
    return Status::Corruption("zstd body does not declare its content size");
  }
  if (declared != RawBytes(size)) {
    return Status::Corruption("zstd body declares " + Quote(declared) + " bytes, a filter of " +
                              SizeOf(size) + " bits needs " + Quote(RawBytes(size)));
  }
  const size_t frame = ZSTD_findFrameCompressedSize(body.data(), body.size());
  if (ZSTD_isError(frame) || frame != body.size()) {
    return Status::Corruption("zstd body is not exactly one frame");
  }
  return Status::Ok();
}

Status DecodeZstd(std::string_view body, FilterSize size, unsigned k, BloomFilter* out) {
  PEERBLOOM_RETURN_IF_ERROR(CheckZstdFrame(body, size));
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) return Status::ResourceExhausted("cannot create a zstd decoder");
  const uint64_t raw = RawBytes(size);
  const auto window_log = static_cast<int>(WindowLogFor(raw, kZstdReaderMaxWindowLog));
  if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, window_log))) {
    return Status::Corruption("cannot bound the zstd window");
  }
  BloomFilter filter(size.log2, k,
                     size.multiplier);  // bounded: the frame declared exactly this size
  std::vector<uint64_t>& words = filter.mutable_words();
  const size_t got = ZSTD_decompressDCtx(dctx.get(), words.data(), raw, body.data(), body.size());
  if (ZSTD_isError(got) || got != raw) {
    return Status::Corruption("zstd body does not decode to " + Quote(raw) + " bytes");
  }
  if constexpr (std::endian::native == std::endian::big) {
    for (uint64_t& word : words) word = __builtin_bswap64(word);
  }
  *out = std::move(filter);
  return Status::Ok();
}

Status DecodeGolombFilter(std::string_view body, FilterSize size, unsigned k, BloomFilter* out) {
  const uint64_t universe = size.bits();
  uint64_t count = 0;
  GolombReader reader({}, 1);
  PEERBLOOM_RETURN_IF_ERROR(ReadGapPrefix(body, universe, universe, &count, &reader));
  BloomFilter filter(size.log2, k, size.multiplier);
  PEERBLOOM_RETURN_IF_ERROR(
      DecodeGaps(&reader, count, universe, [&](uint64_t pos) { filter.SetBit(pos); }));
  *out = std::move(filter);
  return Status::Ok();
}

}  // namespace

void EncodeRawBody(const BloomFilter& filter, std::string* out) {
  std::string swapped;
  out->append(LittleEndianBytes(filter, &swapped));
}

Status EncodeZstdBody(const BloomFilter& filter, std::string* out) {
  std::string swapped;
  const std::string_view raw = LittleEndianBytes(filter, &swapped);
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx(ZSTD_createCCtx());
  if (!cctx) return Status::ResourceExhausted("cannot create a zstd encoder");
  const auto window_log = static_cast<int>(WindowLogFor(raw.size(), kZstdMaxWindowLog));
  if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, kZstdLevel)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_windowLog, window_log)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, 1))) {
    return Status::InvalidArgument("cannot configure the zstd encoder");
  }
  const size_t start = out->size();
  out->resize(start + ZSTD_compressBound(raw.size()));
  const size_t n =
      ZSTD_compress2(cctx.get(), out->data() + start, out->size() - start, raw.data(), raw.size());
  if (ZSTD_isError(n)) {
    out->resize(start);
    return Status::InvalidArgument(std::string("zstd: ") + ZSTD_getErrorName(n));
  }
  out->resize(start + n);
  return Status::Ok();
}

void EncodeGolombFilterBody(const BloomFilter& filter, std::string* out) {
  EncodeGaps(
      filter.PopCount(), filter.bits(), [&](auto&& emit) { ForEachSetBit(filter, emit); }, out);
}

void EncodePositionsBody(const std::vector<uint64_t>& positions, uint64_t universe,
                         std::string* out) {
  EncodeGaps(
      positions.size(), universe,
      [&](auto&& emit) {
        for (uint64_t pos : positions) emit(pos);
      },
      out);
}

Status DecodeFilterBody(BodyEncoding encoding, std::string_view body, FilterSize size, unsigned k,
                        BloomFilter* out) {
  switch (encoding) {
    case BodyEncoding::kRaw:
      return DecodeRaw(body, size, k, out);
    case BodyEncoding::kZstd:
      return DecodeZstd(body, size, k, out);
    case BodyEncoding::kGolombRice:
      return DecodeGolombFilter(body, size, k, out);
  }
  return Status::NotSupported("unknown summary body encoding");
}

Status DecodePositionsBody(std::string_view body, uint64_t universe, uint64_t max_count,
                           std::vector<uint64_t>* out) {
  uint64_t count = 0;
  GolombReader reader({}, 1);
  PEERBLOOM_RETURN_IF_ERROR(ReadGapPrefix(body, universe, max_count, &count, &reader));
  std::vector<uint64_t> positions;
  positions.reserve(count);  // bounded: count fits the body at the minimum code length
  PEERBLOOM_RETURN_IF_ERROR(
      DecodeGaps(&reader, count, universe, [&](uint64_t pos) { positions.push_back(pos); }));
  *out = std::move(positions);
  return Status::Ok();
}

}  // namespace peerbloom::summary_internal
