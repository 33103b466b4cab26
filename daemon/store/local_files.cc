// Ownership checks and link-safe opens for the daemon's local files.
#include "daemon/store/local_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "peerbloom/client/control_token.h"

namespace peerbloom::daemon {
namespace {

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Status CheckStat(std::string_view what, const std::string& path, const struct stat& st) {
  const uid_t me = ::geteuid();
  if (st.st_uid == me && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0) return Status::Ok();
  const std::string uid = std::to_string(me);
  return Status::InvalidArgument(std::string(what) + " '" + path + "' is owned by uid '" +
                                 std::to_string(st.st_uid) + "' with mode '" + Mode(st.st_mode) +
                                 "': it must be owned by the daemon's user (uid '" + uid +
                                 "') and not writable by group or others (run 'chown " + uid + " " +
                                 path + "' and 'chmod go-w " + path + "')");
}

Status LinkRefused(const std::string& path) {
  return Status::InvalidArgument("'" + path +
                                 "' is a symbolic link: the daemon does not follow links in "
                                 "its data dir (remove it)");
}

std::string Errno() { return std::strerror(errno); }

}  // namespace

Status CheckPrivate(std::string_view what, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(std::string(what) + " '" + path + "' is missing");
    return Status::IOError("cannot stat " + std::string(what) + " '" + path + "': " + Errno());
  }
  return CheckStat(what, path, st);
}

Status CheckPrivateFd(std::string_view what, const std::string& path, int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return Status::IOError("cannot stat " + std::string(what) + " '" + path + "': " + Errno());
  }
  return CheckStat(what, path, st);
}

Status CheckDataDir(const std::string& path) {
  const Status s = CheckPrivate("data_dir", path);
  return s.IsNotFound() ? Status::Ok() : s;
}

Status ReadNodeKeyFile(const std::string& path, client::CurveKeyPair* keys) {
  Status s = client::ReadKeyFile(path, keys);
  if (s.ok()) return CheckPrivate("key_file", path);
  return Status::InvalidArgument(s.message() + " (create one with 'peerbloom keygen -o " + path +
                                 "')");
}

// Another user who may write the socket's directory could replace the socket.
Status CheckControlSocketDir(const std::string& control) {
  if (control.rfind("ipc://", 0) != 0) return Status::Ok();
  const std::string socket = control.substr(6);
  const size_t slash = socket.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : socket.substr(0, std::max<size_t>(slash, 1));
  const Status s = CheckPrivate("control socket directory", dir);
  return s.IsNotFound() ? Status::Ok() : s;
}

Status CheckControlTokenFile(const std::string& path) {
  if (path.empty()) return Status::Ok();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return Status::Ok();
  std::string token;
  PEERBLOOM_RETURN_IF_ERROR(client::ReadControlToken(path, &token));
  return CheckPrivate("control_token_file", path);
}

Status OpenAppendNoFollow(const std::string& path, int* fd) {
  *fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (*fd < 0) {
    if (errno == ELOOP) return LinkRefused(path);
    return Status::IOError("cannot open '" + path + "': " + Errno());
  }
  struct stat st;
  if (::fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(*fd);
    *fd = -1;
    return Status::InvalidArgument("'" + path + "' is not a regular file");
  }
  return Status::Ok();
}

Status DataDir::Open(const std::string& path, std::unique_ptr<DataDir>* out) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError("cannot create data_dir '" + path + "': " + Errno());
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open data_dir '" + path + "': " + Errno());
  Status s = CheckPrivateFd("data_dir", path, fd);
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  out->reset(new DataDir(path, fd));
  return Status::Ok();
}

DataDir::~DataDir() {
  if (fd_ >= 0) ::close(fd_);
}

Status DataDir::OpenFile(std::string_view name, int flags, int* fd) const {
  const std::string n(name);
  *fd = ::openat(fd_, n.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (*fd < 0) {
    if (errno == ELOOP) return LinkRefused(PathOf(name));
    if (errno == ENOENT) return Status::NotFound("no '" + PathOf(name) + "'");
    return Status::IOError("cannot open '" + PathOf(name) + "': " + Errno());
  }
  struct stat st;
  if (::fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(*fd);
    *fd = -1;
    return Status::InvalidArgument("'" + PathOf(name) + "' is not a regular file");
  }
  return Status::Ok();
}

Status DataDir::WriteFile(std::string_view name, std::string_view contents) const {
  const std::string tmp = std::string(name) + ".tmp";
  if (::unlinkat(fd_, tmp.c_str(), 0) != 0 && errno != ENOENT) {
    return Status::IOError("cannot remove '" + PathOf(tmp) + "': " + Errno());
  }
  int fd = -1;
  PEERBLOOM_RETURN_IF_ERROR(OpenFile(tmp, O_WRONLY | O_CREAT | O_EXCL, &fd));
  const bool ok =
      ::write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()) &&
      ::fsync(fd) == 0;
  const std::string err = Errno();
  ::close(fd);
  const std::string target(name);
  if (!ok || ::renameat(fd_, tmp.c_str(), fd_, target.c_str()) != 0) {
    const std::string why = ok ? Errno() : err;
    (void)::unlinkat(fd_, tmp.c_str(), 0);
    return Status::IOError("cannot write '" + PathOf(name) + "': " + why);
  }
  (void)::fsync(fd_);
  return Status::Ok();
}

Status DataDir::ReadFile(std::string_view name, std::string* contents) const {
  int fd = -1;
  PEERBLOOM_RETURN_IF_ERROR(OpenFile(name, O_RDONLY, &fd));
  contents->clear();
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) contents->append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  ::close(fd);
  if (failed) return Status::IOError("cannot read '" + PathOf(name) + "': " + Errno());
  return Status::Ok();
}

}  // namespace peerbloom::daemon
