// Config parsing: the value readers, the array-of-tables keys ([[seeds]], [[feeds]],
// [[squid_digest]]) and the cross-key checks (advertise vs listen, control locality, derived
// paths) that run once all keys are read. The table of top-level keys is config_keys.cc.
#include "daemon/config/config.h"

#include <toml++/toml.h>

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "daemon/config/config_parser.h"
#include "peerbloom/client/client_config.h"
#include "peerbloom/client/control_token.h"
#include "peerbloom/client/toml_values.h"
#include "peerbloom/nginx_cache.h"
#include "peerbloom/summary.h"

namespace peerbloom::daemon {
namespace config_internal {
namespace {

constexpr int64_t kMaxDurationMs = int64_t{24} * 3600 * 1000;

}  // namespace

Status Parser::String(const toml::node& n, std::string_view key, std::string* out) const {
  const Status s = client::TomlString(n, key, out);
  return s.ok() ? s : Error(n, s.message());
}

Status Parser::Bool(const toml::node& n, std::string_view key, bool* out) const {
  const Status s = client::TomlBool(n, key, out);
  return s.ok() ? s : Error(n, s.message());
}

Status Parser::Int(const toml::node& n, std::string_view key, int64_t lo, int64_t hi,
                   int64_t* out) const {
  if (!n.is_integer()) return Error(n, "'" + std::string(key) + "' must be an integer");
  const int64_t v = *n.value<int64_t>();
  if (v < lo || v > hi) {
    return Error(n, "'" + std::string(key) + "' must be between '" + std::to_string(lo) +
                        "' and '" + std::to_string(hi) + "', got '" + std::to_string(v) + "'");
  }
  *out = v;
  return Status::Ok();
}

Status Parser::Fraction(const toml::node& n, std::string_view key, double lo, double hi,
                        double* out) const {
  if (!n.is_floating_point()) {
    return Error(n, "'" + std::string(key) + "' must be a number like 0.01");
  }
  const double v = *n.value<double>();
  if (!(v > lo && v <= hi)) {
    std::ostringstream msg;
    msg << "'" << key << "' must be in (" << lo << ", " << hi << "], got '" << v << "'";
    return Error(n, msg.str());
  }
  *out = v;
  return Status::Ok();
}

Status Parser::Duration(const toml::node& n, std::string_view key, int64_t lo, int64_t* out) const {
  int64_t ms = 0;
  if (n.is_integer()) {
    ms = *n.value<int64_t>();
  } else if (!n.is_string() || !ParseDuration(*n.value<std::string>(), &ms)) {
    return Error(n, "'" + std::string(key) +
                        "' must be a duration like \"250ms\", \"2s\" or \"5m\" (or integer ms)");
  }
  if (ms < lo || ms > kMaxDurationMs) {
    return Error(n, "'" + std::string(key) + "' must be between '" + std::to_string(lo) +
                        "ms' and '24h', got '" + std::to_string(ms) + "ms'");
  }
  *out = ms;
  return Status::Ok();
}

Status Parser::Endpoint(const toml::node& n, std::string_view key, bool allow_port0,
                        std::string* out) const {
  PEERBLOOM_RETURN_IF_ERROR(String(n, key, out));
  std::string host;
  int port = 0;
  if (!ParseTcpEndpoint(*out, &host, &port)) {
    return Error(n,
                 "'" + std::string(key) + "' must look like 'tcp://HOST:PORT', got '" + *out + "'");
  }
  if (port == 0 && !allow_port0) {
    return Error(n, "'" + std::string(key) + "' needs a port other than '0', got '" + *out + "'");
  }
  return Status::Ok();
}

Status Parser::Seeds(const toml::node& n) {
  const toml::array* arr = n.as_array();
  if (arr == nullptr) return Error(n, "'seeds' must be an array of tables ([[seeds]])");
  c_->seeds.clear();
  c_->seed_key_files.clear();
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (t == nullptr) return Error(item, "each seed must be a table with 'endpoint'");
    Seed seed;
    std::string key_file;
    bool has_endpoint = false;
    for (auto&& [k, v] : *t) {
      if (k.str() == "endpoint") {
        PEERBLOOM_RETURN_IF_ERROR(Endpoint(v, "seeds.endpoint", false, &seed.endpoint));
        has_endpoint = true;
      } else if (k.str() == "public_key") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "seeds.public_key", &seed.public_key));
        if (seed.public_key.size() != 40) {
          return Error(v, "'seeds.public_key' must be a 40-character Z85 key, got '" +
                              seed.public_key + "'");
        }
      } else if (k.str() == "public_key_file") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "seeds.public_key_file", &key_file));
      } else {
        return At(k.source().begin.line, "unknown key 'seeds." + std::string(k.str()) + "'");
      }
    }
    if (!has_endpoint) return Error(item, "seed without 'endpoint'");
    if (!key_file.empty() && !seed.public_key.empty()) {
      return Error(item, "a seed takes 'public_key' or 'public_key_file', not both");
    }
    c_->seeds.push_back(std::move(seed));
    c_->seed_key_files.push_back(std::move(key_file));
  }
  return Status::Ok();
}

