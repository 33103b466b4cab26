// DigestFetcher: HTTP fetches of Squid Cache Digests on one worker thread, scheduled from
// the daemon's loop. See digest_fetcher.h for the contract.
#include "daemon/digest_fetcher.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "peerbloom/squid_digest.h"

namespace peerbloom::daemon {
namespace {

std::string SourceName(const DigestSource& s) { return s.host + ":" + std::to_string(s.port); }

std::string SourceUrl(const DigestSource& s) {
  return "http://" + SourceName(s) + kStoreDigestPath;
}

bool Digits(std::string_view text, size_t at, size_t n, int* out) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant, "days_from_civil").
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

Status Positive(std::string_view field, int64_t v) {
  if (v > 0) return Status::Ok();
  return Status::InvalidArgument("squid digest option '" + std::string(field) +
                                 "' must be positive, not '" + std::to_string(v) + "'");
}

Status ValidateSource(const DigestSource& s) {
  const bool bad_host = s.host.empty() || std::any_of(s.host.begin(), s.host.end(), [](char c) {
                          return c <= 0x20 || c >= 0x7f || c == ':' || c == '/';
                        });
  if (bad_host || s.port == 0 || !IsValidNodeId(ImportedNodeId(SourceName(s))) ||
      !IsValidEndpoint(SourceUrl(s))) {
    return Status::InvalidArgument("invalid squid digest source '" + SourceName(s) + "'");
  }
  return Status::Ok();
}

// A minimal HTTP/1.0 GET: Squid answers HTTP/1.0 requests without chunked encoding, with the
// body ending at Content-Length or at the close. Every wait is bounded: connect by
// connect_timeout_ms, each read by read_timeout_ms, the whole response by total_timeout_ms.
struct HttpGetLimits {
  int64_t connect_timeout_ms = 0;
  int64_t read_timeout_ms = 0;
  int64_t total_timeout_ms = 0;
  size_t max_body_bytes = 0;
};

struct HttpResponse {
  int status = 0;
  std::string date;
  std::string expires;
  std::string body;
};

constexpr size_t kMaxHeaderBytes = 64 << 10;

class Socket {
 public:
  Socket() = default;
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  void Reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Waits for `events` on fd; false on timeout or error.
bool Wait(int fd, short events, int64_t timeout_ms) {
  pollfd p{fd, events, 0};
  int r = 0;
  do {
    r = poll(&p, 1, static_cast<int>(std::max<int64_t>(timeout_ms, 0)));
  } while (r < 0 && errno == EINTR);
  return r == 1;
}

Status Connect(const std::string& host, uint16_t port, int64_t timeout_ms, Socket* sock) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &list) != 0 || list == nullptr) {
    return Status::IOError("cannot resolve '" + host + "'");
  }
  Status result = Status::IOError("cannot connect to '" + host + ":" + service + "'");
  for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
    sock->Reset(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (sock->fd() < 0) continue;
    if (connect(sock->fd(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
    int err = 0;
    socklen_t len = sizeof(err);
    if (!Wait(sock->fd(), POLLOUT, timeout_ms)) {
      result = Status::IOError("connect to '" + host + ":" + service + "' timed out");
      continue;
    }
    if (getsockopt(sock->fd(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      result = Status::Ok();
      break;
    }
  }
  freeaddrinfo(list);
  return result;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Status line and the headers this client uses. *content_length is -1 when absent.
Status ParseHead(std::string_view head, HttpResponse* res, int64_t* content_length) {
  const size_t eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, eol);
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
      !Digits(status_line, 9, 3, &res->status)) {
    return Status::Corruption("bad http status line");
  }
  *content_length = -1;
  size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(pos, end - pos);
    pos = end + 2;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = Lower(Trim(line.substr(0, colon)));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (name == "date") res->date = std::string(value);
    if (name == "expires") res->expires = std::string(value);
    if (name == "transfer-encoding") return Status::NotSupported("chunked http body");
    if (name == "content-length") {
      int64_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || n > (int64_t{1} << 40)) {
          return Status::Corruption("bad content-length");
        }
        n = n * 10 + (c - '0');
      }
      *content_length = n;
    }
  }
  return Status::Ok();
}

