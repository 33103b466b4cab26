// HttpGet on cpp-httplib: the library speaks HTTP; this file adds the bounds it lacks (a
// deadline for the whole response, a body cap, cancellation) and the Date/Expires reading the
// digest schedule needs. See http_client.h for the contract.
#include "daemon/digests/http_client.h"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace peerbloom::daemon {
namespace {

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

// Why a transfer was ended from outside the library, so the caller reads a reason instead
// of the library's generic "read error".
enum class EndedBy { kNothing, kDeadline, kStop, kBodyLimit };

// Ends `client`'s transfer at `deadline` or when `stop` is set, whichever comes first, until
// Done() is called. ClientImpl::stop() is the library's way to shut a running request's socket
// from another thread.
class Watchdog {
 public:
  Watchdog(httplib::ClientImpl* client, std::chrono::steady_clock::time_point deadline,
           const std::atomic<bool>& stop)
      : client_(client), deadline_(deadline), stop_(stop), thread_([this] { Run(); }) {}
  ~Watchdog() { Done(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Done() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  EndedBy ended_by() const { return ended_by_; }  // after Done()

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_) {
      if (stop_) {
        ended_by_ = EndedBy::kStop;
      } else if (std::chrono::steady_clock::now() >= deadline_) {
        ended_by_ = EndedBy::kDeadline;
      }
      if (ended_by_ != EndedBy::kNothing) {
        client_->stop();
        return;
      }
      cv_.wait_for(lock, std::chrono::milliseconds(kStopPollMs));
    }
  }

  httplib::ClientImpl* client_;
  const std::chrono::steady_clock::time_point deadline_;
  const std::atomic<bool>& stop_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;                     // guarded by mu_
  EndedBy ended_by_ = EndedBy::kNothing;  // written by the thread, read after the join
  std::thread thread_;
};

Status BodyTooLarge(size_t limit) {
  return Status::ResourceExhausted("body exceeds the limit '" + std::to_string(limit) + "' bytes");
}

Status LibraryError(httplib::Error e, const HttpRequest& req) {
  const std::string where = "'" + req.host + ":" + std::to_string(req.port) + "'";
  switch (e) {
    case httplib::Error::Connection:
      return Status::IOError("cannot connect to " + where);
    case httplib::Error::ConnectionTimeout:
      return Status::IOError("connect to " + where + " timed out");
    case httplib::Error::Write:
      return Status::IOError("http send to " + where + " failed");
    case httplib::Error::Read:
      return Status::IOError("http response from " + where +
                             " unreadable (timed out, cut short or malformed)");
    default:
      return Status::IOError("http request to " + where + " failed: '" + httplib::to_string(e) +
                             "'");
  }
}

// Whether the response declares a body longer than `max` bytes. The library checks the
// length's syntax; a declared length over the cap ends the transfer before any of the body
// is read.
bool DeclaresTooLarge(const httplib::Response& r, uint64_t max) {
  const std::string length = r.get_header_value("Content-Length");
  uint64_t declared = 0;
  const auto parsed = std::from_chars(length.data(), length.data() + length.size(), declared);
  return parsed.ec == std::errc::result_out_of_range ||
         (parsed.ec == std::errc() && declared > max);
}

void Configure(const HttpGetLimits& limits, httplib::ClientImpl* client) {
  using std::chrono::milliseconds;
  client->set_connection_timeout(milliseconds(limits.connect_timeout_ms));
  client->set_read_timeout(milliseconds(limits.read_timeout_ms));
  client->set_write_timeout(milliseconds(limits.read_timeout_ms));
  client->set_keep_alive(false);
  client->set_follow_location(false);
  client->set_decompress(false);
}

}  // namespace

Status HttpGet(const HttpRequest& req, const HttpGetLimits& limits, const std::atomic<bool>& stop,
               HttpResponse* res) {
  using std::chrono::milliseconds;
  if (stop) return Status::IOError("fetch cancelled");
  httplib::ClientImpl client(req.host, req.port);
  Configure(limits, &client);
  bool body_too_large = false;
  std::string body;
  auto on_head = [&](const httplib::Response& r) {
    res->status = r.status;
    res->date = r.get_header_value("Date");
    res->expires = r.get_header_value("Expires");
    if (r.status != 200) return false;  // the body does not matter
    body_too_large = DeclaresTooLarge(r, limits.max_body_bytes);
    return !body_too_large;
  };
  auto on_body = [&](const char* data, size_t n) {
    if (n > limits.max_body_bytes - body.size()) {
      body_too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() +
                        milliseconds(limits.connect_timeout_ms + limits.total_timeout_ms);
  Watchdog watchdog(&client, deadline, stop);
  // A Request rather than Get(): the method is the caller's (PURGE for the relay's purges).
  httplib::Request request;
  request.method = req.method;
  request.path = req.path;
  request.headers = {{"Accept", req.accept}};
  request.response_handler = on_head;
  request.content_receiver = [&on_body](const char* data, size_t n, uint64_t, uint64_t) {
    return on_body(data, n);
  };
  const httplib::Result result = client.send(request);
  watchdog.Done();
  if (watchdog.ended_by() == EndedBy::kStop) return Status::IOError("fetch cancelled");
  if (body_too_large) return BodyTooLarge(limits.max_body_bytes);
  if (res->status != 0 && res->status != 200) return Status::Ok();
  if (watchdog.ended_by() == EndedBy::kDeadline) {
    return Status::IOError("http response timed out");
  }
  if (!result) return LibraryError(result.error(), req);
  res->body = std::move(body);
  return Status::Ok();
}

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

}  // namespace peerbloom::daemon
