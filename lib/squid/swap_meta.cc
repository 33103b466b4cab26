// Squid's on-disk object metadata and swap.state records, read as untrusted bytes.
//
// Squid's own unpacker (StoreMetaUnpacker) trusts more than this reader: it reads an entry's
// type and length whenever five bytes remain and lets a negative length move its cursor
// backwards. Here every entry must lie wholly inside the declared length, so the loop moves
// forward by at least five bytes per entry and ends after at most L / 5 of them.
#include <cstring>
#include <string>

#include "peerbloom/squid_swap_meta.h"

namespace peerbloom {
namespace {

// Squid writes host byte order; on the little-endian hosts this reader supports that is
// little-endian, decoded byte by byte so that alignment and the build host do not matter.
uint64_t LoadLe(const char* p, size_t n) noexcept {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
int32_t LoadI32(const char* p) noexcept { return static_cast<int32_t>(LoadLe(p, 4)); }
int64_t LoadI64(const char* p) noexcept { return static_cast<int64_t>(LoadLe(p, 8)); }
uint16_t LoadU16(const char* p) noexcept { return static_cast<uint16_t>(LoadLe(p, 2)); }

std::string Quote(int64_t v) { return "'" + std::to_string(v) + "'"; }

bool IsZeroKey(const SquidKey& key) noexcept {
  for (uint8_t b : key) {
    if (b != 0) return false;
  }
  return true;
}

// The 44-byte block shared by STD_LFS entries and swap.state records (from timestamp on).
SwapMetaStd LoadStd(const char* p) noexcept {
  SwapMetaStd s;
  s.timestamp = LoadI64(p);
  s.lastref = LoadI64(p + 8);
  s.expires = LoadI64(p + 16);
  s.lastmod = LoadI64(p + 24);
  s.swap_file_sz = static_cast<uint64_t>(LoadI64(p + 32));
  s.refcount = LoadU16(p + 40);
  s.flags = LoadU16(p + 42);
  return s;
}

Status WrongLength(std::string_view what, int64_t got, size_t want) {
  return Status::Corruption(std::string(what) + " entry has length " + Quote(got) + ", expected " +
                            Quote(static_cast<int64_t>(want)));
}

// Applies one entry of a known type; unknown types are counted and skipped, as Squid does.
Status ApplyEntry(uint8_t type, std::string_view value, SwapMeta* out) {
  const auto n = static_cast<int64_t>(value.size());
  switch (type) {
    case kSwapMetaKeyMd5: {
      if (value.size() != out->key.size()) return WrongLength("store key", n, out->key.size());
      if (!IsZeroKey(out->key)) return Status::Corruption("swap metadata has two store keys");
      std::memcpy(out->key.data(), value.data(), value.size());
      if (IsZeroKey(out->key)) return Status::Corruption("store key is all zero");
      return Status::Ok();
    }
    case kSwapMetaUrl: {
      // Squid stores the URL with its terminating NUL; the URL ends at the first NUL.
      const size_t nul = value.find('\0');
      out->url = value.substr(0, nul);
      return Status::Ok();
    }
    case kSwapMetaStd:
    case kSwapMetaStdLfs:
      if (value.size() != kSwapMetaStdBytes) return WrongLength("standard", n, kSwapMetaStdBytes);
      out->std = LoadStd(value.data());
      out->has_std = true;
      return Status::Ok();
    case kSwapMetaObjSize:
      if (value.size() != 8) return WrongLength("object size", n, 8);
      out->object_size = LoadI64(value.data());
      if (out->object_size < 0) {
        return Status::Corruption("object size " + Quote(out->object_size) + " is negative");
      }
      return Status::Ok();
    case kSwapMetaVaryHeaders:
      out->vary_headers = value;
      return Status::Ok();
    default:
      ++out->unknown_entries;
      return Status::Ok();
  }
}

}  // namespace

size_t PeekSquidSwapMetaLength(std::string_view bytes) noexcept {
  if (bytes.size() < kSwapMetaPrefixBytes || static_cast<uint8_t>(bytes[0]) != kSwapMetaOk) {
    return 0;
  }
  const int32_t length = LoadI32(bytes.data() + 1);
  return length < 0 ? 0 : static_cast<size_t>(length);
}

Status ParseSquidSwapMeta(std::string_view bytes, SwapMeta* out) {
  *out = SwapMeta();
  if (bytes.size() < kSwapMetaPrefixBytes) {
    return Status::Corruption("swap metadata of " + Quote(static_cast<int64_t>(bytes.size())) +
                              " bytes is shorter than its '5'-byte prefix");
  }
  const auto first = static_cast<uint8_t>(bytes[0]);
  if (first != kSwapMetaOk) {
    return Status::Corruption("swap metadata starts with byte " + Quote(first) + ", expected '3'");
  }
  const int64_t length = LoadI32(bytes.data() + 1);
  // The smallest useful metadata holds one entry: the 5-byte prefix and a 5-byte entry head.
  if (length < static_cast<int64_t>(2 * kSwapMetaPrefixBytes)) {
    return Status::Corruption("swap metadata length " + Quote(length) +
                              " is below the minimum of '10'");
  }
  if (length > static_cast<int64_t>(kMaxSwapMetaBytes)) {
    return Status::ResourceExhausted("swap metadata length " + Quote(length) +
                                     " exceeds the limit of " +
                                     Quote(static_cast<int64_t>(kMaxSwapMetaBytes)));
  }
  if (length > static_cast<int64_t>(bytes.size())) {
    return Status::Corruption("swap metadata length " + Quote(length) + " is beyond the " +
                              Quote(static_cast<int64_t>(bytes.size())) + " bytes read");
  }
  const auto end = static_cast<size_t>(length);
  out->header_bytes = end;
  size_t pos = kSwapMetaPrefixBytes;
  while (pos < end) {
    if (end - pos < kSwapMetaPrefixBytes) {
      return Status::Corruption("swap metadata entry at offset " +
                                Quote(static_cast<int64_t>(pos)) + " is truncated");
    }
    const auto type = static_cast<uint8_t>(bytes[pos]);
    const int64_t n = LoadI32(bytes.data() + pos + 1);
    const size_t value_at = pos + kSwapMetaPrefixBytes;
    if (n < 0 || static_cast<uint64_t>(n) > end - value_at) {
      return Status::Corruption("swap metadata entry of type " + Quote(type) + " at offset " +
                                Quote(static_cast<int64_t>(pos)) + " has length " + Quote(n) +
                                ", beyond the metadata length " + Quote(length));
    }
    PEERBLOOM_RETURN_IF_ERROR(
        ApplyEntry(type, bytes.substr(value_at, static_cast<size_t>(n)), out));
    pos = value_at + static_cast<size_t>(n);
  }
  if (IsZeroKey(out->key)) return Status::Corruption("swap metadata has no store key");
  return Status::Ok();
}

namespace {

// SwapChecksum24::set (src/StoreSwapLogData.cc): an Internet-checksum-like sum of three
// 32-bit words folded to 24 bits and inverted, stored low byte first.
uint32_t Checksum24(uint32_t a, uint32_t b, uint32_t c) noexcept {
  uint64_t sum = static_cast<uint64_t>(a) + b + c;
  while (sum >> 24) sum = (sum & 0xFFFFFF) + (sum >> 24);
  return static_cast<uint32_t>(~sum) & 0xFFFFFF;
}

uint32_t StoredChecksum(const char* p) noexcept { return static_cast<uint32_t>(LoadLe(p, 3)); }

constexpr int32_t kSwapStateVersion = 2;
constexpr size_t kSwapStateHeaderBytes = 12;  // op, checksum, version, record_size

}  // namespace

Status ParseSwapStateHeader(std::string_view bytes) {
  if (bytes.size() < kSwapStateHeaderBytes) {
    return Status::Corruption("swap.state of " + Quote(static_cast<int64_t>(bytes.size())) +
                              " bytes is shorter than its '12'-byte header");
  }
  const auto op = static_cast<uint8_t>(bytes[0]);
  if (op != static_cast<uint8_t>(SwapLogOp::kVersion)) {
    return Status::NotSupported("swap.state starts with op " + Quote(op) +
                                ", expected '3' (a version 2 header)");
  }
  const int32_t version = LoadI32(bytes.data() + 4);
  const int32_t record_size = LoadI32(bytes.data() + 8);
  if (StoredChecksum(bytes.data() + 1) !=
      Checksum24(static_cast<uint32_t>(version), static_cast<uint32_t>(record_size), 0)) {
    return Status::Corruption("swap.state header checksum does not match");
  }
  if (version != kSwapStateVersion) {
    return Status::NotSupported("swap.state version " + Quote(version) +
                                " is not supported; this reader has '2'");
  }
  if (record_size != static_cast<int32_t>(kSwapStateRecordBytes)) {
    return Status::NotSupported("swap.state record size " + Quote(record_size) +
                                " is not supported; this reader has '72'");
  }
  return Status::Ok();
}

Status ParseSwapStateRecord(std::string_view record, SwapStateRecord* out) {
  if (record.size() != kSwapStateRecordBytes) {
    return Status::Corruption("swap.state record of " + Quote(static_cast<int64_t>(record.size())) +
                              " bytes, expected '72'");
  }
  const char* p = record.data();
  const int32_t file_number = LoadI32(p + 4);
  SwapStateRecord r;
  r.std = LoadStd(p + 8);
  const uint64_t size = r.std.swap_file_sz;
  if (StoredChecksum(p + 1) != Checksum24(static_cast<uint32_t>(file_number),
                                          static_cast<uint32_t>(size >> 32),
                                          static_cast<uint32_t>(size & 0xFFFFFFFF))) {
    return Status::Corruption("swap.state record checksum does not match");
  }
  const auto op = static_cast<uint8_t>(p[0]);
  if (op != static_cast<uint8_t>(SwapLogOp::kAdd) && op != static_cast<uint8_t>(SwapLogOp::kDel)) {
    return Status::Corruption("swap.state record has op " + Quote(op) + ", expected '1' or '2'");
  }
  if (file_number < 0) {
    return Status::Corruption("swap.state record has file number " + Quote(file_number));
  }
  for (int64_t t : {r.std.timestamp, r.std.lastref, r.std.expires, r.std.lastmod}) {
    if (t < -2) return Status::Corruption("swap.state record has time " + Quote(t));
  }
  if (size == 0) return Status::Corruption("swap.state record has file size '0'");
  r.op = static_cast<SwapLogOp>(op);
  r.file_number = static_cast<uint32_t>(file_number) & kSwapStateFileNumberMask;
  std::memcpy(r.key.data(), p + 52, r.key.size());
  if (IsZeroKey(r.key)) return Status::Corruption("swap.state record has an all-zero store key");
  *out = r;
  return Status::Ok();
}

}  // namespace peerbloom
