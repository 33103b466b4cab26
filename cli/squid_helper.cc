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

namespace peerbloom::cli {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

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

// Asks the daemon for one batch; null when it cannot answer now.
class Oracle {
 public:
  explicit Oracle(const SquidHelperOptions& o) : o_(o), client_(o.control, o.wait_ms) {
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

}  // namespace

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
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
  // A decoded newline would split the who-has batch: such a URL is not looked up.
  if (r.url.find('\n') != std::string::npos || r.url == "-") r.url.clear();
  return r;
}

std::string PeerName(const std::map<std::string, std::string>& names, std::string_view node_id) {
  const auto it = names.find(std::string(node_id));
  if (it != names.end()) return it->second;
  return client::IsValidSquidPeerName(node_id) ? std::string(node_id) : std::string();
}

void AppendHelperAnswers(const std::vector<HelperRequest>& requests,
                         const client::WhoHasReply* reply,
                         const std::map<std::string, std::string>& names, std::string* out) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!requests[i].channel.empty()) out->append(requests[i].channel).push_back(' ');
    std::string peer;
    if (reply != nullptr && i < reply->answers.size() && !requests[i].url.empty()) {
      for (size_t index : reply->answers[i].nodes) {
        const client::WhoHasNode& node = reply->nodes[index];
        if (node.local) continue;
        peer = PeerName(names, node.node_id);
        if (!peer.empty()) break;
      }
    }
    out->append(peer.empty() ? "ERR\n" : "OK peer=" + peer + "\n");
  }
}

int RunSquidHelper(const SquidHelperOptions& options, int in_fd, int out_fd) {
  Oracle oracle(options);
  std::string in;
  std::string out;
  std::vector<HelperRequest> batch;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(in_fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
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
        AppendHelperAnswers(batch, oracle.Ask(batch), options.names, &out);
        batch.clear();
      }
    }
    in.erase(0, start);
    if (!batch.empty()) AppendHelperAnswers(batch, oracle.Ask(batch), options.names, &out);
    batch.clear();
    if (!WriteAll(out_fd, out))
      return Error("cannot write answers: " + std::string(strerror(errno)));
    out.clear();
  }
}

}  // namespace peerbloom::cli
