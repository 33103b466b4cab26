// Control token files. The token is compared with CRYPTO_memcmp so that the reply time says
// nothing about how much of a guess was right.
#include "peerbloom/client/control_token.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace peerbloom::client {
namespace {

constexpr size_t kMaxTokenFileBytes = 4096;

std::string Errno() { return std::strerror(errno); }

Status NewToken(std::string* token) {
  unsigned char raw[kGeneratedTokenChars / 2];
  if (RAND_bytes(raw, sizeof(raw)) != 1) {
    return Status::IOError("cannot draw random bytes for a control token");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  token->clear();
  for (unsigned char b : raw) {
    token->push_back(kHex[b >> 4]);
    token->push_back(kHex[b & 15]);
  }
  return Status::Ok();
}

}  // namespace

std::string DefaultControlTokenFile(std::string_view control, std::string_view data_dir) {
  if (control.rfind("tcp://", 0) != 0 || data_dir.empty()) return "";
  return std::string(data_dir) + "/control.token";
}

Status ReadSecretFile(std::string_view what, const std::string& path, std::string* secret) {
  const std::string name(what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + name + " '" + path + "': " + Errno());
  struct stat st;
  const bool stat_ok = ::fstat(fd, &st) == 0;
  std::string text;
  // Group read is allowed: a token can be shared with a group (chgrp, chmod 640).
  constexpr mode_t kRefused = S_IRWXO | S_IWGRP | S_IXGRP;
  if (stat_ok && S_ISREG(st.st_mode) && (st.st_mode & kRefused) == 0) {
    char buf[512];
    ssize_t n;
    while (text.size() < kMaxTokenFileBytes && (n = ::read(fd, buf, sizeof(buf))) > 0) {
      text.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (!stat_ok) return Status::IOError("cannot stat " + name + " '" + path + "'");
  if (S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(name + " '" + path + "' is a directory");
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(name + " '" + path + "' is not a regular file");
  }
  if ((st.st_mode & kRefused) != 0) {
    return Status::InvalidArgument(name + " '" + path +
                                   "' is accessible by others or writable by its group; chmod "
                                   "600 it (or 640 to share it with its group)");
  }
  const size_t end = text.find('\n');
  std::string_view line = std::string_view(text).substr(0, end);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.empty()) {
    return Status::InvalidArgument(name + " '" + path + "' is empty");
  }
  *secret = std::string(line);
  return Status::Ok();
}

Status ReadControlToken(const std::string& path, std::string* token) {
  return ReadSecretFile("control token file", path, token);
}

Status EnsureControlToken(const std::string& path, std::string* token) {
  std::string fresh;
  PEERBLOOM_RETURN_IF_ERROR(NewToken(&fresh));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return ReadControlToken(path, token);
    return Status::IOError("cannot create control token file '" + path + "': " + Errno());
  }
  const std::string line = fresh + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    return Status::IOError("cannot write control token file '" + path + "'");
  }
  *token = std::move(fresh);
  return Status::Ok();
}

bool TokenMatches(std::string_view sent, std::string_view token) {
  if (sent.size() != token.size() || token.empty()) return false;
  return CRYPTO_memcmp(sent.data(), token.data(), token.size()) == 0;
}

}  // namespace peerbloom::client
