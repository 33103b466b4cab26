// Deterministic keys for filter tests: key id -> key bytes -> the real index hash.
#ifndef PEERBLOOM_TESTS_UNIT_FILTER_FILTER_TEST_KEYS_H_
#define PEERBLOOM_TESTS_UNIT_FILTER_FILTER_TEST_KEYS_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "peerbloom/hash.h"

namespace peerbloom::testing {

// The hasher every filter test uses: keyed from a fixed test secret.
inline const IndexHasher& TestHasher() {
  static const IndexHasher hasher(DeriveIndexKey("filter test secret"));
  return hasher;
}

// The index hash of the 8 little-endian bytes of `id`. Distinct ids are distinct keys.
inline KeyHash HashOfId(uint64_t id) {
  char bytes[sizeof(id)];
  std::memcpy(bytes, &id, sizeof(id));
  return TestHasher().Hash(std::string_view(bytes, sizeof(bytes)));
}

// Hashes of ids first, first + 1, ..., first + count - 1.
inline std::vector<KeyHash> HashesOfIds(uint64_t first, uint64_t count) {
  std::vector<KeyHash> hashes;
  hashes.reserve(count);
  for (uint64_t id = first; id < first + count; ++id) hashes.push_back(HashOfId(id));
  return hashes;
}

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_UNIT_FILTER_FILTER_TEST_KEYS_H_
