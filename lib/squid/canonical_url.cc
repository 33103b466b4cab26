// Squid 5.7's URL canonicalization (AnyP::Uri::parse, then Uri::absolute()), rebuilt step by
// step in Squid's order, because the order decides corner cases: append_domain is tried
// before trailing dots go (so "alpha." stays "alpha"), the empty-host check runs before the
// port is split off, whitespace ends the host. What Squid does with a URL it is never asked
// to fetch (CONNECT, OPTIONS *) is left out: store keys only come from GETs of absolute URLs.
#include <algorithm>
#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "lib/squid/numeric_host.h"
#include "lib/squid/url_text.h"
#include "peerbloom/squid_url.h"

namespace peerbloom {
namespace squid_url {
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
// skip the byte-by-byte classification. With SSE2, 16 bytes at a time: min(b, 0x20) == b
// finds b <= 0x20. Then 8 at a time: a byte b < n sets the high bit of (b - n) & ~b
// (n <= 0x80); borrows can only add false bits above a true one. Hits are ORed up and tested
// once, so the loops carry no branch.
bool MaybeControlBytes(std::string_view s) noexcept {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20), del7f = _mm_set1_epi8(0x7f);
  __m128i hits = _mm_setzero_si128();
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    hits = _mm_or_si128(
        hits, _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, space), v), _mm_cmpeq_epi8(v, del7f)));
  }
  if (_mm_movemask_epi8(hits) != 0) return true;
#endif
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  uint64_t acc = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, sizeof(w));
    const uint64_t del = w ^ (kOnes * 0x7f);
    acc |= ((w - kOnes * 0x21) & ~w) | ((del - kOnes) & ~del);
  }
  if (acc & kHighs) return true;
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

// A URL with "//", cut where Uri::parse cuts it.
struct UrlParts {
  std::string_view typed_scheme;
  const SchemeInfo* known = nullptr;  // null for an unknown scheme
  Authority authority;
  std::string_view path;           // without the "/" Squid adds when it does not start with one
  uint16_t classes = 0;            // byte classes of the whole URL
  uint16_t authority_classes = 0;  // those of the authority, with kDotAfterDot
};

// `rest` follows "scheme:". The authority ends at '/', '?', '#' or whitespace; the path runs
// to a CR.
Status SplitHierarchical(std::string_view url, std::string_view rest, UrlParts* p) {
  if (rest.substr(0, 2) != "//") {
    return Status::InvalidArgument("no '//' after the scheme in url " + Quoted(url));
  }
  rest.remove_prefix(2);
  size_t host_end = 0;
  uint16_t seen = 0, previous = 0;  // locals: stored through p, they would not stay in registers
  for (; host_end < rest.size(); ++host_end) {
    const uint16_t c = ClassOf(rest[host_end]);
    if (c & kEndsHost) break;
    seen |= c | ((c & previous & kDot) << 2);  // kDot << 2 == kDotAfterDot
    previous = c;
  }
  p->authority_classes = seen;
  p->path = rest.substr(host_end);
  if (p->classes & kCr) p->path = p->path.substr(0, p->path.find('\r'));  // LF was refused
  p->authority = SplitAuthority(rest.substr(0, host_end), p->authority_classes);
  if (p->authority.host.empty()) return Status::InvalidArgument("no host in url " + Quoted(url));
  return Status::Ok();
}

// Uri::absolute() of the parts, with the checks Squid makes on the way.
Status Rebuild(std::string_view url, const UrlParts& p, const SquidUrlOptions& options,
               std::string* out) {
  const Authority& a = p.authority;
  const uint16_t default_port = p.known != nullptr ? p.known->default_port : 0;
  const int32_t port = a.has_port ? Atoi(a.port) : default_port;
  out->clear();
  out->append(p.known != nullptr ? p.known->name : p.typed_scheme);  // unknown: as typed
  out->append("://");
  const bool keeps_userinfo = p.known == nullptr || p.known->name == "ftp";
  if (keeps_userinfo && !a.userinfo.empty()) AppendUserInfo(a.userinfo, out);
  const size_t host_start = out->size();
  PEERBLOOM_RETURN_IF_ERROR(AppendHost(url, a.host, p.authority_classes, options, out));
  if (port < 1 || port > 65535) {
    if (!a.has_port) {
      return Status::InvalidArgument("url " + Quoted(url) + " names no port and scheme " +
                                     Quoted(p.typed_scheme) + " has no default");
    }
    return Status::InvalidArgument("port " + Quoted(a.port) + " is not in 1-65535");
  }
  RenderHost(host_start, (p.authority_classes & kColon) != 0, out);
  if (port != default_port) {
    out->push_back(':');
    out->append(std::to_string(port));
  }
  return AppendPath(p.path.empty() || p.path.front() != '/', p.path, (p.classes & kWSpace) != 0,
                    options.uri_whitespace, out);
}

Status Canonicalize(std::string_view url, const SquidUrlOptions& options, std::string* out) {
  UrlParts p;
  PEERBLOOM_RETURN_IF_ERROR(TrimAndCheckBytes(&url, &p.classes));
  if (url.size() + options.append_domain.size() > kSquidMaxUrlBytes) {
    return Status::InvalidArgument(
        "url of '" + std::to_string(url.size()) + "' bytes is longer than the '" +
        std::to_string(kSquidMaxUrlBytes - options.append_domain.size()) + "' squid accepts");
  }
  if (!ParseScheme(url, &p.typed_scheme)) {
    return Status::InvalidArgument("no scheme in url " + Quoted(url));
  }
  p.known = FindScheme(p.typed_scheme);
  const std::string_view rest = url.substr(p.typed_scheme.size() + 1);
  if (p.known != nullptr && p.known->name == "urn") return CanonicalUrn(rest, out);
  PEERBLOOM_RETURN_IF_ERROR(SplitHierarchical(url, rest, &p));
  return Rebuild(url, p, options, out);
}

}  // namespace
}  // namespace squid_url

Status ValidateSquidUrlOptions(const SquidUrlOptions& options) {
  const std::string& d = options.append_domain;
  if (d.empty()) return Status::Ok();
  bool ok = d.front() == '.' && d.size() <= 254;
  for (char c : d)
    ok = ok && (squid_url::IsAlpha(c) || squid_url::IsDigit(c) || c == '-' || c == '.' || c == '_');
  if (!ok) {
    return Status::InvalidArgument(
        "append_domain must be a '.' followed by at most 253 letters, digits, '-', '.' or '_', "
        "got " +
        squid_url::Quoted(d));
  }
  return Status::Ok();
}

Status CanonicalSquidUrl(std::string_view url, const SquidUrlOptions& options, std::string* out) {
  return squid_url::Canonicalize(url, options, out);
}

bool IsAbsoluteUrl(std::string_view url) noexcept {
  while (!url.empty() && squid_url::IsDelimiter(url.front())) url.remove_prefix(1);
  std::string_view scheme;
  if (!squid_url::ParseScheme(url, &scheme)) return false;
  const squid_url::SchemeInfo* known = squid_url::FindScheme(scheme);
  if (known != nullptr && known->name == "urn") return true;
  const std::string_view rest = url.substr(scheme.size() + 1);
  return rest.size() > 2 && rest.substr(0, 2) == "//" &&
         (squid_url::ClassOf(rest[2]) & squid_url::kEndsHost) == 0;
}

}  // namespace peerbloom
