// The helper never stalls Squid: each who-has call is bounded by wait_ms, and after a call
// fails every request is answered ERR at once (the request goes direct) until retry_ms has
// passed. Requests that arrive while a call is out are read together and sent as one batch,
// so a busy Squid costs one round trip per batch, not per request.
#include "cli/squid_helper.h"

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "peerbloom/client/client_config.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/client/control_protocol.h"
#include "peerbloom/client/who_has_socket.h"
#include "peerbloom/hex.h"

namespace peerbloom::cli {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view NextToken(std::string_view* line) {
  const size_t start = line->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *line = {};
    return {};
  }
  line->remove_prefix(start);
  const size_t end = line->find(' ');
  const std::string_view token = line->substr(0, end);
  line->remove_prefix(end == std::string_view::npos ? line->size() : end);
  return token;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Warn(const std::string& text) {
  const std::string line = "peerbloom: warning: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

// Asks the daemon's control endpoint for one batch; null when it cannot answer now.
class ControlOracle {
 public:
  explicit ControlOracle(const SquidHelperOptions& o) : o_(o), client_(o.control, o.wait_ms) {
    client_.set_token(o.token);
  }

  const client::WhoHasReply* Ask(const std::vector<HelperRequest>& batch) {
    const int64_t now = NowMs();
    if (now < retry_at_ms_) return nullptr;
    body_.clear();
    for (const HelperRequest& r : batch) body_.append(r.url).push_back('\n');
    nlohmann::json reply;
    std::string reply_body;
    Status s = client_.Call(request_, body_, &reply, &reply_body);
    if (s.ok()) s = client::DecodeWhoHasReply(reply, reply_body, &decoded_);
    if (!s.ok()) {
      if (!down_)
        Warn("answering ERR (no peer) for " + std::to_string(o_.retry_ms) + " ms: " + s.message());
      down_ = true;
      retry_at_ms_ = NowMs() + o_.retry_ms;
      return nullptr;
    }
    if (down_) Warn("the daemon answers again");
    down_ = false;
    return &decoded_;
  }

 private:
  const SquidHelperOptions& o_;
  client::ControlClient client_;
  const nlohmann::json request_ = {{"op", client::kOpWhoHas}, {"input", "url"}};
  std::string body_;
  client::WhoHasReply decoded_;
  int64_t retry_at_ms_ = 0;
  bool down_ = false;
};

uint64_t* CauseCounter(HelperCounters* c, client::SocketFailure cause) {
  switch (cause) {
    case client::SocketFailure::kNoSocket:
      return &c->no_socket;
    case client::SocketFailure::kDenied:
      return &c->denied;
    case client::SocketFailure::kRefused:
      return &c->refused;
    case client::SocketFailure::kTimeout:
      return &c->timeout;
    default:
      return &c->other;
  }
}

// Asks the daemon's who-has socket, and sends it the helper's counters now and then.
class SocketOracle {
 public:
  explicit SocketOracle(const SquidHelperOptions& o)
      : o_(o), client_(o.who_has_socket, o.wait_ms, 0) {}

  // Whether some answers were counted and not sent to the daemon yet.
  bool Unreported() const { return counts_ != reported_; }

  // Sends what was not reported yet, if the daemon answers.
  void Flush() {
    if (counts_ == reported_ || NowMs() < retry_at_ms_) return;
    lines_ = counts_.ReportLine(static_cast<long>(::getpid())) + "\n";
    if (client_.Ask(lines_, &answers_).ok()) reported_ = counts_;
  }

  // Appends the answers for `batch` to *out.
  void Answer(const std::vector<HelperRequest>& batch, std::string* out) {
    const int64_t now = NowMs();
    if (now < retry_at_ms_) return AllErr(batch, cause_, out);
    lines_.clear();
    const bool report = counts_ != reported_ && now >= next_report_ms_;
    if (report) lines_.append(counts_.ReportLine(static_cast<long>(::getpid()))).push_back('\n');
    for (const HelperRequest& r : batch) lines_.append(r.url).push_back('\n');
    const Status s = client_.Ask(lines_, &answers_);
    if (!s.ok()) {
      cause_ = client_.last_failure();
      if (!down_) {
        Warn("answering ERR (no peer) for " + std::to_string(o_.retry_ms) + " ms: " + s.message());
      }
      down_ = true;
      retry_at_ms_ = NowMs() + o_.retry_ms;
      return AllErr(batch, cause_, out);
    }
    if (down_) Warn("the daemon answers again");
    down_ = false;
    std::string_view answers = answers_;
    if (report) {
      answers.remove_prefix(answers.find('\n') + 1);
      reported_ = counts_;
      next_report_ms_ = now + o_.report_ms;
    }
    AppendSocketAnswers(batch, answers, o_.names, o_.node_id, out, &counts_);
  }

 private:
  void AllErr(const std::vector<HelperRequest>& batch, client::SocketFailure cause,
              std::string* out) {
    for (const HelperRequest& r : batch) {
      if (!r.channel.empty()) out->append(r.channel).push_back(' ');
      out->append("ERR\n");
    }
    *CauseCounter(&counts_, cause) += batch.size();
  }

  const SquidHelperOptions& o_;
  client::WhoHasSocketClient client_;
  std::string lines_;
  std::string answers_;
  HelperCounters counts_;
  HelperCounters reported_;
  int64_t next_report_ms_ = 0;
  int64_t retry_at_ms_ = 0;
  client::SocketFailure cause_ = client::SocketFailure::kOther;
  bool down_ = false;
};

void AppendAnswer(const HelperRequest& r, const std::string& peer, bool invalid,
                  HelperCounters* counts, std::string* out) {
  if (!r.channel.empty()) out->append(r.channel).push_back(' ');
  out->append(peer.empty() ? "ERR\n" : "OK peer=" + peer + "\n");
  if (counts == nullptr) return;
  ++(!peer.empty() ? counts->peer : invalid ? counts->invalid : counts->none);
}

}  // namespace

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexDigitValue(text[i + 1]) >= 0 &&
        HexDigitValue(text[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(HexDigitValue(text[i + 1]) * 16 + HexDigitValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

HelperRequest ParseHelperLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  HelperRequest r;
  std::string_view first = NextToken(&line);
  if (AllDigits(first)) {
    r.channel = std::string(first);
    first = NextToken(&line);
  }
  r.url = PercentDecode(first);
  // A decoded newline would split the who-has batch, and a leading 0x01 would read as a
  // helper report on the who-has socket: such a URL is not looked up.
  if (r.url.find('\n') != std::string::npos || r.url == "-" || r.url.starts_with('\x01')) {
    r.url.clear();
  }
  return r;
}

std::string PeerName(const std::map<std::string, std::string>& names, std::string_view node_id) {
  const auto it = names.find(std::string(node_id));
  if (it != names.end()) return it->second;
  return client::IsValidSquidPeerName(node_id) ? std::string(node_id) : std::string();
}

std::string HelperCounters::ReportLine(long pid) const {
  return "\x01peerbloom-helper pid=" + std::to_string(pid) + " peer=" + std::to_string(peer) +
         " none=" + std::to_string(none) + " invalid=" + std::to_string(invalid) +
         " no_socket=" + std::to_string(no_socket) + " denied=" + std::to_string(denied) +
         " refused=" + std::to_string(refused) + " timeout=" + std::to_string(timeout) +
         " other=" + std::to_string(other);
}

void AppendHelperAnswers(const std::vector<HelperRequest>& requests,
                         const client::WhoHasReply* reply,
                         const std::map<std::string, std::string>& names, std::string* out,
                         HelperCounters* counts) {
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string peer;
    bool invalid = requests[i].url.empty();
    if (reply != nullptr && i < reply->answers.size() && !invalid) {
      invalid = reply->answers[i].invalid;
      for (size_t index : reply->answers[i].nodes) {
        const client::WhoHasNode& node = reply->nodes[index];
        if (node.local) continue;
        peer = PeerName(names, node.node_id);
        if (!peer.empty()) break;
      }
    }
    AppendAnswer(requests[i], peer, invalid, reply != nullptr ? counts : nullptr, out);
  }
}

void AppendSocketAnswers(const std::vector<HelperRequest>& requests, std::string_view lines,
                         const std::map<std::string, std::string>& names, std::string_view self,
                         std::string* out, HelperCounters* counts) {
  for (const HelperRequest& r : requests) {
    const size_t nl = lines.find('\n');
    std::string_view line = lines.substr(0, nl);
    lines.remove_prefix(nl == std::string_view::npos ? lines.size() : nl + 1);
    const bool invalid = r.url.empty() || line == "!";
    std::string peer;
    while (!invalid && !line.empty() && peer.empty()) {
      const size_t sp = line.find(' ');
      const std::string_view id = line.substr(0, sp);
      line.remove_prefix(sp == std::string_view::npos ? line.size() : sp + 1);
      if (id != self) peer = PeerName(names, id);
    }
    AppendAnswer(r, peer, invalid, counts, out);
  }
}

int RunSquidHelper(const SquidHelperOptions& options, int in_fd, int out_fd) {
  ControlOracle control(options);
  SocketOracle socket(options);
  auto answer = [&](const std::vector<HelperRequest>& batch, std::string* out) {
    if (!options.who_has_socket.empty()) return socket.Answer(batch, out);
    AppendHelperAnswers(batch, control.Ask(batch), options.names, out);
  };
  std::string in;
  std::string out;
  std::vector<HelperRequest> batch;
  char chunk[65536];
  for (;;) {
    // Counters ride on the next batch; when Squid sends none for report_ms, they go alone,
    // so the daemon's figures do not wait for the next request.
    if (!options.who_has_socket.empty() && socket.Unreported()) {
      struct pollfd idle = {in_fd, POLLIN, 0};
      if (::poll(&idle, 1, options.report_ms) == 0) {
        socket.Flush();
        continue;
      }
    }
    const ssize_t n = ::read(in_fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && !options.who_has_socket.empty()) socket.Flush();  // Squid closed: last report
    if (n <= 0) return n == 0 ? 0 : Error("cannot read requests: " + std::string(strerror(errno)));
    in.append(chunk, static_cast<size_t>(n));
    // Take every complete line read so far, then whatever more is ready without waiting.
    struct pollfd p = {in_fd, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
      const ssize_t more = ::read(in_fd, chunk, sizeof(chunk));
      if (more <= 0) break;
      in.append(chunk, static_cast<size_t>(more));
      if (in.size() > (size_t{1} << 22)) break;
    }
    size_t start = 0;
    for (size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
      batch.push_back(ParseHelperLine(std::string_view(in).substr(start, nl - start)));
      if (batch.size() == options.max_batch) {
        answer(batch, &out);
        batch.clear();
      }
    }
    in.erase(0, start);
    if (!batch.empty()) answer(batch, &out);
    batch.clear();
    if (!WriteAll(out_fd, out))
      return Error("cannot write answers: " + std::string(strerror(errno)));
    out.clear();
  }
}

}  // namespace peerbloom::cli
