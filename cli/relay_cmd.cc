// broadcast and listen: the broadcast relay through the local daemon (docs/relay.md).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
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
  std::unique_ptr<ControlClient> control;
  Status s = Connect(g, &control);
  if (!s.ok()) return Error(s);
  json reply;
  std::string body;
  s = control->Call({{"op", client::kOpBroadcast}}, payload, &reply, &body);
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
        out += d["origin"].get<std::string>() + " #" + d["id"].dump() + " (" + d["hops"].dump() +
               " hops) " + d["kind"].get<std::string>() + ": " + payload + "\n";
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

}  // namespace

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
