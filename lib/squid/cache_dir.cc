// Walking a ufs cache_dir's files, and combining them with swap.state.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "peerbloom/squid_cache_dir.h"
#include "peerbloom/squid_key_set.h"

namespace peerbloom {
namespace {

// Squid names directories "%02X" and files "%08X" (UFSSwapDir::fullPath).
bool IsUpperHex(std::string_view name, size_t digits) {
  return name.size() == digits && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
         });
}

std::string Q(std::string_view s) { return "'" + std::string(s) + "'"; }
std::string Q(uint64_t v) { return "'" + std::to_string(v) + "'"; }

// The names in `dir`, sorted; errno is kept on failure.
bool ListDir(const std::string& dir, std::vector<std::string>* names) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  names->clear();
  while (const dirent* e = ::readdir(d)) names->emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names->begin(), names->end());
  return true;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The 2-hex-digit subdirectories of `dir`.
std::vector<std::string> HexSubdirs(const std::vector<std::string>& names, const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (IsUpperHex(n, 2) && IsDir(dir + "/" + n)) out.push_back(n);
  }
  return out;
}

// Reads at most `n` bytes from offset `at`; the count, or -1 with errno set.
ssize_t ReadAt(int fd, char* buf, size_t n, off_t at) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, buf + got, n - got, at + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

// Reads and checks one cache file. Returns its category, filling the walk's counters.
class FileScanner {
 public:
  FileScanner(const std::function<void(const CacheFileObject&)>& visit, CacheFileStats* stats)
      : visit_(visit), stats_(stats) {}

  void Scan(const std::string& path, uint32_t file_number);
  void Refuse(const std::string& path, Status status) {
    ++stats_->refused;
    if (stats_->problems.size() < kMaxListedCacheDirProblems)
      stats_->problems.push_back({path, std::move(status)});
  }

 private:
  // Reads the metadata: the first 4 KiB, more when the metadata says it is longer.
  Status ReadMeta(int fd, uint64_t size, const std::string& path);
  Status CheckSize(const SwapMeta& meta, uint64_t size, bool* incomplete) const;

  const std::function<void(const CacheFileObject&)>& visit_;
  CacheFileStats* stats_;
  SquidKeySet seen_;
  std::string buf_;
};

Status FileScanner::ReadMeta(int fd, uint64_t size, const std::string& path) {
  size_t want = static_cast<size_t>(std::min<uint64_t>(size, 4096));
  for (int pass = 0; pass < 2; ++pass) {
    buf_.resize(want);
    const ssize_t got = ReadAt(fd, buf_.data(), want, 0);
    if (got < 0) return Status::IOError("cannot read " + Q(path) + ": " + std::strerror(errno));
    buf_.resize(static_cast<size_t>(got));
    const size_t declared = PeekSquidSwapMetaLength(buf_);
    if (declared <= buf_.size() || declared > kMaxSwapMetaBytes || declared > size) break;
    want = declared;
  }
  return Status::Ok();
}

// Squid's own check (storeRebuildParseEntry): a size in the metadata, when set, is the file
// size with or without the metadata. Squid writes 0 there, so OBJSIZE decides: a file
// shorter than metadata + reply is still being written.
Status FileScanner::CheckSize(const SwapMeta& meta, uint64_t size, bool* incomplete) const {
  *incomplete = false;
  const uint64_t recorded = meta.has_std ? meta.std.swap_file_sz : 0;
  if (recorded != 0 && recorded != size && recorded != size - meta.header_bytes) {
    return Status::Corruption("file of " + Q(size) + " bytes does not match the size " +
                              Q(recorded) + " in its metadata");
  }
  const int64_t complete = meta.complete_file_size();
  if (complete >= 0 && size < static_cast<uint64_t>(complete)) *incomplete = true;
  if (complete >= 0 && size > static_cast<uint64_t>(complete)) {
    return Status::Corruption("file of " + Q(size) + " bytes is longer than the " +
                              Q(static_cast<uint64_t>(complete)) + " its metadata announces");
  }
  return Status::Ok();
}

void FileScanner::Scan(const std::string& path, uint32_t file_number) {
  // O_NOFOLLOW: Squid writes plain files; a link is not its object.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      ++stats_->vanished;
    } else {
      Refuse(path, Status::IOError("cannot open " + Q(path) + ": " + std::strerror(errno)));
    }
    return;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    ++stats_->other_entries;
    return;
  }
  ++stats_->files_read;
  const auto size = static_cast<uint64_t>(st.st_size);
  Status s = ReadMeta(fd, size, path);
  ::close(fd);
  SwapMeta meta;
  if (s.ok()) s = ParseSquidSwapMeta(buf_, &meta);
  bool incomplete = false;
  if (s.ok()) s = CheckSize(meta, size, &incomplete);
  if (!s.ok()) return Refuse(path, std::move(s));
  if (incomplete) {
    ++stats_->incomplete;
  } else if (meta.key_private()) {
    ++stats_->private_keys;
  } else {
    ++stats_->objects;
    const bool duplicate = !seen_.Insert(meta.key);
    stats_->duplicate_keys += duplicate;
    visit_(CacheFileObject{path, file_number, size, duplicate, &meta});
  }
}

