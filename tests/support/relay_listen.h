// Reads a node's broadcast deliveries through the `listen` control operation.
#ifndef PEERBLOOM_TESTS_SUPPORT_RELAY_LISTEN_H_
#define PEERBLOOM_TESTS_SUPPORT_RELAY_LISTEN_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {

struct Listened {
  json entry;           // the delivery as `listen` lists it (origin, id, hops, kind, seq...)
  std::string payload;  // its bytes
};

// Every delivery the node made since it started, oldest first (`listen` from cursor 0).
// A failed call or missed deliveries fail the test.
inline std::vector<Listened> ListenAll(Node* node) {
  std::vector<Listened> out;
  uint64_t cursor = 0;
  while (true) {
    json reply;
    std::string body;
    if (!node->Call({{"op", "listen"}, {"after", cursor}}, "", &reply, &body)) {
      ADD_FAILURE() << "listen failed at " << node->name();
      return out;
    }
    EXPECT_EQ(reply["missed"], 0);
    if (reply["deliveries"].empty()) return out;
    size_t at = 0;
    for (const json& d : reply["deliveries"]) {
      const size_t n = d["bytes"].get<size_t>();
      out.push_back({d, body.substr(at, n)});
      at += n;
      cursor = d["seq"];
    }
  }
}

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_RELAY_LISTEN_H_
