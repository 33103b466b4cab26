// The local endpoints and the operations on the node's store: who-has, add and remove
// (docs/control-protocol.md; the table of operations is in control_ops.cc). Batches are
// newline-separated bodies and who-has answers are compact lines of node indexes, so a batch
// costs per key only the hashing and the probes, never JSON. Body lines are bytes, not text: a URL
// or raw key need not be UTF-8, and any part of a request quoted in a reply goes through
// QuoteBytes.
#include "daemon/control/lookup_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <utility>

#include "daemon/store/local_files.h"
#include "peerbloom/client/control_protocol.h"
#include "peerbloom/client/control_token.h"
#include "peerbloom/client/who_has.h"
#include "peerbloom/escape.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/md5.h"
#include "peerbloom/squid_url.h"
#include "peerbloom/summary.h"
#include "peerbloom/who_has_batch.h"

namespace peerbloom::daemon {
namespace {

// Calls fn(line) for each line of a body; a final line without '\n' counts, a trailing
// empty one does not. A '\r' before '\n' is dropped.
template <typename Fn>
void ForEachLine(std::string_view body, Fn&& fn) {
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line);
    if (nl == std::string_view::npos) break;
    body.remove_prefix(nl + 1);
  }
}

Status InputIsKeys(const nlohmann::json& request, bool* keys) {
  const std::string input = request.value("input", std::string("url"));
  if (input != "url" && input != "key") {
    return Status::InvalidArgument("'input' must be 'url' or 'key', got " + QuoteBytes(input));
  }
  *keys = input == "key";
  return Status::Ok();
}

// squid-md5 keys of URLs, kMd5Lanes at a time (Md5WithPrefixLanes), into a WhoHasBatch in
// line order. The same keys as KeyEncoder::FromUrl: the canonical form, or the URL as given
// when Squid would refuse it. A line that is not an absolute URL at all ("127.0.0.1/x") is
// invalid, not keyed: no Squid object has such a key, so "no node" would hide the mistake.
class SquidUrlLanes {
 public:
  SquidUrlLanes(const SquidUrlOptions& options, WhoHasBatch* batch)
      : options_(options), batch_(batch) {}
  void Add(std::string_view line) {
    std::string& canonical = canonical_[filled_];
    if (CanonicalSquidUrl(line, options_, &canonical).ok()) {
      urls_[filled_] = canonical;
    } else if (IsAbsoluteUrl(line)) {
      urls_[filled_] = line;
    } else {
      Finish();  // keeps the order: the pending URLs are answered first
      batch_->AddInvalid();
      return;
    }
    if (++filled_ == kMd5Lanes) Finish();
  }
  void Finish() {
    if (filled_ == kMd5Lanes) {
      Md5WithPrefixLanes(kSquidMethodGet, urls_.data(), keys_.data());
    } else {
      for (size_t l = 0; l < filled_; ++l) keys_[l] = Md5WithPrefix(kSquidMethodGet, urls_[l]);
    }
    for (size_t l = 0; l < filled_; ++l) {
      batch_->Add({reinterpret_cast<const char*>(keys_[l].data()), keys_[l].size()});
    }
    filled_ = 0;
  }

 private:
  const SquidUrlOptions& options_;
  WhoHasBatch* batch_;
  std::array<std::string, kMd5Lanes> canonical_;
  std::array<std::string_view, kMd5Lanes> urls_;
  std::array<Md5Digest, kMd5Lanes> keys_;
  size_t filled_ = 0;
};

}  // namespace

LookupService::LookupService(const Config& config, const Clock& clock, zmq::context_t* context,
                             ListenerLimits limits)
    : config_(config),
      clock_(clock),
      limits_(limits),
      control_(std::make_unique<ControlServer>(context, config.control, limits.control)) {}

Status LookupService::Start() {
  PEERBLOOM_RETURN_IF_ERROR(SecureControl());
  PEERBLOOM_RETURN_IF_ERROR(control_->Start());
  if (!config_.who_has_socket.empty()) {
    who_has_socket_ = std::make_unique<WhoHasSocket>(config_.who_has_socket,
                                                     config_.who_has_socket_group, limits_.who_has);
    PEERBLOOM_RETURN_IF_ERROR(who_has_socket_->Start());
  }
  if (!config_.nginx_route_socket.empty()) {
    route_socket_ = std::make_unique<WhoHasSocket>(
        config_.nginx_route_socket, config_.nginx_route_socket_group, limits_.who_has,
        WhoHasSocket::Framing::kHttpHeads, "nginx route socket", "nginx_route_socket_group");
    PEERBLOOM_RETURN_IF_ERROR(route_socket_->Start());
    // Asked only once Wire has given the store and the engine (the socket is served after).
    routes_ = std::make_unique<NginxRoutes>(
        config_.nginx_siblings, [this](std::string_view key_bytes, std::vector<PeerMatch>* peers) {
          const KeyHash hash = store_->store().hasher().Hash(key_bytes);
          engine_->WhoHas(key_bytes, hash, clock_.NowMs(), peers);
        });
  }
  return Status::Ok();
}

