#include <openssl/evp.h>

#include <string>

#include "peerbloom/hash.h"

namespace peerbloom {

SipKey DeriveIndexKey(std::string_view cluster_secret) {
  // A domain-separation label keeps this key distinct from any other use of the secret.
  std::string input = "peerbloom index key v1";
  input.push_back('\0');
  input.append(cluster_secret);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  EVP_Digest(input.data(), input.size(), digest, &digest_len, EVP_sha256(), nullptr);
  SipKey key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = digest[i];
  return key;
}

}  // namespace peerbloom
