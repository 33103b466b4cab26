// CURVE key files: the node's key pair (written by `peerbloom keygen`) and the allow-list of
// peer public keys. Keys are Z85 text, 40 characters for 32 bytes.
//
// Key file (mode 0600, refused when group or others may read it):
//   # comment lines
//   public-key = <40 Z85 characters>
//   secret-key = <40 Z85 characters>
//   sign-public-key = <40 Z85 characters>   (optional: the node's Ed25519 key pair, which
//   sign-secret-key = <40 Z85 characters>    signs what it originates; docs/security.md)
// authorized_keys (format 2): one line per admitted key,
//   CURVE-KEY NODE-ID [sign=Z85] [endpoint=tcp://HOST:PORT] [# comment]
// binding the CURVE public key to the node id it may speak for. Blank lines and lines
// starting with '#' are ignored. Several lines may name the same node id (key rotation).
#ifndef PEERBLOOM_CLIENT_CURVE_KEYS_H_
#define PEERBLOOM_CLIENT_CURVE_KEYS_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom::client {

inline constexpr size_t kZ85KeyChars = 40;

struct CurveKeyPair {
  std::string public_key;  // Z85
  std::string secret_key;  // Z85
  // Ed25519 signing pair (Z85 of the raw 32-byte keys); both empty when the file has none.
  std::string sign_public_key;
  std::string sign_secret_key;
};

// Whether `text` is 40 Z85 characters that decode to a 32-byte key.
bool IsZ85Key(std::string_view text);
Status GenerateCurveKeyPair(CurveKeyPair* out);
// Fills out->sign_public_key and out->sign_secret_key with a fresh Ed25519 pair.
Status GenerateSignKeys(CurveKeyPair* out);
// Z85 text of a 32-byte key, and back. InvalidArgument for anything else.
std::string Z85Encode32(std::string_view raw);
Status Z85Decode32(std::string_view text, std::string* raw);
// The public key of a secret key.
Status PublicKeyOf(const std::string& secret_key, std::string* public_key);

// Writes `path` (0600, the pair) and `path`.pub (0644, the public key alone). Refuses to
// overwrite an existing file unless `overwrite`.
Status WriteKeyFile(const std::string& path, const CurveKeyPair& pair, bool overwrite);
// Reads the pair and, when present, the sign keys (checked: the public one must match).
Status ReadKeyFile(const std::string& path, CurveKeyPair* out);
// Derives (and checks) pair->sign_public_key from sign_secret_key; Ok when both are empty.
Status CheckSignKeys(const std::string& path, CurveKeyPair* pair);
// The authorized_keys line of the pair, to complete with the node id: "KEY NODE-ID" and, with
// sign keys, " sign=SIGNKEY". (The `.pub` file holds the CURVE public key alone, as seed
// entries and scripts read it.)
std::string PublicLine(const CurveKeyPair& pair);
// Adds fresh sign keys to an existing key file (kept otherwise as it was). AlreadyExists-like
// InvalidArgument when it has them.
Status AddSignKeys(const std::string& path, CurveKeyPair* out);
// One line of authorized_keys.
struct AuthorizedKey {
  std::string curve_key;  // Z85, 40 chars
  std::string node_id;    // the node this key speaks for
  std::string sign_key;   // Z85 Ed25519 public key (40 chars), empty when not given
  std::string endpoint;   // contact endpoint, empty when not given
  size_t line = 0;
};

// Parses authorized_keys text, in file order. Errors name "file:line:". A CURVE key may
// appear on one line only; a node id on several (each of its keys is admitted).
Status ParseAuthorizedKeys(std::string_view text, const std::string& path,
                           std::vector<AuthorizedKey>* out);
Status ReadAuthorizedKeys(const std::string& path, std::vector<AuthorizedKey>* out);
// Whether `endpoint` is "tcp://HOST:PORT" with a non-empty host and a port in 1..65535.
bool IsContactEndpoint(std::string_view endpoint);

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_CURVE_KEYS_H_
