// Control operations (docs/control-protocol.md). Batches are newline-separated bodies and
// who-has answers are compact lines of node indexes, so a batch costs per key only the
// hashing and the probes, never JSON. Body lines are bytes, not text: a URL or raw key need
// not be UTF-8, and any part of a request quoted in a reply goes through QuoteBytes.
#include <spdlog/spdlog.h>

#include <array>
#include <cstdint>

#include "daemon/daemon.h"
#include "peerbloom/client/control_protocol.h"
#include "peerbloom/client/who_has.h"
#include "peerbloom/escape.h"
#include "peerbloom/summary.h"

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

}  // namespace

Status Daemon::HandleControl(const nlohmann::json& request, std::string_view body,
                             nlohmann::json* reply, std::string* reply_body) {
  const std::string op = request["op"].get<std::string>();
  const int64_t now = clock_->NowMs();
  try {
    if (op == client::kOpWhoHas) return WhoHas(request, body, reply, reply_body);
    if (op == client::kOpAdd || op == client::kOpRemove) {
      return Change(op == client::kOpAdd, request, body, reply);
    }
    if (op == client::kOpStats) {
      (*reply)["stats"] = Stats(now);
      return Status::Ok();
    }
    if (op == client::kOpPeers) {
      (*reply)["peers"] = PeersJson(now);
      return Status::Ok();
    }
    if (op == client::kOpSummary) return SummaryOp(request, reply, reply_body);
    if (op == client::kOpPing) {
      (*reply)["node_id"] = config_.node_id;
      (*reply)["endpoint"] = advertise_;
      return Status::Ok();
    }
    if (op == client::kOpSnapshot) return WriteSnapshotNow();
    if (op == client::kOpRebuild) return RebuildOp(request, reply);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("bad request field: ") + e.what());
  }
  return Status::InvalidArgument("unknown op " + QuoteBytes(op) + " (" + client::ControlOpList() +
                                 ")");
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
  std::vector<PeerMatch> matches;
  reply_body->reserve(body.size() / 8 + 16);
  client::WhoHasEncoder out(config_.node_id, advertise_, reply_body);
  // Keys go through in groups: first every key of a group is encoded and hashed and its
  // counters are prefetched, then the group is probed, so the counting filter's cache misses
  // (it is tens of MiB) overlap instead of queueing one after another.
  constexpr size_t kGroup = 16;
  std::array<std::string, kGroup> group_keys;
  std::array<KeyHash, kGroup> group_hashes;
  std::array<bool, kGroup> group_valid;
  size_t filled = 0;
  const CountingBloomFilter& filter = store_->filter();
  const char* cells = filter.raw_cells().data();
  auto answer_group = [&] {
    for (size_t g = 0; g < filled; ++g) {
      if (!group_valid[g]) {
        out.AddInvalid();
        continue;
      }
      const bool local = filter.MayContain(group_hashes[g]);
      matches.clear();
      engine_->WhoHas(group_keys[g], group_hashes[g], now, &matches);
      out.AddAnswer(local, matches);
    }
    filled = 0;
  };
  ForEachLine(body, [&](std::string_view line) {
    const size_t g = filled++;
    group_valid[g] = !line.empty();
    if (group_valid[g] && keys) {
      group_valid[g] = KeyBytesFromToken(config_.key_scheme, line, &group_keys[g]).ok();
    } else if (group_valid[g]) {
      group_keys[g].assign(store_->encoder()->FromUrl(line));
    }
    if (group_valid[g]) {
      group_hashes[g] = store_->hasher().Hash(group_keys[g]);
      ForEachProbe(group_hashes[g], filter.k(), filter.mask(),
                   [cells](uint64_t pos) { __builtin_prefetch(cells + (pos >> 1)); });
    }
    if (filled == kGroup) answer_group();
  });
  answer_group();
  out.Finish(reply);
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
