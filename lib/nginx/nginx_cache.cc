// nginx cache files: names, levels and the head of a file, as src/http/ngx_http_file_cache.c
// (ngx_http_file_cache_name, ngx_http_file_cache_set_header) and src/core/ngx_file.c
// (ngx_create_hashed_filename) write them.
#include "peerbloom/nginx_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "peerbloom/escape.h"
#include "peerbloom/hex.h"
#include "peerbloom/md5.h"

namespace peerbloom {
namespace {

// Field offsets in ngx_http_file_cache_header_t on LP64: version is an ngx_uint_t at 0;
// five time_t, crc32 (4) and valid_msec (2) put header_start at 54.
constexpr size_t kVersionOffset = 0;
constexpr size_t kHeaderStartOffset = 54;
// The smallest header_start: the KEY line of an empty key.
constexpr size_t kMinHeaderStart = kNginxHeaderBytes + kNginxKeyPrefix.size() + 1;
constexpr size_t kFirstReadBytes = 4096;

uint64_t LoadLe(std::string_view bytes, size_t at, size_t n) noexcept {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

std::string Q(uint64_t value) { return "'" + std::to_string(value) + "'"; }

NginxFileState Partial(size_t have, size_t need, std::string* why) {
  *why = Q(have) + " bytes, fewer than the " + Q(need) + " the header and KEY line take";
  return NginxFileState::kPartial;
}

NginxFileState Foreign(std::string text, std::string* why) {
  *why = std::move(text);
  return NginxFileState::kForeign;
}

// Reads from offset head->size() until head holds `want` bytes or the file ends. False with
// errno set on an error.
bool ReadMore(int fd, size_t want, std::string* head) {
  size_t got = head->size();
  head->resize(want);
  while (got < want) {
    const ssize_t r = ::pread(fd, head->data() + got, want - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      head->resize(got);
      return r == 0;
    }
    got += static_cast<size_t>(r);
  }
  return true;
}

std::string QuotePath(const std::string& path) { return QuoteBytes(path, path.size()); }

// The head of the open file `path`, parsed: one page holds the header and a key of up to
// 3.7 KiB; a longer key takes a second read.
NginxFileState ReadOpenFile(int fd, const std::string& path, std::string* key, std::string* why) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Foreign(QuotePath(path) + " is not a regular file", why);
  }
  std::string head;
  NginxFileState state = NginxFileState::kPartial;
  for (size_t want : {kFirstReadBytes, kNginxMaxHeadBytes}) {
    if (!ReadMore(fd, want, &head)) {
      *why = "cannot read " + QuotePath(path) + ": " + std::strerror(errno);
      return NginxFileState::kPartial;
    }
    state = ParseNginxCacheHeader(head, key, why);
    if (state != NginxFileState::kPartial || head.size() < want) break;  // decided, or at EOF
  }
  return state;
}

}  // namespace

NginxKey NginxKeyOf(std::string_view cache_key) noexcept { return Md5(cache_key); }

bool ParseNginxCacheFileName(std::string_view name, NginxKey* out) noexcept {
  return ParseHexBytes(name, out, /*lower_only=*/true);
}

std::string NginxKeyHex(const NginxKey& key) { return HexBytes(key, /*upper=*/false); }

Status ParseNginxLevels(std::string_view text, std::vector<int>* levels) {
  std::vector<int> out;
  for (size_t i = 0; i < text.size();) {
    // A level, then ':' and another, as ngx_http_file_cache_set_slot reads "levels=".
    if (out.size() == 3 || (text[i] != '1' && text[i] != '2')) {
      return Status::InvalidArgument("levels " + QuoteBytes(text) +
                                     " must be 1 to 3 levels of 1 or 2 digits joined by ':'");
    }
    out.push_back(text[i++] - '0');
    if (i < text.size() && (text[i++] != ':' || i == text.size())) {
      return Status::InvalidArgument("levels " + QuoteBytes(text) +
                                     " must be 1 to 3 levels of 1 or 2 digits joined by ':'");
    }
  }
  *levels = std::move(out);
  return Status::Ok();
}

std::string NginxCacheFilePath(std::string_view root, const std::vector<int>& levels,
                               const NginxKey& key) {
  if (!root.empty() && root.back() == '/') root.remove_suffix(1);
  const std::string hex = NginxKeyHex(key);
  std::string path(root);
  size_t end = hex.size();
  for (int level : levels) {
    end -= static_cast<size_t>(level);
    path += '/';
    path.append(hex, end, static_cast<size_t>(level));
  }
  path += '/';
  path += hex;
  return path;
}

NginxFileState ParseNginxCacheHeader(std::string_view head, std::string* key, std::string* why) {
  // Each field is judged once all its bytes are there, so a prefix of a valid file is never
  // kForeign, and the key is never read from a prefix that does not hold all of it.
  if (head.size() < kVersionOffset + 8) return Partial(head.size(), kMinHeaderStart, why);
  const uint64_t version = LoadLe(head, kVersionOffset, 8);
  if (version != kNginxCacheVersion) {
    return Foreign("header version " + Q(version) + ", not " + Q(kNginxCacheVersion), why);
  }
  const size_t key_at = kNginxHeaderBytes + kNginxKeyPrefix.size();
  if (head.size() < key_at) return Partial(head.size(), kMinHeaderStart, why);
  if (head.substr(kNginxHeaderBytes, kNginxKeyPrefix.size()) != kNginxKeyPrefix) {
    return Foreign("no 'KEY: ' line at offset " + Q(kNginxHeaderBytes), why);
  }
  // The key ends where the response head starts: header_start is the offset past its '\n'.
  const size_t header_start = LoadLe(head, kHeaderStartOffset, 2);
  if (header_start < kMinHeaderStart) {
    return Foreign("header start " + Q(header_start) + " leaves no room for the KEY line", why);
  }
  const size_t key_bytes = header_start - 1 - key_at;
  if (key_bytes > kNginxMaxKeyBytes) {
    return Foreign("key of " + Q(key_bytes) + " bytes exceeds the limit of " + Q(kNginxMaxKeyBytes),
                   why);
  }
  if (head.size() < header_start) return Partial(head.size(), header_start, why);
  if (head[header_start - 1] != '\n') {
    return Foreign("the KEY line does not end at header start " + Q(header_start), why);
  }
  key->assign(head.substr(key_at, key_bytes));
  why->clear();
  return NginxFileState::kValid;
}

NginxFileState ReadNginxCacheFileKey(const std::string& path, std::string* key, std::string* why,
                                     bool* gone) {
  *gone = false;
  // O_NONBLOCK: a FIFO given a cache file's name must not stall the reader.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    *why = "cannot open " + QuotePath(path) + ": " + std::strerror(err);
    if (err == ELOOP) return NginxFileState::kForeign;  // a symbolic link: not nginx's
    *gone = err == ENOENT;
    return NginxFileState::kPartial;
  }
  const NginxFileState state = ReadOpenFile(fd, path, key, why);
  ::close(fd);
  return state;
}

}  // namespace peerbloom
