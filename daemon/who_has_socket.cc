// Non-blocking throughout: the loop never waits on one client. A connection whose client does
// not read its answers stops being read once kMaxPendingOutput bytes wait for it.
#include "daemon/who_has_socket.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace peerbloom::daemon {
namespace {

// Bytes read from one connection per turn, so one busy client cannot hold the loop.
constexpr size_t kMaxReadPerTurn = 1024 * 1024;

std::string Errno() { return std::strerror(errno); }

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string UserName(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return pw != nullptr ? pw->pw_name : std::to_string(uid);
}

std::string GroupName(gid_t gid) {
  const group* gr = ::getgrgid(gid);
  return gr != nullptr ? gr->gr_name : std::to_string(gid);
}

// Whether a member of `gid` (not the owner) may search directory `st`.
bool GroupMaySearch(const struct stat& st, gid_t gid) {
  return (st.st_mode & S_IXOTH) != 0 || (st.st_gid == gid && (st.st_mode & S_IXGRP) != 0);
}

}  // namespace

WhoHasSocket::WhoHasSocket(std::string path, std::string group)
    : path_(std::move(path)), group_(std::move(group)) {}

WhoHasSocket::~WhoHasSocket() {
  for (Connection& c : connections_) ::close(c.fd);
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }
}

Status WhoHasSocket::Start() {
  sockaddr_un addr{};
  if (path_.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("who-has socket path '" + path_ + "' is longer than " +
                                   std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::IOError("cannot create the who-has socket: " + Errno());
  // The data dir is locked by this daemon: a socket file there is a previous run's.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path_.c_str());
  const mode_t old_mask = ::umask(077);
  const int bound = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  ::umask(old_mask);
  if (bound != 0) {
    errno = bind_errno;
    const std::string why = Errno();
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::IOError("cannot bind who-has socket '" + path_ + "': " + why);
  }
  if (::chmod(path_.c_str(), 0600) != 0 || ::listen(listen_fd_, 64) != 0) {
    return Status::IOError("cannot listen on who-has socket '" + path_ + "': " + Errno());
  }
  return group_.empty() ? Status::Ok() : ShareWithGroup();
}

// A client of the group needs the socket's group and mode, and search permission on every
// directory above it. Each is checked here, at start, so that a helper is never refused
// later with nothing but "permission denied" to go by.
Status WhoHasSocket::ShareWithGroup() {
  const group* gr = ::getgrnam(group_.c_str());
  if (gr == nullptr) {
    return Status::InvalidArgument("who_has_socket_group '" + group_ +
                                   "' is not a group on this system");
  }
  const gid_t gid = gr->gr_gid;
  if (::chown(path_.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    const std::string why = Errno();
    const std::string user = UserName(::geteuid());
    return Status::InvalidArgument("cannot give the who-has socket '" + path_ + "' to group '" +
                                   group_ + "': " + why + " (the daemon's user '" + user +
                                   "' must be a member of '" + group_ + "': run 'adduser " + user +
                                   " " + group_ + "' and restart the daemon)");
  }
  if (::chmod(path_.c_str(), 0660) != 0) {
    return Status::IOError("cannot chmod who-has socket '" + path_ + "': " + Errno());
  }
  std::string dir = path_.substr(0, path_.rfind('/'));
  if (path_.find('/') == std::string::npos) dir = ".";
  for (; !dir.empty(); dir = dir.substr(0, dir.rfind('/'))) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      return Status::IOError("cannot stat '" + dir + "': " + Errno());
    }
    if (!GroupMaySearch(st, gid)) {
      return Status::InvalidArgument(
          "group '" + group_ + "' cannot reach the who-has socket '" + path_ + "': directory '" +
          dir + "' (owner '" + UserName(st.st_uid) + "', group '" + GroupName(st.st_gid) +
          "', mode '" + Octal(st.st_mode) + "') is not searchable by it; put the socket in a " +
          "directory it may search (the package's /run/peerbloom) or run 'chgrp " + group_ +
          " " + dir + "' and 'chmod g+x " + dir + "'");
    }
    if (dir.find('/') == std::string::npos) break;
  }
  return Status::Ok();
}

void WhoHasSocket::AppendPollItems(std::vector<zmq::pollitem_t>* items) const {
  items->push_back({nullptr, listen_fd_, ZMQ_POLLIN, 0});
  for (const Connection& c : connections_) {
    short events = c.out.size() - c.sent < kMaxPendingOutput ? ZMQ_POLLIN : 0;
    if (c.sent < c.out.size()) events |= ZMQ_POLLOUT;
    items->push_back({nullptr, c.fd, events, 0});
  }
}

size_t WhoHasSocket::Process(const zmq::pollitem_t* items, size_t count, const Handler& handler) {
  size_t answered = 0;
  // Connections accepted below are polled from the next turn on.
  const size_t polled = std::min(count - 1, connections_.size());
  for (size_t i = 0; i < polled; ++i) {
    Connection& c = connections_[i];
    const short revents = items[i + 1].revents;
    bool keep = true;
    if (revents & (ZMQ_POLLIN | ZMQ_POLLERR)) keep = Read(&c, handler, &answered);
    if (keep && (revents & ZMQ_POLLOUT)) keep = Flush(&c);
    if (!keep) {
      ::close(c.fd);
      c.fd = -1;
    }
  }
  CloseMarked();
  if (items[0].revents & ZMQ_POLLIN) Accept();
  return answered;
}

size_t WhoHasSocket::ServeReady(const Handler& handler) {
  size_t answered = 0;
  for (Connection& c : connections_) {
    if (c.out.size() - c.sent >= kMaxPendingOutput) continue;
    if (!Read(&c, handler, &answered)) {
      ::close(c.fd);
      c.fd = -1;
    }
  }
  CloseMarked();
  return answered;
}

void WhoHasSocket::Accept() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or an error the next poll reports again
    if (connections_.size() >= kMaxConnections) {
      ++stats_.refused;
      ::close(fd);
      continue;
    }
    ++stats_.connections;
    connections_.push_back({fd, {}, {}, 0});
  }
}

