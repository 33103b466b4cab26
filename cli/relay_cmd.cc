// broadcast and listen: the broadcast relay through the local daemon (docs/relay.md).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cli/cli.h"
#include "cli/online.h"
#include "cli/tool_util.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/client/control_protocol.h"
#include "peerbloom/escape.h"

namespace peerbloom::cli {

using client::ControlClient;
using nlohmann::json;

namespace {

// How often `listen` asks the daemon for new deliveries.
constexpr auto kListenPoll = std::chrono::milliseconds(100);

struct BroadcastArgs {
  std::string message;
  std::string file;
};

int RunBroadcast(const GlobalOptions& g, const BroadcastArgs& a) {
  std::string payload;
  if (!a.file.empty() && !a.message.empty()) {
    return Error("give the message as an argument or with --file, not both");
  }
  if (!a.file.empty()) {
    Status s = ReadFileBytes(a.file, &payload);
    if (!s.ok()) return Error(s);
  } else if (!a.message.empty() && a.message != "-") {
    payload = a.message;
  } else {
    payload.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  json reply;
  std::string body;
  const Status s = CallOnce(g, {{"op", client::kOpBroadcast}}, payload, &reply, &body);
  if (!s.ok()) return Error(s);
  if (g.json) {
    std::printf("%s\n", reply.dump().c_str());
  } else {
    std::printf("broadcast %s #%s (%zu bytes)\n", reply["origin"].get<std::string>().c_str(),
                reply["id"].dump().c_str(), payload.size());
  }
  return 0;
}

struct ListenArgs {
  bool from_start = false;
  uint64_t count = 0;
};

int RunListen(const GlobalOptions& g, const ListenArgs& a) {
  std::unique_ptr<ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  json reply;
  std::string body;
  uint64_t cursor = 0;
  if (!a.from_start) {
    s = control->Call({{"op", client::kOpListen}}, "", &reply, &body);
    if (!s.ok()) return Error(s);
    cursor = reply["last_seq"].get<uint64_t>();
  }
  uint64_t printed = 0;
  while (a.count == 0 || printed < a.count) {
    s = control->Call({{"op", client::kOpListen}, {"after", cursor}}, "", &reply, &body);
    if (!s.ok()) return Error(s);
    if (reply["missed"].get<uint64_t>() > 0) {
      std::fprintf(stderr, "peerbloom: missed %s deliveries (the daemon keeps the newest only)\n",
                   reply["missed"].dump().c_str());
    }
    size_t at = 0;
    std::string out;
    for (const json& d : reply["deliveries"]) {
      const size_t n = d["bytes"].get<size_t>();
      if (at + n > body.size()) return Error("listen reply body shorter than its deliveries");
      const std::string payload = body.substr(at, n);
      at += n;
      cursor = d["seq"].get<uint64_t>();
      if (g.json) {
        json j = d;
        j.erase("bytes");
        j["payload"] = JsonText(payload);
        if (!IsValidUtf8(payload)) j["payload_hex"] = HexBytes(payload);
        out += j.dump() + "\n";
      } else {
        const std::string hops = d["hops"].dump() + (d["hops"] == 1 ? " hop" : " hops");
        out += d["origin"].get<std::string>() + " #" + d["id"].dump() + " (" + hops + ") " +
               d["kind"].get<std::string>() + ": " + payload + "\n";
      }
      if (a.count != 0 && ++printed >= a.count) break;
    }
    if (!out.empty()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
    if (reply["deliveries"].empty()) std::this_thread::sleep_for(kListenPoll);
  }
  return 0;
}

struct PurgeArgs {
  std::string url;
  bool cluster = false;
  int wait_ms = 15000;
};

std::string DescribePurge(const json& r) {
  std::string text = r.value("node", std::string("?")) + ": ";
  const std::string action = r.value("action", std::string());
  if (action == "skipped") return text + "not held (its filter does not hold the URL)";
  if (action == "none") return text + "may hold it, no purge action configured";
  if (r.contains("error")) return text + "purge failed: " + r["error"].get<std::string>();
  if (action == "command") {
    if (r.contains("signal")) return text + "purge command ended by signal " + r["signal"].dump();
    return text + (r.value("purged", false) ? "purged" : "not purged") +
           " (purge command exited with status " + r["exit_status"].dump() + ")";
  }
  if (action == "nginx") {
    const uint64_t deleted = r.value("deleted", uint64_t{0});
    if (deleted == 0) return text + "not in the cache (no cache file of the key)";
    return text + "purged (" + std::to_string(deleted) +
           (deleted == 1 ? " cache file deleted)" : " cache files deleted)");
  }
  if (r.value("purged", false)) return text + "purged (HTTP 200)";
  return text + "not in the cache (HTTP " + r["status"].dump() + ")";
}

void PrintPurge(const GlobalOptions& g, const json& r) {
  const std::string line = (g.json ? r.dump() : DescribePurge(r)) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

// Without --cluster: the daemon answers at once when no action is to run, else with a job
// whose result this polls for until --wait passes.
int RunLocalPurge(const GlobalOptions& g, const PurgeArgs& a, ControlClient* control) {
  json reply;
  std::string body;
  Status s = control->Call({{"op", client::kOpPurge}, {"url", a.url}}, "", &reply, &body);
  if (!s.ok()) return Error(s);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.wait_ms);
  if (reply.contains("job")) {
    const json ask = {{"op", client::kOpPurge}, {"job", reply["job"]}};
    while (true) {
      s = control->Call(ask, "", &reply, &body);
      if (!s.ok()) return Error(s);
      if (reply.value("done", false)) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "peerbloom: the purge did not finish within %d ms\n", a.wait_ms);
        return kExitNone;
      }
      std::this_thread::sleep_for(kListenPoll);
    }
  }
  PrintPurge(g, reply["result"]);
  return 0;
}

// With --cluster: broadcasts the purge, then prints the purge results as they arrive until
// every live member (and this node) has answered or --wait passes.
int RunPurge(const GlobalOptions& g, const PurgeArgs& a) {
  if (!IsValidUtf8(a.url)) return Error("URL " + QuoteBytes(a.url) + " is not UTF-8");
  std::unique_ptr<ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  json reply;
  std::string body;
  if (!a.cluster) return RunLocalPurge(g, a, control.get());
  s = control->Call({{"op", client::kOpPeers}}, "", &reply, &body);
  if (!s.ok()) return Error(s);
  size_t expected = 1;
  for (const json& p : reply["peers"]) {
    if (p.value("alive", false) && !p.value("imported", false)) ++expected;
  }
  s = control->Call({{"op", client::kOpListen}}, "", &reply, &body);
  if (!s.ok()) return Error(s);
  uint64_t cursor = reply["last_seq"].get<uint64_t>();
  s = control->Call({{"op", client::kOpPurge}, {"url", a.url}, {"cluster", true}}, "", &reply,
                    &body);
  if (!s.ok()) return Error(s);
  const std::string origin = reply["origin"].get<std::string>();
  const uint64_t id = reply["id"].get<uint64_t>();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.wait_ms);
  std::set<std::string> answered;
  while (answered.size() < expected && std::chrono::steady_clock::now() < deadline) {
    s = control->Call({{"op", client::kOpListen}, {"after", cursor}}, "", &reply, &body);
    if (!s.ok()) return Error(s);
    size_t at = 0;
    for (const json& d : reply["deliveries"]) {
      const size_t n = d["bytes"].get<size_t>();
      const std::string payload = body.substr(std::min(at, body.size()), n);
      at += n;
      cursor = d["seq"].get<uint64_t>();
      if (d["kind"] != "purge-result") continue;
      const json r = json::parse(payload, nullptr, false);
      if (!r.is_object() || r.value("purge_origin", std::string()) != origin ||
          r.value("purge_id", uint64_t{0}) != id) {
        continue;
      }
      if (answered.insert(r.value("node", std::string())).second) PrintPurge(g, r);
    }
    if (reply["deliveries"].empty()) std::this_thread::sleep_for(kListenPoll);
  }
  if (answered.size() < expected) {
    std::fprintf(stderr, "peerbloom: %zu of %zu nodes answered within %d ms\n", answered.size(),
                 expected, a.wait_ms);
    return kExitNone;
  }
  return 0;
}

}  // namespace

Runner SetUpPurge(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<PurgeArgs>();
  sub->add_option("url", a->url, "the URL to purge")->required();
  sub->add_flag("--cluster", a->cluster,
                "purge at every node whose filter may hold the URL (default: this node only)");
  sub->add_option("--wait", a->wait_ms, "milliseconds to wait for the results")
      ->check(CLI::Range(0, 3600000));
  return [g, a] { return RunPurge(*g, *a); };
}

Runner SetUpBroadcast(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<BroadcastArgs>();
  sub->add_option("message", a->message, "the payload ('-' or none reads it from stdin)");
  sub->add_option("--file", a->file, "read the payload from this file");
  return [g, a] { return RunBroadcast(*g, *a); };
}

Runner SetUpListen(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<ListenArgs>();
  sub->add_flag("--from-start", a->from_start,
                "print the deliveries the daemon still keeps first, then new ones");
  sub->add_option("--count", a->count, "exit after this many deliveries (default: never)");
  return [g, a] { return RunListen(*g, *a); };
}

}  // namespace peerbloom::cli
