// Relay packets: the body of a wire frame of type 5 (broadcast). docs/relay.md specifies the
// byte layout; encode and decode live in lib/relay/relay_codec.cc and nowhere else.
//
// A packet is one of four kinds: DATA carries one broadcast message (origin, id, hop limit,
// hops so far, the in-packet filter of visited nodes, the payload and room for an origin
// signature); IHAVE announces messages without their payload; GRAFT asks a neighbour for
// messages and to push on the link again; PRUNE asks it to stop pushing payloads on the link.
//
// Versioning: a reader decodes a packet when min_reader_version <= kRelayVersion. A packet of
// a newer version may carry bytes after the fields this reader knows (skipped); a packet of
// this version must not.
//
// Thread-safety: all functions are pure; values are plain structs.
#ifndef PEERBLOOM_RELAY_MESSAGE_H_
#define PEERBLOOM_RELAY_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/status.h"

namespace peerbloom {

// Frozen constants. Never renumber, never reuse a number.
inline constexpr uint8_t kRelayVersion = 1;
inline constexpr uint8_t kRelayMinReaderVersion = 1;

enum class RelayKind : uint8_t {
  kData = 1,   // one message with its payload
  kIHave = 2,  // "I hold these messages": (origin, id, hops) entries
  kGraft = 3,  // "send me these messages, and push payloads on this link again"
  kPrune = 4,  // "stop pushing payloads on this link" (announcements continue)
};

// DATA flags. Frozen bits.
// A signature by the origin's key follows the payload. It covers every field but `hops`
// and the filter, which relays change (docs/relay.md).
inline constexpr uint8_t kRelayFlagSigned = 0x01;
inline constexpr uint8_t kRelayKnownFlags = kRelayFlagSigned;

// Sizes.
inline constexpr size_t kRelaySignatureBytes = 64;  // Ed25519
inline constexpr size_t kMaxRelayFilterBytes = 1024;
inline constexpr unsigned kMaxRelayFilterHashes = 16;
inline constexpr uint32_t kMaxRelayHopLimit = 65535;

// One broadcast message as a DATA packet carries it.
struct RelayData {
  uint8_t flags = 0;
  std::string origin;      // IsValidNodeId
  uint64_t id = 0;         // the origin's sequence number for it
  uint32_t hop_limit = 0;  // 1..kMaxRelayHopLimit
  uint32_t hops = 0;       // links travelled so far, <= hop_limit
  uint8_t filter_k = 1;    // probes per node id, 1..kMaxRelayFilterHashes
  std::string filter;      // the visited-node filter, 1..kMaxRelayFilterBytes bytes
  std::string payload;     // at most RelayLimits::max_payload_bytes
  std::string signature;   // kRelaySignatureBytes with kRelayFlagSigned, empty otherwise
  bool operator==(const RelayData&) const = default;
};

// One message named by an IHAVE (with hops) or a GRAFT (hops 0).
struct RelayRef {
  std::string origin;
  uint64_t id = 0;
  uint32_t hops = 0;
  bool operator==(const RelayRef&) const = default;
};

struct RelayPacket {
  RelayKind kind = RelayKind::kData;
  RelayData data;              // kData
  std::vector<RelayRef> refs;  // kIHave, kGraft
  bool operator==(const RelayPacket&) const = default;
};

// Caps that bound decoding of untrusted bytes.
struct RelayLimits {
  // Default: 64 KiB.
  size_t max_payload_bytes = size_t{64} << 10;
  // Default: 4096. Entries of one IHAVE or GRAFT.
  size_t max_refs = 4096;
};

// Encoders validate every field (InvalidArgument otherwise) and replace *out.
Status EncodeRelayPacket(const RelayPacket& packet, const RelayLimits& limits, std::string* out);
// Corruption for malformed bytes, NotSupported for a packet that needs a newer reader,
// ResourceExhausted for a payload or a list over the limits.
Status DecodeRelayPacket(std::string_view bytes, const RelayLimits& limits, RelayPacket* out);

// The bytes an origin signature covers: the DATA packet with hops 0 and an all-zero filter
// of the same size, without the signature.
Status RelaySignedBytes(const RelayData& data, std::string* out);

// The in-packet filter of visited nodes: a Bloom filter of `filter.size() * 8` bits with
// `filter_k` probes per node id. Positions are salted by the message (origin, id), so two
// node ids that collide in one message almost never collide in the next: a false positive
// is an independent event per message, not a fixed blind spot of the topology.
struct VisitedFilterSize {
  size_t bytes = 1;
  unsigned k = 1;
};
// The smallest filter that holds `hop_limit` node ids (the origin and each relay that
// forwards; the node at the hop limit forwards nothing) at false-positive rate `fp_rate`:
//   m = -n ln p / (ln 2)^2 bits, k = round(m / n * ln 2)   (Bloom 1970; Broder, Mitzenmacher)
// capped at kMaxRelayFilterBytes (the rate then exceeds fp_rate: ExpectedFpRate says how far).
// REQUIRES: 0 < fp_rate < 1.
VisitedFilterSize SizeVisitedFilter(uint32_t hop_limit, double fp_rate) noexcept;
// (1 - e^(-k n / m))^k for n ids in m bits.
double ExpectedFpRate(size_t bytes, unsigned k, uint32_t ids) noexcept;

// The salt of a message's filter positions: keyed by the cluster's index key.
uint64_t VisitedFilterSalt(const SipKey& key, std::string_view origin, uint64_t id) noexcept;
// Adds / tests a node (its IndexHasher hash) in a filter. REQUIRES: !filter.empty().
void VisitedFilterAdd(const KeyHash& node, uint64_t salt, unsigned k, std::string* filter) noexcept;
bool VisitedFilterMayContain(const KeyHash& node, uint64_t salt, unsigned k,
                             std::string_view filter) noexcept;

}  // namespace peerbloom

#endif  // PEERBLOOM_RELAY_MESSAGE_H_
