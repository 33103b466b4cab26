// The control operations of the broadcast relay: broadcast and listen
// (docs/control-protocol.md). `listen` does not hold the request open: the control server
// answers every request at once, so a listener polls with the cursor of its last answer.
#include <algorithm>

#include "daemon/control/control_ops.h"
#include "daemon/relay/relay_purge.h"
#include "daemon/relay/relay_service.h"

namespace peerbloom::daemon {

namespace {
constexpr uint64_t kMaxListenBatch = 10000;
// A reply stops adding deliveries once its body holds this many bytes (the first always goes).
constexpr size_t kMaxListenBodyBytes = size_t{16} << 20;
}  // namespace

// {"op":"broadcast"}, body: the payload. Answers {"origin", "id"}.
Status ControlOps::Broadcast(const ControlCall& call) {
  uint64_t id = 0;
  PEERBLOOM_RETURN_IF_ERROR(
      c_.relay.Broadcast(RelayPayloadKind::kMessage, call.body, call.now, &id));
  (*call.reply)["origin"] = c_.parts.config.node_id;
  (*call.reply)["id"] = id;
  return Status::Ok();
}

// {"op":"listen","after":CURSOR,"max":N}: deliveries with seq > after (at most N, default and
// cap 10000) as {"seq","origin","id","hops","kind","bytes"} entries, their payloads
// concatenated in the reply body in order. Without "after": none, only the cursor to start
// from ("last_seq"). "missed": deliveries after the cursor no longer kept.
Status ControlOps::Listen(const ControlCall& call) {
  (*call.reply)["last_seq"] = c_.relay.last_seq();
  nlohmann::json list = nlohmann::json::array();
  if (!call.request.contains("after")) {
    (*call.reply)["deliveries"] = list;
    (*call.reply)["missed"] = 0;
    return Status::Ok();
  }
  const uint64_t after = call.request["after"].get<uint64_t>();
  const uint64_t max = std::min(call.request.value("max", kMaxListenBatch), kMaxListenBatch);
  uint64_t missed = 0;
  for (const RelayReceived* r : c_.relay.After(after, static_cast<size_t>(max), &missed)) {
    if (!list.empty() && call.reply_body->size() + r->body.size() > kMaxListenBodyBytes) break;
    list.push_back({{"seq", r->seq},
                    {"origin", r->origin},
                    {"id", r->id},
                    {"hops", r->hops},
                    {"kind", std::string(RelayPayloadKindName(r->kind))},
                    {"bytes", r->body.size()}});
    call.reply_body->append(r->body);
  }
  (*call.reply)["deliveries"] = std::move(list);
  (*call.reply)["missed"] = missed;
  return Status::Ok();
}

// {"op":"purge","url":URL,"cluster":BOOL}. With cluster: broadcasts the purge and answers
// {"origin", "id"} at once; each node's result arrives later as a purge-result delivery.
// Without: checks the filter here and answers {"result": {...}} when no action is to run,
// else {"job": N} at once (the action runs off the loop); {"op":"purge","job":N} answers
// {"done": false} until it has finished, then {"done": true, "result": {...}}.
Status ControlOps::Purge(const ControlCall& call) {
  if (call.request.contains("job")) {
    bool done = false;
    nlohmann::json result;
    PEERBLOOM_RETURN_IF_ERROR(
        c_.relay.LocalPurgeResult(call.request["job"].get<uint64_t>(), &done, &result));
    (*call.reply)["done"] = done;
    if (done) (*call.reply)["result"] = std::move(result);
    return Status::Ok();
  }
  const std::string url = call.request.at("url").get<std::string>();
  if (url.empty()) return Status::InvalidArgument("'url' must not be empty");
  if (!call.request.value("cluster", false)) {
    NginxPurgeFiles nginx_files;
    if (!c_.parts.nginx_feeds.empty()) {
      nginx_files = [feed = c_.parts.nginx_feeds.front().get()](std::string_view key) {
        return feed->PurgePaths(key);
      };
    }
    nlohmann::json checked = CheckPurge(c_.parts.config, &c_.parts.store, url, nginx_files);
    if (!PurgeActionPending(checked)) {
      (*call.reply)["result"] = std::move(checked);
      return Status::Ok();
    }
    uint64_t job = 0;
    PEERBLOOM_RETURN_IF_ERROR(c_.relay.StartLocalPurge(std::move(checked), &job));
    (*call.reply)["job"] = job;
    return Status::Ok();
  }
  uint64_t id = 0;
  PEERBLOOM_RETURN_IF_ERROR(c_.relay.Broadcast(RelayPayloadKind::kPurge, url, call.now, &id));
  (*call.reply)["origin"] = c_.parts.config.node_id;
  (*call.reply)["id"] = id;
  return Status::Ok();
}

}  // namespace peerbloom::daemon
