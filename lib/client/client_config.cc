// The client's keys of a peerbloomd config, checked with the daemon's rules and messages so
// that a config the daemon accepts reads the same here (tests/daemon/config_test.cc compares
// the two readers).
#include "peerbloom/client/client_config.h"

#include <sys/stat.h>

#include <toml++/toml.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "peerbloom/client/control_token.h"
#include "peerbloom/client/toml_values.h"
#include "peerbloom/client/who_has_socket.h"

namespace peerbloom::client {
namespace {

// sockaddr_un.sun_path holds 107 characters plus the terminating zero.
constexpr size_t kMaxIpcPath = 107;

class Reader {
 public:
  Reader(const std::string& path, ClientConfig* config) : path_(path), c_(config) {}

  Status Read(const toml::table& root);

 private:
  Status At(uint32_t line, const std::string& what) const {
    return Status::InvalidArgument(path_ + ":" + std::to_string(line) + ": " + what);
  }
  Status Error(const toml::node& node, const std::string& what) const {
    return At(node.source().begin.line, what);
  }
  // `s`, its message placed at `node`'s line.
  Status Placed(const toml::node& node, const Status& s) const {
    return s.ok() ? s : Error(node, s.message());
  }
  uint32_t LineOf(const toml::table& root, std::string_view key) const {
    const toml::node* n = root.get(key);
    return n == nullptr ? 1 : n->source().begin.line;
  }
  Status String(const toml::node& n, std::string_view key, std::string* out) const;
  Status Bool(const toml::node& n, std::string_view key, bool* out) const;
  Status Key(std::string_view key, const toml::node& n);
  Status PeerNames(const toml::node& n);
  Status Finish(const toml::table& root);

