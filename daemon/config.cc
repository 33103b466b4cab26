// Config parsing: a table of known keys (kKeys), each with a setter that checks its value.
// Cross-key checks (advertise vs listen, control locality, derived paths) run once all keys are
// read.
#include "daemon/config.h"

#include <toml++/toml.h>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "peerbloom/summary.h"

namespace peerbloom::daemon {
namespace {

constexpr int64_t kMaxDurationMs = int64_t{24} * 3600 * 1000;
constexpr uint64_t kMaxCapacity = uint64_t{1} << 32;

// Reads the keys of one file into a Config. The per-key work is in kKeys below; these are
// the value readers the table's setters share, each producing the exact message
// docs/config.md shows.
class Parser {
 public:
  Parser(const std::string& path, Config* config) : path_(path), c_(config) {}

  Status Parse(const toml::table& root);

  Config& c() { return *c_; }
  Status Error(const toml::node& node, const std::string& what) const {
    return At(node.source().begin.line, what);
  }
  Status At(uint32_t line, const std::string& what) const {
    return Status::InvalidArgument(path_ + ":" + std::to_string(line) + ": " + what);
  }

  Status String(const toml::node& n, std::string_view key, std::string* out) const;
  Status Bool(const toml::node& n, std::string_view key, bool* out) const;
  Status Int(const toml::node& n, std::string_view key, int64_t lo, int64_t hi, int64_t* out) const;
  Status Fraction(const toml::node& n, std::string_view key, double lo, double hi,
                  double* out) const;
  Status Duration(const toml::node& n, std::string_view key, int64_t lo, int64_t* out) const;
  Status Endpoint(const toml::node& n, std::string_view key, bool allow_port0,
                  std::string* out) const;
  Status Seeds(const toml::node& n);
  Status Feeds(const toml::node& n);
  Status SquidDigests(const toml::node& n);
  void NoteSquidUrlKey(const toml::node& n) {
    if (squid_url_line_ == 0) squid_url_line_ = n.source().begin.line;
  }
  template <typename T>
  Status IntTo(const toml::node& n, std::string_view key, int64_t lo, int64_t hi, T* out) const {
    int64_t v = 0;
    PEERBLOOM_RETURN_IF_ERROR(Int(n, key, lo, hi, &v));
    *out = static_cast<T>(v);
    return Status::Ok();
  }

 private:
  Status Finish(const toml::table& root);

  std::string path_;
  Config* c_;
  uint32_t squid_feed_line_ = 0;    // line of a store.log feed's format, 0 when none
  uint32_t squid_digest_line_ = 0;  // line of the first [[squid_digest]], 0 when none
  uint32_t squid_url_line_ = 0;     // line of the first squid_uri_* / append_domain key
};

Status Parser::String(const toml::node& n, std::string_view key, std::string* out) const {
  if (!n.is_string()) return Error(n, "'" + std::string(key) + "' must be a string");
  *out = *n.value<std::string>();
  return Status::Ok();
}

Status Parser::Bool(const toml::node& n, std::string_view key, bool* out) const {
  if (!n.is_boolean()) return Error(n, "'" + std::string(key) + "' must be true or false");
  *out = *n.value<bool>();
  return Status::Ok();
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
    for (auto&& [k, v] : *t) {
      if (k.str() == "path") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "feeds.path", &feed.path));
        if (feed.path.empty()) return Error(v, "'feeds.path' must not be empty");
      } else if (k.str() == "format") {
        PEERBLOOM_RETURN_IF_ERROR(String(v, "feeds.format", &feed.format));
        if (feed.format != "line" && feed.format != "squid-store-log") {
          return Error(
              v, "'feeds.format' must be 'line' or 'squid-store-log', got '" + feed.format + "'");
        }
        if (feed.format == "squid-store-log") squid_feed_line_ = v.source().begin.line;
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
      } else {
        return At(k.source().begin.line, "unknown key 'feeds." + std::string(k.str()) + "'");
      }
    }
    if (feed.path.empty()) return Error(item, "feed without 'path'");
    if (!feed.cache_dirs.empty() && feed.format != "squid-store-log") {
      return Error(item, "'feeds.cache_dirs' needs format = 'squid-store-log'");
    }
    c_->feeds.push_back(std::move(feed));
  }
  return Status::Ok();
}

