// Squid 5.7's URL canonicalization (AnyP::Uri::parse, then Uri::absolute()), rebuilt step by
// step in Squid's order, because the order decides corner cases: append_domain is tried
// before trailing dots go (so "alpha." stays "alpha"), the empty-host check runs before the
// port is split off, whitespace ends the host. What Squid does with a URL it is never asked
// to fetch (CONNECT, OPTIONS *) is left out: store keys only come from GETs of absolute URLs.
#include <algorithm>
#include <array>
#include <cstring>

#include "lib/squid/numeric_host.h"
#include "peerbloom/squid_url.h"

namespace peerbloom {
namespace {

// Squid's SQUIDHOSTNAMELEN - 1: the host buffer holds this much, append_domain must fit it.
constexpr size_t kMaxHostBytes = 255;

struct SchemeInfo {
  std::string_view name;  // lower case, as Squid prints it
  uint16_t default_port;  // 0: the URL must name a port
};

// Squid's ProtocolType names (Debian's build: Gopher removed, HTCP on) and defaultPort().
constexpr SchemeInfo kKnownSchemes[] = {
    {"http", 80},
    {"https", 443},
    {"ftp", 21},
    {"coap", 5683},
    {"coaps", 5683},
    {"wais", 210},
    {"cache_object", 3128},
    {"icp", 0},
    {"htcp", 0},
    {"urn", 0},
    {"whois", 43},
    {"icy", 0},
    {"tls", 0},
    {"ssl", 0},
    {"authority_form", 0},
};

bool IsAlpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }
char Lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
// isspace() in the C locale.
bool IsSpace(char c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }
// Squid's w_space: what makes a path "have whitespace" and where `chop` cuts.
bool IsWSpace(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
// The relaxed request-line parser's delimiters: SP, HT, VT, FF and CR.
bool IsDelimiter(char c) noexcept { return c == ' ' || c == '\t' || (c >= '\v' && c <= '\r'); }
bool IsOneOf(char c, std::string_view set) noexcept {
  return set.find(c) != std::string_view::npos;
}
// Byte classes for the scans every URL goes through: one table load per byte, no branches on
// character lists (a memchr per byte over "/?#" cost more than the MD5 that follows).
enum ByteClass : uint16_t {
  kRefused = 1,        // control bytes the request parser refuses: all but HT, VT, FF, CR; DEL
  kWSpace = 2,         // SP, HT: Squid's w_space as it can occur in a path
  kCr = 4,             // ends the path
  kEndsHost = 8,       // '/', '?', '#' and isspace()
  kSchemeChar = 16,    // letters, digits, "+-._"
  kAt = 32,            // '@': there is userinfo
  kColon = 64,         // ':': there is a port or an IPv6 address
  kDot = 128,          // '.'
  kUpper = 256,        // 'A'-'Z'
  kDotAfterDot = 512,  // not a byte's class: ".." seen (accumulated in the authority scan)
};

constexpr std::array<uint16_t, 256> MakeByteClasses() {
  std::array<uint16_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    const bool space = c == ' ' || (c >= '\t' && c <= '\r');
    uint16_t k = 0;
    if ((c < 0x20 && c != '\t' && c != '\v' && c != '\f' && c != '\r') || c == 0x7f) k |= kRefused;
    if (c == ' ' || c == '\t') k |= kWSpace;
    if (c == '\r') k |= kCr;
    if (c == '/' || c == '?' || c == '#' || space) k |= kEndsHost;
    if (alnum || c == '+' || c == '-' || c == '.' || c == '_') k |= kSchemeChar;
    if (c == '@') k |= kAt;
    if (c == ':') k |= kColon;
    if (c == '.') k |= kDot;
    if (c >= 'A' && c <= 'Z') k |= kUpper;
    t[static_cast<size_t>(c)] = k;
  }
  return t;
}
constexpr std::array<uint16_t, 256> kByteClasses = MakeByteClasses();
uint16_t ClassOf(char c) noexcept { return kByteClasses[static_cast<unsigned char>(c)]; }

int HexValue(char c) noexcept {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool EqualsLower(std::string_view typed, std::string_view lower) noexcept {
  if (typed.size() != lower.size()) return false;
  for (size_t i = 0; i < typed.size(); ++i) {
    if (Lower(typed[i]) != lower[i]) return false;
  }
  return true;
}

const SchemeInfo* FindScheme(std::string_view typed) noexcept {
  for (const SchemeInfo& s : kKnownSchemes) {
    if (EqualsLower(typed, s.name)) return &s;
  }
  return nullptr;
}

std::string Quoted(std::string_view text) {
  constexpr size_t kMax = 80;
  if (text.size() <= kMax) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMax)) + "...'";
}