// An ipc socket's directory must be this user's alone (another user could otherwise replace
// the socket); a tcp endpoint needs the token, created on first start.
Status LookupService::SecureControl() {
  PEERBLOOM_RETURN_IF_ERROR(CheckControlSocketDir(config_.control));
  if (config_.control_token_file.empty()) return Status::Ok();
  std::string token;
  PEERBLOOM_RETURN_IF_ERROR(client::EnsureControlToken(config_.control_token_file, &token));
  PEERBLOOM_RETURN_IF_ERROR(CheckPrivate("control_token_file", config_.control_token_file));
  control_->set_token(std::move(token));
  return Status::Ok();
}

void LookupService::Wire(const DaemonParts& parts, StoreService* store, const StatsReport& stats,
                         RelayService* relay, LoopMetrics* metrics) {
  store_ = store;
  engine_ = &parts.engine;
  endpoint_ = parts.endpoint;
  metrics_ = metrics;
  auto who_has = [this](const ControlCall& call) { return WhoHas(call); };
  auto change = [this](bool add, const ControlCall& call) { return Change(add, call); };
  auto write_snapshot = [store, this] { return store->WriteSnapshotNow(clock_.NowMs()); };
  ops_ = std::make_unique<ControlOps>(
      ControlContext{parts, clock_, stats, who_has, change, write_snapshot, *relay});
}

void LookupService::AppendPollItems(std::vector<zmq::pollitem_t>* items) {
  control_at_ = items->size();
  control_->AppendPollItems(items);
  socket_at_ = items->size();
  if (who_has_socket_) who_has_socket_->AppendPollItems(items);
  socket_end_ = items->size();
  if (route_socket_) route_socket_->AppendPollItems(items);
  route_end_ = items->size();
}

// Sleeping in poll costs a wake-up (tens of microseconds on an idle machine) when the next
// request comes; right after a request another one is likely, so the loop first polls
// without sleeping for up to control_busy_poll. Idle, it sleeps as before.
int LookupService::Poll(std::vector<zmq::pollitem_t>* items, int64_t wait_ms) {
  if (wait_ms > 0 && config_.control_busy_poll_us > 0) {
    while (std::chrono::steady_clock::now() < busy_poll_until_) {
      const int ready = zmq::poll(items->data(), items->size(), std::chrono::milliseconds(0));
      if (ready > 0) return ready;
    }
  }
  return zmq::poll(items->data(), items->size(), std::chrono::milliseconds(wait_ms));
}

void LookupService::Serve(const std::vector<zmq::pollitem_t>& items, int64_t now) {
  size_t served = static_cast<size_t>(control_->Process(
      items.data() + control_at_, socket_at_ - control_at_, now,
      [this](const nlohmann::json& req, std::string_view body, nlohmann::json* reply,
             std::string* reply_body) { return ops_->Handle(req, body, reply, reply_body); }));
  if (who_has_socket_) {
    served += who_has_socket_->Process(items.data() + socket_at_, socket_end_ - socket_at_,
                                       [this](std::string_view lines, std::string* out) {
                                         WhoHasLines(lines, out);
                                         return true;
                                       });
  }
  if (route_socket_) {
    served += route_socket_->Process(
        items.data() + socket_end_, route_end_ - socket_end_,
        [this](std::string_view heads, std::string* out) { return routes_->Answer(heads, out); });
  }
  ServedRequests(served);
}

// Only the who-has socket: its lines are lookups and nothing else, so serving them in the
// middle of the transport's receiving cannot change what the loop is doing.
void LookupService::ServeNow() {
  size_t served = 0;
  if (who_has_socket_) {
    served += who_has_socket_->ServeReady([this](std::string_view lines, std::string* out) {
      WhoHasLines(lines, out);
      return true;
    });
  }
  if (route_socket_) {
    served += route_socket_->ServeReady(
        [this](std::string_view heads, std::string* out) { return routes_->Answer(heads, out); });
  }
  ServedRequests(served);
}

void LookupService::ServedRequests(size_t count) {
  if (count == 0 || config_.control_busy_poll_us <= 0) return;
  busy_poll_until_ =
      std::chrono::steady_clock::now() + std::chrono::microseconds(config_.control_busy_poll_us);
}

Status LookupService::WhoHas(const ControlCall& call) {
  bool keys = false;
  PEERBLOOM_RETURN_IF_ERROR(InputIsKeys(call.request, &keys));
  call.reply_body->reserve(call.body.size() / 8 + 16);
  client::WhoHasEncoder out(config_.node_id, endpoint_, call.reply_body);
  RunWhoHas(call.body, keys, [&out](const WhoHasAnswer& answer) {
    if (answer.valid) {
      out.AddAnswer(answer.local, *answer.peers);
    } else {
      out.AddInvalid();
    }
  });
  out.Finish(call.reply);
  return Status::Ok();
}