bool IsValidDigestHost(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char ch : host) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
    if (!ok) return false;
  }
  return true;
}

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

// One top-level key: its name, the TOML type it takes, its default as docs/config.md shows
// it, what it is for, and the setter that checks and stores its value.
struct KeySpec {
  std::string_view key;
  std::string_view type;
  std::string_view default_value;
  std::string_view description;
  Status (*set)(Parser& p, const toml::node& n, std::string_view key);
};

using N = toml::node;

constexpr KeySpec kKeys[] = {
    // Identity and peers.
    {"node_id", "string", "required", "this node's id, unique in the cluster",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().node_id));
       if (!IsValidNodeId(p.c().node_id)) {
         return p.Error(n, "'node_id' must be 1-64 characters of [A-Za-z0-9._:-], got '" +
                               p.c().node_id + "'");
       }
       return Status::Ok();
     }},
    {"listen", "endpoint", "required", "the peer endpoint to bind",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Endpoint(n, key, true, &p.c().listen);
     }},
    {"advertise", "endpoint", "`listen` after binding", "the peer endpoint told to others",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Endpoint(n, key, false, &p.c().advertise);
     }},
    {"seeds", "array of tables", "none", "peers to join through",
     [](Parser& p, const N& n, std::string_view) { return p.Seeds(n); }},
    {"cluster_secret", "string", "\"\"", "keys the index hash and the wire cluster tag",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().cluster_secret);
     }},
    {"key_scheme", "string", "\"squid-md5\"", "how a URL becomes key bytes",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       auto scheme = ParseKeyScheme(name);
       if (!scheme) {
         return p.Error(n, "'key_scheme' must be 'squid-md5' or 'raw', got '" + name + "'");
       }
       p.c().key_scheme = *scheme;
       return Status::Ok();
     }},
    {"squid_uri_whitespace", "string", "\"strip\"", "Squid's uri_whitespace, for canonical URLs",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       auto policy = ParseUriWhitespace(name);
       if (!policy) {
         return p.Error(n,
                        "'squid_uri_whitespace' must be 'strip', 'allow', 'encode', 'chop' or "
                        "'deny', got '" +
                            name + "'");
       }
       p.c().squid_url.uri_whitespace = *policy;
       p.NoteSquidUrlKey(n);
       return Status::Ok();
     }},
    {"squid_append_domain", "string", "\"\"", "Squid's append_domain, for canonical URLs",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().squid_url.append_domain));
       if (!ValidateSquidUrlOptions(p.c().squid_url).ok()) {
         return p.Error(n,
                        "'squid_append_domain' must be a '.' followed by at most 253 letters, "
                        "digits, '-', '.' or '_', got '" +
                            p.c().squid_url.append_domain + "'");
       }
       p.NoteSquidUrlKey(n);
       return Status::Ok();
     }},
    // Filter.
    {"capacity", "integer", "1000000", "keys the counting filter is sized for",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 1, int64_t{kMaxCapacity}, &p.c().capacity);
     }},
    {"profile", "string", "\"balanced\"", "how counters trade against summary size",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       auto profile = ParseProfile(name);
       if (!profile) {
         return p.Error(
             n, "'profile' must be 'memory-lean', 'balanced' or 'wire-lean', got '" + name + "'");
       }
       p.c().profile = *profile;
       return Status::Ok();
     }},
    {"target_fpr", "float", "0.01", "false-positive target at capacity",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Fraction(n, key, 0, 0.5, &p.c().target_fpr);
     }},
    // Gossip.
    {"gossip_interval", "duration", "\"1s\"", "period of delta rounds",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 10, &p.c().gossip_interval_ms);
     }},
    {"failure_timeout", "duration", "\"10s\"", "silence after which a member is dead",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 50, &p.c().failure_timeout_ms);
     }},
    {"anti_entropy_interval", "duration", "\"5s\"", "period of digest exchanges",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 10, &p.c().anti_entropy_interval_ms);
     }},
    {"fanout", "integer", "4", "live members linked to besides the seeds",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 1, 64, &p.c().fanout);
     }},
    {"publish_threshold", "float", "0.05", "pending fraction that publishes at once",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Fraction(n, key, 0, 1, &p.c().publish_threshold);
     }},
    // Local files, control and logging.
    {"data_dir", "string", "required", "snapshot, lock, socket, key and log directory",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().data_dir));
       if (p.c().data_dir.empty()) return p.Error(n, "'data_dir' must not be empty");
       return Status::Ok();
     }},
    {"control", "string", "\"ipc://<data_dir>/control.sock\"", "the control endpoint",
     [](Parser& p, const N& n, std::string_view key) { return p.String(n, key, &p.c().control); }},
    {"allow_remote_control", "bool", "false", "whether control may be non-loopback tcp",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Bool(n, key, &p.c().allow_remote_control);
     }},
    {"log_level", "string", "\"info\"", "least severity logged",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().log_level));
       static const char* kLevels[] = {"trace", "debug",    "info", "warn",
                                       "error", "critical", "off"};
       for (const char* level : kLevels) {
         if (p.c().log_level == level) return Status::Ok();
       }
       return p.Error(n,
                      "'log_level' must be one of trace, debug, info, warn, error, "
                      "critical, off, got '" +
                          p.c().log_level + "'");
     }},
    {"log_file", "string", "\"<data_dir>/peerbloomd.log\"", "log file without --foreground",
     [](Parser& p, const N& n, std::string_view key) { return p.String(n, key, &p.c().log_file); }},
    {"snapshot_interval", "duration", "\"60s\"", "period of snapshots, 0 for none",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 0, &p.c().snapshot_interval_ms);
     }},
    // Security.
    {"curve", "bool", "true", "whether peer traffic is encrypted and authenticated",
     [](Parser& p, const N& n, std::string_view key) { return p.Bool(n, key, &p.c().curve); }},
    {"key_file", "string", "\"<data_dir>/node.key\"", "this node's CURVE key pair",
     [](Parser& p, const N& n, std::string_view key) { return p.String(n, key, &p.c().key_file); }},
    {"authorized_keys", "string", "\"\"", "file of the public keys admitted",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().authorized_keys);
     }},
    // Feeds and Squid nodes without peerbloomd.
    {"feeds", "array of tables", "none", "files and FIFOs of cache events",
     [](Parser& p, const N& n, std::string_view) { return p.Feeds(n); }},
    {"squid_digest", "array of tables", "none", "Squid nodes whose Cache Digest is imported",
     [](Parser& p, const N& n, std::string_view) { return p.SquidDigests(n); }},
    {"squid_digest_min_refresh", "duration", "\"1m\"", "earliest refetch of a digest",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 1000, &p.c().squid_digest_min_refresh_ms);
     }},
    {"squid_digest_max_refresh", "duration", "\"6h\"", "latest refetch of a digest",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 1000, &p.c().squid_digest_max_refresh_ms);
     }},
    // Transport limits.
    {"max_message_bytes", "integer", "67108864 (64 MiB)", "largest peer frame accepted",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Int(n, key, 4096, int64_t{1} << 30, &p.c().max_message_bytes);
     }},
    {"send_queue_limit", "integer", "1000", "messages queued per peer link",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 1, 1000000, &p.c().send_queue_limit);
     }},
    {"link_heartbeat_interval", "duration", "\"1s\"", "ZMTP heartbeat period, 0 for none",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 0, &p.c().link_heartbeat_interval_ms);
     }},
    {"link_heartbeat_timeout", "duration", "\"5s\"", "unanswered heartbeats that close a link",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 100, &p.c().link_heartbeat_timeout_ms);
     }},
};