std::string HexByte(unsigned char c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[c >> 4] + kDigits[c & 0xf];
}

// Whether some byte is below 0x21 (a control byte or SP) or is DEL. Rare in URLs, so most
// skip the byte-by-byte classification. Eight bytes at a time: a byte b < n sets the high bit
// of (b - n) & ~b (n <= 0x80); borrows can only add false bits above a true one.
bool MaybeControlBytes(std::string_view s) noexcept {
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, sizeof(w));
    const uint64_t del = w ^ (kOnes * 0x7f);
    if ((((w - kOnes * 0x21) & ~w) | ((del - kOnes) & ~del)) & kHighs) return true;
  }
  for (; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x21 || c == 0x7f) return true;
  }
  return false;
}

// The HTTP parser hands Uri::parse the request-target without the delimiters around it, and
// refuses a request line holding other control bytes or DEL. *classes gets the union of the
// byte classes in the URL, so later scans run only where they can find something.
Status TrimAndCheckBytes(std::string_view* url, uint16_t* classes) {
  while (!url->empty() && IsDelimiter(url->front())) url->remove_prefix(1);
  while (!url->empty() && IsDelimiter(url->back())) url->remove_suffix(1);
  if (url->empty()) return Status::InvalidArgument("empty url");
  uint16_t all = 0;
  if (MaybeControlBytes(*url)) {
    for (char c : *url) all |= ClassOf(c);
  }
  if (all & kRefused) {
    for (char c : *url) {
      if (ClassOf(c) & kRefused) {
        return Status::InvalidArgument("control byte '" + HexByte(static_cast<unsigned char>(c)) +
                                       "' in url");
      }
    }
  }
  *classes = all;
  return Status::Ok();
}

// atoi(): optional sign and decimal digits, saturating at the bounds of a 64-bit long, then
// truncated to a 32-bit int. So ":4294967376" is port 80, as Squid reads it.
int32_t Atoi(std::string_view text) noexcept {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  constexpr uint64_t kLongMax = uint64_t{1} << 63;  // one past LONG_MAX
  uint64_t v = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    const unsigned d = static_cast<unsigned>(text[i] - '0');
    v = v > (kLongMax - d) / 10 ? kLongMax : v * 10 + d;  // saturated: more digits only grow it
  }
  // The long's two's-complement bits: LONG_MAX, LONG_MIN or the value.
  const uint64_t as_long =
      negative ? (v >= kLongMax ? kLongMax : 0 - v) : (v >= kLongMax ? kLongMax - 1 : v);
  return static_cast<int32_t>(static_cast<uint32_t>(as_long));
}

// rfc1738_unescape() then Uri::Encode() with the userinfo characters other than '%': the
// userinfo Squid keeps for ftp and unknown schemes. Squid escapes a byte from a signed char,
// so a byte >= 0x80 comes out as "%FFFFFFxx".
void AppendUserInfo(std::string_view login, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  for (size_t j = 0; j < login.size(); ++j) {
    char c = login[j];
    const int hi = j + 1 < login.size() ? HexValue(login[j + 1]) : -1;
    const int lo = j + 2 < login.size() ? HexValue(login[j + 2]) : -1;
    if (c == '%' && j + 1 < login.size() && login[j + 1] == '%') {
      ++j;                                                          // "%%" decodes to '%'
    } else if (c == '%' && hi >= 0 && lo >= 0 && (hi | lo) != 0) {  // "%00" stays as is
      c = static_cast<char>(hi << 4 | lo);
      j += 2;
    }
    if (IsAlpha(c) || IsDigit(c) || IsOneOf(c, ":-._~!$&'()*+,;=")) {
      out->push_back(c);
      continue;
    }
    const auto b = static_cast<unsigned char>(c);
    out->append(b >= 0x80 ? "%FFFFFF" : "%");
    out->push_back(kDigits[b >> 4]);
    out->push_back(kDigits[b & 0xf]);
  }
  out->push_back('@');
}

