// Wire protocol between peerbloomd nodes: one self-describing frame per message.
//
// The byte layout is specified in docs/wire-protocol.md; encode and decode live in
// lib/wire/frame_codec.cc and nowhere else. Every frame starts with the same header (magic,
// protocol version, minimum reader version, message type, flags, cluster tag, sender) and
// continues with a type-specific body. Summary and delta bodies carry the summary codec's
// bytes (docs/summary-format.md) unchanged, so a relay forwards them without re-encoding.
//
// Versioning: a reader decodes a frame when frame.min_reader_version <= kWireVersion. A frame
// of a newer version may append fields after the ones this reader knows (they are skipped);
// a frame of this version must not carry trailing bytes.
//
// Thread-safety: all functions are pure; values are plain structs.
#ifndef PEERBLOOM_WIRE_H_
#define PEERBLOOM_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom {

// Frozen constants. Never renumber, never reuse a number.
inline constexpr char kWireMagic[4] = {'P', 'B', 'G', 'W'};
// Version 2 appends origin signatures to summary, delta and digest bodies (docs/security.md,
// "Signed origins"); version 3 appends the origins' heartbeat signatures to digest bodies
// (docs/gossip.md, "Who speaks for a node's liveness"); version 4 appends the entries'
// detector flags to digest bodies and adds the probe message (docs/gossip.md, "Probe failure
// detection"); version 5 appends to summary, prune and graft frames their number on the
// sender's stream to the receiver and adds the resend message (docs/gossip.md, "Lost frames on a
// link"); version 6 adds the header flag NO_PUSH (docs/gossip.md, "Links that stop carrying
// deltas"); version 7 appends to probe bodies the versions of other origins without their filter
// digest (docs/gossip.md, "Probe failure detection"). Older readers skip what they do not know, so
// the minimum reader stays 1; probe frames go only to members that showed they run version 4,
// resend frames only to senders of numbered frames, versions without digest only to members that
// showed they run version 7; a reader skips a header flag it does not know in a frame of a newer
// version (NO_PUSH).
inline constexpr uint8_t kWireVersion = 7;
inline constexpr uint8_t kWireMinReaderVersion = 1;

enum class WireType : uint8_t {
  kDigest = 1,          // membership and anti-entropy: (origin, epoch, version, heartbeat, ...)
  kFullSummary = 2,     // one origin's full summary (summary codec bytes)
  kDelta = 3,           // one origin's delta (summary codec bytes)
  kRequestFull = 4,     // "send me the full summary of these (origin, epoch)"
  kBroadcast = 5,       // a relay packet (docs/relay.md): broadcast payloads and their repair
  kPrune = 6,           // "stop pushing deltas of these origins to me on this link"
  kGraft = 7,           // "push deltas of these origins to me again on this link"
  kImportedDigest = 8,  // Squid Cache Digests imported by some daemon (docs/gossip.md)
  kProbe = 9,           // version 4: ping, ack or ping-req of the probe failure detector
  kResend = 10,         // version 5: "send me again these frames of your stream to me"
};
std::string_view WireTypeName(WireType type) noexcept;

// Header flags. Frozen bits.
// The sender chose the receiver as a neighbour (the receiver keeps the reverse link).
inline constexpr uint8_t kWireFlagNeighbour = 0x01;
// The sender's endpoint and public key follow its node id. Frames without it are smaller
// (deltas, the bulk of the traffic, omit it); the receiver keeps what it learned before.
inline constexpr uint8_t kWireFlagContact = 0x02;
// The sender no longer links to the receiver (it was shuffled out): the receiver drops the
// reverse link now instead of when its lease runs out.
inline constexpr uint8_t kWireFlagUnlink = 0x04;
// Version 4: the sender runs the probe failure detector (its own word, on its own link).
inline constexpr uint8_t kWireFlagProbes = 0x08;
// Version 6: the sender does not push deltas to the receiver (it did not choose the receiver,
// and the receiver is outside its cap on inbound links that carry deltas, or not linked): the
// receiver does not count on this link for deltas. Without it, a version 6 sender pushes.
inline constexpr uint8_t kWireFlagNoPush = 0x10;
inline constexpr uint8_t kWireKnownFlags =
    kWireFlagNeighbour | kWireFlagContact | kWireFlagUnlink | kWireFlagProbes | kWireFlagNoPush;

