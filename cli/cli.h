// The peerbloom CLI: a table of subcommands, each a setup function that registers its options
// on a CLI11 subcommand and returns the function that runs it.
//
// Exit codes: 0 success (for who-has and query: some node / the summary claims a key),
// 1 nothing claimed, 2 error. Errors print "peerbloom: error: <message>" on stderr.
#ifndef PEERBLOOM_CLI_CLI_H_
#define PEERBLOOM_CLI_CLI_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom::cli {

inline constexpr int kExitClaimed = 0;
inline constexpr int kExitNone = 1;
inline constexpr int kExitError = 2;

struct GlobalOptions {
  bool json = false;
  std::string control;      // --control, else from --config, else $PEERBLOOM_CONTROL
  std::string config_path;  // --config: a peerbloomd config to take defaults from
  std::string token_file;   // --token-file, else --config's control_token_file
  int timeout_ms = 5000;
};

using Runner = std::function<int()>;

struct Command {
  std::string_view name;
  std::string_view help;
  Runner (*setup)(CLI::App* sub, const GlobalOptions* global);
};

// The table, in the order `peerbloom --help` lists it.
const std::vector<Command>& Commands();

// Prints "peerbloom: error: <message>" and returns kExitError. Values in messages are quoted
// with QuoteBytes (peerbloom/escape.h); a message that is still not UTF-8 is escaped whole.
int Error(std::string_view message);
int Error(const Status& status);

// The closest command name to `typed` by edit distance, empty when nothing is close.
std::string SuggestCommand(std::string_view typed);

// The control endpoint: --control, else --config's `control`, else $PEERBLOOM_CONTROL, else
// ipc:///var/lib/peerbloom/control.sock.
Status ResolveControl(const GlobalOptions& g, std::string* endpoint);
// The control token to send: read from --token-file, else from --config's
// `control_token_file` when the endpoint is that config's; empty when neither names one.
Status ResolveToken(const GlobalOptions& g, const std::string& endpoint, std::string* token);

// main(): parse, dispatch, map exceptions to exit codes.
int Main(int argc, char** argv);

// Subcommand setups (online.cc, top.cc, offline.cc, build_tools.cc, squid_keys.cc,
// squid_routing.cc).
Runner SetUpWhoHas(CLI::App* sub, const GlobalOptions* global);
Runner SetUpAdd(CLI::App* sub, const GlobalOptions* global);
Runner SetUpRemove(CLI::App* sub, const GlobalOptions* global);
Runner SetUpStats(CLI::App* sub, const GlobalOptions* global);
Runner SetUpPeers(CLI::App* sub, const GlobalOptions* global);
Runner SetUpTop(CLI::App* sub, const GlobalOptions* global);
Runner SetUpRebuild(CLI::App* sub, const GlobalOptions* g);
Runner SetUpSummary(CLI::App* sub, const GlobalOptions* global);
Runner SetUpLogLevel(CLI::App* sub, const GlobalOptions* global);
Runner SetUpCalc(CLI::App* sub, const GlobalOptions* global);
Runner SetUpBuild(CLI::App* sub, const GlobalOptions* global);
Runner SetUpQuery(CLI::App* sub, const GlobalOptions* global);
Runner SetUpDedup(CLI::App* sub, const GlobalOptions* global);
Runner SetUpInspect(CLI::App* sub, const GlobalOptions* global);
Runner SetUpSquidKeys(CLI::App* sub, const GlobalOptions* global);
Runner SetUpKeygen(CLI::App* sub, const GlobalOptions* global);
Runner SetUpBench(CLI::App* sub, const GlobalOptions* global);
Runner SetUpSquidHelper(CLI::App* sub, const GlobalOptions* global);  // squid_routing.cc
Runner SetUpReport(CLI::App* sub, const GlobalOptions* global);
Runner SetUpSquidOutcomes(CLI::App* sub, const GlobalOptions* global);
Runner SetUpBroadcast(CLI::App* sub, const GlobalOptions* global);  // relay_cmd.cc
Runner SetUpListen(CLI::App* sub, const GlobalOptions* global);
Runner SetUpPurge(CLI::App* sub, const GlobalOptions* global);

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_CLI_H_
