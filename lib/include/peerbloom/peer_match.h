// PeerMatch: one node that probably holds a key, as who-has answers it.
#ifndef PEERBLOOM_PEER_MATCH_H_
#define PEERBLOOM_PEER_MATCH_H_

#include <cstdint>
#include <string>

namespace peerbloom {

struct PeerMatch {
  std::string node_id;
  std::string endpoint;
  int64_t summary_age_ms = 0;  // now minus when its current summary (version) was received
  bool imported = false;       // a Squid digest imported by some daemon, not a peerbloomd
};

}  // namespace peerbloom

#endif  // PEERBLOOM_PEER_MATCH_H_
