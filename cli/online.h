// Shared by the commands that talk to the local daemon (online.cc, top.cc).
#ifndef PEERBLOOM_CLI_ONLINE_H_
#define PEERBLOOM_CLI_ONLINE_H_

#include <memory>

#include "cli/cli.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/status.h"

namespace peerbloom::cli {

// A client of the daemon's control endpoint: --control, else --config's, else
// $PEERBLOOM_CONTROL, else the packaged default. IOError at once for an ipc socket that does
// not exist.
Status Connect(const GlobalOptions& g, std::unique_ptr<client::ControlClient>* out);

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_ONLINE_H_
