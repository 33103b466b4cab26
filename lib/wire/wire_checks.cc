// Field checks shared by the encoder and the decoder, and the cluster tag.
#include <openssl/evp.h>

#include <string>

#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

// The Z85 alphabet (ZeroMQ RFC 32): 85 printable characters.
constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

}  // namespace

uint64_t ClusterTag(std::string_view cluster_secret) {
  // The label separates this use of the secret from the index-hash key's.
  std::string input = "peerbloom cluster tag v1";
  input.push_back('\0');
  input.append(cluster_secret);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  EVP_Digest(input.data(), input.size(), digest, &digest_len, EVP_sha256(), nullptr);
  uint64_t tag = 0;
  for (int i = 0; i < 8; ++i) tag |= uint64_t{digest[i]} << (8 * i);
  return tag;
}

bool IsValidEndpoint(std::string_view endpoint) noexcept {
  if (endpoint.empty() || endpoint.size() > kMaxEndpointBytes) return false;
  for (char c : endpoint) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

bool IsValidPublicKey(std::string_view key) noexcept {
  if (key.empty()) return true;
  if (key.size() != kCurveKeyZ85Bytes) return false;
  for (char c : key) {
    if (kZ85Alphabet.find(c) == std::string_view::npos) return false;
  }
  return true;
}

}  // namespace peerbloom
