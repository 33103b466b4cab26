// What Squid writes about each object on disk in a ufs, aufs or diskd cache_dir, read from
// bytes (pure; no file access here: peerbloom/squid_cache_dir.h walks the directories).
//
// 1. Swap metadata: the head of every cache file `<cache_dir>/XX/YY/NNNNNNNN`, followed by
//    the stored HTTP reply (Squid 5 src/store_swapmeta.cc, src/StoreMetaUnpacker.cc):
//
//      offset  size  field
//      0       1     0x03 (STORE_META_OK)
//      1       4     total metadata length L, these 5 bytes included (int32, host order)
//      5       ...   entries up to offset L, each: type (1 byte), length n (int32, host
//                    order), n bytes of value
//      L       ...   the HTTP reply (status line, headers, body)
//
//    Squid 5.7 writes, in this order: KEY_MD5 (3, 16 bytes: the store key), STD_LFS (9,
//    44 bytes: timestamp, lastref, expires, lastmod as int64, swap_file_sz uint64, refcount
//    and flags uint16), URL (4, the URL and a NUL), OBJSIZE (10, int64 reply size, when
//    known) and VARY_HEADERS (8, when the reply varies).
//
// 2. swap.state records: the cache_dir's index log, a header record then one fixed-size
//    record per ADD (an object finished writing) or DEL (it left the index), in host byte
//    order (src/StoreSwapLogData.h). This reader knows version 2 with 72-byte records, the
//    layout of every 64-bit Squid 3.2 to 6.
//
// Both are read as untrusted bytes: every length is checked before use, nothing asserts on
// input, and each refusal says why (docs/squid.md lists the messages). Host byte order is
// read as little-endian: a cache written on a big-endian host is refused, never misread.
#ifndef PEERBLOOM_SQUID_SWAP_META_H_
#define PEERBLOOM_SQUID_SWAP_META_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom {

// Frozen Squid constants (src/defines.h, src/StoreMeta.h, src/enums.h). Never renumber.
inline constexpr uint8_t kSwapMetaOk = 0x03;
enum SwapMetaType : uint8_t {
  kSwapMetaKeyMd5 = 3,
  kSwapMetaUrl = 4,
  kSwapMetaStd = 5,  // before large-file support; same 44 bytes on 64-bit hosts
  kSwapMetaVaryHeaders = 8,
  kSwapMetaStdLfs = 9,
  kSwapMetaObjSize = 10,
};
inline constexpr size_t kSwapMetaPrefixBytes = 5;          // STORE_META_OK + the length
inline constexpr size_t kSwapMetaStdBytes = 44;            // 4 * int64 + uint64 + 2 * uint16
inline constexpr uint16_t kSquidFlagKeyPrivate = 1u << 7;  // KEY_PRIVATE in StoreEntry::flags

// Metadata longer than this is refused. Squid caps each entry at 64 KiB and URLs at 8 KiB;
// real metadata is a few hundred bytes.
inline constexpr size_t kMaxSwapMetaBytes = 256 * 1024;

// STORE_META_STD_LFS: part of the StoreEntry at swap-out time.
struct SwapMetaStd {
  int64_t timestamp = 0;
  int64_t lastref = 0;
  int64_t expires = 0;
  int64_t lastmod = 0;
  uint64_t swap_file_sz = 0;  // 0 at swap-out time: Squid learns it when the write ends
  uint16_t refcount = 0;
  uint16_t flags = 0;
};

// One cache file's metadata. The views point into the bytes given to ParseSquidSwapMeta.
struct SwapMeta {
  size_t header_bytes = 0;        // L: the stored reply starts at this offset
  SquidKey key{};                 // STORE_META_KEY_MD5, never all zero
  std::string_view url;           // STORE_META_URL without its NUL; empty when absent
  int64_t object_size = -1;       // STORE_META_OBJSIZE: reply bytes; -1 when absent
  bool has_std = false;           // STD or STD_LFS was present
  SwapMetaStd std;                // valid when has_std
  std::string_view vary_headers;  // STORE_META_VARY_HEADERS; empty when absent
  uint32_t unknown_entries = 0;   // entries of other types, skipped as Squid does

  bool key_private() const noexcept { return has_std && (std.flags & kSquidFlagKeyPrivate); }
  // The file size a complete object has, or -1 when OBJSIZE is absent.
  int64_t complete_file_size() const noexcept {
    return object_size < 0 ? -1 : static_cast<int64_t>(header_bytes) + object_size;
  }
};

// Parses the swap metadata at the start of `bytes` (the file's first bytes: at least L of
// them). Corruption with the reason when the first byte is not 0x03, L is out of range or
// beyond `bytes`, an entry runs past L, an entry of a known type has the wrong length, or
// there is no store key; ResourceExhausted when L exceeds kMaxSwapMetaBytes. On error *out
// is unspecified. Bounded: reads at most L bytes once.
Status ParseSquidSwapMeta(std::string_view bytes, SwapMeta* out);

// The length L a file's metadata declares, to know how many bytes to read before parsing.
// Returns 0 when `bytes` is too short or does not start with 0x03.
size_t PeekSquidSwapMetaLength(std::string_view bytes) noexcept;

// swap.state (src/StoreSwapLogData.h, src/swap_log_op.h).
enum class SwapLogOp : uint8_t { kNop = 0, kAdd = 1, kDel = 2, kVersion = 3 };
inline constexpr size_t kSwapStateRecordBytes = 72;
inline constexpr uint32_t kSwapStateFileNumberMask = 0x00FFFFFF;  // Squid masks the rest

struct SwapStateRecord {
  SwapLogOp op = SwapLogOp::kNop;
  uint32_t file_number = 0;  // masked with kSwapStateFileNumberMask, as Squid does
  SwapMetaStd std;           // timestamp .. flags, as in the cache file's STD_LFS
  SquidKey key{};
};

// Checks the header record at the start of a swap.state file: op 3, version 2, record size
// 72, and Squid's 24-bit checksum. Corruption or NotSupported with the reason.
Status ParseSwapStateHeader(std::string_view bytes);
// Parses one 72-byte record. Corruption when the checksum does not match or a field fails
// Squid's own sanity check (StoreSwapLogData::sane): op ADD or DEL, file number >= 0, times
// >= -2, size > 0.
Status ParseSwapStateRecord(std::string_view record, SwapStateRecord* out);

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_SWAP_META_H_
