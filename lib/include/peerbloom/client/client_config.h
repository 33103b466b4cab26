// What a client takes from a peerbloomd config file (docs/config.md): where the daemon's
// control endpoint is and how the cluster makes keys. The daemon's own parser
// (daemon/config/config.*) reads the same keys with the same defaults and checks; this reader
// ignores every other key, so a client needs nothing of the daemon to use a node's config.
//
// A plain struct: each field says its default; LoadClientConfig() is the validating function.
// Every error message starts with "<file>:<line>:" like the daemon's.
#ifndef PEERBLOOM_CLIENT_CLIENT_CONFIG_H_
#define PEERBLOOM_CLIENT_CLIENT_CONFIG_H_

#include <map>
#include <string>
#include <string_view>

#include "peerbloom/key_scheme.h"
#include "peerbloom/nginx_cache.h"
#include "peerbloom/squid_url.h"
#include "peerbloom/status.h"

namespace peerbloom::client {

// The TOML keys a client reads, named once for both readers.
inline constexpr std::string_view kKeyControl = "control";
inline constexpr std::string_view kKeyDataDir = "data_dir";
inline constexpr std::string_view kKeyAllowRemoteControl = "allow_remote_control";
inline constexpr std::string_view kKeyClusterSecret = "cluster_secret";
inline constexpr std::string_view kKeyKeyScheme = "key_scheme";
inline constexpr std::string_view kKeySquidUriWhitespace = "squid_uri_whitespace";
inline constexpr std::string_view kKeySquidAppendDomain = "squid_append_domain";
inline constexpr std::string_view kKeySquidPeerNames = "squid_peer_names";
inline constexpr std::string_view kKeyNginxCacheKey = "nginx_cache_key";
inline constexpr std::string_view kKeyNginxProxyHost = "nginx_proxy_host";
inline constexpr std::string_view kKeyControlTokenFile = "control_token_file";
inline constexpr std::string_view kKeyNodeId = "node_id";
inline constexpr std::string_view kKeyClusterSecretFile = "cluster_secret_file";
inline constexpr std::string_view kKeyWhoHasSocket = "who_has_socket";

inline constexpr KeyScheme kDefaultKeyScheme = KeyScheme::kSquidMd5;
// The default `control`: "ipc://<data_dir>/control.sock".
std::string DefaultControlEndpoint(std::string_view data_dir);

struct ClientConfig {
  std::string source_path;  // the file this came from
  // Default: DefaultControlEndpoint(data_dir); the config must then have `data_dir`.
  std::string control;
  // Default: DefaultControlTokenFile(control, data_dir) (peerbloom/client/control_token.h):
  // "<data_dir>/control.token" for a tcp control endpoint, "" for ipc.
  std::string control_token_file;
  // Default: "". Keys the index hash.
  std::string cluster_secret;
  // Default: "". Where the secret is when the config does not hold it: not read here (the
  // helper, run as Squid's user, may not read it); ClusterSecret() reads it for the tools
  // that key lookups themselves.
  std::string cluster_secret_file;
  // Default: "". The daemon's node id (its own entry in who-has answers).
  std::string node_id;
  // Default: "<data_dir>/who-has.sock" when the config has a data_dir, else ""; "" when the
  // config turns the socket off. The daemon's who-has line socket.
  std::string who_has_socket;
  // Default: kDefaultKeyScheme.
  KeyScheme key_scheme = kDefaultKeyScheme;
  // Default: Squid's defaults. From `squid_uri_whitespace` and `squid_append_domain`, which
  // need key_scheme = "squid-md5".
  SquidUrlOptions squid_url;
  // Default: empty (a peer's cache_peer name is its node id). From `squid_peer_names`, a
  // table node id -> the Squid `cache_peer name=` of that node, which `squid-helper` answers.
  std::map<std::string, std::string> squid_peer_names;
  // Default: nginx's default key. From `nginx_cache_key` and `nginx_proxy_host` under
  // key_scheme = "nginx-md5" (the daemon checks them; a template that does not parse here
  // is left unparsed, and URLs are then keyed as given).
  NginxKeyTemplate nginx_key;
};

// The cluster secret: `cluster_secret`, or the first line of `cluster_secret_file`.
Status ClusterSecret(const ClientConfig& config, std::string* secret);

// Whether `name` can be a Squid cache_peer name in a helper's annotation: 1-64 characters of
// [A-Za-z0-9._-]. Both config readers use it for `squid_peer_names`.
bool IsValidSquidPeerName(std::string_view name);

// The rules of the client's keys that peerbloomd's config reader applies too, in one place:
// each takes the key's string value and returns InvalidArgument with the message both
// readers print after "FILE:LINE: ".
Status ParseKeySchemeValue(std::string_view name, KeyScheme* out);
Status ParseUriWhitespaceValue(std::string_view name, SquidUrlOptions* out);
Status ParseAppendDomainValue(std::string_view domain, SquidUrlOptions* out);
// One `squid_peer_names` entry: node id `id` -> cache_peer name `name`.
Status CheckSquidPeerNameValue(std::string_view id, std::string_view name);
// The message for a squid_uri_whitespace or squid_append_domain key without squid-md5 keys.
inline constexpr char kSquidUrlKeysNeedMd5[] =
    "'squid_uri_whitespace' and 'squid_append_domain' need key_scheme = 'squid-md5'";

// Reads the client's keys of a config file; `out` is unchanged on error. IOError when the
// file cannot be read, InvalidArgument for TOML that does not parse or a value that the
// daemon would refuse too (other keys are not looked at).
Status LoadClientConfig(const std::string& path, ClientConfig* out);
// The whole config file at `path` (the daemon's reader uses it too), or IOError naming it.
Status ReadConfigFile(const std::string& path, std::string* text);
// The same from text already read; `path` only names it in messages.
Status ParseClientConfig(std::string_view text, const std::string& path, ClientConfig* out);

// Whether `control` is an endpoint a daemon may bind: "ipc://PATH" with a path that fits a
// unix socket address, or "tcp://HOST:PORT" with a port other than 0 and a loopback host
// unless `allow_remote`. The message names the problem without a file or line.
Status CheckControlEndpoint(std::string_view control, bool allow_remote);

// "tcp://HOST:PORT" with a numeric port; *host and *port receive it.
bool ParseTcpEndpoint(std::string_view endpoint, std::string* host, int* port);
bool IsLoopbackHost(std::string_view host);

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_CLIENT_CONFIG_H_
