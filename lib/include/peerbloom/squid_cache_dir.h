// Reading the set of keys a Squid ufs, aufs or diskd cache_dir holds, from the disk.
//
// store.log is the live feed; when its lines are lost (rotated away while peerbloomd was
// down, store.log turned off for a while), the live set is rebuilt from what Squid holds.
// Two sources exist on disk, and this reads both:
//
//   files       every `<cache_dir>/XX/YY/NNNNNNNN` starts with swap metadata naming its
//               store key (peerbloom/squid_swap_meta.h). A superset of what Squid holds:
//               it also sees objects still being written, files of evicted objects that
//               unlinkd has not removed yet, and orphans Squid no longer indexes.
//   swap.state  the cache_dir's index log: ADD when an object finishes writing (the same
//               moment store.log says SWAPOUT), DEL when it leaves the index (evicted,
//               purged, replaced). Replayed, it is Squid's own index, which Squid itself
//               prefers to the files when it restarts; but it may trail by the writes Squid
//               has queued, and it names files it never checks.
//   both        (the default) the keys swap.state holds live whose file exists and carries
//               the same key: what Squid indexes and can serve. Differences either way are
//               counted. docs/squid.md gives the reasoning and measurements.
//
// Entries held only in memory (cache_mem) are never on disk and not in store.log: out of
// scope here as in the store.log feed. Rock cache_dirs (one database file) are not read.
//
// This file reads files with plain POSIX calls (no threads, sockets or clocks); callers
// that must stay responsive (the daemon's event loop) run it off the loop. The byte parsing
// is the pure ParseSquidSwapMeta / ParseSwapStateRecord. Thread-safety: the functions keep
// no state; SwapStateReplay is a plain object.
#ifndef PEERBLOOM_SQUID_CACHE_DIR_H_
#define PEERBLOOM_SQUID_CACHE_DIR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "peerbloom/key_scheme.h"
#include "peerbloom/squid_swap_meta.h"
#include "peerbloom/status.h"

namespace peerbloom {

// At most this many refusals are kept with their path and reason; the rest are counted.
inline constexpr size_t kMaxListedCacheDirProblems = 100;

struct CacheDirProblem {
  std::string path;
  Status status;
};

// What a walk of the cache files saw. Every name under XX/YY lands in exactly one of
// other_entries, vanished, refused, incomplete, private_keys or objects.
struct CacheFileStats {
  uint64_t directories = 0;     // XX/YY directories listed
  uint64_t files_read = 0;      // NNNNNNNN files opened and read
  uint64_t objects = 0;         // files that gave a key (duplicates included)
  uint64_t duplicate_keys = 0;  // objects whose key an earlier file already gave
  uint64_t refused = 0;         // unreadable, corrupt or of the wrong size (see problems)
  uint64_t incomplete = 0;      // shorter than their metadata announces: being written
  uint64_t private_keys = 0;    // KEY_PRIVATE: never findable; Squid drops them on rebuild
  uint64_t vanished = 0;        // listed, then gone before it was opened (Squid removed it)
  uint64_t other_entries = 0;   // names under XX/YY that are not 8 hex digits, or not files
  std::vector<CacheDirProblem> problems;  // the first kMaxListedCacheDirProblems refusals
};

// One object found by ScanCacheFiles. The views are valid during the callback only.
struct CacheFileObject {
  std::string_view path;
  uint32_t file_number = 0;  // the file's name, hexadecimal
  uint64_t file_size = 0;
  bool duplicate = false;  // an earlier file gave the same key
  const SwapMeta* meta = nullptr;
};

// Walks `cache_dir`/XX/YY/NNNNNNNN in name order and calls `visit` for each object file,
// including files whose key repeats an earlier one (counted in duplicate_keys). Per-file
// problems are counted in *stats, never returned. Returns NotFound / IOError when
// `cache_dir` cannot be listed, InvalidArgument when it has no XX subdirectory (not a ufs
// cache_dir).
Status ScanCacheFiles(const std::string& cache_dir,
                      const std::function<void(const CacheFileObject&)>& visit,
                      CacheFileStats* stats);

// What a swap.state replay saw. Every record lands in one of adds, dels, invalid.
struct SwapStateStats {
  uint64_t records = 0;          // complete records after the header
  uint64_t adds = 0;             // ADD records applied
  uint64_t dels = 0;             // DEL records applied
  uint64_t invalid = 0;          // refused records (checksum, op, fields), skipped as Squid does
  uint64_t private_adds = 0;     // ADDs with KEY_PRIVATE, ignored as Squid does (in adds)
  uint64_t unmatched_dels = 0;   // DELs of a key not live (in dels)
  uint64_t reused_files = 0;     // ADDs to a file number that held another live key
  uint64_t superseded_adds = 0;  // keys ADDed again to another file: the later ADD wins
  uint64_t trailing_bytes = 0;   // bytes after the last whole record (a write in progress)
  std::optional<Status> first_invalid;  // why the first invalid record was refused
};

// A live key and the file number its index entry names.
struct CacheDirEntry {
  SquidKey key{};
  uint32_t file_number = 0;
};

// Replays swap.state records the way Squid rebuilds its index from them (Fs::Ufs::
// RebuildState::rebuildFromSwapLog): ADD makes a key live in a file, DEL removes the key,
// records that fail their checks and private ADDs are skipped. Memory: 24 bytes per file
// number up to the highest one seen while that stays within a few times the records read
// (Squid allocates the lowest free numbers, so a real log is dense); a number far above that
// (at most 2^24, from a sparse or corrupt log) goes to a hash table instead, so one record
// cannot make the replay allocate hundreds of megabytes. Not copyable.
class SwapStateReplay {
 public:
  SwapStateReplay() = default;
  SwapStateReplay(const SwapStateReplay&) = delete;
  SwapStateReplay& operator=(const SwapStateReplay&) = delete;