// rfc1738_escape_unescaped(): everything but letters, digits, '%' and the RFC 1738 "safe"
// punctuation becomes %XX. Squid copies the result back into an 8192-byte buffer.
void AppendEncodedPath(bool slash, std::string_view path, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  const size_t start = out->size();
  if (slash) out->push_back('/');
  for (char c : path) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f || IsOneOf(c, "<>\"#{}|\\^~[]`'")) {
      out->push_back('%');
      out->push_back(kDigits[b >> 4]);
      out->push_back(kDigits[b & 0xf]);
    } else {
      out->push_back(c);
    }
  }
  if (out->size() - start > kSquidMaxUrlBytes) out->resize(start + kSquidMaxUrlBytes);
}

// The path after uri_whitespace, appended to *out. `slash` prefixes the "/" Squid inserts
// when the host is followed by something other than '/'.
// `maybe_whitespace`: whether the URL holds SP or HT at all.
Status AppendPath(bool slash, std::string_view path, bool maybe_whitespace, UriWhitespace policy,
                  std::string* out) {
  bool has_whitespace = false;
  if (maybe_whitespace) {
    for (char c : path) has_whitespace = has_whitespace || IsWSpace(c);
  }
  if (!has_whitespace || policy == UriWhitespace::kAllow) {
    if (slash) out->push_back('/');
    out->append(path);
    return Status::Ok();
  }
  switch (policy) {
    case UriWhitespace::kDeny:
      return Status::InvalidArgument("whitespace in the url path and uri_whitespace is 'deny'");
    case UriWhitespace::kEncode:
      AppendEncodedPath(slash, path, out);
      return Status::Ok();
    case UriWhitespace::kChop: {
      if (slash) out->push_back('/');
      size_t end = 0;
      while (end < path.size() && !IsWSpace(path[end])) ++end;
      out->append(path.substr(0, end));
      return Status::Ok();
    }
    case UriWhitespace::kStrip:
    case UriWhitespace::kAllow:
      break;
  }
  if (slash) out->push_back('/');
  for (char c : path) {
    if (!IsSpace(c)) out->push_back(c);
  }
  return Status::Ok();
}

// Uri::host(): a numeric address is re-rendered, anything else kept (at most 255 bytes).
// A host still starting with '[' (from "[[...") loses that byte and its last one first.
// `has_colon`: whether the host holds a ':'. An address starts with a digit (IPv4) or holds a
// ':' (IPv6), so most names are known not to be numeric without asking.
void RenderHost(size_t host_start, bool has_colon, std::string* out) {
  std::string_view host(out->data() + host_start, out->size() - host_start);
  if (!host.empty() && host.front() == '[') {
    host = host.size() > 1 ? host.substr(1, host.size() - 2) : std::string_view();
  }
  squid_url::HostText text;
  const bool maybe_numeric = !host.empty() && (IsDigit(host.front()) || has_colon);
  const size_t n = maybe_numeric ? squid_url::RenderNumericHost(host, &text) : 0;
  if (n > 0) {
    out->resize(host_start);
    out->append(text.data(), n);
  } else if (out->size() - host_start > kMaxHostBytes) {
    out->resize(host_start + kMaxHostBytes);
  }
}

// "urn:" NID ":" rest (Uri::parseUrn): the NID is 2 to 32 letters, digits and '-', starting
// and ending with a letter or digit; it is rendered like a host, without lower-casing.
Status CanonicalUrn(std::string_view rest, std::string* out) {
  size_t n = 0;
  while (n < rest.size() && n < 32 && (IsAlpha(rest[n]) || IsDigit(rest[n]) || rest[n] == '-')) {
    ++n;
  }
  const std::string_view nid = rest.substr(0, n);
  const auto alnum = [](char c) { return IsAlpha(c) || IsDigit(c); };
  if (n == rest.size() || rest[n] != ':' || n < 2 || !alnum(nid.front()) || !alnum(nid.back())) {
    return Status::InvalidArgument("invalid urn namespace in " + Quoted(rest));
  }
  out->assign("urn:");
  out->append(nid);
  RenderHost(4, nid.find(':') != std::string_view::npos, out);
  out->append(rest.substr(n));
  return Status::Ok();
}