void ScanLeafDir(const std::string& dir, FileScanner* scanner, CacheFileStats* stats) {
  std::vector<std::string> names;
  if (!ListDir(dir, &names)) {
    return scanner->Refuse(dir,
                           Status::IOError("cannot list " + Q(dir) + ": " + std::strerror(errno)));
  }
  ++stats->directories;
  for (const std::string& name : names) {
    if (name == "." || name == "..") continue;
    if (!IsUpperHex(name, 8)) {
      ++stats->other_entries;
      continue;
    }
    scanner->Scan(dir + "/" + name, static_cast<uint32_t>(std::stoul(name, nullptr, 16)));
  }
}

}  // namespace

Status ScanCacheFiles(const std::string& cache_dir,
                      const std::function<void(const CacheFileObject&)>& visit,
                      CacheFileStats* stats) {
  *stats = CacheFileStats();
  std::vector<std::string> names;
  if (!ListDir(cache_dir, &names)) {
    const std::string why = "cannot list " + Q(cache_dir) + ": " + std::strerror(errno);
    return errno == ENOENT ? Status::NotFound(why) : Status::IOError(why);
  }
  const std::vector<std::string> level1 = HexSubdirs(names, cache_dir);
  if (level1.empty()) {
    return Status::InvalidArgument(Q(cache_dir) +
                                   " has no subdirectories '00', '01', ...: not a ufs, aufs "
                                   "or diskd cache_dir");
  }
  FileScanner scanner(visit, stats);
  for (const std::string& l1 : level1) {
    const std::string dir1 = cache_dir + "/" + l1;
    if (!ListDir(dir1, &names)) {
      scanner.Refuse(dir1, Status::IOError("cannot list " + Q(dir1) + ": " + std::strerror(errno)));
      continue;
    }
    for (const std::string& l2 : HexSubdirs(names, dir1)) {
      ScanLeafDir(dir1 + "/" + l2, &scanner, stats);
    }
  }
  return Status::Ok();
}

std::string_view CacheDirSourceName(CacheDirSource source) noexcept {
  switch (source) {
    case CacheDirSource::kBoth:
      return "both";
    case CacheDirSource::kFiles:
      return "files";
    case CacheDirSource::kSwapState:
      return "swap-state";
  }
  return "both";
}

std::optional<CacheDirSource> ParseCacheDirSource(std::string_view name) noexcept {
  for (CacheDirSource s :
       {CacheDirSource::kBoth, CacheDirSource::kFiles, CacheDirSource::kSwapState}) {
    if (name == CacheDirSourceName(s)) return s;
  }
  return std::nullopt;
}

namespace {

// The object files, sorted by file number; a key repeated in a later file only with
// `duplicates` (the cross-check must see every file: the index may name either).
Status CollectFiles(const std::string& cache_dir, bool want_urls, bool duplicates,
                    std::vector<CacheDirKey>* files, CacheFileStats* stats) {
  files->clear();
  PEERBLOOM_RETURN_IF_ERROR(ScanCacheFiles(
      cache_dir,
      [&](const CacheFileObject& o) {
        if (o.duplicate && !duplicates) return;
        CacheDirKey k{o.meta->key, o.file_number, {}};
        if (want_urls) k.url = std::string(o.meta->url);
        files->push_back(std::move(k));
      },
      stats));
  std::sort(files->begin(), files->end(), [](const CacheDirKey& a, const CacheDirKey& b) {
    return a.file_number < b.file_number;
  });
  return Status::Ok();
}

// Keeps the index entries whose file holds the same key (both lists sorted by file number).
void CrossCheck(const std::vector<CacheDirEntry>& index, std::vector<CacheDirKey>* files,
                std::vector<CacheDirKey>* keys, CacheDirReport* report) {
  auto f = files->begin();
  for (const CacheDirEntry& e : index) {
    while (f != files->end() && f->file_number < e.file_number) ++f;
    if (f == files->end() || f->file_number != e.file_number) {
      ++report->indexed_missing_file;
    } else if (f->key != e.key) {
      ++report->indexed_other_key;
    } else {
      ++report->confirmed;
      keys->push_back(std::move(*f));
    }
  }
  report->files_not_indexed = report->files.objects - report->confirmed;
}

}  // namespace

Status ReadSquidCacheDir(const std::string& cache_dir, const CacheDirOptions& options,
                         std::vector<CacheDirKey>* keys, CacheDirReport* report) {
  *report = CacheDirReport();
  report->source = options.source;
  keys->clear();
  const std::string swap_state =
      options.swap_state.empty() ? cache_dir + "/swap.state" : options.swap_state;
  std::vector<CacheDirEntry> index;
  if (options.source != CacheDirSource::kFiles) {
    PEERBLOOM_RETURN_IF_ERROR(ReadSwapStateFile(swap_state, &index, &report->swap_state));
  }
  if (options.source == CacheDirSource::kSwapState) {
    keys->reserve(index.size());
    for (const CacheDirEntry& e : index) keys->push_back({e.key, e.file_number, {}});
    return Status::Ok();
  }
  std::vector<CacheDirKey> files;
  const bool both = options.source == CacheDirSource::kBoth;
  PEERBLOOM_RETURN_IF_ERROR(
      CollectFiles(cache_dir, options.want_urls, both, &files, &report->files));
  if (!both) {
    *keys = std::move(files);
    return Status::Ok();
  }
  CrossCheck(index, &files, keys, report);
  return Status::Ok();
}

}  // namespace peerbloom