Status HttpGet(const std::string& host, uint16_t port, std::string_view path,
               const HttpGetLimits& limits, const std::atomic<bool>& stop, HttpResponse* res) {
  using Steady = std::chrono::steady_clock;
  Socket sock;
  PEERBLOOM_RETURN_IF_ERROR(Connect(host, port, limits.connect_timeout_ms, &sock));
  const Steady::time_point deadline =
      Steady::now() + std::chrono::milliseconds(limits.total_timeout_ms);
  auto left_ms = [&] {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    return std::min<int64_t>(left.count(), limits.read_timeout_ms);
  };
  const std::string request = "GET " + std::string(path) + " HTTP/1.0\r\nHost: " + host + ":" +
                              std::to_string(port) +
                              "\r\nAccept: application/cache-digest\r\nConnection: close\r\n\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    if (!Wait(sock.fd(), POLLOUT, left_ms())) return Status::IOError("http request timed out");
    const ssize_t n = send(sock.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EINTR && errno != EAGAIN) return Status::IOError("http send failed");
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string data;
  size_t head_end = std::string::npos;
  int64_t content_length = -1;
  char buf[16384];
  for (;;) {
    if (stop) return Status::IOError("fetch cancelled");
    if (left_ms() <= 0 || !Wait(sock.fd(), POLLIN, left_ms())) {
      return Status::IOError("http response timed out");
    }
    const ssize_t n = recv(sock.fd(), buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Status::IOError("http receive failed");
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        if (data.size() > kMaxHeaderBytes) return Status::ResourceExhausted("http head too large");
        continue;
      }
      PEERBLOOM_RETURN_IF_ERROR(
          ParseHead(std::string_view(data).substr(0, head_end), res, &content_length));
      data.erase(0, head_end + 4);
      if (res->status != 200) return Status::Ok();  // the body does not matter
    }
    if (data.size() > limits.max_body_bytes ||
        content_length > static_cast<int64_t>(limits.max_body_bytes)) {
      return Status::ResourceExhausted("body exceeds the limit '" +
                                       std::to_string(limits.max_body_bytes) + "' bytes");
    }
    if (content_length >= 0 && data.size() >= static_cast<size_t>(content_length)) break;
  }
  if (head_end == std::string::npos) return Status::Corruption("http response without a head");
  if (content_length >= 0 && data.size() != static_cast<size_t>(content_length)) {
    return Status::Corruption("http body of '" + std::to_string(data.size()) +
                              "' bytes, content-length '" + std::to_string(content_length) + "'");
  }
  res->body = std::move(data);
  return Status::Ok();
}

}  // namespace