Status Parser::Feeds(const toml::node& n) {
  const toml::array* arr = n.as_array();
  if (arr == nullptr) return Error(n, "'feeds' must be an array of tables ([[feeds]])");
  c_->feeds.clear();
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (t == nullptr) return Error(item, "each feed must be a table with 'path'");
    FeedConfig feed;
    bool levels_set = false, rescan_set = false;
    for (auto&& [k, v] : *t) {
      if (k.str() == "path") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "feeds.path", &feed.path));
        if (feed.path.empty()) return Error(v, "'feeds.path' must not be empty");
      } else if (k.str() == "format") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "feeds.format", &feed.format));
        if (feed.format != "line" && feed.format != "squid-store-log" &&
            feed.format != "nginx-cache") {
          return Error(v,
                       "'feeds.format' must be 'line', 'squid-store-log' or 'nginx-cache', got '" +
                           feed.format + "'");
        }
        if (feed.format == "squid-store-log") squid_feed_line_ = v.source().begin.line;
        if (feed.format == "nginx-cache") nginx_feed_line_ = v.source().begin.line;
      } else if (k.str() == "start_at_end") {
        PEERBLOOM_RETURN_IF_ERROR(Bool(v, "feeds.start_at_end", &feed.start_at_end));
      } else if (k.str() == "cache_dirs") {
        const toml::array* dirs = v.as_array();
        if (dirs == nullptr) return Error(v, "'feeds.cache_dirs' must be an array of paths");
        for (const toml::node& d : *dirs) {
          std::string dir;
          PEERBLOOM_RETURN_IF_ERROR(String(d, "feeds.cache_dirs", &dir));
          if (dir.empty()) return Error(d, "'feeds.cache_dirs' must not hold an empty path");
          feed.cache_dirs.push_back(std::move(dir));
        }
      } else if (k.str() == "levels") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "feeds.levels", &feed.levels));
        std::vector<int> levels;
        Status s = ParseNginxLevels(feed.levels, &levels);
        if (!s.ok()) return Error(v, "'feeds.levels': " + s.message());
        levels_set = true;
      } else if (k.str() == "rescan_interval") {
        PEERBLOOM_RETURN_IF_ERROR(
            Duration(v, "feeds.rescan_interval", 0, &feed.rescan_interval_ms));
        rescan_set = true;
      } else {
        return At(k.source().begin.line, "unknown key 'feeds." + std::string(k.str()) + "'");
      }
    }
    if (feed.path.empty()) return Error(item, "feed without 'path'");
    if (!feed.cache_dirs.empty() && feed.format != "squid-store-log") {
      return Error(item, "'feeds.cache_dirs' needs format = 'squid-store-log'");
    }
    if ((levels_set || rescan_set) && feed.format != "nginx-cache") {
      return Error(item, std::string("'feeds.") + (levels_set ? "levels" : "rescan_interval") +
                             "' needs format = 'nginx-cache'");
    }
    if (feed.format == "nginx-cache" && feed.start_at_end) {
      return Error(item, "'feeds.start_at_end' does not apply to an 'nginx-cache' feed");
    }
    c_->feeds.push_back(std::move(feed));
  }
  return Status::Ok();
}

