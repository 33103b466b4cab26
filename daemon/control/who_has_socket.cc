// Non-blocking throughout: the loop never waits on one client. A connection whose client does
// not read its answers stops being read once kMaxPendingOutput bytes wait for it; every
// connection gets one read of at most kReadPerTurn bytes a turn, so the cost of a turn is
// bounded by the number of connections, not by what one client sends.
#include "daemon/control/who_has_socket.h"

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

// Connections accepted per turn at most: a client that connects in a loop gets the loop's
// time back in turns, not all of it.
constexpr int kAcceptsPerTurn = 64;
// Written answers are dropped from the front of a connection's buffer once this many are
// sent, so a client that reads while it keeps some answers waiting does not grow it forever.
constexpr size_t kCompactAfterBytes = 64 * 1024;

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

WhoHasSocket::WhoHasSocket(std::string path, std::string group, size_t max_connections,
                           Framing framing, std::string name, std::string group_key)
    : path_(std::move(path)),
      group_(std::move(group)),
      framing_(framing),
      name_(std::move(name)),
      group_key_(std::move(group_key)),
      max_connections_(max_connections) {}

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
    return Status::InvalidArgument(name_ + " path '" + path_ + "' is longer than " +
                                   std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::IOError("cannot create the " + name_ + ": " + Errno());
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
    return Status::IOError("cannot bind " + name_ + " '" + path_ + "': " + why);
  }
  if (::chmod(path_.c_str(), 0600) != 0 || ::listen(listen_fd_, 64) != 0) {
    return Status::IOError("cannot listen on " + name_ + " '" + path_ + "': " + Errno());
  }
  return group_.empty() ? Status::Ok() : ShareWithGroup();
}

// A client of the group needs the socket's group and mode, and search permission on every
// directory above it. Each is checked here, at start, so that a helper is never refused
// later with nothing but "permission denied" to go by.
Status WhoHasSocket::ShareWithGroup() {
  const group* gr = ::getgrnam(group_.c_str());
  if (gr == nullptr) {
    return Status::InvalidArgument(group_key_ + " '" + group_ + "' is not a group on this system");
  }
  const gid_t gid = gr->gr_gid;
  if (::chown(path_.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    const std::string why = Errno();
    const std::string user = UserName(::geteuid());
    return Status::InvalidArgument("cannot give the " + name_ + " '" + path_ + "' to group '" +
                                   group_ + "': " + why + " (the daemon's user '" + user +
                                   "' must be a member of '" + group_ + "': run 'adduser " + user +
                                   " " + group_ + "' and restart the daemon)");
  }
  if (::chmod(path_.c_str(), 0660) != 0) {
    return Status::IOError("cannot chmod " + name_ + " '" + path_ + "': " + Errno());
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
          "group '" + group_ + "' cannot reach the " + name_ + " '" + path_ + "': directory '" +
          dir + "' (owner '" + UserName(st.st_uid) + "', group '" + GroupName(st.st_gid) +
          "', mode '" + Octal(st.st_mode) + "') is not searchable by it; put the socket in a " +
          "directory it may search (the package's /run/peerbloom) or run 'chgrp " + group_ + " " +
          dir + "' and 'chmod g+x " + dir + "'");
    }
    if (dir.find('/') == std::string::npos) break;
  }
  return Status::Ok();
}

void WhoHasSocket::AppendPollItems(std::vector<zmq::pollitem_t>* items) const {
  items->push_back({nullptr, listen_fd_, ZMQ_POLLIN, 0});
  for (const Connection& c : connections_) {
    short events = MayRead(c) ? ZMQ_POLLIN : 0;
    if (c.Pending() > 0) events |= ZMQ_POLLOUT;
    items->push_back({nullptr, c.fd, events, 0});
  }
}

// A client that reads its answers keeps being served when all together hold the bound:
// its answers are gone by the time it is read again.
bool WhoHasSocket::MayRead(const Connection& c) const {
  return c.Pending() < kMaxPendingOutput && (output_bytes_ < kMaxTotalOutput || c.Pending() == 0);
}

size_t WhoHasSocket::Process(const zmq::pollitem_t* items, size_t count, const Handler& handler) {
  ++turn_;
  size_t answered = 0;
  // Connections accepted below are polled from the next turn on. Each turn starts one
  // connection further, so none is always served last.
  const size_t polled = std::min(count - 1, connections_.size());
  for (size_t k = 0; k < polled; ++k) {
    const size_t i = (first_ + k) % polled;
    Connection& c = connections_[i];
    const short revents = items[i + 1].revents;
    bool keep = true;
    if (revents & (ZMQ_POLLIN | ZMQ_POLLERR)) {
      // An error or hang-up on a connection that is not read: its client is gone.
      keep = MayRead(c) ? Read(&c, handler, &answered) : (revents & ZMQ_POLLERR) == 0;
    }
    if (keep && (revents & ZMQ_POLLOUT)) keep = Flush(&c) && !(c.closing && c.Pending() == 0);
    if (!keep) Close(&c);
  }
  first_ = polled > 0 ? (first_ + 1) % polled : 0;
  CloseMarked();
  if (items[0].revents & ZMQ_POLLIN) Accept();
  return answered;
}