std::optional<int64_t> ParseHttpDate(std::string_view t) {
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (t.size() != 29 || t.substr(3, 2) != ", " || t[7] != ' ' || t[11] != ' ' || t[16] != ' ' ||
      t[19] != ':' || t[22] != ':' || t.substr(25) != " GMT") {
    return std::nullopt;
  }
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(t, 5, 2, &day) || !Digits(t, 12, 4, &year) || !Digits(t, 17, 2, &hour) ||
      !Digits(t, 20, 2, &minute) || !Digits(t, 23, 2, &second)) {
    return std::nullopt;
  }
  const auto month = std::find(kMonths.begin(), kMonths.end(), t.substr(8, 3));
  if (month == kMonths.end() || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  const unsigned m = static_cast<unsigned>(month - kMonths.begin()) + 1;
  const int64_t days = DaysFromCivil(year, m, static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60000 + int64_t{second} * 1000;
}

Status ValidateDigestFetcherOptions(const DigestFetcherOptions& o) {
  for (size_t i = 0; i < o.sources.size(); ++i) {
    PEERBLOOM_RETURN_IF_ERROR(ValidateSource(o.sources[i]));
    for (size_t j = 0; j < i; ++j) {
      if (SourceName(o.sources[j]) == SourceName(o.sources[i])) {
        return Status::InvalidArgument("duplicate squid digest source '" +
                                       SourceName(o.sources[i]) + "'");
      }
    }
  }
  PEERBLOOM_RETURN_IF_ERROR(Positive("connect_timeout_ms", o.connect_timeout_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("read_timeout_ms", o.read_timeout_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("total_timeout_ms", o.total_timeout_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("min_refresh_ms", o.min_refresh_ms));
  PEERBLOOM_RETURN_IF_ERROR(Positive("initial_backoff_ms", o.initial_backoff_ms));
  if (o.default_refresh_ms < o.min_refresh_ms || o.default_refresh_ms > o.max_refresh_ms) {
    return Status::InvalidArgument(
        "squid digest refresh must satisfy min <= default <= max, not '" +
        std::to_string(o.min_refresh_ms) + "' <= '" + std::to_string(o.default_refresh_ms) +
        "' <= '" + std::to_string(o.max_refresh_ms) + "'");
  }
  if (o.max_backoff_ms < o.initial_backoff_ms) {
    return Status::InvalidArgument("squid digest option 'max_backoff_ms' is below the initial");
  }
  if (o.max_body_bytes < kCacheDigestHeaderBytes || o.max_body_bytes > kMaxImportedDigestBytes) {
    return Status::InvalidArgument("squid digest option 'max_body_bytes' must be in [" +
                                   std::to_string(kCacheDigestHeaderBytes) + ", " +
                                   std::to_string(kMaxImportedDigestBytes) + "]");
  }
  return Status::Ok();
}

DigestFetcher::DigestFetcher(DigestFetcherOptions options) : opt_(std::move(options)) {
  for (const DigestSource& s : opt_.sources) {
    DigestSourceStats st;
    st.source = SourceName(s);
    st.url = SourceUrl(s);
    stats_.push_back(std::move(st));
  }
  worker_ = std::thread([this] { Run(); });
}

DigestFetcher::~DigestFetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::vector<DigestFetchResult> DigestFetcher::Poll(int64_t now_ms, int64_t now_unix_ms) {
  std::deque<Outcome> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(outcomes_);
  }
  std::vector<DigestFetchResult> out;
  for (Outcome& o : done) Finish(std::move(o), now_ms, now_unix_ms, &out);
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < stats_.size(); ++i) {
      DigestSourceStats& st = stats_[i];
      if (st.in_flight || (st.fetches > 0 && now_ms < st.next_fetch_ms)) continue;
      st.in_flight = true;
      jobs_.push_back(i);
      ++busy_;
      queued = true;
    }
  }
  if (queued) cv_.notify_all();
  return out;
}

int64_t DigestFetcher::NextDeadline(int64_t now_ms) const {
  int64_t next = INT64_MAX;
  for (const DigestSourceStats& st : stats_) {
    if (st.in_flight) {
      next = std::min(next, now_ms + kResultPollMs);
    } else {
      next = std::min(next, st.fetches == 0 ? now_ms : st.next_fetch_ms);
    }
  }
  return next;
}

std::vector<DigestSourceStats> DigestFetcher::Stats(int64_t now_ms) const {
  std::vector<DigestSourceStats> out = stats_;
  for (DigestSourceStats& st : out) {
    st.age_ms = st.last_success_ms < 0 ? -1 : now_ms - st.last_success_ms;
  }
  return out;
}

bool DigestFetcher::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return busy_ == 0; });
}

void DigestFetcher::Run() {
  for (;;) {
    size_t source = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      source = jobs_.front();
      jobs_.pop_front();
    }
    Outcome o = Fetch(source);
    {
      std::lock_guard<std::mutex> lock(mu_);
      outcomes_.push_back(std::move(o));
      --busy_;
    }
    cv_.notify_all();
  }
}

