#include "peerbloom/client/control_protocol.h"

#include <gtest/gtest.h>

namespace peerbloom::client {
namespace {

// Frozen: clients and daemons of other versions depend on these.
TEST(ControlProtocol, LimitsAndOperations) {
  EXPECT_EQ(kMaxControlHeaderBytes, 65536u);
  EXPECT_EQ(kMaxControlBodyBytes, size_t{256} << 20);
  EXPECT_EQ(ControlOpList(),
            "who-has, add, remove, stats, peers, summary, ping, snapshot, rebuild, report, "
            "log-level, broadcast, listen, purge");
}

}  // namespace
}  // namespace peerbloom::client
