// MD5 (RFC 1321) of short messages, for Squid's store keys and nginx's cache file names. Not
// for security: Squid and nginx key their caches by MD5, so the cluster must too. OpenSSL's
// EVP interface costs more per message than the compression of the one or two blocks a URL
// takes (provider dispatch, context reset, cleansing), and keying is on the path of every
// who-has, add and remove.
#ifndef PEERBLOOM_MD5_H_
#define PEERBLOOM_MD5_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace peerbloom {

using Md5Digest = std::array<uint8_t, 16>;

// MD5 of `data`. Thread-safety: pure function.
Md5Digest Md5(std::string_view data) noexcept;

// MD5 of the byte `prefix` followed by `data`. Thread-safety: pure function.
Md5Digest Md5WithPrefix(uint8_t prefix, std::string_view data) noexcept;

// out[i] = Md5WithPrefix(prefix, data[i]) for i < kMd5Lanes. MD5 is one long chain of
// dependent additions, so a single digest leaves most of the CPU idle; the lanes' chains are
// interleaved and run side by side (about twice the digests per second for URLs of up to 118
// bytes; longer ones are hashed one at a time).
inline constexpr size_t kMd5Lanes = 4;
void Md5WithPrefixLanes(uint8_t prefix, const std::string_view* data, Md5Digest* out) noexcept;

}  // namespace peerbloom

#endif  // PEERBLOOM_MD5_H_