// Scheme, as uriParseScheme(): up to 16 bytes of letters, digits, "+-._" starting with a
// letter, then ':'.
bool ParseScheme(std::string_view url, std::string_view* scheme) noexcept {
  size_t n = 0;
  while (n < url.size() && n < 16 && (ClassOf(url[n]) & kSchemeChar)) ++n;
  if (n == 0 || n == url.size() || url[n] != ':' || !IsAlpha(url[0])) return false;
  *scheme = url.substr(0, n);
  return true;
}

// The authority split as Squid splits it: userinfo before the last '@'; a bracketed host
// ends at ']' and its port follows the first ':' after that; otherwise a single ':' starts
// the port (two or more mean an unbracketed IPv6 address).
struct Authority {
  std::string_view userinfo, host, port;
  bool has_port = false;
};

// `classes`: the union of the text's byte classes (to skip searches for '@' or ':').
Authority SplitAuthority(std::string_view text, uint16_t classes) noexcept {
  Authority a;
  if (classes & kAt) {
    const size_t at = text.rfind('@');
    a.userinfo = text.substr(0, at);
    text.remove_prefix(at + 1);
  }
  size_t colon = std::string_view::npos;
  if (!text.empty() && text.front() == '[') {
    const size_t close = std::min(text.find(']'), text.size());
    a.host = text.substr(1, close - 1);
    colon = text.find(':', close);
  } else if (!(classes & kColon)) {
    a.host = text;
  } else {
    colon = text.find(':');
    if (colon != text.rfind(':')) colon = std::string_view::npos;
    a.host = text.substr(0, colon);
  }
  if (colon != std::string_view::npos) {
    a.port = text.substr(colon + 1);
    a.has_port = true;
  }
  return a;
}

// Lower-case, append_domain, trailing dots, then the label checks Squid makes.
// `classes`: the byte classes of the whole authority, so a check that cannot fail is skipped
// (they may also come from the userinfo or port, which only costs an unneeded check).
Status AppendHost(std::string_view url, std::string_view host, uint16_t classes,
                  const SquidUrlOptions& options, std::string* out) {
  const size_t start = out->size();
  out->append(host);
  if (classes & kUpper) {
    char* p = out->data() + start;
    for (size_t i = 0; i < host.size(); ++i) p[i] = Lower(p[i]);
  }
  if (!options.append_domain.empty() && host.find_first_of(".:") == std::string_view::npos) {
    if (host.size() + options.append_domain.size() > kMaxHostBytes) {
      return Status::InvalidArgument("host " + Quoted(host) + " is too long to append " +
                                     Quoted(options.append_domain));
    }
    out->append(options.append_domain);
  }
  while (out->size() > start && out->back() == '.') out->pop_back();
  const std::string_view done(out->data() + start, out->size() - start);
  if (done.empty()) return Status::InvalidArgument("no host in url " + Quoted(url));
  // A ".." may have been among the trailing dots, which are gone.
  if (done.front() == '.' ||
      ((classes & kDotAfterDot) && done.find("..") != std::string_view::npos)) {
    return Status::InvalidArgument("host " + Quoted(done) + " has an empty label");
  }
  return Status::Ok();
}

}  // namespace

std::string_view UriWhitespaceName(UriWhitespace policy) noexcept {
  switch (policy) {
    case UriWhitespace::kStrip:
      return "strip";
    case UriWhitespace::kAllow:
      return "allow";
    case UriWhitespace::kEncode:
      return "encode";
    case UriWhitespace::kChop:
      return "chop";
    case UriWhitespace::kDeny:
      return "deny";
  }
  return "unknown";
}