// The who-has socket's answer lines name nodes by id: there is no table to index. A line
// that starts with kHelperReportPrefix is a Squid helper's report (answered with an empty
// line); lookups around it are answered in order.
void LookupService::WhoHasLines(std::string_view lines, std::string* out) {
  size_t report = lines.find(kHelperReportPrefix);
  while (report != std::string_view::npos) {
    if (report > 0 && lines[report - 1] != '\n') {
      report = lines.find(kHelperReportPrefix, report + 1);
      continue;
    }
    WhoHasLookups(lines.substr(0, report), out);
    const size_t end = lines.find('\n', report);
    helper_reports_.Report(lines.substr(report, end - report), clock_.NowMs());
    out->push_back('\n');
    lines.remove_prefix(end + 1);
    report = lines.find(kHelperReportPrefix);
  }
  WhoHasLookups(lines, out);
}

void LookupService::WhoHasLookups(std::string_view lines, std::string* out) {
  if (lines.empty()) return;
  RunWhoHas(lines, false, [this, out](const WhoHasAnswer& answer) {
    if (!answer.valid) {
      out->append("!\n");
      return;
    }
    bool first = true;
    if (answer.local) {
      out->append(config_.node_id);
      first = false;
    }
    for (const PeerMatch& peer : *answer.peers) {
      if (!first) out->push_back(' ');
      out->append(peer.node_id);
      first = false;
    }
    out->push_back('\n');
  });
}

void LookupService::RunWhoHas(std::string_view body, bool keys, const WhoHasBatch::Sink& sink) {
  // The latency histogram measures real time: the injected clock is for deadlines and may be
  // a test's fake one.
  const auto started = std::chrono::steady_clock::now();
  uint64_t lines = 0;
  const int64_t now = clock_.NowMs();
  WhoHasBatch batch(
      store_->store().filter(), store_->store().hasher(),
      [this, now](std::string_view key, const KeyHash& hash, std::vector<PeerMatch>* peers) {
        engine_->WhoHas(key, hash, now, peers);
      },
      [this](const KeyHash& hash) { engine_->PrefetchWhoHas(hash); }, sink);
  std::string& key_bytes = key_scratch_;
  if (!keys && config_.key_scheme == KeyScheme::kSquidMd5) {
    SquidUrlLanes lanes(config_.squid_url, &batch);
    ForEachLine(body, [&](std::string_view line) {
      ++lines;
      lanes.Add(line);
    });
    lanes.Finish();
    batch.Finish();
    metrics_->ObserveWhoHas(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), lines);
    return;
  }
  ForEachLine(body, [&](std::string_view line) {
    ++lines;
    bool valid = !line.empty();
    if (valid && keys) {
      valid = KeyBytesFromToken(config_.key_scheme, line, &key_bytes).ok();
    } else if (valid) {
      key_bytes.assign(store_->store().encoder()->FromUrl(line));
    }
    if (valid) {
      batch.Add(key_bytes);
    } else {
      batch.AddInvalid();
    }
  });
  batch.Finish();
  metrics_->ObserveWhoHas(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), lines);
}

Status LookupService::Change(bool add, const ControlCall& call) {
  bool keys = false;
  PEERBLOOM_RETURN_IF_ERROR(InputIsKeys(call.request, &keys));
  LocalStore& store = store_->store();
  uint64_t count = 0, applied = 0, refused = 0, invalid = 0;
  std::string first_error;
  ForEachLine(call.body, [&](std::string_view line) {
    ++count;
    std::string_view key_bytes;
    Status s = line.empty() ? Status::InvalidArgument("empty line") : Status::Ok();
    if (s.ok() && keys) {
      s = KeyBytesFromToken(config_.key_scheme, line, &key_scratch_);
      key_bytes = key_scratch_;
    } else if (s.ok()) {
      key_bytes = store.encoder()->FromUrl(line);
    }
    if (!s.ok()) {
      ++invalid;
      if (first_error.empty()) first_error = "line " + std::to_string(count) + ": " + s.message();
      return;
    }
    if (add) {
      store.Add(key_bytes);
      ++applied;
    } else if (store.Remove(key_bytes)) {
      ++applied;
    } else {
      ++refused;
    }
  });
  nlohmann::json& reply = *call.reply;
  reply["count"] = count;
  reply["applied"] = applied;
  reply["refused"] = refused;
  reply["invalid"] = invalid;
  if (!first_error.empty()) reply["first_error"] = first_error;
  store_->MaybePublish(clock_.NowMs());
  return Status::Ok();
}

}  // namespace peerbloom::daemon
