// Dispatch: the command table, "did you mean", and the last catch.
#include <cstdio>
#include <exception>

#include "cli/cli.h"
#include "peerbloom/escape.h"

namespace peerbloom::cli {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The first argument that is not an option or an option's value: the command the user typed.
std::string_view TypedCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--control" || arg == "--config" || arg == "--timeout" || arg == "--token-file") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    return arg;
  }
  return {};
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"who-has", "which nodes probably hold these URLs (asks the local daemon)", SetUpWhoHas},
      {"add", "tell the local daemon its cache now holds these URLs", SetUpAdd},
      {"remove", "tell the local daemon its cache dropped these URLs", SetUpRemove},
      {"stats", "the local daemon's counters (filter, summary, gossip, transport, feeds)",
       SetUpStats},
      {"peers", "the members the local daemon knows, alive or dead", SetUpPeers},
      {"top", "the local daemon's activity as rates, refreshed every second", SetUpTop},
      {"summary", "describe or save a summary the daemon holds (its own or a peer's)",
       SetUpSummary},
      {"log-level", "print or set the local daemon's log level (until its next reload)",
       SetUpLogLevel},
      {"rebuild", "rebuild a store.log feed's live set from what Squid's cache_dirs hold",
       SetUpRebuild},
      {"calc", "Bloom filter sizing: bits and k for items and fpr, and the reverse", SetUpCalc},
      {"build", "build a summary file from a file of URLs or keys", SetUpBuild},
      {"query", "test URLs against a summary file", SetUpQuery},
      {"dedup", "print only the first occurrence of each line of a stream", SetUpDedup},
      {"inspect", "decode and describe a summary file", SetUpInspect},
      {"squid-keys", "the store keys Squid cache_dirs hold on disk, in store.log's form",
       SetUpSquidKeys},
      {"keygen", "generate a CURVE key pair for a node", SetUpKeygen},
      {"bench", "time who-has through the local daemon's control endpoint", SetUpBench},
      {"squid-helper", "Squid external ACL helper: names the peer whose summary claims a URL",
       SetUpSquidHelper},
      {"report", "count the outcome of a request routed to a peer: hit or miss (a false hit)",
       SetUpReport},
      {"squid-outcomes", "count routed requests' outcomes from a Squid log of peerbloom's format",
       SetUpSquidOutcomes},
      {"broadcast", "send a message to every node over the relay links", SetUpBroadcast},
      {"listen", "print the broadcasts delivered to the local daemon as they arrive", SetUpListen},
      {"purge", "purge a URL from the local Squid, or with --cluster from every node's",
       SetUpPurge},
  };
  return kCommands;
}

int Error(std::string_view message) {
  // Messages quote their values escaped (QuoteBytes); one that still holds bytes that are not
  // UTF-8 (a path quoted by shared code) is escaped whole rather than printed raw.
  std::string text = "peerbloom: error: ";
  text += IsValidUtf8(message) ? std::string(message) : EscapeBytes(message);
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), stderr);
  return kExitError;
}

int Error(const Status& status) { return Error(status.message()); }

std::string SuggestCommand(std::string_view typed) {
  std::string best;
  size_t best_distance = 3;  // farther than two edits is no suggestion
  for (const Command& c : Commands()) {
    const size_t d = EditDistance(typed, c.name);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c.name);
    }
  }
  return best;
}

int Main(int argc, char** argv) {
  try {
    const std::string_view typed = TypedCommand(argc, argv);
    bool known = typed.empty();
    for (const Command& c : Commands()) known |= c.name == typed;
    if (!known) {
      const std::string suggestion = SuggestCommand(typed);
      return Error("unknown command " + QuoteBytes(typed) +
                   (suggestion.empty() ? std::string(" (see 'peerbloom --help')")
                                       : ", did you mean '" + suggestion + "'?"));
    }
    bool help = false;
    for (int i = 1; i < argc; ++i) {
      help |= std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h";
    }
    if (typed.empty() && !help) return Error("no command given (see 'peerbloom --help')");
    CLI::App app{"peerbloom: who holds this URL, across a cache cluster"};
    app.require_subcommand(1);
    app.fallthrough();
    GlobalOptions global;
    app.add_flag("--json", global.json, "machine-readable output");
    app.add_option("--control", global.control,
                   "daemon control endpoint (default: from --config, $PEERBLOOM_CONTROL, or "
                   "ipc:///var/lib/peerbloom/control.sock)");
    app.add_option("--config", global.config_path, "peerbloomd config to take defaults from");
    app.add_option("--token-file", global.token_file,
                   "control token file for a tcp control endpoint (default: from --config)");
    app.add_option("--timeout", global.timeout_ms, "milliseconds to wait for the daemon")
        ->check(CLI::Range(1, 3600000));
    Runner runner;
    for (const Command& c : Commands()) {
      CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.help));
      Runner r = c.setup(sub, &global);
      sub->callback([&runner, r] { runner = r; });
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e);
      // CLI11 quotes the argument it refused as it was typed.
      return Error(EscapeBytes(e.what()));
    }
    return runner ? runner() : Error("no command given (see 'peerbloom --help')");
  } catch (const std::exception& e) {
    return Error("unexpected: " + EscapeBytes(e.what()));
  } catch (...) {
    return Error("unexpected error");
  }
}

}  // namespace peerbloom::cli
