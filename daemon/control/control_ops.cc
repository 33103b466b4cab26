// The control operations' table and the operations that only read the daemon's parts.
// who-has, add and remove live in LookupService (lookup_service.cc): they work on the store.
#include "daemon/control/control_ops.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "daemon/observe/log_format.h"

#include "peerbloom/client/control_protocol.h"
#include "peerbloom/escape.h"
#include "peerbloom/summary.h"

namespace peerbloom::daemon {

const std::vector<ControlOps::Op>& ControlOps::Table() {
  static const std::vector<Op> kTable = {
      {client::kOpWhoHas, "which nodes probably hold each key of the body", &ControlOps::WhoHas},
      {client::kOpAdd, "adds each key of the body to this node's filter", &ControlOps::Add},
      {client::kOpRemove, "removes each key of the body from this node's filter",
       &ControlOps::Remove},
      {client::kOpStats, "every counter the daemon keeps", &ControlOps::Stats},
      {client::kOpPeers, "every member known, alive or dead", &ControlOps::Peers},
      {client::kOpSummary, "describes a node's summary or returns its encoded bytes",
       &ControlOps::Summary},
      {client::kOpPing, "this node's id and advertised endpoint", &ControlOps::Ping},
      {client::kOpSnapshot, "writes a snapshot now", &ControlOps::Snapshot},
      {client::kOpRebuild, "starts rebuilding a store.log feed's live set from Squid's cache_dirs",
       &ControlOps::Rebuild},
      {client::kOpReport, "counts outcomes of requests routed to a peer: hits or false hits",
       &ControlOps::Report},
      {client::kOpLogLevel, "sets the log level until the next reload, or answers it",
       &ControlOps::LogLevel},
      {client::kOpBroadcast, "broadcasts the body to every node over the relay links",
       &ControlOps::Broadcast},
      {client::kOpListen, "the broadcasts delivered here after a cursor", &ControlOps::Listen},
      {client::kOpPurge, "purges a URL here, or at every node that may hold it with cluster",
       &ControlOps::Purge},
  };
  return kTable;
}

Status ControlOps::Handle(const nlohmann::json& request, std::string_view body,
                          nlohmann::json* reply, std::string* reply_body) {
  const std::string op = request["op"].get<std::string>();
  const ControlCall call{request, body, c_.clock.NowMs(), reply, reply_body};
  std::string names;
  for (const Op& entry : Table()) {
    if (entry.name == op) {
      try {
        return (this->*entry.handler)(call);
      } catch (const nlohmann::json::exception& e) {
        return Status::InvalidArgument(std::string("bad request field: ") + e.what());
      }
    }
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  }
  return Status::InvalidArgument("unknown op " + QuoteBytes(op) + " (" + names + ")");
}

Status ControlOps::WhoHas(const ControlCall& call) { return c_.who_has(call); }

Status ControlOps::Add(const ControlCall& call) { return c_.change(true, call); }

Status ControlOps::Remove(const ControlCall& call) { return c_.change(false, call); }

Status ControlOps::Stats(const ControlCall& call) {
  (*call.reply)["stats"] = c_.stats.Stats(call.now);
  return Status::Ok();
}

Status ControlOps::Peers(const ControlCall& call) {
  (*call.reply)["peers"] = c_.stats.Peers(call.now);
  return Status::Ok();
}

Status ControlOps::Ping(const ControlCall& call) {
  (*call.reply)["node_id"] = c_.parts.config.node_id;
  (*call.reply)["endpoint"] = c_.parts.endpoint;
  return Status::Ok();
}

Status ControlOps::Snapshot(const ControlCall&) { return c_.write_snapshot(); }

// {"op":"summary","node":ID,"format":"describe"|"bytes"}: both optional.
Status ControlOps::Summary(const ControlCall& call) {
  const std::string node = call.request.value("node", c_.parts.config.node_id);
  const std::string format = call.request.value("format", std::string("describe"));
  if (format != "describe" && format != "bytes") {
    return Status::InvalidArgument("'format' must be 'describe' or 'bytes', got " +
                                   QuoteBytes(format));
  }
  peerbloom::Summary summary;
  if (node == c_.parts.config.node_id) {
    summary = c_.parts.store.builder()->current();
  } else {
    Status s = c_.parts.engine.GetSummary(node, &summary);
    if (!s.ok()) return Status::NotFound("no summary held for node " + QuoteBytes(node));
  }
  std::string encoded;
  PEERBLOOM_RETURN_IF_ERROR(EncodeSummary(summary, &encoded));
  (*call.reply)["summary"] = {{"origin", summary.origin},
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
  if (format == "bytes") *call.reply_body = std::move(encoded);
  return Status::Ok();
}

// {"op":"rebuild","feed":PATH,"cache_dirs":[...]}: both optional when one store.log feed
// has cache_dirs configured. Starts the read; `stats` shows when it is done. For an
// nginx-cache feed (named, or the only feed that can be rebuilt), a scan of its directory.
Status ControlOps::Rebuild(const ControlCall& call) {
  const std::string path = call.request.value("feed", std::string());
  // An nginx-cache feed's live set is rebuilt by a scan of its directory.
  for (const auto& feed : c_.parts.nginx_feeds) {
    const bool only = path.empty() && c_.parts.nginx_feeds.size() == 1 &&
                      std::none_of(c_.parts.feeds.begin(), c_.parts.feeds.end(),
                                   [](const auto& f) { return f->store_log() != nullptr; });
    if (feed->config().path != path && !only) continue;
    if (call.request.contains("cache_dirs")) {
      return Status::InvalidArgument(
          "an nginx-cache feed reads its own directory: no 'cache_dirs'");
    }
    feed->RequestScan("rebuild request");
    (*call.reply)["feed"] = feed->config().path;
    (*call.reply)["scan"] = true;
    return Status::Ok();
  }
  std::vector<std::string> dirs = call.request.value("cache_dirs", std::vector<std::string>());
  Feed* chosen = nullptr;
  for (const auto& feed : c_.parts.feeds) {
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
  PEERBLOOM_RETURN_IF_ERROR(chosen->StartRebuild(std::move(dirs), "rebuild request", call.now));
  (*call.reply)["feed"] = chosen->config().path;
  return Status::Ok();
}

// {"op":"report","outcome":"hit"|"miss","node":ID}: one outcome per body line (the URLs, which
// are not looked at), or "count" outcomes when the body is empty, at most kMaxReportCount.
constexpr uint64_t kMaxReportCount = 1000000000;

Status ControlOps::Report(const ControlCall& call) {
  const std::string outcome = call.request.value("outcome", std::string());
  if (outcome != "hit" && outcome != "miss") {
    return Status::InvalidArgument("'outcome' must be 'hit' or 'miss', got " + QuoteBytes(outcome));
  }
  const std::string node = call.request.value("node", std::string());
  if (node.empty()) return Status::InvalidArgument("'node' is missing");
  uint64_t count = 0;
  for (char c : call.body) count += c == '\n' ? 1 : 0;
  if (!call.body.empty() && call.body.back() != '\n') ++count;
  if (call.body.empty()) count = call.request.value("count", uint64_t{1});
  if (count > kMaxReportCount) {
    return Status::InvalidArgument("'count' must be at most " + std::to_string(kMaxReportCount) +
                                   ", got " + std::to_string(count));
  }
  c_.parts.routes.Report(node, outcome == "hit" ? RouteOutcome::kHit : RouteOutcome::kFalseHit,
                         count, c_.parts.engine.IsMember(node));
  const RouteCounts counts = c_.parts.routes.For(node);
  (*call.reply)["node"] = node;
  (*call.reply)["counted"] = count;
  (*call.reply)["routed"] = counts.routed;
  (*call.reply)["hits"] = counts.hits;
  (*call.reply)["false_hits"] = counts.false_hits;
  return Status::Ok();
}

// {"op":"log-level","level":LEVEL}: level optional. Lasts until a SIGHUP reload re-reads
// log_level from the config, or a restart.
Status ControlOps::LogLevel(const ControlCall& call) {
  const std::string current = CurrentLogLevel();
  if (call.request.contains("level")) {
    std::string previous;
    PEERBLOOM_RETURN_IF_ERROR(SetLogLevel(call.request["level"].get<std::string>(), &previous));
    (*call.reply)["previous"] = previous;
    spdlog::info("log level set to '{}' by a control request (was '{}')", CurrentLogLevel(),
                 previous);
  }
  (*call.reply)["level"] = CurrentLogLevel();
  return Status::Ok();
}

}  // namespace peerbloom::daemon
