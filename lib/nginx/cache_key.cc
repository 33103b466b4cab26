// NginxKeyTemplate: a proxy_cache_key compiled as nginx's script compiler reads it
// (src/http/ngx_http_script.c, ngx_http_script_compile), and filled from a URL with the
// values src/http/ngx_http_variables.c gives the request a client sends for that URL.
#include <algorithm>
#include <string>
#include <utility>

#include "lib/nginx/url_parts.h"
#include "peerbloom/escape.h"
#include "peerbloom/nginx_cache.h"

namespace peerbloom {
namespace {

bool IsNameChar(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string Offset(size_t at) { return "'" + std::to_string(at) + "'"; }

// The name after the '$' at `dollar`: "name", "{name}" or, as nginx reads a regex capture,
// one digit 1-9. Sets *next past it. InvalidArgument when there is no name or no '}'.
Status ReadName(std::string_view text, size_t dollar, std::string_view* name, size_t* next) {
  size_t i = dollar + 1;
  const bool bracket = i < text.size() && text[i] == '{';
  if (bracket) ++i;
  const size_t start = i;
  if (!bracket && i < text.size() && text[i] >= '1' && text[i] <= '9') {
    ++i;
  } else {
    while (i < text.size() && IsNameChar(text[i])) ++i;
  }
  *name = text.substr(start, i - start);
  if (bracket) {
    if (i == text.size() || text[i] != '}') {
      return Status::InvalidArgument("'${' at offset " + Offset(dollar) + " has no closing '}'");
    }
    ++i;
  }
  if (name->empty()) {
    return Status::InvalidArgument("'$' at offset " + Offset(dollar) +
                                   " is not followed by a variable name");
  }
  *next = i;
  return Status::Ok();
}

}  // namespace

bool NginxKeyTemplate::PartOf(std::string_view name, Part* part) {
  static constexpr std::pair<std::string_view, Part> kVariables[] = {
      {"scheme", Part::kScheme},
      {"host", Part::kHost},
      {"http_host", Part::kHttpHost},
      {"server_port", Part::kServerPort},
      {"request_uri", Part::kRequestUri},
      {"uri", Part::kUri},
      {"args", Part::kArgs},
      {"query_string", Part::kArgs},
      {"is_args", Part::kIsArgs},
      {"proxy_host", Part::kProxyHost},
  };
  for (const auto& [known, p] : kVariables) {
    if (name == known) {
      *part = p;
      return true;
    }
  }
  return false;
}

Status NginxKeyTemplate::Parse(std::string_view text, std::string_view proxy_host,
                               NginxKeyTemplate* out) {
  if (text.empty()) return Status::InvalidArgument("the cache key template is empty");
  NginxKeyTemplate t;
  t.text_ = text;
  t.proxy_host_ = proxy_host;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      const size_t end = std::min(text.find('$', i), text.size());
      t.pieces_.push_back({Part::kLiteral, std::string(text.substr(i, end - i))});
      i = end;
      continue;
    }
    std::string_view name;
    PEERBLOOM_RETURN_IF_ERROR(ReadName(text, i, &name, &i));
    Part part;
    if (!PartOf(nginx::AsciiLower(name), &part)) {
      return Status::InvalidArgument("unsupported variable '$" + std::string(name) +
                                     "': a url does not carry it");
    }
    if (part == Part::kProxyHost && proxy_host.empty()) {
      return Status::InvalidArgument("variable '$" + std::string(name) +
                                     "' needs the host proxy_pass names, and none is given");
    }
    t.pieces_.push_back({part, {}});
  }
  *out = std::move(t);
  return Status::Ok();
}

Status NginxKeyTemplate::Build(std::string_view url, std::string* key) const {
  if (pieces_.empty()) return Status::InvalidArgument("no cache key template");
  nginx::UrlParts u;
  PEERBLOOM_RETURN_IF_ERROR(nginx::SplitUrl(url, &u));
  // nginx answers 400 to such a request whatever the key: nothing is cached for it.
  std::string host, uri;
  if (!nginx::NginxHost(u.host, &host)) {
    return Status::InvalidArgument("url " + QuoteBytes(url) + " has a host nginx refuses");
  }
  if (!nginx::NormalizeUri(u.path, &uri)) {
    return Status::InvalidArgument("url " + QuoteBytes(url) + " has a path nginx refuses");
  }
  const std::string port = std::to_string(u.port);
  std::string http_host = nginx::AsciiLower(u.host);
  if (!u.default_port) http_host += ":" + port;
  // A client sends "/" for an empty path: "http://h?q" is requested as "/?q".
  const std::string request_uri = u.path.empty() ? "/" + std::string(u.request_uri) : "";

  std::string_view values[static_cast<size_t>(Part::kProxyHost) + 1];
  values[static_cast<size_t>(Part::kScheme)] = u.https ? "https" : "http";
  values[static_cast<size_t>(Part::kHost)] = host;
  values[static_cast<size_t>(Part::kHttpHost)] = http_host;
  values[static_cast<size_t>(Part::kServerPort)] = port;
  values[static_cast<size_t>(Part::kRequestUri)] = u.path.empty() ? request_uri : u.request_uri;
  values[static_cast<size_t>(Part::kUri)] = uri;
  values[static_cast<size_t>(Part::kArgs)] = u.args;
  values[static_cast<size_t>(Part::kIsArgs)] = u.args.empty() ? "" : "?";
  values[static_cast<size_t>(Part::kProxyHost)] = proxy_host_;
  key->clear();
  for (const Piece& p : pieces_) {
    key->append(p.part == Part::kLiteral ? std::string_view(p.literal)
                                         : values[static_cast<size_t>(p.part)]);
  }
  return Status::Ok();
}

bool NginxKeyTemplate::uses_proxy_host() const {
  return std::any_of(pieces_.begin(), pieces_.end(),
                     [](const Piece& p) { return p.part == Part::kProxyHost; });
}

}  // namespace peerbloom