// Digest body flags. Frozen bits.
inline constexpr uint8_t kDigestReplyWanted = 0x01;  // answer with your own full digest
inline constexpr uint8_t kDigestComplete = 0x02;     // lists every member the sender knows
// Version 4: the body lists only the sender and carries `checksum`, a hash of every entry the
// sender knows (TableChecksum): the receiver answers with a complete exchange only when its
// own differs. Never set in frames of older versions.
inline constexpr uint8_t kDigestChecksum = 0x04;

// Summary signature flags (version 2). Frozen bits.
inline constexpr uint8_t kSigHasState = 0x01;  // a 64-byte state signature follows
inline constexpr uint8_t kSigHasDelta = 0x02;  // a 64-byte delta signature follows

// Sizes.
inline constexpr size_t kWireSignatureBytes = 64;
inline constexpr size_t kMaxEndpointBytes = 255;
inline constexpr size_t kCurveKeyZ85Bytes = 40;

// The first 8 bytes (little-endian) of SHA-256("peerbloom cluster tag v1" || 0x00 || secret).
// Frames whose tag differs from the receiver's are refused, so two clusters sharing a network
// never mix. It names the cluster, it does not authenticate anyone (CURVE does).
uint64_t ClusterTag(std::string_view cluster_secret);

struct WireHeader {
  // The encoder writes this version's layout, clamped to 1..kWireVersion (older layouts are
  // for tests of mixed versions and canonical re-encoding of what an older node wrote).
  uint8_t version = kWireVersion;
  uint8_t min_reader_version = kWireMinReaderVersion;  // set by the encoder
  WireType type = WireType::kDigest;
  uint8_t flags = 0;
  uint64_t cluster_tag = 0;
  std::string sender_id;          // IsValidNodeId
  uint64_t sender_epoch = 0;      // the sender's current epoch (0 before its first summary)
  uint64_t sender_heartbeat = 0;  // the sender's heartbeat counter: every frame is a beat
  // Only with kWireFlagContact (empty otherwise):
  std::string sender_endpoint;    // 1..255 printable ASCII bytes, no spaces
  std::string sender_public_key;  // empty or 40 Z85 characters
};

// One member as the sender of a digest knows it.
struct DigestEntry {
  std::string origin;  // IsValidNodeId
  uint64_t epoch = 0;
  uint64_t heartbeat = 0;
  bool alive = false;          // the sender currently considers it alive
  bool has_summary = false;    // the sender holds a summary of it in this epoch
  uint64_t version = 0;        // when has_summary
  uint64_t filter_digest = 0;  // when has_summary: FilterDigest of the held summary
  bool has_contact = false;    // endpoint and public key follow
  std::string endpoint;        // when has_contact
  std::string public_key;      // when has_contact: empty or 40 Z85 characters
  // Addition (version 2). Empty, or the origin's 64-byte Ed25519 signature of
  // (kEpoch, origin, epoch): its epoch certificate, checked before a relayed epoch is adopted.
  std::string epoch_cert;
  // Addition (version 3). Empty, or the origin's 64-byte Ed25519 signature of (kBeat, origin,
  // epoch, version = heartbeat): the origin's own word that it was alive at that heartbeat.
  // A relayed heartbeat of an origin that signs its beats is taken only with it.
  std::string beat_sig;
  // Additions (version 4). `probes`: the origin runs the probe failure detector (it needs no
  // periodic heartbeats). `suspect`: the sender suspects the origin at this epoch and
  // heartbeat (its probe went unanswered); the origin refutes by signing a newer heartbeat.
  bool probes = false;
  bool suspect = false;
  bool operator==(const DigestEntry&) const = default;
};

struct DigestBody {
  uint8_t flags = 0;  // kDigestReplyWanted | kDigestComplete | kDigestChecksum
  std::vector<DigestEntry> entries;
  uint64_t checksum = 0;  // with kDigestChecksum only
  bool operator==(const DigestBody&) const = default;
};

