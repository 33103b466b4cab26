// Frozen constants of the control protocol (docs/control-protocol.md): the limits both ends
// enforce and the names of the operations a daemon answers. Never change a limit or rename an
// operation: a CLI and a daemon of different versions must still understand each other.
#ifndef PEERBLOOM_CLIENT_CONTROL_PROTOCOL_H_
#define PEERBLOOM_CLIENT_CONTROL_PROTOCOL_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace peerbloom::client {

// Largest request header (JSON text) a daemon reads.
inline constexpr size_t kMaxControlHeaderBytes = 64 * 1024;
// Largest frame either end accepts (ZMQ_MAXMSGSIZE), so the largest batch body.
inline constexpr size_t kMaxControlBodyBytes = size_t{256} << 20;

// Operation names, the "op" of a request header.
inline constexpr std::string_view kOpWhoHas = "who-has";
inline constexpr std::string_view kOpAdd = "add";
inline constexpr std::string_view kOpRemove = "remove";
inline constexpr std::string_view kOpStats = "stats";
inline constexpr std::string_view kOpPeers = "peers";
inline constexpr std::string_view kOpSummary = "summary";
inline constexpr std::string_view kOpPing = "ping";
inline constexpr std::string_view kOpSnapshot = "snapshot";
inline constexpr std::string_view kOpRebuild = "rebuild";
inline constexpr std::string_view kOpReport = "report";
inline constexpr std::string_view kOpLogLevel = "log-level";
inline constexpr std::string_view kOpBroadcast = "broadcast";
inline constexpr std::string_view kOpListen = "listen";
inline constexpr std::string_view kOpPurge = "purge";

// Every operation, in the order an unknown-op error lists them.
inline constexpr std::array<std::string_view, 14> kControlOps = {
    kOpWhoHas,   kOpAdd,     kOpRemove, kOpStats,    kOpPeers,     kOpSummary, kOpPing,
    kOpSnapshot, kOpRebuild, kOpReport, kOpLogLevel, kOpBroadcast, kOpListen,  kOpPurge};

// "who-has, add, remove, stats, peers, summary, ping, snapshot, rebuild, report, log-level,
// broadcast, listen, purge".
std::string ControlOpList();

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_CONTROL_PROTOCOL_H_
