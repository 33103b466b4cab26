// The file is read whole and checked before any field is trusted: checksum first, then
// every length against what is left.
#include "daemon/store/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "peerbloom/byte_io.h"

namespace peerbloom::daemon {
namespace {

constexpr char kMagic[8] = {'P', 'B', 'S', 'N', 'A', 'P', '0', '1'};
// Format 1 had no minimum-reader field: magic, version, header length. From format 2 on the
// fixed prefix is magic, version, minimum reader, header length, and it never changes: a
// later format that keeps the layout readable by this code (say, new header fields) keeps
// kMinReaderVersion at 2, one that does not raises it and this build refuses it by name.
//
// Format 3 adds "size_multiplier" to the header: the counting filter has size_multiplier x
// 2^log2_counters counters. A format 2 reader would ignore the key and misread the counters,
// so it needs reader 3. Files of power-of-two filters are still written as format 2, byte
// for byte, and older builds keep reading them.
constexpr uint32_t kFormatVersion = 3;  // the newest this build writes and reads
constexpr uint32_t kMinReaderVersion = 3;
constexpr uint32_t kPowerOfTwoFormatVersion = 2;  // version and minimum reader when c = 1
constexpr size_t kPrefixV1 = 16;
constexpr size_t kPrefix = 20;
constexpr uint32_t kMaxHeaderBytes = 1 << 20;
constexpr uint64_t kMaxCellBytes = uint64_t{1} << 33;

std::string Errno() { return std::strerror(errno); }

nlohmann::json HeaderJson(const SnapshotState& s) {
  nlohmann::json feeds = nlohmann::json::array();
  for (const FeedPosition& f : s.feeds) {
    feeds.push_back({{"path", f.path},
                     {"device", f.device},
                     {"inode", f.inode},
                     {"offset", f.offset},
                     {"fingerprint_bytes", f.fingerprint_bytes},
                     {"fingerprint", f.fingerprint},
                     {"head_bytes", f.head_bytes},
                     {"head_fingerprint", f.head_fingerprint},
                     {"mtime_ns", f.mtime_ns},
                     {"state_bytes", f.state.size()}});
  }
  nlohmann::json j = {{"node_id", s.node_id},
                      {"epoch", s.epoch},
                      {"version", s.version},
                      {"k", s.k},
                      {"log2_counters", s.log2_counters},
                      {"key_scheme", std::string(KeySchemeName(s.key_scheme))},
                      {"index_key_fingerprint", s.index_key_fingerprint},
                      {"items", s.items},
                      {"saturation_events", s.saturation_events},
                      {"refused_removes", s.refused_removes},
                      {"adds", s.adds},
                      {"removes", s.removes},
                      {"written_unix_ms", s.written_unix_ms},
                      {"feeds", feeds}};
  if (s.size_multiplier != 1) j["size_multiplier"] = s.size_multiplier;
  return j;
}

Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(Errno());
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open '" + dir + "': " + Errno());
  const bool ok = ::fsync(fd) == 0;
  const std::string err = Errno();
  ::close(fd);
  return ok ? Status::Ok() : Status::IOError("cannot sync '" + dir + "': " + err);
}

Status ParseHeader(const nlohmann::json& j, uint64_t file_size, SnapshotState* s) {
  try {
    s->node_id = j.at("node_id").get<std::string>();
    s->epoch = j.at("epoch").get<uint64_t>();
    s->version = j.at("version").get<uint64_t>();
    s->k = j.at("k").get<unsigned>();
    s->log2_counters = j.at("log2_counters").get<unsigned>();
    s->size_multiplier = j.value("size_multiplier", 1u);
    auto scheme = ParseKeyScheme(j.at("key_scheme").get<std::string>());
    if (!scheme) return Status::Corruption("unknown key scheme");
    s->key_scheme = *scheme;
    s->index_key_fingerprint = j.at("index_key_fingerprint").get<uint64_t>();
    s->items = j.at("items").get<uint64_t>();
    s->saturation_events = j.at("saturation_events").get<uint64_t>();
    s->refused_removes = j.at("refused_removes").get<uint64_t>();
    s->adds = j.value("adds", uint64_t{0});
    s->removes = j.value("removes", uint64_t{0});
    s->written_unix_ms = j.value("written_unix_ms", int64_t{0});
    for (const auto& f : j.at("feeds")) {
      if (f.value("state_bytes", uint64_t{0}) > file_size) {
        return Status::Corruption("bad feed state length");
      }
      // head_* and mtime_ns are absent from snapshots written before they existed: the
      // follower then identifies the file by its inode, as those versions did.
      s->feeds.push_back({f.at("path").get<std::string>(), f.at("device").get<uint64_t>(),
                          f.at("inode").get<uint64_t>(), f.at("offset").get<uint64_t>(),
                          f.at("fingerprint_bytes").get<uint32_t>(),
                          f.at("fingerprint").get<uint64_t>(), f.value("head_bytes", uint32_t{0}),
                          f.value("head_fingerprint", uint64_t{0}), f.value("mtime_ns", int64_t{0}),
                          std::string(f.value("state_bytes", uint64_t{0}), '\0')});
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("bad header: ") + e.what());
  }
  return Status::Ok();
}

Status ReadWholeFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no snapshot at '" + path + "'");
    return Status::IOError("cannot open '" + path + "': " + Errno());
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 ||
      static_cast<uint64_t>(st.st_size) > kMaxCellBytes + 2 * kMaxHeaderBytes) {
    ::close(fd);
    return Status::Corruption("snapshot '" + path + "' has an impossible size");
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != out->size()) return Status::IOError("cannot read '" + path + "'");
  return Status::Ok();
}