namespace {

bool IsValidDigestHost(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char ch : host) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Status Parser::SquidDigests(const toml::node& n) {
  const toml::array* arr = n.as_array();
  if (arr == nullptr) {
    return Error(n, "'squid_digest' must be an array of tables ([[squid_digest]])");
  }
  c_->squid_digests.clear();
  std::map<std::string, uint32_t> seen;  // "host:port" -> line
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (t == nullptr) return Error(item, "each squid_digest must be a table with 'host'");
    if (squid_digest_line_ == 0) squid_digest_line_ = item.source().begin.line;
    SquidDigestConfig digest;
    for (auto&& [k, v] : *t) {
      if (k.str() == "host") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "squid_digest.host", &digest.host));
        if (!IsValidDigestHost(digest.host)) {
          return Error(v, "'squid_digest.host' must be a host name or IPv4 address, got '" +
                              digest.host + "'");
        }
      } else if (k.str() == "port") {
        int64_t port = 0;
        PEERBLOOM_RETURN_IF_ERROR(Int(v, "squid_digest.port", 1, 65535, &port));
        digest.port = static_cast<uint16_t>(port);
      } else {
        return At(k.source().begin.line, "unknown key 'squid_digest." + std::string(k.str()) + "'");
      }
    }
    if (digest.host.empty()) return Error(item, "squid_digest without 'host'");
    const std::string source = digest.host + ":" + std::to_string(digest.port);
    auto [it, inserted] = seen.emplace(source, item.source().begin.line);
    if (!inserted) {
      return Error(item, "duplicate squid_digest '" + source + "' (first at line " +
                             std::to_string(it->second) + ")");
    }
    c_->squid_digests.push_back(std::move(digest));
  }
  return Status::Ok();
}

Status Parser::Parse(const toml::table& root) {
  for (auto&& [k, v] : root) {
    const KeySpec* spec = FindKey(k.str());
    if (spec == nullptr) {
      return At(k.source().begin.line, "unknown key '" + std::string(k.str()) + "'");
    }
    PEERBLOOM_RETURN_IF_ERROR(spec->set(*this, v, spec->key));
  }
  return Finish(root);
}

uint32_t Parser::LineOf(const toml::table& root, std::string_view key) const {
  const toml::node* n = root.get(key);
  return n == nullptr ? 1 : n->source().begin.line;
}

// The cross-key checks and the defaults that depend on other keys, in this order.
Status Parser::Finish(const toml::table& root) {
  for (const char* required : {"node_id", "listen", "data_dir"}) {
    if (!root.contains(required)) {
      return At(1, "missing required key '" + std::string(required) + "'");
    }
  }
  PEERBLOOM_RETURN_IF_ERROR(FinishEndpoints(root));
  PEERBLOOM_RETURN_IF_ERROR(CheckCombinations(root));
  if (c_->key_file.empty()) c_->key_file = c_->data_dir + "/node.key";
  if (c_->log_file.empty()) c_->log_file = c_->data_dir + "/peerbloomd.log";
  if (c_->link_heartbeat_interval_ms > 0 &&
      c_->link_heartbeat_timeout_ms < c_->link_heartbeat_interval_ms) {
    return At(LineOf(root, "link_heartbeat_timeout"),
              "'link_heartbeat_timeout' must be at least 'link_heartbeat_interval'");
  }
  Geometry geometry;
  Status s = ChooseGeometry(c_->profile, c_->capacity, c_->target_fpr, &geometry, c_->filter_sizes);
  if (!s.ok()) return At(LineOf(root, "capacity"), "filter geometry: " + s.message());
  return Status::Ok();
}

// listen and advertise; the control endpoint, its token file and the who-has socket.
Status Parser::FinishEndpoints(const toml::table& root) {
  std::string host;
  int port = 0;
  (void)ParseTcpEndpoint(c_->listen, &host, &port);
  if (c_->advertise.empty() && (host == "0.0.0.0" || host == "*" || host == "[::]")) {
    return Error(*root.get("listen"),
                 "'advertise' is required when 'listen' binds a wildcard address");
  }
  // The control endpoint's default and checks are the client's (peerbloom/client), so the CLI
  // finds the endpoint the daemon binds.
  if (c_->control.empty()) c_->control = client::DefaultControlEndpoint(c_->data_dir);
  if (!c_->who_has_socket_set) c_->who_has_socket = c_->data_dir + "/who-has.sock";
  // Signatures ride on the CURVE keys' files: a plaintext cluster has none to require.
  if (!c_->require_signatures_set) c_->require_signatures = c_->curve;
  Status control = client::CheckControlEndpoint(c_->control, c_->allow_remote_control);
  if (!control.ok()) return At(LineOf(root, "control"), control.message());
  if (!root.contains("control_token_file")) {
    c_->control_token_file = client::DefaultControlTokenFile(c_->control, c_->data_dir);
  }
  return Status::Ok();
}

