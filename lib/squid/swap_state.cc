// swap.state replay: Squid's index of a ufs cache_dir, rebuilt from its ADD/DEL log.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "peerbloom/squid_cache_dir.h"

namespace peerbloom {
namespace {

bool IsZero(const SquidKey& key) noexcept {
  return std::all_of(key.begin(), key.end(), [](uint8_t b) { return b == 0; });
}

// Reads until `n` bytes or end of file; returns the count, or -1 with errno set.
ssize_t ReadFull(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

// Closes a descriptor on every path out.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// The dense table grows to a file number below this bound; the rest are hashed.
uint64_t DenseLimit(uint64_t records) { return std::max<uint64_t>(uint64_t{1} << 16, 4 * records); }

}  // namespace

// A number hashed once stays hashed, so each number has one slot wherever the bound moves.
SwapStateReplay::Slot* SwapStateReplay::SlotFor(uint32_t file_number) {
  if (!far_slots_.empty()) {
    if (auto it = far_slots_.find(file_number); it != far_slots_.end()) return &it->second;
  }
  if (file_number < slots_.size()) return &slots_[file_number];
  if (file_number < DenseLimit(stats_.records)) {
    slots_.resize(file_number + size_t{1});
    return &slots_[file_number];
  }
  return &far_slots_[file_number];
}

Status SwapStateReplay::Begin(std::string_view header) { return ParseSwapStateHeader(header); }

void SwapStateReplay::Apply(std::string_view record) {
  const uint64_t seq = ++stats_.records;
  SwapStateRecord r;
  if (Status s = ParseSwapStateRecord(record, &r); !s.ok()) {
    ++stats_.invalid;
    if (!stats_.first_invalid) stats_.first_invalid = s;
    return;
  }
  Slot& slot = *SlotFor(r.file_number);
  if (r.op == SwapLogOp::kAdd) {
    ++stats_.adds;
    // Squid never re-indexes private entries (RebuildState: "badflags").
    if (r.std.flags & kSquidFlagKeyPrivate) {
      ++stats_.private_adds;
      return;
    }
    // A file number ADDed again without a DEL: the file now holds the newer object.
    if (!IsZero(slot.key) && slot.key != r.key) ++stats_.reused_files;
    slot = {r.key, seq};
    return;
  }
  ++stats_.dels;
  if (slot.key == r.key) {
    slot = Slot();
  } else {
    // Squid removes a DELed key wherever it is; settle it once every ADD is known.
    pending_.push_back({r.key, seq});
  }
}

std::vector<CacheDirEntry> SwapStateReplay::Finish() {
  struct Live {
    SquidKey key;
    uint32_t file_number;
    uint64_t seq;
  };
  std::vector<Live> live;
  for (size_t f = 0; f < slots_.size(); ++f) {
    if (!IsZero(slots_[f].key))
      live.push_back({slots_[f].key, static_cast<uint32_t>(f), slots_[f].seq});
  }
  for (const auto& [f, slot] : far_slots_) {
    if (!IsZero(slot.key)) live.push_back({slot.key, f, slot.seq});
  }
  // One entry per key: the latest ADD wins, as in Squid's index.
  std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) {
    return a.key != b.key ? a.key < b.key : a.seq > b.seq;
  });
  std::vector<Live> unique;
  for (const Live& l : live) {
    if (!unique.empty() && unique.back().key == l.key) {
      ++stats_.superseded_adds;
    } else {
      unique.push_back(l);
    }
  }
  // A DEL removes its key when it came after the key's ADD.
  std::vector<CacheDirEntry> out;
  out.reserve(unique.size());
  std::vector<bool> used(pending_.size(), false);
  std::sort(pending_.begin(), pending_.end(),
            [](const PendingDel& a, const PendingDel& b) { return a.key < b.key; });
  for (const Live& l : unique) {
    auto [lo, hi] =
        std::equal_range(pending_.begin(), pending_.end(), PendingDel{l.key, 0},
                         [](const PendingDel& a, const PendingDel& b) { return a.key < b.key; });
    bool deleted = false;
    for (auto it = lo; it != hi; ++it) {
      if (it->seq > l.seq) {
        deleted = true;
        used[static_cast<size_t>(it - pending_.begin())] = true;
      }
    }
    if (!deleted) out.push_back({l.key, l.file_number});
  }
  stats_.unmatched_dels += static_cast<uint64_t>(std::count(used.begin(), used.end(), false));
  std::sort(out.begin(), out.end(), [](const CacheDirEntry& a, const CacheDirEntry& b) {
    return a.file_number < b.file_number;
  });
  slots_ = {};
  far_slots_ = {};
  pending_ = {};
  return out;
}

Status ReadSwapStateFile(const std::string& path, std::vector<CacheDirEntry>* live,
                         SwapStateStats* stats) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = "cannot open '" + path + "': " + std::strerror(errno);
    return errno == ENOENT ? Status::NotFound(why) : Status::IOError(why);
  }
  FdCloser closer{fd};
  // Records are read 4096 at a time (288 KiB); a partial one is carried to the next read.
  std::vector<char> buf(kSwapStateRecordBytes * 4096);
  ssize_t got = ReadFull(fd, buf.data(), kSwapStateRecordBytes);
  if (got < 0) return Status::IOError("cannot read '" + path + "': " + std::strerror(errno));
  SwapStateReplay replay;
  Status s = replay.Begin(std::string_view(buf.data(), static_cast<size_t>(got)));
  if (s.IsNotSupported()) return Status::NotSupported("'" + path + "': " + s.message());
  if (!s.ok()) return Status::Corruption("'" + path + "': " + s.message());
  size_t carried = 0;
  while ((got = ReadFull(fd, buf.data() + carried, buf.size() - carried)) > 0) {
    const size_t have = carried + static_cast<size_t>(got);
    size_t at = 0;
    for (; have - at >= kSwapStateRecordBytes; at += kSwapStateRecordBytes) {
      replay.Apply(std::string_view(buf.data() + at, kSwapStateRecordBytes));
    }
    carried = have - at;
    std::memmove(buf.data(), buf.data() + at, carried);
  }
  if (got < 0) return Status::IOError("cannot read '" + path + "': " + std::strerror(errno));
  replay.SetTrailingBytes(carried);
  *live = replay.Finish();
  *stats = replay.stats();
  return Status::Ok();
}

}  // namespace peerbloom