struct FullRequest {
  std::string origin;
  uint64_t epoch = 0;
  // The version the requester holds in that epoch (0: none). The responder may answer with
  // the deltas from it to its current version when it still has them, else a full summary.
  uint64_t have_version = 0;
  bool operator==(const FullRequest&) const = default;
};

// Addition (version 4): a message of the probe failure detector.
enum class ProbeKind : uint8_t {
  kPing = 0,     // answer with an ack of `seq`
  kAck = 1,      // answers a ping of `seq`; `target` set: relayed for it (an indirect probe)
  kPingReq = 2,  // ping `target` for me and relay its ack as an ack of `seq`
};
// Probe flags. Frozen bits.
inline constexpr uint8_t kProbeSuspected = 0x01;  // ping: the sender suspects the receiver

// A version of an origin's summary the sender took lately, riding on a probe: the receiver
// repairs it (requests the missing deltas) if no delta brings it.
struct VersionAnnouncement {
  std::string origin;  // IsValidNodeId
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t filter_digest = 0;  // FilterDigest of the summary at that version
  bool operator==(const VersionAnnouncement&) const = default;
};

struct ProbeBody {
  ProbeKind kind = ProbeKind::kPing;
  uint64_t seq = 0;
  std::string target;  // kPingReq: required; kAck: empty unless relayed; kPing: empty
  uint8_t flags = 0;   // kProbeSuspected (pings only)
  std::vector<VersionAnnouncement> versions;  // at most WireLimits::max_entries
  // Addition (version 7). Versions of origins other than the sender, written without their
  // filter digest (read as 0): a reader compares digests only of the sender's own version.
  // At most WireLimits::max_entries.
  std::vector<VersionAnnouncement> relayed_versions;
  bool operator==(const ProbeBody&) const = default;
};

// Imported digest entry flags. Frozen bits.
inline constexpr uint8_t kImportHasDigest = 0x01;  // the digest bytes follow
inline constexpr uint8_t kImportWithdrawn = 0x02;  // the importer stopped importing it
// The largest digest body (128-byte header + mask) an imported digest frame carries.
inline constexpr size_t kMaxImportedDigestBytes = size_t{16} << 20;
// Imported node ids are "squid:" + the source's "host:port"; no peerbloomd may use the prefix.
inline constexpr std::string_view kImportedIdPrefix = "squid:";

// One imported Squid Cache Digest as a kImportedDigest frame carries it. Without
// kImportHasDigest it only announces (origin, version) for anti-entropy, or withdraws it.
struct ImportedDigestEntry {
  std::string origin;            // IsValidNodeId, starts with kImportedIdPrefix
  std::string importer;          // IsValidNodeId: the daemon that fetches it
  uint64_t version = 0;          // grows with every fetch; a higher one replaces a lower one
  uint64_t fetched_unix_ms = 0;  // the importer's wall clock at the fetch (informational)
  uint64_t lifetime_ms = 0;      // valid this long after receipt unless refreshed
  std::string source_url;        // IsValidEndpoint: where the importer fetches it
  uint8_t flags = 0;             // kImportHasDigest | kImportWithdrawn
  std::string_view digest;       // with kImportHasDigest: 1..kMaxImportedDigestBytes bytes
  // Addition (version 2). Empty, or the importer's 64-byte Ed25519 signature of the import
  // (SignedKind::kImport) or withdrawal (kImportWithdrawn); announcements carry none.
  std::string_view signature;
};

