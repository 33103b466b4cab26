// The relay's seen messages kept across a restart: `<data_dir>/relay.seen` (docs/relay.md,
// "Replays across a restart"). A restarted node that forgot what it had seen would deliver a
// replayed genuine message again, a purge among them, and run its purge command again.
//
// Text, version 1:
//   peerbloom-relay-seen 1
//   ORIGIN-HEX FLOOR [LO-HI ...]     one line per origin: every id <= FLOOR and every id in
//                                    an inclusive range LO-HI reads as seen
// ORIGIN-HEX is the origin's bytes in lower-case hex (origins come from the wire); numbers
// are decimal. Anything else is refused whole, with the line that broke it.
//
// Thread-safety: pure functions.
#ifndef PEERBLOOM_DAEMON_RELAY_RELAY_SEEN_FILE_H_
#define PEERBLOOM_DAEMON_RELAY_RELAY_SEEN_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/relay.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

inline constexpr char kRelaySeenFile[] = "relay.seen";
// A file larger than this is refused rather than read (a seen set holds at most 2^20 ids).
inline constexpr size_t kMaxRelaySeenBytes = size_t{64} << 20;

std::string EncodeRelaySeen(const std::vector<SeenSet::SavedOrigin>& saved);
// Corruption "relay.seen line N: <why>" for anything but version 1 as above.
Status DecodeRelaySeen(std::string_view text, std::vector<SeenSet::SavedOrigin>* saved);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_RELAY_SEEN_FILE_H_