  std::string path_;
  ClientConfig* c_;
  std::string data_dir_;
  bool allow_remote_control_ = false;
  uint32_t squid_url_line_ = 0;  // line of the first squid_uri_* / append_domain key
  std::string nginx_cache_key_ = std::string(NginxKeyTemplate::kDefault);
  std::string nginx_proxy_host_;
};

Status Reader::String(const toml::node& n, std::string_view key, std::string* out) const {
  const Status s = TomlString(n, key, out);
  return s.ok() ? s : Error(n, s.message());
}

Status Reader::Bool(const toml::node& n, std::string_view key, bool* out) const {
  const Status s = TomlBool(n, key, out);
  return s.ok() ? s : Error(n, s.message());
}

Status Reader::PeerNames(const toml::node& n) {
  const toml::table* table = n.as_table();
  if (table == nullptr) return Error(n, "'squid_peer_names' must be a table");
  for (auto&& [id, v] : *table) {
    const std::string name = v.value_or(std::string());
    const Status s = CheckSquidPeerNameValue(id.str(), v.is_string() ? name : "");
    if (!s.ok()) return Error(v, s.message());
    c_->squid_peer_names[std::string(id.str())] = name;
  }
  return Status::Ok();
}

Status Reader::Key(std::string_view key, const toml::node& n) {
  if (key == kKeyControl) return String(n, key, &c_->control);
  if (key == kKeyControlTokenFile) return String(n, key, &c_->control_token_file);
  if (key == kKeyClusterSecret) return String(n, key, &c_->cluster_secret);
  if (key == kKeyNodeId) return String(n, key, &c_->node_id);
  if (key == kKeyClusterSecretFile) return String(n, key, &c_->cluster_secret_file);
  if (key == kKeyWhoHasSocket) return String(n, key, &c_->who_has_socket);
  if (key == kKeyAllowRemoteControl) return Bool(n, key, &allow_remote_control_);
  if (key == kKeyDataDir) {
    PEERBLOOM_RETURN_IF_ERROR(String(n, key, &data_dir_));
    if (data_dir_.empty()) return Error(n, "'data_dir' must not be empty");
    return Status::Ok();
  }
  std::string value;
  if (key == kKeyKeyScheme) {
    PEERBLOOM_RETURN_IF_ERROR(String(n, key, &value));
    return Placed(n, ParseKeySchemeValue(value, &c_->key_scheme));
  }
  if (key == kKeySquidUriWhitespace) {
    PEERBLOOM_RETURN_IF_ERROR(String(n, key, &value));
    PEERBLOOM_RETURN_IF_ERROR(Placed(n, ParseUriWhitespaceValue(value, &c_->squid_url)));
  } else if (key == kKeySquidAppendDomain) {
    PEERBLOOM_RETURN_IF_ERROR(String(n, key, &value));
    PEERBLOOM_RETURN_IF_ERROR(Placed(n, ParseAppendDomainValue(value, &c_->squid_url)));
  } else if (key == kKeySquidPeerNames) {
    return PeerNames(n);
  } else if (key == kKeyNginxCacheKey) {
    return String(n, key, &nginx_cache_key_);
  } else if (key == kKeyNginxProxyHost) {
    return String(n, key, &nginx_proxy_host_);
  } else {
    return Status::Ok();  // a daemon-only key
  }
  if (squid_url_line_ == 0) squid_url_line_ = n.source().begin.line;
  return Status::Ok();
}

Status Reader::Read(const toml::table& root) {
  // The daemon's order: keys as the table holds them (sorted), then the cross-key checks.
  for (auto&& [k, v] : root) PEERBLOOM_RETURN_IF_ERROR(Key(k.str(), v));
  return Finish(root);
}

Status Reader::Finish(const toml::table& root) {
  if (c_->control.empty()) {
    if (data_dir_.empty()) return At(1, "missing required key 'data_dir'");
    c_->control = DefaultControlEndpoint(data_dir_);
  }
  Status s = CheckControlEndpoint(c_->control, allow_remote_control_);
  if (!s.ok()) return At(LineOf(root, kKeyControl), s.message());
  if (!root.contains(kKeyControlTokenFile)) {
    c_->control_token_file = DefaultControlTokenFile(c_->control, data_dir_);
  }
  if (!root.contains(kKeyWhoHasSocket) && !data_dir_.empty()) {
    c_->who_has_socket = DefaultWhoHasSocket(data_dir_);
  }
  if (squid_url_line_ != 0 && c_->key_scheme != KeyScheme::kSquidMd5) {
    return At(squid_url_line_, kSquidUrlKeysNeedMd5);
  }
  if (c_->key_scheme == KeyScheme::kNginxMd5) {
    (void)NginxKeyTemplate::Parse(nginx_cache_key_, nginx_proxy_host_, &c_->nginx_key);
  }
  return Status::Ok();
}

}  // namespace

Status ClusterSecret(const ClientConfig& config, std::string* secret) {
  if (config.cluster_secret_file.empty()) {
    *secret = config.cluster_secret;
    return Status::Ok();
  }
  return ReadSecretFile("cluster_secret_file", config.cluster_secret_file, secret);
}

Status ParseKeySchemeValue(std::string_view name, KeyScheme* out) {
  const auto scheme = ParseKeyScheme(name);
  if (!scheme) {
    return Status::InvalidArgument("'key_scheme' must be 'squid-md5', 'nginx-md5' or 'raw', got '" +
                                   std::string(name) + "'");
  }
  *out = *scheme;
  return Status::Ok();
}

Status ParseUriWhitespaceValue(std::string_view name, SquidUrlOptions* out) {
  const auto policy = ParseUriWhitespace(name);
  if (!policy) {
    return Status::InvalidArgument(
        "'squid_uri_whitespace' must be 'strip', 'allow', 'encode', 'chop' or 'deny', got '" +
        std::string(name) + "'");
  }
  out->uri_whitespace = *policy;
  return Status::Ok();
}

Status ParseAppendDomainValue(std::string_view domain, SquidUrlOptions* out) {
  SquidUrlOptions o = *out;
  o.append_domain = std::string(domain);
  if (!ValidateSquidUrlOptions(o).ok()) {
    return Status::InvalidArgument(
        "'squid_append_domain' must be a '.' followed by at most 253 letters, digits, '-', '.' "
        "or '_', got '" +
        o.append_domain + "'");
  }
  *out = std::move(o);
  return Status::Ok();
}

Status CheckSquidPeerNameValue(std::string_view id, std::string_view name) {
  if (IsValidSquidPeerName(name)) return Status::Ok();
  return Status::InvalidArgument("'squid_peer_names." + std::string(id) +
                                 "' must be 1-64 characters of [A-Za-z0-9._-]");
}

bool IsValidSquidPeerName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

std::string DefaultControlEndpoint(std::string_view data_dir) {
  return "ipc://" + std::string(data_dir) + "/control.sock";
}

Status CheckControlEndpoint(std::string_view control, bool allow_remote) {
  const std::string text(control);
  std::string host;
  int port = 0;
  if (text.rfind("ipc://", 0) == 0) {
    if (text.size() - 6 > kMaxIpcPath) {
      return Status::InvalidArgument("control socket path is longer than 107 characters: '" +
                                     text.substr(6) + "' (set 'control' or a shorter 'data_dir')");
    }
  } else if (ParseTcpEndpoint(text, &host, &port)) {
    if (port == 0) return Status::InvalidArgument("'control' needs a port other than '0'");
    if (!IsLoopbackHost(host) && !allow_remote) {
      return Status::InvalidArgument(
          "'control' endpoint '" + text +
          "' is not loopback; set 'allow_remote_control = true' to allow it");
    }
  } else {
    return Status::InvalidArgument("'control' must be 'ipc://PATH' or 'tcp://HOST:PORT', got '" +
                                   text + "'");
  }
  return Status::Ok();
}

bool ParseTcpEndpoint(std::string_view endpoint, std::string* host, int* port) {
  constexpr std::string_view kPrefix = "tcp://";
  if (endpoint.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = endpoint.substr(kPrefix.size());
  // The last ':' splits: an IPv6 host in brackets holds colons of its own.
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) return false;
  std::string_view port_text = rest.substr(colon + 1);
  if (port_text.size() > 5) return false;
  int value = 0;
  for (char ch : port_text) {
    if (ch < '0' || ch > '9') return false;
    value = value * 10 + (ch - '0');
  }
  if (value > 65535) return false;
  *host = std::string(rest.substr(0, colon));
  *port = value;
  return true;
}

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "[::1]" || host.substr(0, 4) == "127.";
}

Status ParseClientConfig(std::string_view text, const std::string& path, ClientConfig* out) {
  toml::table root;
  PEERBLOOM_RETURN_IF_ERROR(TomlParse(text, path, &root));
  ClientConfig config;
  config.source_path = path;
  Reader reader(path, &config);
  PEERBLOOM_RETURN_IF_ERROR(reader.Read(root));
  *out = std::move(config);
  return Status::Ok();
}

Status ReadConfigFile(const std::string& path, std::string* text) {
  // A directory or a FIFO would open and then fail or block: name what it is instead.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + (S_ISDIR(st.st_mode)
                                               ? ": config file is a directory"
                                               : ": config file is not a regular file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open config file: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": cannot read config file");
  *text = std::move(bytes).str();
  return Status::Ok();
}

Status LoadClientConfig(const std::string& path, ClientConfig* out) {
  std::string text;
  PEERBLOOM_RETURN_IF_ERROR(ReadConfigFile(path, &text));
  return ParseClientConfig(text, path, out);
}

}  // namespace peerbloom::client