// Keys that exclude each other or need another key's value.
Status Parser::CheckCombinations(const toml::table& root) const {
  if (!c_->cluster_secret_file.empty() && root.contains("cluster_secret")) {
    return Error(*root.get("cluster_secret_file"),
                 "set 'cluster_secret' or 'cluster_secret_file', not both");
  }
  if (c_->key_scheme != KeyScheme::kSquidMd5) {
    if (squid_feed_line_ != 0) {
      return At(squid_feed_line_, "a 'squid-store-log' feed needs key_scheme = 'squid-md5'");
    }
    if (squid_digest_line_ != 0) {
      return At(squid_digest_line_, "'squid_digest' needs key_scheme = 'squid-md5'");
    }
    if (squid_url_line_ != 0) return At(squid_url_line_, client::kSquidUrlKeysNeedMd5);
  }
  if (c_->key_scheme != KeyScheme::kNginxMd5) {
    if (nginx_feed_line_ != 0) {
      return At(nginx_feed_line_, "an 'nginx-cache' feed needs key_scheme = 'nginx-md5'");
    }
    for (const char* key : {"nginx_cache_key", "nginx_proxy_host"}) {
      if (root.contains(key)) {
        return Error(*root.get(key), "'" + std::string(key) + "' needs key_scheme = 'nginx-md5'");
      }
    }
  } else {
    NginxKeyTemplate key;
    Status s = NginxKeyTemplate::Parse(c_->nginx_cache_key, c_->nginx_proxy_host, &key);
    if (!s.ok()) return At(LineOf(root, "nginx_cache_key"), "'nginx_cache_key': " + s.message());
  }
  if (!c_->nginx_siblings.empty() && c_->nginx_route_socket.empty()) {
    return Error(*root.get("nginx_siblings"), "'nginx_siblings' needs 'nginx_route_socket'");
  }
  if (!c_->nginx_route_socket_group.empty() && c_->nginx_route_socket.empty()) {
    return Error(*root.get("nginx_route_socket_group"),
                 "'nginx_route_socket_group' needs 'nginx_route_socket'");
  }
  if (c_->purge_nginx) {
    int nginx_feeds = 0;
    for (const FeedConfig& f : c_->feeds) nginx_feeds += f.format == "nginx-cache";
    if (nginx_feeds != 1) {
      return Error(*root.get("purge_nginx"), "'purge_nginx' needs exactly one 'nginx-cache' feed");
    }
    if (!c_->purge_command.empty() || !c_->purge_squid.empty()) {
      return Error(*root.get("purge_nginx"),
                   "'purge_nginx' excludes 'purge_command' and 'purge_squid'");
    }
  }
  for (const std::string& peer : c_->relay_links) {
    if (peer == c_->node_id) {
      return Error(*root.get("relay_links"), "'relay_links' names this node itself");
    }
  }
  if (!c_->purge_command.empty() && !c_->purge_squid.empty()) {
    return Error(*root.get("purge_command"),
                 "'purge_command' and 'purge_squid' exclude each other");
  }
  if (c_->squid_digest_max_refresh_ms < c_->squid_digest_min_refresh_ms) {
    return At(LineOf(root, "squid_digest_max_refresh"),
              "'squid_digest_max_refresh' must be at least 'squid_digest_min_refresh'");
  }
  return Status::Ok();
}

}  // namespace config_internal

Status ParseConfig(std::string_view text, const std::string& path, Config* out) {
  toml::table root;
  PEERBLOOM_RETURN_IF_ERROR(client::TomlParse(text, path, &root));
  Config config;
  config.source_path = path;
  config_internal::Parser parser(path, &config);
  PEERBLOOM_RETURN_IF_ERROR(parser.Parse(root));
  *out = std::move(config);
  return Status::Ok();
}

Status LoadConfig(const std::string& path, Config* out) {
  std::string text;
  PEERBLOOM_RETURN_IF_ERROR(client::ReadConfigFile(path, &text));
  return ParseConfig(text, path, out);
}

Status LoadClusterSecret(Config* config) {
  if (config->cluster_secret_file.empty()) return Status::Ok();
  return client::ReadSecretFile("cluster_secret_file", config->cluster_secret_file,
                                &config->cluster_secret);
}

}  // namespace peerbloom::daemon
