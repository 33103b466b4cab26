#include "lib/nginx/url_parts.h"

#include <algorithm>
#include <cstdint>

#include "peerbloom/escape.h"
#include "peerbloom/hex.h"

namespace peerbloom::nginx {
namespace {

char Lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool EqualsLower(std::string_view text, std::string_view lower) noexcept {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (Lower(text[i]) != lower[i]) return false;
  }
  return true;
}

// nginx ends a request line's target at a space and refuses control bytes in it.
bool HasSpaceOrControl(std::string_view url) noexcept {
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return true;
  }
  return false;
}

// "" (the scheme's default, as RFC 3986 reads an empty port) or 1-65535 in decimal.
bool ParsePort(std::string_view text, unsigned fallback, unsigned* port) noexcept {
  if (text.empty()) {
    *port = fallback;
    return true;
  }
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > 65535) return false;
  }
  *port = value;
  return value != 0;
}

// Splits "host[:port]" or "[v6]:port" at the port's ':'.
bool SplitAuthority(std::string_view authority, std::string_view* host, std::string_view* port,
                    bool* has_port) noexcept {
  size_t host_end = authority.find(':');
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host_end = close + 1;
    if (host_end < authority.size() && authority[host_end] != ':') return false;
  }
  *has_port = host_end < authority.size();
  *host = authority.substr(0, host_end);
  *port = *has_port ? authority.substr(host_end + 1) : std::string_view();
  return true;
}

// The states of ngx_http_parse_complex_uri that matter off Windows: what the bytes since the
// last '/' have been. NormalizeUri gave the same $uri (or 400) as nginx 1.22.1 for 15,000
// random paths of '/', '.', "..", escapes of them, of '%', '?', '#' and NUL, bad escapes and
// letters (tests/data/nginx/README.md).
enum class Seg : uint8_t { kUsual, kSlash, kDot, kDotDot };

// Drops the last segment before the "/.." ending *out, as nginx backs up over it. False
// when there is none: ".." above the root.
bool BackUp(std::string* out) {
  if (out->size() < 4) return false;
  size_t u = out->size() - 4;
  while (u > 0 && (*out)[u] != '/') --u;
  if ((*out)[u] != '/') return false;
  out->resize(u + 1);
  return true;
}

// One byte of the path, written or decoded, in state *seg.
bool Step(char c, Seg* seg, std::string* out) {
  if (c != '/' && c != '.') {
    out->push_back(c);
    *seg = Seg::kUsual;
    return true;
  }
  switch (*seg) {
    case Seg::kUsual:
      out->push_back(c);
      if (c == '/') *seg = Seg::kSlash;
      return true;
    case Seg::kSlash:
      if (c == '.') {
        out->push_back(c);
        *seg = Seg::kDot;
      }
      return true;  // a second '/' is merged
    case Seg::kDot:
      if (c == '/') {
        out->pop_back();  // "/./" is "/"
        *seg = Seg::kSlash;
      } else {
        out->push_back(c);
        *seg = Seg::kDotDot;
      }
      return true;
    case Seg::kDotDot:
      if (c == '.') {  // "..." is a name
        out->push_back(c);
        *seg = Seg::kUsual;
        return true;
      }
      *seg = Seg::kSlash;
      return BackUp(out);
  }
  return false;
}

}  // namespace

Status SplitUrl(std::string_view url, UrlParts* out) {
  const size_t fragment = url.find('#');
  if (fragment != std::string_view::npos) url = url.substr(0, fragment);
  const auto refuse = [url](std::string_view why) {
    return Status::InvalidArgument("url " + QuoteBytes(url) + " " + std::string(why));
  };
  if (HasSpaceOrControl(url)) return refuse("holds a space or a control byte");
  const size_t sep = url.find("://");
  const std::string_view scheme = url.substr(0, sep);
  if (sep == std::string_view::npos ||
      !(EqualsLower(scheme, "http") || EqualsLower(scheme, "https"))) {
    return refuse("is not http:// or https://");
  }
  UrlParts parts;
  parts.https = scheme.size() == 5;
  const std::string_view rest = url.substr(sep + 3);
  const size_t target = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, target);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);  // a client sends no userinfo
  std::string_view port_text;
  bool has_port = false;
  if (!SplitAuthority(authority, &parts.host, &port_text, &has_port) || parts.host.empty()) {
    return refuse("has no host");
  }
  const unsigned fallback = parts.https ? 443 : 80;
  if (!ParsePort(port_text, fallback, &parts.port)) {
    return refuse("has a bad port " + QuoteBytes(port_text));
  }
  parts.default_port = parts.port == fallback;
  parts.request_uri = rest.substr(target);
  const size_t query = parts.request_uri.find('?');
  parts.path = parts.request_uri.substr(0, query);
  if (query != std::string_view::npos) parts.args = parts.request_uri.substr(query + 1);
  *out = parts;
  return Status::Ok();
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = Lower(c);
  return out;
}

bool NginxHost(std::string_view host, std::string* out) {
  out->clear();
  for (size_t i = 0; i < host.size(); ++i) {
    const char c = host[i];
    if (c == '/' || (c == '.' && i > 0 && host[i - 1] == '.')) return false;
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
    out->push_back(Lower(c));
  }
  if (!out->empty() && out->back() == '.') out->pop_back();
  return !out->empty();
}

bool NormalizeUri(std::string_view path, std::string* out) {
  if (path.empty()) path = "/";  // nginx's empty_path_in_uri
  std::string uri;
  uri.reserve(path.size());
  Seg seg = Seg::kUsual;
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '%') {
      if (i + 2 >= path.size()) return false;
      const int hi = HexDigitValue(path[i + 1]);
      const int lo = HexDigitValue(path[i + 2]);
      if (hi < 0 || lo < 0) return false;
      i += 2;
      c = static_cast<char>(hi << 4 | lo);
      if (c == '\0') return false;
      if (c == '%' || c == '?' || c == '#') {  // kept as a byte, never a delimiter
        uri.push_back(c);
        seg = Seg::kUsual;
        continue;
      }
    }
    if (!Step(c, &seg, &uri)) return false;
  }
  if (seg == Seg::kDot) uri.pop_back();                    // a final "/." is "/"
  if (seg == Seg::kDotDot && !BackUp(&uri)) return false;  // a final "/.." too, one level up
  out->append(uri);
  return true;
}

}  // namespace peerbloom::nginx
