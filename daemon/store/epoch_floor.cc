// The file is one decimal number and a newline; anything else is refused rather than guessed,
// since a wrong floor could only make epochs go down.
#include "daemon/store/epoch_floor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

namespace peerbloom::daemon {
namespace {

Status ReadFloor(const std::string& path, uint64_t* floor) {
  *floor = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return Status::Ok();  // no file yet
  if (fd < 0)
    return Status::Corruption("cannot open epoch file '" + path + "': " + std::strerror(errno));
  std::string s;
  char buf[64];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0 && s.size() < 4096) {
    s.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *floor);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return Status::Corruption("epoch file '" + path + "' does not hold a number");
  }
  return Status::Ok();
}

Status WriteFloor(const std::string& path, uint64_t epoch) {
  const std::string tmp = path + ".tmp";
  const std::string text = std::to_string(epoch) + "\n";
  // A fresh file, never one planted in its place (docs/security.md).
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return Status::IOError("cannot remove '" + tmp + "': " + std::strerror(errno));
  }
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot create '" + tmp + "': " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  const std::string err = std::strerror(errno);
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status::IOError("cannot write '" + path + "': " + err);
  }
  const std::string dir = path.substr(0, path.rfind('/') + 1);
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace

Status ClaimEpoch(const std::string& path, uint64_t candidate, uint64_t* epoch) {
  uint64_t floor = 0;
  PEERBLOOM_RETURN_IF_ERROR(ReadFloor(path, &floor));
  *epoch = std::max(candidate, floor + 1);
  return WriteFloor(path, *epoch);
}

}  // namespace peerbloom::daemon
