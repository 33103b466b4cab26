// Fuzz target for the relay packet decoder and the relay state machine's handling of a
// packet. Properties: decoding never crashes or over-reads; a packet that decodes is
// canonical (it re-encodes to the same bytes, or to the known prefix for a newer version);
// the state machine takes any bytes from a link without crashing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "peerbloom/relay.h"
#include "peerbloom/relay_message.h"
#include "tests/fuzz/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  peerbloom::RelayLimits limits;
  limits.max_payload_bytes = 4096;
  limits.max_refs = 256;
  peerbloom::RelayPacket packet;
  const bool decoded = peerbloom::DecodeRelayPacket(bytes, limits, &packet).ok();
  peerbloom::fuzz::ReportVerdict(decoded);
  if (decoded) {
    std::string again;
    if (!peerbloom::EncodeRelayPacket(packet, limits, &again).ok()) std::abort();
    std::string expected(bytes.substr(0, again.size()));
    if (bytes.size() > 3 && static_cast<uint8_t>(bytes[0]) > peerbloom::kRelayVersion) {
      // A newer writer's version byte and flags this reader does not know.
      expected[0] = static_cast<char>(peerbloom::kRelayVersion);
      expected[3] = static_cast<char>(packet.data.flags);
    }
    if (again != expected) std::abort();
  }
  peerbloom::RelayOptions o;
  o.node_id = "fuzz";
  o.limits = limits;
  peerbloom::RelayNode node(o);
  node.SetLinks({"a", "b"});
  node.OnPacket("a", bytes, 1000);
  node.OnPacket("b", bytes, 1001);
  node.OnTick(5000);
  (void)node.TakeSends();
  (void)node.TakeDeliveries();
  return 0;
}