// A decoded frame. `summary_bytes` points into the decoded input and is valid only while it
// lives.
struct WireFrame {
  WireHeader header;
  DigestBody digest;               // kDigest
  std::string_view summary_bytes;  // kFullSummary, kDelta: summary codec bytes
  // Addition (version 2), kFullSummary and kDelta: empty or the origin's 64-byte signature of
  // the summary state after this message (SignedKind::kSummaryState), and, deltas only, empty
  // or its signature of the delta's codec bytes (SignedKind::kDelta). Views into the input.
  std::string_view state_sig;
  std::string_view delta_sig;
  std::vector<FullRequest> requests;  // kRequestFull
  std::vector<std::string> origins;   // kPrune, kGraft
  // Addition. kImportedDigest; `digest` views point into the decoded input.
  std::vector<ImportedDigestEntry> imports;
  // Addition. kBroadcast: the relay packet (DecodeRelayPacket), a view into the input.
  std::string_view relay_bytes;
  // Addition (version 4). kProbe.
  ProbeBody probe;
  // Addition (version 5). kFullSummary, kDelta, kPrune, kGraft: the frame's number on the
  // sender's stream of such frames to this receiver (1, 2, ...; 0: not numbered, an older
  // sender). A gap is a lost frame the receiver asks for again.
  uint64_t link_seq = 0;
  // Addition (version 5). kResend: numbers of the receiver's stream from this sender to send
  // again, at most kMaxResendSeqs.
  std::vector<uint64_t> resend_seqs;
};

// The most frame numbers one resend frame names (version 5).
inline constexpr size_t kMaxResendSeqs = 64;

// Caps that bound decoding of untrusted bytes.
struct WireLimits {
  // Default: 64 MiB + 64 KiB (the summary codec's default cap plus room for the header).
  size_t max_frame_bytes = (size_t{64} << 20) + (size_t{64} << 10);
  // Default: 4096. Digest entries, full-summary requests and pruned origins per frame.
  size_t max_entries = 4096;
};

// Encoders validate every field they write (InvalidArgument otherwise) and replace *out.
// The header's type is set by each encoder; version fields are always the current ones.
Status EncodeDigestFrame(const WireHeader& header, const DigestBody& body, std::string* out);
// type: kFullSummary or kDelta. Signatures are empty or kWireSignatureBytes; a full summary
// carries no delta signature. `link_seq` (version 5 or more, 0: none) numbers the frame on the
// sender's stream to its receiver.
Status EncodeSummaryFrame(const WireHeader& header, WireType type, std::string_view codec_bytes,
                          std::string* out, std::string_view state_sig = {},
                          std::string_view delta_sig = {}, uint64_t link_seq = 0);
// Addition (version 5). 1..kMaxResendSeqs frame numbers, each at least 1; the header's version
// must be 5 or more.
Status EncodeResendFrame(const WireHeader& header, const std::vector<uint64_t>& seqs,
                         std::string* out);
Status EncodeRequestFullFrame(const WireHeader& header, const std::vector<FullRequest>& requests,
                              std::string* out);
// type: kPrune or kGraft. `link_seq` as for summary frames (version 5 or more, 0: none).
Status EncodeOriginsFrame(const WireHeader& header, WireType type,
                          const std::vector<std::string>& origins, std::string* out,
                          uint64_t link_seq = 0);

// Addition. At least one entry; entries are validated (ids, url, flags, digest length) but
// the digest bytes are not decoded here (the engine does, with the Squid decoder).
Status EncodeImportedDigestFrame(const WireHeader& header,
                                 const std::vector<ImportedDigestEntry>& entries, std::string* out);

// Addition. A broadcast frame carrying one encoded relay packet (1 byte or more; the relay
// decoder checks its contents).
Status EncodeBroadcastFrame(const WireHeader& header, std::string_view relay_packet,
                            std::string* out);

// Addition (version 4). A probe frame; the header's version must be 4 or more.
Status EncodeProbeFrame(const WireHeader& header, const ProbeBody& probe, std::string* out);

// Decodes one frame. Corruption for malformed bytes, NotSupported for an unknown message type
// or a frame that needs a newer reader, ResourceExhausted for frames or lists over the limits.
Status DecodeFrame(std::string_view frame, const WireLimits& limits, WireFrame* out);

// Checks used by the encoder and the decoder.
bool IsValidEndpoint(std::string_view endpoint) noexcept;
bool IsValidPublicKey(std::string_view key) noexcept;  // empty or 40 Z85 characters

}  // namespace peerbloom

#endif  // PEERBLOOM_WIRE_H_
