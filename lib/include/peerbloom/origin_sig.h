// Signed origins: Ed25519 signatures by the node a message is about, so a node that relays
// it can neither forge nor alter it (docs/security.md, "Signed origins").
//
// Every signature covers one domain-separated message:
//   "peerbloom origin sig v1" 0x00 || cluster_tag u64 || kind u8 || origin str8
//   || epoch u64 || base_version u64 || version u64 || SHA-256(body) (32 bytes)
// (integers little-endian, str8 a length byte and the bytes). The kind keeps a signature of
// one message from passing for another; the cluster tag keeps it inside one cluster.
//
// Keys are raw 32-byte Ed25519 keys (RFC 8032); Z85 text forms live with the key files
// (peerbloom/client/curve_keys.h). Signatures are 64 bytes.
//
// Thread-safety: functions are pure; a SignKeyRing or OriginSigner is immutable once built
// and may be shared between threads.
#ifndef PEERBLOOM_ORIGIN_SIG_H_
#define PEERBLOOM_ORIGIN_SIG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"
#include "peerbloom/summary.h"

namespace peerbloom {

inline constexpr size_t kSignKeyBytes = 32;
inline constexpr size_t kSignatureBytes = 64;
using Sha256Hash = std::array<uint8_t, 32>;

// What a signature vouches for. Frozen numbering: never renumber, never reuse.
enum class SignedKind : uint8_t {
  kSummaryState = 1,     // the whole summary of (origin, epoch, version): StateHash
  kDelta = 2,            // a delta base_version -> version: SHA-256 of its codec bytes
  kEpoch = 3,            // an epoch certificate: origin runs incarnation `epoch`
  kImport = 4,           // an imported Squid digest (the importer signs)
  kImportWithdrawn = 5,  // the importer stopped importing it
  kBroadcast = 6,        // a relay broadcast: version = message id, SHA-256 of RelaySignedBytes
  kBeat = 7              // a heartbeat: origin is alive in `epoch` at heartbeat `version`
};

struct OriginClaim {
  SignedKind kind = SignedKind::kSummaryState;
  std::string_view origin;  // the node that signs (the importer for imports)
  uint64_t epoch = 0;
  uint64_t base_version = 0;  // deltas; 0 otherwise
  uint64_t version = 0;
  Sha256Hash body_hash{};  // SHA-256 of the kind's body; all zero when it has none
};

Sha256Hash Sha256(std::string_view bytes);
// The signed message of `claim` in cluster `cluster_tag`.
std::string OriginSigMessage(uint64_t cluster_tag, const OriginClaim& claim);

// An encoding-independent hash of a summary's content: SHA-256 over
//   "peerbloom summary state v1" 0x00 || key_scheme u8 || hash_scheme u8 || k u8
//   || log2_bits u8 || multiplier u32 || estimated_items u64 || filter words (u64 LE each)
// Any holder re-encoding the summary (in any body encoding) reproduces it. O(filter).
Sha256Hash StateHash(const Summary& summary);

// A fresh Ed25519 key pair (raw 32-byte keys).
Status GenerateSignKeyPair(std::string* public_key, std::string* secret_key);
// The public key of a raw secret key. InvalidArgument unless it is 32 bytes.
Status SignPublicKeyOf(std::string_view secret_key, std::string* public_key);

// Signs claims with one node's secret key.
class OriginSigner {
 public:
  // InvalidArgument unless `secret_key` is 32 bytes.
  static Status Create(std::string_view secret_key, std::unique_ptr<OriginSigner>* out);
  ~OriginSigner();
  OriginSigner(const OriginSigner&) = delete;
  OriginSigner& operator=(const OriginSigner&) = delete;

  // 64 bytes into *signature. NotSupported only when OpenSSL fails.
  Status Sign(uint64_t cluster_tag, const OriginClaim& claim, std::string* signature) const;
  const std::string& public_key() const { return public_key_; }

 private:
  OriginSigner() = default;
  struct Key;
  std::unique_ptr<Key> key_;
  std::string public_key_;
};

enum class SigVerdict : uint8_t {
  kValid = 0,    // signed by one of the origin's keys
  kNoKey = 1,    // no sign key is listed for the origin
  kMissing = 2,  // the origin has keys but the message carries no signature
  kInvalid = 3,  // a signature that none of the origin's keys made
};
std::string_view SigVerdictName(SigVerdict verdict) noexcept;

// The sign keys of every node (several per node while keys rotate), parsed once.
class SignKeyRing {
 public:
  SignKeyRing();
  ~SignKeyRing();
  SignKeyRing(const SignKeyRing&) = delete;
  SignKeyRing& operator=(const SignKeyRing&) = delete;

  // Adds a raw 32-byte public key for `node_id`. InvalidArgument for a bad key.
  Status Add(const std::string& node_id, std::string_view public_key);
  bool Has(std::string_view node_id) const;
  size_t size() const { return keys_.size(); }
  // Checks `signature` (empty: none) over `claim` against the keys of claim.origin.
  SigVerdict Verify(uint64_t cluster_tag, const OriginClaim& claim,
                    std::string_view signature) const;

 private:
  struct Key;
  std::map<std::string, std::vector<std::unique_ptr<Key>>, std::less<>> keys_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_ORIGIN_SIG_H_
