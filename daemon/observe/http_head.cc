// Parsing of a request head; see http_head.h. Token comparisons ignore case (RFC 9110 5.1).
#include "daemon/observe/http_head.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace peerbloom::daemon {
namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The next line of *rest without its "\r\n" (or "\n"); *rest moves past it.
std::string_view NextLine(std::string_view* rest) {
  const size_t end = rest->find('\n');
  std::string_view line = rest->substr(0, end);
  rest->remove_prefix(end == std::string_view::npos ? rest->size() : end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Whether a comma-separated header value lists `token`.
bool ListsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (EqualsIgnoringCase(Trim(value.substr(0, comma)), token)) return true;
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
  }
  return false;
}

Status ParseRequestLine(std::string_view line, HttpRequestHead* out, bool* http10) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1 ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Status::InvalidArgument("malformed request line");
  }
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Status::InvalidArgument("not HTTP/1.0 or HTTP/1.1");
  }
  *http10 = version == "HTTP/1.0";
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  // Absolute form (RFC 9112 3.2.2): http://host/path.
  if (const size_t scheme = target.find("://"); scheme != std::string_view::npos) {
    const size_t path = target.find('/', scheme + 3);
    target = path == std::string_view::npos ? "/" : target.substr(path);
  }
  out->method = std::string(line.substr(0, sp1));
  out->path = std::string(target.substr(0, target.find('?')));
  return Status::Ok();
}

}  // namespace

Status ParseHttpRequestHead(std::string_view head, HttpRequestHead* out) {
  HttpRequestHead h;
  bool http10 = false;
  PEERBLOOM_RETURN_IF_ERROR(ParseRequestLine(NextLine(&head), &h, &http10));
  bool close = false, keep_alive = false, length_seen = false;
  while (!head.empty()) {
    const std::string_view line = NextLine(&head);
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) {
      return Status::InvalidArgument("malformed header line");
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsIgnoringCase(name, "Connection")) {
      close |= ListsToken(value, "close");
      keep_alive |= ListsToken(value, "keep-alive");
    } else if (EqualsIgnoringCase(name, "Content-Length")) {
      const auto r = std::from_chars(value.data(), value.data() + value.size(), h.content_length);
      if (length_seen || value.empty() || r.ec != std::errc() ||
          r.ptr != value.data() + value.size()) {
        return Status::InvalidArgument("bad Content-Length");
      }
      length_seen = true;
    } else if (EqualsIgnoringCase(name, "X-Peerbloom-Key")) {
      if (h.has_peerbloom_key) return Status::InvalidArgument("repeated X-Peerbloom-Key");
      h.peerbloom_key = std::string(value);
      h.has_peerbloom_key = true;
    } else if (EqualsIgnoringCase(name, "Transfer-Encoding")) {
      return Status::InvalidArgument("request bodies are not taken");
    }
  }
  h.keep_alive = http10 ? keep_alive && !close : !close;
  *out = std::move(h);
  return Status::Ok();
}

}  // namespace peerbloom::daemon
