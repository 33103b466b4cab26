// The control operations on the daemon's store: who-has, add and remove
// (docs/control-protocol.md; the table of operations is in control_ops.cc). Batches are
// newline-separated bodies and who-has answers are compact lines of node indexes, so a batch
// costs per key only the hashing and the probes, never JSON. Body lines are bytes, not text: a URL
// or raw key need not be UTF-8, and any part of a request quoted in a reply goes through
// QuoteBytes.
#include <spdlog/spdlog.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>

#include "daemon/loop/daemon.h"
#include "peerbloom/client/control_protocol.h"
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

Status Daemon::WhoHas(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                      std::string* reply_body) {
  bool keys = false;
  PEERBLOOM_RETURN_IF_ERROR(InputIsKeys(request, &keys));
  reply_body->reserve(body.size() / 8 + 16);
  client::WhoHasEncoder out(config_.node_id, advertise_, reply_body);
  RunWhoHas(body, keys, [&out](const WhoHasAnswer& answer) {
    if (answer.valid) {
      out.AddAnswer(answer.local, *answer.peers);
    } else {
      out.AddInvalid();
    }
  });
  out.Finish(reply);
  return Status::Ok();
}

// The who-has socket's answer lines name nodes by id: there is no table to index. A line
// that starts with kHelperReportPrefix is a Squid helper's report (answered with an empty
// line); lookups around it are answered in order.
void Daemon::WhoHasLines(std::string_view lines, std::string* out) {
  size_t report = lines.find(kHelperReportPrefix);
  while (report != std::string_view::npos) {
    if (report > 0 && lines[report - 1] != '\n') {
      report = lines.find(kHelperReportPrefix, report + 1);
      continue;
    }
    WhoHasLookups(lines.substr(0, report), out);
    const size_t end = lines.find('\n', report);
    helper_reports_.Report(lines.substr(report, end - report), clock_->NowMs());
    out->push_back('\n');
    lines.remove_prefix(end + 1);
    report = lines.find(kHelperReportPrefix);
  }
  WhoHasLookups(lines, out);
}

void Daemon::WhoHasLookups(std::string_view lines, std::string* out) {
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

void Daemon::RunWhoHas(std::string_view body, bool keys, const WhoHasBatch::Sink& sink) {
  // The latency histogram measures real time: the injected clock is for deadlines and may be
  // a test's fake one.
  const auto started = std::chrono::steady_clock::now();
  uint64_t lines = 0;
  const int64_t now = clock_->NowMs();
  WhoHasBatch batch(
      store_->filter(), store_->hasher(),
      [this, now](std::string_view key, const KeyHash& hash, std::vector<PeerMatch>* peers) {
        engine_->WhoHas(key, hash, now, peers);
      },
      [this](const KeyHash& hash) { engine_->PrefetchWhoHas(hash); }, sink);
  std::string& key_bytes = who_has_key_scratch_;
  if (!keys && config_.key_scheme == KeyScheme::kSquidMd5) {
    SquidUrlLanes lanes(config_.squid_url, &batch);
    ForEachLine(body, [&](std::string_view line) {
      ++lines;
      lanes.Add(line);
    });
    lanes.Finish();
    batch.Finish();
    loop_metrics_.ObserveWhoHas(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), lines);
    return;
  }
  ForEachLine(body, [&](std::string_view line) {
    ++lines;
    bool valid = !line.empty();
    if (valid && keys) {
      valid = KeyBytesFromToken(config_.key_scheme, line, &key_bytes).ok();
    } else if (valid) {
      key_bytes.assign(store_->encoder()->FromUrl(line));
    }
    if (valid) {
      batch.Add(key_bytes);
    } else {
      batch.AddInvalid();
    }
  });
  batch.Finish();
  loop_metrics_.ObserveWhoHas(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), lines);
}

Status Daemon::Change(bool add, const nlohmann::json& request, std::string_view body,
                      nlohmann::json* reply) {
  bool keys = false;
  PEERBLOOM_RETURN_IF_ERROR(InputIsKeys(request, &keys));
  uint64_t count = 0, applied = 0, refused = 0, invalid = 0;
  std::string first_error;
  ForEachLine(body, [&](std::string_view line) {
    ++count;
    std::string_view key_bytes;
    Status s = line.empty() ? Status::InvalidArgument("empty line") : Status::Ok();
    if (s.ok() && keys) {
      s = KeyBytesFromToken(config_.key_scheme, line, &key_scratch_);
      key_bytes = key_scratch_;
    } else if (s.ok()) {
      key_bytes = store_->encoder()->FromUrl(line);
    }
    if (!s.ok()) {
      ++invalid;
      if (first_error.empty()) first_error = "line " + std::to_string(count) + ": " + s.message();
      return;
    }
    if (add) {
      store_->Add(key_bytes);
      ++applied;
    } else if (store_->Remove(key_bytes)) {
      ++applied;
    } else {
      ++refused;
    }
  });
  (*reply)["count"] = count;
  (*reply)["applied"] = applied;
  (*reply)["refused"] = refused;
  (*reply)["invalid"] = invalid;
  if (!first_error.empty()) (*reply)["first_error"] = first_error;
  MaybePublish(clock_->NowMs());
  return Status::Ok();
}

}  // namespace peerbloom::daemon