size_t WhoHasSocket::ServeReady(const Handler& handler) {
  size_t answered = 0;
  for (Connection& c : connections_) {
    if (MayRead(c) && !Read(&c, handler, &answered)) Close(&c);
  }
  CloseMarked();
  return answered;
}

void WhoHasSocket::Accept() {
  for (int i = 0; i < kAcceptsPerTurn; ++i) {
    int fd = -1;
    const AcceptResult r = acceptor_.Accept(listen_fd_, &fd);
    if (r == AcceptResult::kNone) return;
    if (r == AcceptResult::kShed) {
      ++stats_.shed;
      continue;
    }
    if (connections_.size() >= max_connections_) EvictOne();
    ++stats_.connections;
    Connection c;
    c.fd = fd;
    c.last_turn = turn_;
    connections_.push_back(std::move(c));
  }
}

// The connection that costs most and serves least goes: the most unread answers (a client
// that does not read), else one that never sent a line (an idle one holding a slot), else the
// one idle longest. A client that sends lines and reads its answers is evicted last.
void WhoHasSocket::EvictOne() {
  auto worse = [](const Connection& a, const Connection& b) {
    if (a.Pending() != b.Pending()) return a.Pending() > b.Pending();
    if (a.answered != b.answered) return !a.answered;
    return a.last_turn < b.last_turn;
  };
  auto victim = connections_.begin();
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (worse(*it, *victim)) victim = it;
  }
  Close(&*victim);
  connections_.erase(victim);
  ++stats_.evicted;
}

bool WhoHasSocket::Read(Connection* c, const Handler& handler, size_t* answered) {
  ssize_t n;
  do {
    n = ::read(c->fd, read_buffer_.data(), read_buffer_.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
  if (n > 0) c->in.append(read_buffer_.data(), static_cast<size_t>(n));
  size_t end = std::string::npos;  // the last byte of the last complete request
  size_t requests = 0;
  if (framing_ == Framing::kLines) {
    end = c->in.rfind('\n');
    if (end != std::string::npos) {
      requests = static_cast<size_t>(std::count(c->in.begin(), c->in.begin() + end + 1, '\n'));
    }
  } else {
    // Heads end in an empty line: "\r\n\r\n" (or a bare "\n\n", RFC 9112 2.2).
    for (size_t from = 0; from < c->in.size();) {
      const size_t nl = c->in.find('\n', from);
      if (nl == std::string::npos) break;
      const size_t next = nl + 1;
      if (next < c->in.size() && c->in[next] == '\n') {
        end = next;
      } else if (next + 1 < c->in.size() && c->in[next] == '\r' && c->in[next + 1] == '\n') {
        end = next + 1;
      } else {
        from = next;
        continue;
      }
      ++requests;
      from = end + 1;
    }
  }
  if (end != std::string::npos && !c->closing) {
    const std::string_view batch(c->in.data(), end + 1);
    const size_t before = c->out.size();
    if (!handler(batch, &c->out)) c->closing = true;
    output_bytes_ += c->out.size() - before;
    stats_.requests += requests;
    *answered += requests;
    c->answered = true;
    c->last_turn = turn_;
    c->in.erase(0, end + 1);
  }
  if (c->in.size() > kMaxLineBytes) {
    ++stats_.overlong;
    return false;
  }
  if (c->closing) {
    c->in.clear();
    return Flush(c) && c->Pending() > 0;  // closed once the answers are out
  }
  // A client that closed its end is gone: what it did not read is dropped with it.
  return n != 0 && Flush(c);
}

bool WhoHasSocket::Flush(Connection* c) {
  while (c->Pending() > 0) {
    const ssize_t n = ::send(c->fd, c->out.data() + c->sent, c->Pending(), MSG_NOSIGNAL);
    if (n > 0) {
      c->sent += static_cast<size_t>(n);
      output_bytes_ -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;
  }
  if (c->Pending() == 0) {
    c->sent = 0;
    // A buffer that held a large batch gives its memory back: capacity is not counted in
    // output_bytes_, and 256 idle connections could otherwise keep 4 MiB each.
    if (c->out.capacity() > kCompactAfterBytes) {
      std::string().swap(c->out);
    } else {
      c->out.clear();
    }
  } else if (c->sent >= kCompactAfterBytes) {
    c->out.erase(0, c->sent);
    c->sent = 0;
  }
  return true;
}

void WhoHasSocket::Close(Connection* c) {
  output_bytes_ -= c->Pending();
  ::close(c->fd);
  c->fd = -1;
  std::string().swap(c->out);
  c->sent = 0;
}

void WhoHasSocket::CloseMarked() {
  std::erase_if(connections_, [](const Connection& c) { return c.fd < 0; });
}

}  // namespace peerbloom::daemon
