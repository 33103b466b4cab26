// How Squid 5.7 prints a URL's host when it is a numeric address (Ip::Address::fromHost, then
// toHostStr). Squid asks getaddrinfo(host, AI_NUMERICHOST); with glibc that accepts every
// inet_aton form for IPv4 ("127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433") and inet_pton
// IPv6 with an optional "%zone". A numeric host is printed as a dotted quad, or as
// "[inet_ntop form]" for IPv6, where an IPv4-mapped address (::ffff:a.b.c.d) prints as IPv4
// because Squid stores every IPv4 address mapped. The unspecified addresses (0.0.0.0, ::,
// ::ffff:0.0.0.0) are "any" to Squid, which then keeps the host text as typed.
//
// Pure: inet_pton/inet_ntop only parse and print. Thread-safety: reentrant.
#ifndef PEERBLOOM_LIB_SQUID_NUMERIC_HOST_H_
#define PEERBLOOM_LIB_SQUID_NUMERIC_HOST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace peerbloom::squid_url {

// Longest rendering: "[" + 45 characters of IPv6 text + "]".
using HostText = std::array<char, 48>;

// When `host` (already lower-cased, brackets removed) is a numeric address other than "any",
// writes Squid's rendering to *out and returns its length; otherwise returns 0.
size_t RenderNumericHost(std::string_view host, HostText* out) noexcept;

// inet_aton as glibc's getaddrinfo applies it (no trailing bytes): 1 to 4 parts separated by
// '.', each decimal, octal (leading 0) or hex (0x), the last part filling the remaining
// bytes. The address in host order.
bool ParseInetAton(std::string_view text, uint32_t* addr) noexcept;

}  // namespace peerbloom::squid_url

#endif  // PEERBLOOM_LIB_SQUID_NUMERIC_HOST_H_