const KeySpec* FindKey(std::string_view key) {
  for (const KeySpec& spec : kKeys) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
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

Status Parser::Finish(const toml::table& root) {
  for (const char* required : {"node_id", "listen", "data_dir"}) {
    if (!root.contains(required)) {
      return At(1, "missing required key '" + std::string(required) + "'");
    }
  }
  std::string host;
  int port = 0;
  (void)ParseTcpEndpoint(c_->listen, &host, &port);
  if (c_->advertise.empty() && (host == "0.0.0.0" || host == "*" || host == "[::]")) {
    return Error(*root.get("listen"),
                 "'advertise' is required when 'listen' binds a wildcard address");
  }
  if (c_->control.empty()) c_->control = "ipc://" + c_->data_dir + "/control.sock";
  const auto ctl_line = root.contains("control") ? root.get("control")->source().begin.line : 1;
  if (c_->control.rfind("ipc://", 0) == 0) {
    // sockaddr_un.sun_path holds 107 characters plus the terminating zero.
    if (c_->control.size() - 6 > 107) {
      return At(ctl_line, "control socket path is longer than 107 characters: '" +
                              c_->control.substr(6) + "' (set 'control' or a shorter 'data_dir')");
    }
  } else if (ParseTcpEndpoint(c_->control, &host, &port)) {
    if (port == 0) return At(ctl_line, "'control' needs a port other than '0'");
    if (!IsLoopbackHost(host) && !c_->allow_remote_control) {
      return At(ctl_line, "'control' endpoint '" + c_->control +
                              "' is not loopback; set 'allow_remote_control = true' to allow it");
    }
  } else {
    return At(ctl_line,
              "'control' must be 'ipc://PATH' or 'tcp://HOST:PORT', got '" + c_->control + "'");
  }
  if (squid_feed_line_ != 0 && c_->key_scheme != KeyScheme::kSquidMd5) {
    return At(squid_feed_line_, "a 'squid-store-log' feed needs key_scheme = 'squid-md5'");
  }
  if (squid_digest_line_ != 0 && c_->key_scheme != KeyScheme::kSquidMd5) {
    return At(squid_digest_line_, "'squid_digest' needs key_scheme = 'squid-md5'");
  }
  if (squid_url_line_ != 0 && c_->key_scheme != KeyScheme::kSquidMd5) {
    return At(squid_url_line_,
              "'squid_uri_whitespace' and 'squid_append_domain' need key_scheme = 'squid-md5'");
  }
  if (c_->squid_digest_max_refresh_ms < c_->squid_digest_min_refresh_ms) {
    return At(root.contains("squid_digest_max_refresh")
                  ? root.get("squid_digest_max_refresh")->source().begin.line
                  : 1,
              "'squid_digest_max_refresh' must be at least 'squid_digest_min_refresh'");
  }
  if (c_->key_file.empty()) c_->key_file = c_->data_dir + "/node.key";
  if (c_->log_file.empty()) c_->log_file = c_->data_dir + "/peerbloomd.log";
  if (c_->link_heartbeat_interval_ms > 0 &&
      c_->link_heartbeat_timeout_ms < c_->link_heartbeat_interval_ms) {
    return At(root.contains("link_heartbeat_timeout")
                  ? root.get("link_heartbeat_timeout")->source().begin.line
                  : 1,
              "'link_heartbeat_timeout' must be at least 'link_heartbeat_interval'");
  }
  Geometry geometry;
  Status s = ChooseGeometry(c_->profile, c_->capacity, c_->target_fpr, &geometry);
  if (!s.ok()) {
    return At(root.contains("capacity") ? root.get("capacity")->source().begin.line : 1,
              "filter geometry: " + s.message());
  }
  return Status::Ok();
}

}  // namespace

std::vector<ConfigKeyInfo> ConfigReference() {
  std::vector<ConfigKeyInfo> out;
  for (const KeySpec& k : kKeys) out.push_back({k.key, k.type, k.default_value, k.description});
  return out;
}

Status ParseConfig(std::string_view text, const std::string& path, Config* out) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  Config config;
  config.source_path = path;
  Parser parser(path, &config);
  PEERBLOOM_RETURN_IF_ERROR(parser.Parse(root));
  *out = std::move(config);
  return Status::Ok();
}

Status LoadConfig(const std::string& path, Config* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open config file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": cannot read config file");
  return ParseConfig(text.str(), path, out);
}

}  // namespace peerbloom::daemon
