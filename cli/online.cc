// Subcommands that talk to the local daemon over its control endpoint.
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/online.h"
#include "cli/table.h"
#include "cli/tool_util.h"
#include "peerbloom/client/client_config.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/client/control_protocol.h"
#include "peerbloom/client/control_token.h"
#include "peerbloom/client/who_has.h"

namespace peerbloom::cli {

using client::ControlClient;
using nlohmann::json;

Status ResolveControl(const GlobalOptions& g, std::string* endpoint) {
  if (!g.control.empty()) {
    *endpoint = g.control;
  } else if (!g.config_path.empty()) {
    client::ClientConfig config;
    PEERBLOOM_RETURN_IF_ERROR(client::LoadClientConfig(g.config_path, &config));
    *endpoint = config.control;
  } else if (const char* env = std::getenv("PEERBLOOM_CONTROL"); env != nullptr && *env) {
    *endpoint = env;
  } else {
    *endpoint = "ipc:///var/lib/peerbloom/control.sock";
  }
  return Status::Ok();
}

Status ResolveToken(const GlobalOptions& g, const std::string& endpoint, std::string* token) {
  token->clear();
  if (!g.token_file.empty()) return client::ReadControlToken(g.token_file, token);
  if (g.config_path.empty()) return Status::Ok();
  client::ClientConfig config;
  PEERBLOOM_RETURN_IF_ERROR(client::LoadClientConfig(g.config_path, &config));
  if (config.control != endpoint || config.control_token_file.empty()) return Status::Ok();
  return client::ReadControlToken(config.control_token_file, token);
}

Status Connect(const GlobalOptions& g, std::unique_ptr<ControlClient>* out) {
  std::string endpoint;
  PEERBLOOM_RETURN_IF_ERROR(ResolveControl(g, &endpoint));
  // An ipc socket that does not exist would only show up as a timeout: say so at once.
  if (endpoint.rfind("ipc://", 0) == 0 && ::access(endpoint.c_str() + 6, F_OK) != 0) {
    return Status::IOError("control socket " + QuotePath(endpoint.substr(6)) +
                           " does not exist (is peerbloomd running? see --control, --config)");
  }
  std::string token;
  PEERBLOOM_RETURN_IF_ERROR(ResolveToken(g, endpoint, &token));
  *out = std::make_unique<ControlClient>(endpoint, g.timeout_ms);
  (*out)->set_token(std::move(token));
  return Status::Ok();
}

Status CallOnce(const GlobalOptions& g, const json& request, const std::string& body, json* reply,
                std::string* reply_body) {
  std::unique_ptr<ControlClient> control;
  PEERBLOOM_RETURN_IF_ERROR(Connect(g, &control));
  return control->Call(request, body, reply, reply_body);
}

namespace {

constexpr size_t kStreamBatch = 20000;

// True when stdin has a line ready without blocking (buffered or on the descriptor).
bool StdinReady() {
  if (std::cin.rdbuf()->in_avail() > 0) return true;
  struct pollfd p = {0, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

std::string Join(const std::vector<std::string>& items) {
  std::string body;
  for (const std::string& s : items) body.append(s).push_back('\n');
  return body;
}

std::string DescribeNode(const client::WhoHasNode& node) {
  std::string text = node.node_id + " (";
  if (node.local) text += "local, ";
  text += node.endpoint;
  if (!node.local) text += ", summary " + std::to_string(node.summary_age_ms) + " ms old";
  if (node.imported) text += ", squid digest";
  return text + ")";
}

// Counts of the answers printed so far.
struct WhoHasTally {
  size_t claimed = 0;   // keys some node claims
  size_t not_urls = 0;  // URL lines the daemon refused: not absolute URLs (squid-md5)
};

// Prints the answers of one who-has batch. A key the reply has no line for (a key holding
// '\n' is more than one line to the daemon) is printed as claimed by no node. A URL line the
// daemon refused is an error on stderr (after the batch's answers), not an answer.
Status PrintWhoHas(const std::vector<std::string>& keys, const json& reply, std::string_view body,
                   bool as_json, bool urls, WhoHasTally* tally) {
  client::WhoHasReply decoded;
  PEERBLOOM_RETURN_IF_ERROR(client::DecodeWhoHasReply(reply, body, &decoded));
  const client::WhoHasAnswer none;
  std::string out;
  std::vector<std::string> not_urls;
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::string& key = keys[k];
    const client::WhoHasAnswer& answer = k < decoded.answers.size() ? decoded.answers[k] : none;
    const std::vector<size_t>& idx = answer.nodes;
    if (!idx.empty()) ++tally->claimed;
    if (answer.invalid && urls) not_urls.push_back(key);
    if (as_json) {
      json j = {{"claimed", !idx.empty()}, {"nodes", json::array()}};
      PutKey(key, &j);
      if (answer.invalid) j["error"] = urls ? "not a url" : "invalid key";
      for (size_t i : idx) j["nodes"].push_back(client::WhoHasNodeJson(decoded.nodes[i]));
      out += j.dump() + "\n";
    } else if (answer.invalid && urls) {
      continue;
    } else {
      out += key + ": ";
      if (answer.invalid) out += "invalid key";
      if (idx.empty() && !answer.invalid) out += "no node";
      for (size_t n = 0; n < idx.size(); ++n) {
        out += (n ? ", " : "") + DescribeNode(decoded.nodes[idx[n]]);
      }
      out += "\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  for (const std::string& key : not_urls) {
    (void)Error(QuoteBytes(key) + " is not a url (expected scheme://host/path)");
  }
  tally->not_urls += not_urls.size();
  return Status::Ok();
}

struct KeyArgs {
  std::vector<std::string> items;
  bool keys = false;
};

void AddKeyArgs(CLI::App* sub, KeyArgs* a, const char* what) {
  sub->add_option("items", a->items, std::string(what) + " ('-' reads them from stdin, one a line)")
      ->required();
  sub->add_flag("--key", a->keys,
                "the arguments are keys of the cluster's key scheme (32 hex digits for "
                "squid-md5), not URLs");
}

bool IsStdin(const KeyArgs& a) { return a.items.size() == 1 && a.items[0] == "-"; }

// Reads the next batch of stdin lines: up to kStreamBatch, or fewer when no more is ready.
bool ReadBatch(std::vector<std::string>* batch) {
  batch->clear();
  std::string line;
  while (batch->size() < kStreamBatch && std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    batch->push_back(line);
    if (!StdinReady()) break;
  }
  return !batch->empty();
}

int RunWhoHas(const GlobalOptions& g, const KeyArgs& a) {
  std::unique_ptr<ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  const json request = {{"op", client::kOpWhoHas}, {"input", a.keys ? "key" : "url"}};
  WhoHasTally tally;
  auto ask = [&](const std::vector<std::string>& keys) {
    json reply;
    std::string body;
    Status st = control->Call(request, Join(keys), &reply, &body);
    if (st.ok()) st = PrintWhoHas(keys, reply, body, g.json, !a.keys, &tally);
    return st;
  };
  if (!IsStdin(a)) {
    s = ask(a.items);
  } else {
    std::vector<std::string> batch;
    while (s.ok() && ReadBatch(&batch)) {
      s = ask(batch);
      std::fflush(stdout);
    }
  }
  if (!s.ok()) return Error(s);
  if (tally.not_urls > 0) return kExitError;
  return tally.claimed > 0 ? kExitClaimed : kExitNone;
}

int RunChange(const GlobalOptions& g, const KeyArgs& a, bool add) {
  std::unique_ptr<ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  const json request = {{"op", add ? client::kOpAdd : client::kOpRemove},
                        {"input", a.keys ? "key" : "url"}};
  uint64_t applied = 0, refused = 0, invalid = 0;
  std::string first_error;
  auto send = [&](const std::vector<std::string>& keys) {
    json reply;
    std::string body;
    Status st = control->Call(request, Join(keys), &reply, &body);
    if (!st.ok()) return st;
    applied += reply.value("applied", uint64_t{0});
    refused += reply.value("refused", uint64_t{0});
    invalid += reply.value("invalid", uint64_t{0});
    if (first_error.empty()) first_error = reply.value("first_error", std::string());
    return Status::Ok();
  };
  if (!IsStdin(a)) {
    s = send(a.items);
  } else {
    std::vector<std::string> batch;
    while (s.ok() && ReadBatch(&batch)) s = send(batch);
  }
  if (!s.ok()) return Error(s);
  if (g.json) {
    std::printf(
        "%s\n",
        json({{"applied", applied}, {"refused", refused}, {"invalid", invalid}}).dump().c_str());
  } else {
    std::printf("%s %llu\n", add ? "added" : "removed", static_cast<unsigned long long>(applied));
  }
  std::fflush(stdout);
  if (refused > 0) {
    std::fprintf(stderr, "peerbloom: warning: %llu not in the filter, not removed\n",
                 static_cast<unsigned long long>(refused));
  }
  if (invalid > 0) return Error(std::to_string(invalid) + " invalid: " + first_error);
  return 0;
}

void PrintTree(const json& j, const std::string& indent) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_object()) {
      std::printf("%s%s:\n", indent.c_str(), it.key().c_str());
      PrintTree(*it, indent + "  ");
    } else if (it->is_array()) {
      std::printf("%s%s:\n", indent.c_str(), it.key().c_str());
      for (const json& item : *it) {
        std::printf("%s  -\n", indent.c_str());
        PrintTree(item, indent + "    ");
      }
    } else {
      std::printf("%s%s: %s\n", indent.c_str(), it.key().c_str(),
                  it->is_string() ? it->get<std::string>().c_str() : it->dump().c_str());
    }
  }
}

int RunSimple(const GlobalOptions& g, const json& request, const char* field, bool table = false) {
  json reply;
  std::string body;
  const Status s = CallOnce(g, request, "", &reply, &body);
  if (!s.ok()) return Error(s);
  if (g.json) {
    std::printf("%s\n", reply[field].dump(2).c_str());
  } else if (table) {
    const std::string text = RenderStats(reply[field]);
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    PrintTree(reply[field], "");
  }
  return 0;
}

int RunPeers(const GlobalOptions& g) {
  json reply;
  std::string body;
  const Status s = CallOnce(g, {{"op", client::kOpPeers}}, "", &reply, &body);
  if (!s.ok()) return Error(s);
  if (g.json) {
    std::printf("%s\n", reply["peers"].dump(2).c_str());
    return 0;
  }
  const std::string text = RenderPeers(reply["peers"]);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int RunSummary(const GlobalOptions& g, const std::string& node, const std::string& output) {
  std::unique_ptr<ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  // Node ids are ASCII; JSON could not carry bytes that are not UTF-8 anyway.
  if (!IsValidUtf8(node)) return Error("--node " + QuoteBytes(node) + " is not a node id");
  json request = {{"op", client::kOpSummary}, {"format", output.empty() ? "describe" : "bytes"}};
  if (!node.empty()) request["node"] = node;
  json reply;
  std::string body;
  s = control->Call(request, "", &reply, &body);
  if (!s.ok()) return Error(s);
  if (!output.empty()) {
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    if (!out) return Error("cannot write " + QuotePath(output));
  }
  if (g.json) {
    std::printf("%s\n", reply["summary"].dump(2).c_str());
  } else {
    PrintTree(reply["summary"], "");
  }
  return 0;
}

// The answer names the feed whose rebuild started; the read runs on in the daemon.
int RunRebuild(const GlobalOptions& g, const json& request) {
  json reply;
  std::string body;
  const Status s = CallOnce(g, request, "", &reply, &body);
  if (!s.ok()) return Error(s);
  const std::string feed = reply.value("feed", std::string());
  if (g.json) {
    std::printf("%s\n", json(feed).dump().c_str());
  } else if (reply.value("scan", false)) {
    std::printf(
        "scanning the nginx cache directory %s ('peerbloom stats' shows the scan in "
        "nginx_feeds)\n",
        QuotePath(feed).c_str());
  } else {
    std::printf(
        "rebuilding the live set of feed %s from the cache_dirs ('peerbloom stats' shows the "
        "feed's rebuild counters)\n",
        QuotePath(feed).c_str());
  }
  return 0;
}

}  // namespace

Runner SetUpWhoHas(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<KeyArgs>();
  AddKeyArgs(sub, a.get(), "URLs to look up");
  return [g, a] { return RunWhoHas(*g, *a); };
}

Runner SetUpAdd(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<KeyArgs>();
  AddKeyArgs(sub, a.get(), "URLs the cache now holds");
  return [g, a] { return RunChange(*g, *a, true); };
}

Runner SetUpRemove(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<KeyArgs>();
  AddKeyArgs(sub, a.get(), "URLs the cache dropped");
  return [g, a] { return RunChange(*g, *a, false); };
}

Runner SetUpStats(CLI::App* sub, const GlobalOptions* g) {
  (void)sub;
  return [g] { return RunSimple(*g, {{"op", client::kOpStats}}, "stats", true); };
}

Runner SetUpPeers(CLI::App* sub, const GlobalOptions* g) {
  (void)sub;
  return [g] { return RunPeers(*g); };
}

Runner SetUpRebuild(CLI::App* sub, const GlobalOptions* g) {
  auto feed = std::make_shared<std::string>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  sub->add_option("--feed", *feed, "the store.log feed's path (default: the only one)");
  sub->add_option("cache_dirs", *dirs, "Squid cache_dirs to read (default: the feed's)");
  return [g, feed, dirs] {
    json request = {{"op", client::kOpRebuild}};
    if (!feed->empty()) request["feed"] = *feed;
    if (!dirs->empty()) request["cache_dirs"] = *dirs;
    return RunRebuild(*g, request);
  };
}

Runner SetUpLogLevel(CLI::App* sub, const GlobalOptions* g) {
  auto level = std::make_shared<std::string>();
  sub->add_option("level", *level,
                  "trace, debug, info, warn, error, critical or off (default: only print it)");
  return [g, level] {
    std::unique_ptr<ControlClient> control;
    Status s = Connect(*g, &control);
    if (!s.ok()) return Error(s);
    json request = {{"op", client::kOpLogLevel}};
    if (!level->empty()) {
      if (!IsValidUtf8(*level)) return Error("level " + QuoteBytes(*level) + " is not a level");
      request["level"] = *level;
    }
    json reply;
    std::string body;
    s = control->Call(request, "", &reply, &body);
    if (!s.ok()) return Error(s);
    if (g->json) {
      json out = {{"level", reply.value("level", std::string())}};
      if (reply.contains("previous")) out["previous"] = reply["previous"];
      std::printf("%s\n", out.dump().c_str());
    } else if (reply.contains("previous")) {
      std::printf("%s (was %s)\n", reply.value("level", std::string()).c_str(),
                  reply["previous"].get<std::string>().c_str());
    } else {
      std::printf("%s\n", reply.value("level", std::string()).c_str());
    }
    return 0;
  };
}

Runner SetUpSummary(CLI::App* sub, const GlobalOptions* g) {
  auto node = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  sub->add_option("--node", *node, "a peer's node id (default: the daemon's own summary)");
  sub->add_option("-o,--output", *output, "save the encoded summary to this file");
  return [g, node, output] { return RunSummary(*g, *node, *output); };
}

}  // namespace peerbloom::cli