std::optional<UriWhitespace> ParseUriWhitespace(std::string_view name) noexcept {
  for (auto p : {UriWhitespace::kStrip, UriWhitespace::kAllow, UriWhitespace::kEncode,
                 UriWhitespace::kChop, UriWhitespace::kDeny}) {
    if (name == UriWhitespaceName(p)) return p;
  }
  return std::nullopt;
}

Status ValidateSquidUrlOptions(const SquidUrlOptions& options) {
  const std::string& d = options.append_domain;
  if (d.empty()) return Status::Ok();
  bool ok = d.front() == '.' && d.size() <= 254;
  for (char c : d) ok = ok && (IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_');
  if (!ok) {
    return Status::InvalidArgument(
        "append_domain must be a '.' followed by at most 253 letters, digits, '-', '.' or '_', "
        "got " +
        Quoted(d));
  }
  return Status::Ok();
}

Status CanonicalSquidUrl(std::string_view url, const SquidUrlOptions& options, std::string* out) {
  uint16_t classes = 0;
  PEERBLOOM_RETURN_IF_ERROR(TrimAndCheckBytes(&url, &classes));
  if (url.size() + options.append_domain.size() > kSquidMaxUrlBytes) {
    return Status::InvalidArgument(
        "url of '" + std::to_string(url.size()) + "' bytes is longer than the '" +
        std::to_string(kSquidMaxUrlBytes - options.append_domain.size()) + "' squid accepts");
  }
  std::string_view typed_scheme;
  if (!ParseScheme(url, &typed_scheme)) {
    return Status::InvalidArgument("no scheme in url " + Quoted(url));
  }
  const SchemeInfo* known = FindScheme(typed_scheme);
  std::string_view rest = url.substr(typed_scheme.size() + 1);
  if (known != nullptr && known->name == "urn") return CanonicalUrn(rest, out);
  if (rest.substr(0, 2) != "//") {
    return Status::InvalidArgument("no '//' after the scheme in url " + Quoted(url));
  }
  rest.remove_prefix(2);

  // The authority ends at '/', '?', '#' or whitespace; the path runs to a CR.
  size_t host_end = 0;
  uint16_t authority_classes = 0, previous = 0;
  for (; host_end < rest.size(); ++host_end) {
    const uint16_t c = ClassOf(rest[host_end]);
    if (c & kEndsHost) break;
    authority_classes |= c | ((c & previous & kDot) << 2);  // kDot << 2 == kDotAfterDot
    previous = c;
  }
  std::string_view path = rest.substr(host_end);
  if (classes & kCr) path = path.substr(0, path.find('\r'));  // LF was refused
  const Authority a = SplitAuthority(rest.substr(0, host_end), authority_classes);
  if (a.host.empty()) return Status::InvalidArgument("no host in url " + Quoted(url));
  const uint16_t default_port = known != nullptr ? known->default_port : 0;
  const int32_t port = a.has_port ? Atoi(a.port) : default_port;

  out->clear();
  if (known != nullptr) {
    out->append(known->name);
  } else {
    out->append(typed_scheme);  // Squid keeps an unknown scheme's spelling
  }
  out->append("://");
  const bool keeps_userinfo = known == nullptr || known->name == "ftp";
  if (keeps_userinfo && !a.userinfo.empty()) AppendUserInfo(a.userinfo, out);
  const size_t host_start = out->size();
  PEERBLOOM_RETURN_IF_ERROR(AppendHost(url, a.host, authority_classes, options, out));
  if (port < 1 || port > 65535) {
    if (!a.has_port) {
      return Status::InvalidArgument("url " + Quoted(url) + " names no port and scheme " +
                                     Quoted(typed_scheme) + " has no default");
    }
    return Status::InvalidArgument("port " + Quoted(a.port) + " is not in 1-65535");
  }
  RenderHost(host_start, (authority_classes & kColon) != 0, out);
  if (port != default_port) {
    out->push_back(':');
    out->append(std::to_string(port));
  }
  return AppendPath(path.empty() || path.front() != '/', path, (classes & kWSpace) != 0,
                    options.uri_whitespace, out);
}

}  // namespace peerbloom