bool WhoHasSocket::Read(Connection* c, const Handler& handler, size_t* answered) {
  size_t got = 0;
  bool eof = false;
  while (got < kMaxReadPerTurn) {
    const ssize_t n = ::read(c->fd, read_buffer_.data(), read_buffer_.size());
    if (n > 0) {
      c->in.append(read_buffer_.data(), static_cast<size_t>(n));
      got += static_cast<size_t>(n);
      if (static_cast<size_t>(n) < read_buffer_.size()) break;
      continue;
    }
    if (n == 0) eof = true;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    break;
  }
  const size_t end = c->in.rfind('\n');
  if (end != std::string::npos) {
    const std::string_view lines(c->in.data(), end + 1);
    const size_t n = static_cast<size_t>(std::count(lines.begin(), lines.end(), '\n'));
    if (c->sent == c->out.size()) {
      c->out.clear();
      c->sent = 0;
    }
    handler(lines, &c->out);
    stats_.requests += n;
    *answered += n;
    c->in.erase(0, end + 1);
  }
  if (c->in.size() > kMaxLineBytes) {
    ++stats_.overlong;
    return false;
  }
  // A client that closed its end is gone: what it did not read is dropped with it.
  return !eof && Flush(c);
}

bool WhoHasSocket::Flush(Connection* c) {
  while (c->sent < c->out.size()) {
    const ssize_t n = ::send(c->fd, c->out.data() + c->sent, c->out.size() - c->sent, MSG_NOSIGNAL);
    if (n > 0) {
      c->sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  c->out.clear();
  c->sent = 0;
  return true;
}

void WhoHasSocket::CloseMarked() {
  std::erase_if(connections_, [](const Connection& c) { return c.fd < 0; });
}

}  // namespace peerbloom::daemon
