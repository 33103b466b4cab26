// Shared by the commands that talk to the local daemon (online.cc, top.cc).
#ifndef PEERBLOOM_CLI_ONLINE_H_
#define PEERBLOOM_CLI_ONLINE_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/status.h"

namespace peerbloom::cli {

// A client of the daemon's control endpoint: --control, else --config's, else
// $PEERBLOOM_CONTROL, else the packaged default. IOError at once for an ipc socket that does
// not exist.
Status Connect(const GlobalOptions& g, std::unique_ptr<client::ControlClient>* out);
// Connect, then one request with `body`: the commands that ask the daemon once.
Status CallOnce(const GlobalOptions& g, const nlohmann::json& request, const std::string& body,
                nlohmann::json* reply, std::string* reply_body);

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_ONLINE_H_