// Format 1 files read as they always did; a later one reads when its minimum reader is at most
// this build's format. Runs after the checksum, so a damaged version field reads as corrupt.
Status CheckVersions(const std::string& path, const std::string& bytes, size_t* prefix) {
  const uint32_t version = static_cast<uint32_t>(LoadFixed(bytes.data() + 8, 4));
  if (version == 1) {
    *prefix = kPrefixV1;
    return Status::Ok();
  }
  const uint32_t min_reader = static_cast<uint32_t>(LoadFixed(bytes.data() + 12, 4));
  if (version < 2 || min_reader < 2 || min_reader > version) {
    return Status::Corruption("snapshot '" + path + "' is corrupt: format version '" +
                              std::to_string(version) + "' with minimum reader '" +
                              std::to_string(min_reader) + "'");
  }
  if (min_reader > kFormatVersion) {
    return Status::NotSupported("snapshot '" + path + "' has format version '" +
                                std::to_string(version) + "' and needs a reader of format '" +
                                std::to_string(min_reader) + "' or newer, this build reads '" +
                                std::to_string(kFormatVersion) + "'");
  }
  *prefix = kPrefix;
  return Status::Ok();
}

}  // namespace

Status WriteSnapshot(const std::string& path, const SnapshotState& state) {
  const std::string header = HeaderJson(state).dump();
  std::string head;
  head.append(kMagic, sizeof(kMagic));
  const bool power_of_two = state.size_multiplier == 1;
  PutFixed(&head, power_of_two ? kPowerOfTwoFormatVersion : kFormatVersion, 4);
  PutFixed(&head, power_of_two ? kPowerOfTwoFormatVersion : kMinReaderVersion, 4);
  PutFixed(&head, header.size(), 4);
  head += header;
  PutFixed(&head, state.cells.size(), 8);
  XXH3_state_t* hs = XXH3_createState();
  XXH3_64bits_reset(hs);
  XXH3_64bits_update(hs, head.data(), head.size());
  XXH3_64bits_update(hs, state.cells.data(), state.cells.size());
  for (const FeedPosition& f : state.feeds) XXH3_64bits_update(hs, f.state.data(), f.state.size());
  std::string tail;
  PutFixed(&tail, XXH3_64bits_digest(hs), 8);
  XXH3_freeState(hs);

  // A fresh file, never one planted in its place (docs/security.md).
  const std::string tmp = path + ".tmp";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return Status::IOError("cannot remove '" + tmp + "': " + Errno());
  }
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot create '" + tmp + "': " + Errno());
  Status s = WriteAll(fd, head.data(), head.size());
  if (s.ok()) s = WriteAll(fd, state.cells.data(), state.cells.size());
  for (const FeedPosition& f : state.feeds) {
    if (s.ok()) s = WriteAll(fd, f.state.data(), f.state.size());
  }
  if (s.ok()) s = WriteAll(fd, tail.data(), tail.size());
  if (s.ok() && ::fsync(fd) != 0) s = Status::IOError(Errno());
  ::close(fd);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return Status::IOError("cannot write '" + tmp + "': " + s.message());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IOError("cannot rename '" + tmp + "' to '" + path + "': " + Errno());
  }
  return SyncDirectoryOf(path);
}

Status ReadSnapshot(const std::string& path, SnapshotState* out) {
  std::string bytes;
  PEERBLOOM_RETURN_IF_ERROR(ReadWholeFile(path, &bytes));
  auto corrupt = [&](const std::string& why) {
    return Status::Corruption("snapshot '" + path + "' is corrupt: " + why);
  };
  if (bytes.size() < 32) return corrupt("truncated");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return corrupt("bad magic");
  const uint64_t stored = LoadFixed(bytes.data() + bytes.size() - 8, 8);
  if (XXH3_64bits(bytes.data(), bytes.size() - 8) != stored) return corrupt("checksum mismatch");
  size_t prefix = 0;
  PEERBLOOM_RETURN_IF_ERROR(CheckVersions(path, bytes, &prefix));
  const uint64_t header_len = LoadFixed(bytes.data() + prefix - 4, 4);
  if (header_len > kMaxHeaderBytes || prefix + header_len + 16 > bytes.size()) {
    return corrupt("bad header length");
  }
  const char* header = bytes.data() + prefix;
  const uint64_t cells_len = LoadFixed(header + header_len, 8);
  const uint64_t room = bytes.size() - prefix - header_len - 16;  // counters and feed states
  if (cells_len > room) return corrupt("bad counters length");
  SnapshotState state;
  const auto json = nlohmann::json::parse(header, header + header_len, nullptr,
                                          /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return corrupt("header is not JSON");
  Status s = ParseHeader(json, bytes.size(), &state);
  if (!s.ok()) return corrupt(s.message());
  uint64_t at = prefix + header_len + 8;
  state.cells.assign(bytes.data() + at, cells_len);
  at += cells_len;
  for (FeedPosition& f : state.feeds) {
    const uint64_t len = f.state.size();
    if (len > bytes.size() - 8 - at) return corrupt("bad feed state length");
    f.state.assign(bytes.data() + at, len);
    at += len;
  }
  if (at != bytes.size() - 8) return corrupt("bad feed state length");
  *out = std::move(state);
  return Status::Ok();
}

}  // namespace peerbloom::daemon