  // The first kSwapStateRecordBytes of the file (ParseSwapStateHeader's errors).
  Status Begin(std::string_view header);
  // One record; an invalid one is counted, never an error.
  void Apply(std::string_view record);
  // Bytes after the last whole record.
  void SetTrailingBytes(uint64_t n) { stats_.trailing_bytes = n; }
  // The live keys, one entry per key, sorted by file number.
  std::vector<CacheDirEntry> Finish();

  const SwapStateStats& stats() const noexcept { return stats_; }

 private:
  struct Slot {
    SquidKey key{};    // all zero: no live key in this file
    uint64_t seq = 0;  // record number of the ADD
  };
  struct PendingDel {
    SquidKey key;
    uint64_t seq;
  };

  Slot* SlotFor(uint32_t file_number);

  std::vector<Slot> slots_;                       // by file number, dense
  std::unordered_map<uint32_t, Slot> far_slots_;  // file numbers beyond the dense table
  std::vector<PendingDel> pending_;               // DELs naming a file that does not hold their key
  SwapStateStats stats_;
};

// Reads `path` (a swap.state) through a SwapStateReplay, in chunks.
Status ReadSwapStateFile(const std::string& path, std::vector<CacheDirEntry>* live,
                         SwapStateStats* stats);

enum class CacheDirSource : uint8_t { kBoth, kFiles, kSwapState };
// "both" / "files" / "swap-state"; parsing accepts exactly these.
std::string_view CacheDirSourceName(CacheDirSource source) noexcept;
std::optional<CacheDirSource> ParseCacheDirSource(std::string_view name) noexcept;

struct CacheDirOptions {
  CacheDirSource source = CacheDirSource::kBoth;  // Default: kBoth
  bool want_urls = false;  // Default: false. Keep each key's URL (sources reading files)
  std::string swap_state;  // Default: empty, meaning `<cache_dir>/swap.state`
};

struct CacheDirKey {
  SquidKey key{};
  uint32_t file_number = 0;
  std::string url;  // with want_urls, from the file's metadata; may be empty
};

struct CacheDirReport {
  CacheDirSource source = CacheDirSource::kBoth;
  CacheFileStats files;       // kFiles, kBoth
  SwapStateStats swap_state;  // kSwapState, kBoth
  // kBoth: how the index and the files agreed.
  uint64_t confirmed = 0;             // live in swap.state, file holds the same key
  uint64_t indexed_missing_file = 0;  // live in swap.state, no usable file of that number
  uint64_t indexed_other_key = 0;     // live in swap.state, the file holds another key
  uint64_t files_not_indexed = 0;     // object files whose key swap.state does not hold live
};

// The keys `cache_dir` holds, one per key, by `options.source`. Errors: those of
// ScanCacheFiles and ReadSwapStateFile (kBoth needs both); per-file and per-record problems
// are only counted in *report.
Status ReadSquidCacheDir(const std::string& cache_dir, const CacheDirOptions& options,
                         std::vector<CacheDirKey>* keys, CacheDirReport* report);

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_CACHE_DIR_H_
