#include "lib/squid/numeric_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstring>

namespace peerbloom::squid_url {
namespace {

bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }

int DigitValue(char c) noexcept {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// One part of an inet_aton address, as strtoul(base 0) reads it from text[*i]: "0x" and a hex
// digit start hex, another leading '0' starts octal. Stops at the first byte that is not a
// digit of the base (the caller checks what follows). False past 32 bits, which inet_aton
// refuses.
bool ParsePart(std::string_view text, size_t* i, uint64_t* value) noexcept {
  unsigned base = 10;
  if (text[*i] == '0') {
    base = 8;
    if (*i + 2 < text.size() && (text[*i + 1] == 'x' || text[*i + 1] == 'X') &&
        DigitValue(text[*i + 2]) < 16) {
      base = 16;
      *i += 2;
    }
  }
  uint64_t v = 0;
  for (; *i < text.size(); ++*i) {
    const unsigned d = static_cast<unsigned>(DigitValue(text[*i]));
    if (d >= base) break;
    v = v * base + d;
    if (v > 0xffffffffu) return false;
  }
  *value = v;
  return true;
}

// A zone ("%eth0", "%2") after an IPv6 address, as glibc's __inet6_scopeid_pton takes it: an
// interface name for link-scoped addresses, otherwise a decimal index below 2^32. Whether the
// name exists depends on the Squid host; a name is assumed to exist.
bool ZoneAccepted(const in6_addr& addr, std::string_view zone) noexcept {
  if (zone.empty()) return false;
  if (IN6_IS_ADDR_LINKLOCAL(&addr) || IN6_IS_ADDR_MC_NODELOCAL(&addr) ||
      IN6_IS_ADDR_MC_LINKLOCAL(&addr)) {
    return true;
  }
  uint64_t v = 0;
  for (char c : zone) {
    if (!IsDigit(c)) return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > 0xffffffffu) return false;
  }
  return true;
}

bool ParseIpv6(std::string_view host, in6_addr* addr) noexcept {
  const size_t pct = host.find('%');
  const std::string_view text = host.substr(0, pct);
  char buf[64];  // the longest IPv6 text is 45 bytes
  if (text.size() >= sizeof(buf)) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  if (::inet_pton(AF_INET6, buf, addr) != 1) return false;
  return pct == std::string_view::npos || ZoneAccepted(*addr, host.substr(pct + 1));
}

size_t RenderIpv4(uint32_t v, HostText* out) noexcept {
  const int n = std::snprintf(out->data(), out->size(), "%u.%u.%u.%u", v >> 24, (v >> 16) & 0xff,
                              (v >> 8) & 0xff, v & 0xff);
  return static_cast<size_t>(n);
}

}  // namespace

bool ParseInetAton(std::string_view text, uint32_t* addr) noexcept {
  uint32_t parts[3] = {0, 0, 0};
  size_t n = 0, i = 0;
  uint64_t value = 0;
  for (;;) {
    if (i >= text.size() || !IsDigit(text[i])) return false;  // every part starts with a digit
    if (!ParsePart(text, &i, &value)) return false;
    if (i == text.size()) break;
    if (text[i] != '.' || n == 3 || value > 0xff) return false;
    parts[n++] = static_cast<uint32_t>(value);
    ++i;
  }
  // "a" is 32 bits, "a.b" leaves 24 to b, "a.b.c" 16 to c, "a.b.c.d" 8 to d.
  static constexpr uint64_t kLastMax[] = {0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
  if (value > kLastMax[n]) return false;
  uint32_t a = static_cast<uint32_t>(value);
  for (size_t k = 0; k < n; ++k) a |= parts[k] << (24 - 8 * k);
  *addr = a;
  return true;
}

size_t RenderNumericHost(std::string_view host, HostText* out) noexcept {
  uint32_t v4 = 0;
  if (ParseInetAton(host, &v4)) return v4 == 0 ? 0 : RenderIpv4(v4, out);
  if (host.find(':') == std::string_view::npos) return 0;  // a name: no need to ask inet_pton
  in6_addr v6;
  if (!ParseIpv6(host, &v6) || IN6_IS_ADDR_UNSPECIFIED(&v6)) return 0;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    const uint8_t* b = v6.s6_addr + 12;
    v4 = uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
    return v4 == 0 ? 0 : RenderIpv4(v4, out);  // ::ffff:0.0.0.0 is Squid's IPv4 "any"
  }
  (*out)[0] = '[';
  if (::inet_ntop(AF_INET6, &v6, out->data() + 1, INET6_ADDRSTRLEN) == nullptr) return 0;
  const size_t len = std::strlen(out->data());
  (*out)[len] = ']';
  return len + 1;
}

}  // namespace peerbloom::squid_url
