// Control operations (docs/control-protocol.md). Batches are newline-separated bodies and
// who-has answers are compact lines of node indexes, so a batch costs per key only the
// hashing and the probes, never JSON. Body lines are bytes, not text: a URL or raw key need
// not be UTF-8, and any part of a request quoted in a reply goes through QuoteBytes.
#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdint>
#include <unordered_map>

#include "daemon/daemon.h"
#include "peerbloom/escape.h"
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

void AppendIndex(std::string* out, size_t index) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), index);
  out->append(digits, end);
}

}  // namespace

Status Daemon::HandleControl(const nlohmann::json& request, std::string_view body,
                             nlohmann::json* reply, std::string* reply_body) {
  const std::string op = request["op"].get<std::string>();
  const int64_t now = clock_->NowMs();
  try {
    if (op == "who-has") return WhoHas(request, body, reply, reply_body);
    if (op == "add" || op == "remove") return Change(op == "add", request, body, reply);
    if (op == "stats") {
      (*reply)["stats"] = Stats(now);
      return Status::Ok();
    }
    if (op == "peers") {
      (*reply)["peers"] = PeersJson(now);
      return Status::Ok();
    }
    if (op == "summary") return SummaryOp(request, reply, reply_body);
    if (op == "ping") {
      (*reply)["node_id"] = config_.node_id;
      (*reply)["endpoint"] = advertise_;
      return Status::Ok();
    }
    if (op == "snapshot") return WriteSnapshotNow();
    if (op == "rebuild") return RebuildOp(request, reply);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("bad request field: ") + e.what());
  }
  return Status::InvalidArgument(
      "unknown op " + QuoteBytes(op) +
      " (who-has, add, remove, stats, peers, summary, ping, snapshot, rebuild)");
}

// {"op":"rebuild","feed":PATH,"cache_dirs":[...]}: both optional when one store.log feed
// has cache_dirs configured. Starts the read; `stats` shows when it is done.
Status Daemon::RebuildOp(const nlohmann::json& request, nlohmann::json* reply) {
  const std::string path = request.value("feed", std::string());
  std::vector<std::string> dirs = request.value("cache_dirs", std::vector<std::string>());
  Feed* chosen = nullptr;
  for (auto& feed : feeds_) {
    if (feed->store_log() == nullptr || (!path.empty() && feed->config().path != path)) continue;
    if (chosen != nullptr) {
      return Status::InvalidArgument("more than one squid-store-log feed: name one with 'feed'");
    }
    chosen = feed.get();
  }
  if (chosen == nullptr) {
    return Status::InvalidArgument(path.empty() ? std::string("no squid-store-log feed")
                                                : "no squid-store-log feed " + QuoteBytes(path));
  }
  PEERBLOOM_RETURN_IF_ERROR(
      chosen->StartRebuild(std::move(dirs), "rebuild request", clock_->NowMs()));
  (*reply)["feed"] = chosen->config().path;
  return Status::Ok();
}

Status Daemon::WhoHas(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                      std::string* reply_body) {
  bool keys = false;
  PEERBLOOM_RETURN_IF_ERROR(InputIsKeys(request, &keys));
  const int64_t now = clock_->NowMs();
  nlohmann::json nodes = nlohmann::json::array();
  std::unordered_map<std::string, size_t> index_of;
  reply_body->reserve(body.size() / 8 + 16);
  auto node_index = [&](const PeerMatch& m, bool local) {
    auto [it, inserted] = index_of.try_emplace(m.node_id, nodes.size());
    if (inserted) {
      nodes.push_back({{"node_id", m.node_id},
                       {"endpoint", m.endpoint},
                       {"local", local},
                       {"imported", m.imported},
                       {"summary_age_ms", m.summary_age_ms}});
    }
    return it->second;
  };
  const PeerMatch self{config_.node_id, advertise_, 0, false};
  size_t self_index = SIZE_MAX;
  WhoHasBatch batch(
      store_->filter(), store_->hasher(),
      [this, now](std::string_view key, const KeyHash& hash, std::vector<PeerMatch>* out) {
        engine_->WhoHas(key, hash, now, out);
      },
      [this](const KeyHash& hash) { engine_->PrefetchWhoHas(hash); },
      [&](const WhoHasAnswer& answer) {
        if (!answer.valid) {
          reply_body->append("!\n");
          return;
        }
        if (answer.local) {
          // The node table entry of this node is made once per request, not per key.
          if (self_index == SIZE_MAX) self_index = node_index(self, true);
          AppendIndex(reply_body, self_index);
        }
        for (size_t i = 0; i < answer.peers->size(); ++i) {
          if (answer.local || i > 0) reply_body->push_back(' ');
          AppendIndex(reply_body, node_index((*answer.peers)[i], false));
        }
        reply_body->push_back('\n');
      });
  std::string key_bytes;
  ForEachLine(body, [&](std::string_view line) {
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
  (*reply)["count"] = batch.count();
  (*reply)["claimed"] = batch.claimed();
  (*reply)["invalid"] = batch.invalid();
  (*reply)["nodes"] = std::move(nodes);
  return Status::Ok();
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

Status Daemon::SummaryOp(const nlohmann::json& request, nlohmann::json* reply,
                         std::string* reply_body) {
  const std::string node = request.value("node", config_.node_id);
  const std::string format = request.value("format", std::string("describe"));
  if (format != "describe" && format != "bytes") {
    return Status::InvalidArgument("'format' must be 'describe' or 'bytes', got " +
                                   QuoteBytes(format));
  }
  Summary summary;
  if (node == config_.node_id) {
    summary = store_->builder()->current();
  } else {
    Status s = engine_->GetSummary(node, &summary);
    if (!s.ok()) return Status::NotFound("no summary held for node " + QuoteBytes(node));
  }
  std::string encoded;
  PEERBLOOM_RETURN_IF_ERROR(EncodeSummary(summary, &encoded));
  (*reply)["summary"] = {{"origin", summary.origin},
                         {"epoch", summary.epoch},
                         {"version", summary.version},
                         {"key_scheme", std::string(KeySchemeName(summary.key_scheme))},
                         {"k", summary.filter.k()},
                         {"log2_bits", summary.filter.log2_bits()},
                         {"bits", summary.filter.bits()},
                         {"set_bits", summary.filter.PopCount()},
                         {"fill", summary.filter.FillRatio()},
                         {"estimated_items", summary.estimated_items},
                         {"estimated_fpr", summary.filter.EstimatedFpr()},
                         {"encoded_bytes", encoded.size()}};
  if (format == "bytes") *reply_body = std::move(encoded);
  return Status::Ok();
}

}  // namespace peerbloom::daemon
