// The control operations on the daemon's store: who-has, add and remove
// (docs/control-protocol.md; the table of operations is in control_ops.cc). Batches are
// newline-separated bodies and who-has answers are compact lines of node indexes, so a batch
// costs per key only the hashing and the probes, never JSON. Body lines are bytes, not text: a URL
// or raw key need not be UTF-8, and any part of a request quoted in a reply goes through
// QuoteBytes.
#include <spdlog/spdlog.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <unordered_map>

#include "daemon/daemon.h"
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

void AppendIndex(std::string* out, size_t index) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), index);
  out->append(digits, end);
}

}  // namespace

Status Daemon::WhoHas(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                      std::string* reply_body) {
  bool keys = false;
  PEERBLOOM_RETURN_IF_ERROR(InputIsKeys(request, &keys));
  const int64_t now = clock_->NowMs();
  nlohmann::json nodes = nlohmann::json::array();
  std::unordered_map<std::string, size_t> index_of;
  std::vector<PeerMatch> matches;
  uint64_t count = 0, claimed = 0, invalid = 0;
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
        reply_body->append("!\n");
        continue;
      }
      const bool local = filter.MayContain(group_hashes[g]);
      matches.clear();
      engine_->WhoHas(group_keys[g], group_hashes[g], now, &matches);
      if (local || !matches.empty()) ++claimed;
      if (local) {
        // The node table entry of this node is made once per request, not per key.
        if (self_index == SIZE_MAX) self_index = node_index(self, true);
        AppendIndex(reply_body, self_index);
      }
      for (size_t i = 0; i < matches.size(); ++i) {
        if (local || i > 0) reply_body->push_back(' ');
        AppendIndex(reply_body, node_index(matches[i], false));
      }
      reply_body->push_back('\n');
    }
    filled = 0;
  };
  ForEachLine(body, [&](std::string_view line) {
    ++count;
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
    } else {
      ++invalid;
    }
    if (filled == kGroup) answer_group();
  });
  answer_group();
  (*reply)["count"] = count;
  (*reply)["claimed"] = claimed;
  (*reply)["invalid"] = invalid;
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

}  // namespace peerbloom::daemon
