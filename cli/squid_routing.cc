// The routing commands: `squid-helper` (Squid asks which peer holds a URL), `report` and
// `squid-outcomes` (what became of a routed request: a hit at the peer or a false hit).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/squid_helper.h"
#include "cli/squid_outcomes.h"
#include "cli/tool_util.h"
#include "peerbloom/client/client_config.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/client/control_protocol.h"

namespace peerbloom::cli {
namespace {

using nlohmann::json;

// The endpoint and the node id -> cache_peer name table, from the global options.
Status Resolve(const GlobalOptions& g, std::string* control,
               std::map<std::string, std::string>* names) {
  if (!g.config_path.empty()) {
    client::ClientConfig config;
    PEERBLOOM_RETURN_IF_ERROR(client::LoadClientConfig(g.config_path, &config));
    *names = config.squid_peer_names;
  }
  return ResolveControl(g, control);
}

Status SendReport(client::ControlClient* control, const std::string& node, bool hit, uint64_t count,
                  json* reply) {
  const json request = {{"op", client::kOpReport},
                        {"outcome", hit ? "hit" : "miss"},
                        {"node", node},
                        {"count", count}};
  std::string body;
  return control->Call(request, "", reply, &body);
}

int RunReport(const GlobalOptions& g, const std::string& outcome, const std::string& url,
              const std::string& node) {
  if (outcome != "hit" && outcome != "miss") {
    return Error("the outcome must be 'hit' or 'miss', got " + QuoteBytes(outcome));
  }
  std::string endpoint;
  std::map<std::string, std::string> names;
  Status s = Resolve(g, &endpoint, &names);
  if (!s.ok()) return Error(s);
  std::string token;
  s = ResolveToken(g, endpoint, &token);
  if (!s.ok()) return Error(s);
  client::ControlClient control(endpoint, g.timeout_ms);
  control.set_token(std::move(token));
  const json request = {{"op", client::kOpReport}, {"outcome", outcome}, {"node", node}};
  json reply;
  std::string body;
  s = control.Call(request, url + "\n", &reply, &body);
  if (!s.ok()) return Error(s);
  reply.erase("ok");
  if (g.json) {
    std::printf("%s\n", reply.dump().c_str());
  } else {
    std::printf("%s: routed %llu, hits %llu, false hits %llu\n", node.c_str(),
                static_cast<unsigned long long>(reply.value("routed", uint64_t{0})),
                static_cast<unsigned long long>(reply.value("hits", uint64_t{0})),
                static_cast<unsigned long long>(reply.value("false_hits", uint64_t{0})));
  }
  return 0;
}

// Squid runs the helper as its own user (proxy): through the who-has socket it needs no token
// and no access to the daemon's control endpoint, only the socket's group.
int StartSquidHelper(const GlobalOptions& g, SquidHelperOptions* o, const std::string& socket,
                     bool socket_given) {
  if (!g.config_path.empty()) {
    client::ClientConfig config;
    Status s = client::LoadClientConfig(g.config_path, &config);
    if (!s.ok()) return Error(s);
    o->names = config.squid_peer_names;
    o->node_id = config.node_id;
    if (g.control.empty()) o->who_has_socket = config.who_has_socket;
  }
  if (socket_given) o->who_has_socket = socket;
  if (!o->who_has_socket.empty()) return RunSquidHelper(*o, STDIN_FILENO, STDOUT_FILENO);
  Status s = ResolveControl(g, &o->control);
  if (s.ok()) s = ResolveToken(g, o->control, &o->token);
  if (!s.ok()) return Error(s);
  return RunSquidHelper(*o, STDIN_FILENO, STDOUT_FILENO);
}

int RunOutcomes(const GlobalOptions& g, const std::string& path, bool follow) {
  std::string endpoint;
  std::map<std::string, std::string> names;
  Status s = Resolve(g, &endpoint, &names);
  if (!s.ok()) return Error(s);
  std::map<std::string, std::string> node_of;  // cache_peer name -> node id
  for (const auto& [node, name] : names) node_of[name] = node;
  std::string token;
  s = ResolveToken(g, endpoint, &token);
  if (!s.ok()) return Error(s);
  client::ControlClient control(endpoint, g.timeout_ms);
  control.set_token(std::move(token));
  OutcomeTally tally;
  auto flush = [&]() -> Status {
    for (const auto& [name, counts] : tally.by_peer) {
      const auto it = node_of.find(name);
      const std::string node = it == node_of.end() ? name : it->second;
      json reply;
      if (counts.hits > 0)
        PEERBLOOM_RETURN_IF_ERROR(SendReport(&control, node, true, counts.hits, &reply));
      if (counts.false_hits > 0) {
        PEERBLOOM_RETURN_IF_ERROR(SendReport(&control, node, false, counts.false_hits, &reply));
      }
    }
    tally.by_peer.clear();
    return Status::Ok();
  };
  OutcomeLogReader reader(path);
  uint64_t lines = 0, routed = 0;
  for (;;) {
    s = reader.ReadAvailable([&](std::string_view line) {
      ++lines;
      routed += tally.Add(line) ? 1 : 0;
    });
    if (s.ok()) s = flush();
    if (!s.ok()) return Error(s);
    if (!follow) break;
    ::usleep(200 * 1000);  // a log follower's poll period, not a wait for a condition
  }
  if (g.json) {
    std::printf("%s\n", json({{"lines", lines}, {"routed", routed}}).dump().c_str());
  } else {
    std::printf("lines %llu, routed %llu\n", static_cast<unsigned long long>(lines),
                static_cast<unsigned long long>(routed));
  }
  return 0;
}

}  // namespace

Runner SetUpSquidHelper(CLI::App* sub, const GlobalOptions* g) {
  auto o = std::make_shared<SquidHelperOptions>();
  sub->add_option(
         "--wait-ms", o->wait_ms,
         "longest wait for the daemon's answer; past it Squid is answered ERR (default 100)")
      ->check(CLI::Range(1, 60000));
  sub->add_option("--retry-ms", o->retry_ms,
                  "after the daemon failed to answer, answer ERR at once for this long "
                  "(default 1000)")
      ->check(CLI::Range(0, 3600000));
  sub->add_option("--max-batch", o->max_batch, "requests per who-has call (default 4096)")
      ->check(CLI::Range(1, 1000000));
  auto socket = std::make_shared<std::string>();
  CLI::Option* socket_option = sub->add_option(
      "--who-has-socket", *socket,
      "the daemon's who-has socket (default: who_has_socket of --config, unless --control is "
      "given); \"\" asks through the control endpoint");
  return [g, o, socket, socket_option] {
    return StartSquidHelper(*g, o.get(), *socket, socket_option->count() > 0);
  };
}

Runner SetUpReport(CLI::App* sub, const GlobalOptions* g) {
  auto outcome = std::make_shared<std::string>();
  auto url = std::make_shared<std::string>();
  auto node = std::make_shared<std::string>();
  sub->add_option("outcome", *outcome, "'hit' (the peer held it) or 'miss' (a false hit)")
      ->required();
  sub->add_option("url", *url, "the URL routed")->required();
  sub->add_option("node", *node, "the node id of the peer it was routed to")->required();
  return [g, outcome, url, node] { return RunReport(*g, *outcome, *url, *node); };
}

Runner SetUpSquidOutcomes(CLI::App* sub, const GlobalOptions* g) {
  auto path = std::make_shared<std::string>();
  auto follow = std::make_shared<bool>(false);
  sub->add_option("log", *path, "a Squid access log written in the 'peerbloom' logformat")
      ->required();
  sub->add_flag("-f,--follow", *follow, "keep reading as the log grows (and after rotation)");
  return [g, path, follow] { return RunOutcomes(*g, *path, *follow); };
}

}  // namespace peerbloom::cli