DigestFetcher::Outcome DigestFetcher::Fetch(size_t source) {
  Outcome o;
  o.source = source;
  HttpGetLimits limits;
  limits.connect_timeout_ms = opt_.connect_timeout_ms;
  limits.read_timeout_ms = opt_.read_timeout_ms;
  limits.total_timeout_ms = opt_.total_timeout_ms;
  limits.max_body_bytes = opt_.max_body_bytes;
  HttpResponse res;
  const DigestSource& s = opt_.sources[source];
  const Status st = HttpGet(s.host, s.port, kStoreDigestPath, limits, stop_, &res);
  if (!st.ok()) {
    o.error = st.message();
    return o;
  }
  o.status = res.status;
  if (res.status != 200) o.error = "http status '" + std::to_string(res.status) + "'";
  o.date = std::move(res.date);
  o.expires = std::move(res.expires);
  o.body = std::move(res.body);
  return o;
}

void DigestFetcher::Finish(Outcome o, int64_t now_ms, int64_t now_unix_ms,
                           std::vector<DigestFetchResult>* out) {
  if (!o.error.empty()) return Fail(o.source, std::move(o.error), now_ms);
  CacheDigest digest;
  const Status s = CacheDigest::Parse(o.body, &digest);
  if (!s.ok()) return Fail(o.source, "digest refused: " + s.message(), now_ms);
  const int64_t refresh = RefreshAfter(o, now_unix_ms);
  DigestSourceStats& st = stats_[o.source];
  st.in_flight = false;
  ++st.fetches;
  st.last_fetch_ms = now_ms;
  st.last_success_ms = now_ms;
  st.next_fetch_ms = now_ms + refresh;
  st.consecutive_failures = 0;
  st.last_error.clear();
  st.bytes += o.body.size();
  st.digest_bytes = o.body.size();
  st.capacity = digest.header().capacity;
  st.count = digest.header().count;
  st.fill = digest.fill();
  st.estimated_fpr = digest.EstimatedFalsePositiveRate();
  st.valid_for_ms = refresh;
  DigestFetchResult r;
  r.source_index = o.source;
  r.import.source = st.source;
  r.import.source_url = st.url;
  r.import.digest_bytes = std::move(o.body);
  r.import.valid_for_ms = refresh;
  r.import.fetched_unix_ms = static_cast<uint64_t>(std::max<int64_t>(now_unix_ms, 0));
  out->push_back(std::move(r));
}

void DigestFetcher::Fail(size_t source, std::string error, int64_t now_ms) {
  DigestSourceStats& st = stats_[source];
  st.in_flight = false;
  ++st.fetches;
  ++st.failures;
  ++st.consecutive_failures;
  st.last_fetch_ms = now_ms;
  st.last_error = std::move(error);
  int64_t backoff = opt_.initial_backoff_ms;
  for (uint64_t i = 1; i < st.consecutive_failures && backoff < opt_.max_backoff_ms; ++i) {
    backoff *= 2;
  }
  st.next_fetch_ms = now_ms + std::min(backoff, opt_.max_backoff_ms);
}

// Expires is read against the response's own Date, so the Squid node's clock skew does not
// matter; without a Date, against this host's wall clock. A digest that is already expired
// when served (Squid hands out its stored digest until the next rewrite lands) means a newer
// one is due any moment: ask again after min_refresh_ms rather than default_refresh_ms.
int64_t DigestFetcher::RefreshAfter(const Outcome& o, int64_t now_unix_ms) const {
  const std::optional<int64_t> expires = ParseHttpDate(o.expires);
  const int64_t reference = ParseHttpDate(o.date).value_or(now_unix_ms);
  if (!expires) return opt_.default_refresh_ms;
  if (*expires <= reference) return opt_.min_refresh_ms;
  return std::clamp(*expires - reference, opt_.min_refresh_ms, opt_.max_refresh_ms);
}

}  // namespace peerbloom::daemon
