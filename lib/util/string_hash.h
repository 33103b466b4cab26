// Hashed containers keyed by std::string that are looked up with a std::string_view (or a
// std::string) without building a key: node ids are looked up once per digest entry, and a
// tree of strings spent most of a large simulated cluster's time in comparisons.
#ifndef PEERBLOOM_LIB_UTIL_STRING_HASH_H_
#define PEERBLOOM_LIB_UTIL_STRING_HASH_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace peerbloom {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_UTIL_STRING_HASH_H_
