#include "daemon/control/nginx_routes.h"

#include <cstring>
#include <utility>

#include "daemon/observe/http_head.h"

namespace peerbloom::daemon {
namespace {

// The end of the first head of `heads` (one past its blank line), or npos.
size_t HeadEnd(std::string_view heads) {
  for (size_t from = 0; from < heads.size();) {
    const size_t nl = heads.find('\n', from);
    if (nl == std::string_view::npos) return nl;
    const size_t next = nl + 1;
    if (next < heads.size() && heads[next] == '\n') return next + 1;
    if (next + 1 < heads.size() && heads[next] == '\r' && heads[next + 1] == '\n') return next + 2;
    from = next;
  }
  return std::string_view::npos;
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Highest random weight of (key, node): stable for a key while its holders stay.
uint64_t Weight(uint64_t key, std::string_view node) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the id, then mixed with the key
  for (char c : node) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return Mix(h ^ key);
}

void Status204(bool keep_alive, std::string* out) {
  out->append("HTTP/1.1 204 No Content\r\n");
  out->append(keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
}

void Error(int code, std::string_view reason, std::string* out) {
  out->append("HTTP/1.1 ").append(std::to_string(code)).append(" ").append(reason);
  out->append("\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

}  // namespace

NginxRoutes::NginxRoutes(std::map<std::string, std::string> siblings, Lookup lookup)
    : siblings_(std::move(siblings)), lookup_(std::move(lookup)) {}

bool NginxRoutes::Answer(std::string_view heads, std::string* out) {
  while (!heads.empty()) {
    const size_t end = HeadEnd(heads);
    if (end == std::string_view::npos) return true;  // the socket hands over whole heads only
    if (!AnswerOne(heads.substr(0, end), out)) return false;
    heads.remove_prefix(end);
  }
  return true;
}

bool NginxRoutes::AnswerOne(std::string_view head, std::string* out) {
  ++stats_.requests;
  // Without its blank line: ParseHttpRequestHead takes the lines before it.
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.remove_suffix(1);
  HttpRequestHead h;
  if (!ParseHttpRequestHead(head, &h).ok() || h.content_length != 0) {
    ++stats_.bad_requests;
    Error(400, "Bad Request", out);
    return false;
  }
  if (h.method != "GET" && h.method != "HEAD") {
    ++stats_.bad_requests;
    Error(405, "Method Not Allowed", out);
    return false;
  }
  if (h.path != "/route" || !h.has_peerbloom_key) {
    ++stats_.bad_requests;
    Error(h.path != "/route" ? 404 : 400, h.path != "/route" ? "Not Found" : "Bad Request", out);
    return false;
  }
  const NginxKey key = NginxKeyOf(h.peerbloom_key);
  peers_.clear();
  lookup_(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()), &peers_);
  uint64_t key64 = 0;
  std::memcpy(&key64, key.data(), sizeof(key64));
  const PeerMatch* best = nullptr;
  const std::string* best_addr = nullptr;
  uint64_t best_weight = 0;
  for (const PeerMatch& p : peers_) {
    const auto it = siblings_.find(p.node_id);
    if (it == siblings_.end()) continue;
    const uint64_t w = Weight(key64, p.node_id);
    if (best == nullptr || w > best_weight) {
      best = &p;
      best_addr = &it->second;
      best_weight = w;
    }
  }
  Status204(h.keep_alive, out);
  if (best != nullptr) {
    ++stats_.to_peer;
    out->append("X-Peerbloom-Peer: ").append(*best_addr).append("\r\n");
    out->append("X-Peerbloom-Node: ").append(best->node_id).append("\r\n");
  } else if (peers_.empty()) {
    ++stats_.no_holder;
  } else {
    ++stats_.no_sibling;
  }
  out->append("\r\n");
  return h.keep_alive;
}

}  // namespace peerbloom::daemon
