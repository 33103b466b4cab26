// Options for tests that drive one part of the gossip engine alone.
#ifndef PEERBLOOM_TESTS_UNIT_GOSSIP_PART_OPTIONS_H_
#define PEERBLOOM_TESTS_UNIT_GOSSIP_PART_OPTIONS_H_

#include <string>

#include "peerbloom/gossip.h"

namespace peerbloom::test {

// Node `id` at "tcp://<id>:1", raw keys, defaults otherwise.
inline GossipOptions PartOptions(const std::string& id) {
  GossipOptions o;
  o.node_id = id;
  o.endpoint = "tcp://" + id + ":1";
  o.key_scheme = KeyScheme::kRaw;
  return o;
}

}  // namespace peerbloom::test

#endif  // PEERBLOOM_TESTS_UNIT_GOSSIP_PART_OPTIONS_H_
