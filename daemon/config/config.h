// Config: everything peerbloomd reads from its TOML file, with defaults and checks.
//
// docs/config.md documents every key (default, accepted values, check). Unknown keys are
// errors so a typo never silently falls back to a default. Every error message starts with
// "<file>:<line>:" where <line> is the line of the offending key (line 1 for a missing one).
//
// A plain struct: each field says its default; LoadConfig() is the one validating function.
#ifndef PEERBLOOM_DAEMON_CONFIG_CONFIG_H_
#define PEERBLOOM_DAEMON_CONFIG_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/client/client_config.h"
#include "peerbloom/gossip.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/params.h"
#include "peerbloom/squid_url.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// One line feed: a file (followed like `tail -F`) or a FIFO, holding `+ KEY`, `- KEY` and
// bare URL lines (docs/operations.md).
struct FeedConfig {
  std::string path;
  // Default: "line". Or "squid-store-log": Squid's store.log (docs/squid.md), which needs
  // key_scheme = "squid-md5". Or "nginx-cache": `path` is an nginx proxy_cache_path whose
  // files are the live set (docs/nginx.md), which needs key_scheme = "nginx-md5".
  std::string format = "line";
  // Default: false. For a regular file: start at the end on first sight instead of the start.
  bool start_at_end = false;
  // Default: none. squid-store-log only: Squid's ufs/aufs/diskd cache_dir paths, read to
  // rebuild the live set (docs/squid.md, "Rebuilding the live set") on the `rebuild` control
  // operation, and by itself when the feed starts without a saved position or the saved
  // position's tail is lost.
  std::vector<std::string> cache_dirs;
  // Default: "" (nginx's default: no levels). nginx-cache only: the `levels` of the
  // proxy_cache_path, e.g. "1:2".
  std::string levels;
  // Default: 3600000 (1 h); 0: never. nginx-cache only: how often the whole directory is
  // read again to catch what the events missed (drift is counted and logged).
  int64_t rescan_interval_ms = 3600000;
};

// One `[[squid_digest]]` entry: a Squid node without peerbloomd whose Cache Digest this
// daemon fetches from http://HOST:PORT/squid-internal-periodic/store_digest and gossips as
// "squid:HOST:PORT" (docs/squid.md).
struct SquidDigestConfig {
  std::string host;  // Required. A name or address, no scheme, port or path.
  uint16_t port = 3128;
};

struct Config {
  std::string source_path;  // the file this came from, for messages and reloads

  // Required. 1..64 bytes of [A-Za-z0-9._:-].
  std::string node_id;
  // Required. The peer endpoint to bind, "tcp://HOST:PORT"; port 0 lets the OS choose.
  std::string listen;
  // Default: listen (after binding, so port 0 advertises the chosen port).
  std::string advertise;
  // Default: none. Peers to join through.
  std::vector<Seed> seeds;
  // Parallel to `seeds`: a seed's `public_key_file` (a keygen .pub file), "" when the key is
  // inline or absent. ResolveSeedKeys() reads them into seeds[i].public_key.
  std::vector<std::string> seed_key_files;
  // Default: "". Keys the index hash and derives the wire cluster tag.
  std::string cluster_secret;
  // Default: "". A file whose first line is the cluster secret (read when the daemon starts):
  // the config itself can then be readable by others, Squid's helper included.
  std::string cluster_secret_file;
  // Default: client::kDefaultKeyScheme (squid-md5).
  KeyScheme key_scheme = client::kDefaultKeyScheme;
  // Default: Squid's defaults (uri_whitespace strip, no append_domain). The squid.conf
  // settings URLs are canonicalized with under squid-md5: keys `squid_uri_whitespace` and
  // `squid_append_domain`, which need key_scheme = "squid-md5".
  SquidUrlOptions squid_url;

  // Default: 1000000. Keys the counting filter is sized for.
  uint64_t capacity = 1000000;
  // Default: kBalanced.
  Profile profile = Profile::kBalanced;
  // Default: 0.01. Local false-positive target at capacity, also the summary target.
  double target_fpr = 0.01;
  // Default: kExact: the counting filter has c x 2^j counters (c odd), so it and its
  // summaries sit near the optimum size instead of up to 2x above it. While the key is not
  // set (`filter_sizes_set` false), a snapshot of the power-of-two size these settings give
  // (the default of earlier versions) keeps its geometry.
  SizeSteps filter_sizes = SizeSteps::kExact;
  bool filter_sizes_set = false;

  // Default: 1000.
  int64_t gossip_interval_ms = 1000;
  // Default: 10000.
  int64_t failure_timeout_ms = 10000;
  // How members are judged alive (docs/gossip.md, "Probe failure detection").
  FailureDetector failure_detector = FailureDetector::kProbe;
  // 0: twice gossip_interval_ms. The probe detector's protocol period.
  int64_t probe_interval_ms = 0;
  // 0: failure_timeout_ms less 2.5 probe intervals. The probe detector's suspicion timeout.
  int64_t suspicion_timeout_ms = 0;
  // Default: 5000.
  int64_t anti_entropy_interval_ms = 5000;
  // Default: 4.
  unsigned fanout = 4;
  // Default: 0.05. A batch of changes is full (published) when pending positions exceed this
  // fraction of the summary's bits (peerbloom/publish_policy.h).
  double publish_threshold = 0.05;
  // 0: twice gossip_interval_ms (2 s). The oldest pending change is published at most this
  // long after it was made.
  int64_t publish_max_delay_ms = 0;
  // 0: kDefaultPublishBatch (256). Pending summary positions that make a full batch.
  uint64_t publish_batch = 0;

  // Required. Snapshots, the default control socket and key files live here.
  std::string data_dir;
  // Default: client::DefaultControlEndpoint(data_dir), "ipc://<data_dir>/control.sock".
  std::string control;
  // Default: false. Whether `control` may be a non-loopback tcp endpoint.
  bool allow_remote_control = false;
  // Default: "<data_dir>/who-has.sock"; "" turns it off. The who-has line socket
  // (daemon/control/who_has_socket.h).
  std::string who_has_socket;
  bool who_has_socket_set = false;  // whether the file sets `who_has_socket`
  // Default: "" (the socket is the daemon's user's alone, mode 0600). A group given access to
  // the who-has socket (mode 0660), such as Squid's `proxy` for its helper. The daemon's user
  // must be a member, and every directory above the socket searchable by the group.
  std::string who_has_socket_group;
  // Default: "" (not read). Squid's route log, the access log in the `peerbloom` logformat
  // (peerbloom/squid_route_log.h): the daemon follows it and counts what became of the
  // requests routed to peers (hits, false hits, unreachable peers).
  std::string squid_route_log;
  // Default: empty. Node id -> Squid cache_peer name (the helper answers the name; the route
  // log names the peer by it).
  std::map<std::string, std::string> squid_peer_names;
  // nginx (docs/nginx.md). Default: NginxKeyTemplate::kDefault, the key nginx uses without a
  // proxy_cache_key line ("http://$proxy_host$request_uri": the URL it sends upstream).
  // The node's `proxy_cache_key`, for turning a URL into the key nginx caches it under
  // (peerbloom/nginx_cache.h). Needs key_scheme = "nginx-md5".
  std::string nginx_cache_key = std::string(NginxKeyTemplate::kDefault);
  // Default: "". The value of $proxy_host in nginx_cache_key (the upstream proxy_pass names).
  std::string nginx_proxy_host;
  // Default: "" (off). The unix socket nginx's auth_request asks which peer to fetch a miss
  // from (daemon/control/route_socket.h).
  std::string nginx_route_socket;
  // Default: "" (mode 0600). A group given the route socket (mode 0660), nginx's `www-data`.
  std::string nginx_route_socket_group;
  // Default: empty. Node id -> "HOST:PORT" of that peer's nginx sibling server, where a miss
  // routed to it is sent.
  std::map<std::string, std::string> nginx_siblings;
  // Default: false. A cluster-wide purge deletes the nginx cache files of the URL's key
  // (the nginx-cache feed's directory) when this node may hold it.
  bool purge_nginx = false;
  // Default: 0 (off). How long (us) the loop keeps polling without sleeping after
  // it answered a control or who-has-socket request, at most 10 ms.
  int64_t control_busy_poll_us = 0;
  // Default: "info". One of trace, debug, info, warn, error, critical, off.
  std::string log_level = "info";
  // Default: "<data_dir>/peerbloomd.log". Used when not running with --foreground.
  std::string log_file;
  // Default: "" (off). "HOST:PORT" on which GET /metrics serves Prometheus metrics.
  std::string metrics_listen;

  // Default: true. false sends everything in plaintext: unsafe except on loopback.
  bool curve = true;
  // Default: "<data_dir>/node.key". Written by `peerbloom keygen`.
  std::string key_file;
  // Default: "" (only seed keys are admitted). One Z85 public key per line.
  std::string authorized_keys;
  // Default: "<data_dir>/control.token" for a tcp control endpoint, "" for ipc. The secret
  // that clients of a tcp control endpoint send with every request (created at start, mode
  // 0600, when missing).
  std::string control_token_file;
  // Default: true with curve, false without. Refuse summaries, deltas, relayed epochs and
  // broadcasts of nodes without a `sign=` key in authorized_keys; needs curve and sign keys
  // in key_file. Nodes that have one must sign whatever this says (docs/security.md, "Signed
  // origins").
  bool require_signatures = true;
  // Whether require_signatures was set in the file (false: the default applies, and a
  // cluster not ready for it is refused at start rather than half heard).
  bool require_signatures_set = false;

  // Default: none.
  std::vector<FeedConfig> feeds;
  // Default: none. Needs key_scheme = "squid-md5"; no two entries with the same host:port.
  std::vector<SquidDigestConfig> squid_digests;
  // Default: 60000 and 21600000 (6 h). Bounds of the Expires-driven digest refresh.
  int64_t squid_digest_min_refresh_ms = 60000;
  int64_t squid_digest_max_refresh_ms = 21600000;

  // Default: 60000. 0 disables periodic snapshots (one is still taken on stop).
  int64_t snapshot_interval_ms = 60000;

  // Default: 67108864 (64 MiB). Largest peer frame accepted (ZMQ_MAXMSGSIZE).
  int64_t max_message_bytes = int64_t{64} << 20;
  // Default: 1000. Messages queued per peer link before sends are dropped (ZMQ_SNDHWM).
  int send_queue_limit = 1000;
  // Default: 0 (members x the per-summary bound). Bytes all members' summaries held may
  // take together (1 bit per position); a full summary beyond it is refused.
  int64_t max_peer_summary_bytes = 0;
  // Default: 64 and 67108864 (64 MiB). Imported digests one importer may have held here,
  // in number and in digest bytes; an import frame beyond either is refused.
  int64_t max_imports_per_importer = 64;
  int64_t max_import_bytes_per_importer = int64_t{64} << 20;
  // Default: 1024. Outgoing peer links open at most (one per member linked to, seeds and
  // relay links included); more are refused and counted.
  int64_t max_links = 1024;
  // Default: 3600000 (1 h). Epochs more than this ahead of the local wall clock are refused.
  int64_t max_clock_skew_ms = 3600000;
  // Default: 1000. ZMTP heartbeat period on peer links; 0 disables heartbeats.
  int64_t link_heartbeat_interval_ms = 1000;
  // Default: 5000. A link whose heartbeats go unanswered this long is closed.
  int64_t link_heartbeat_timeout_ms = 5000;

  // Test-only settings (keys test_*): fault injection and a wall-clock offset, for the fault
  // tests and the soak script. Never set in production. Applied again on SIGHUP.
  // Default: 0. Fractions of outgoing peer messages dropped, sent twice, sent late.
  double test_fault_drop = 0;
  double test_fault_duplicate = 0;
  double test_fault_reorder = 0;
  // Default: none. Peer endpoints every message to which is dropped.
  std::vector<std::string> test_fault_blocked;
  // Default: 0. Added to the wall clock (epochs, snapshot times), as if it had been stepped.
  int64_t test_wall_clock_offset_ms = 0;
  // Broadcast relay (docs/relay.md). Default: none. Node ids of this node's relay links;
  // their endpoints come from gossip membership.
  std::vector<std::string> relay_links;
  // Default: 16. Links a broadcast may travel.
  uint32_t relay_hop_limit = 16;
  // Default: 1000. Messages per origin per second a node relays; 0: no limit.
  uint32_t relay_rate_limit = 1000;
  // Default: 65536. Largest broadcast payload (the kind byte included).
  int64_t relay_max_payload_bytes = 65536;
  // Default: "" (none). "HOST:PORT" of the local Squid that a cluster-wide purge sends an
  // HTTP PURGE to when this node's filter may hold the URL.
  std::string purge_squid;
  // Default: none. The purge command hook, an argv array run without a shell with the URL
  // appended, instead of an HTTP PURGE (docs/relay.md). Excludes purge_squid.
  std::vector<std::string> purge_command;
  // Default: 10000 (10 s). A purge command still running this long is killed (SIGKILL).
  int64_t purge_command_timeout_ms = 10000;
};

// Parses and checks a config file. Fills every default; `out` is unchanged on error.
Status LoadConfig(const std::string& path, Config* out);
// The same from text already read; `path` only names it in messages.
Status ParseConfig(std::string_view text, const std::string& path, Config* out);

// One top-level key of the file, as the parser's table holds it (docs/config.md documents
// exactly these; a test checks). Array-of-tables keys ([[seeds]]) are named without brackets.
struct ConfigKeyInfo {
  std::string_view key;
  std::string_view type;           // string, bool, integer, float, duration, endpoint, ...
  std::string_view default_value;  // as docs/config.md shows it, or "required"
  std::string_view description;
};
std::vector<ConfigKeyInfo> ConfigReference();

// Reads every seed's public_key_file into its public_key. Errors name the file.
Status ResolveSeedKeys(Config* config);

// The wall clock in ms since 1970 as this daemon reads it: the system clock moved by
// test_wall_clock_offset_ms (0 outside tests). Timers run on the monotonic Clock; the wall
// clock only names epochs and dates snapshots and routed requests.
int64_t WallClockMs(const Config& config);

// Endpoint checks, shared with clients (peerbloom/client/client_config.h).
using client::IsLoopbackHost;
using client::ParseTcpEndpoint;

// "250ms", "2s", "5m", "1h"; *ms receives milliseconds. False on anything else.
bool ParseDuration(std::string_view text, int64_t* ms);
// "HOST:PORT" or "[IPV6]:PORT", PORT in 0..65535 (0: any free port), as `metrics_listen`
// takes it. InvalidArgument naming the value otherwise.
Status ParseListenAddress(std::string_view text, std::string* host, int* port);
// "0", "<N>us" or "<N>ms" into microseconds; false for anything else or above 10 s.
bool ParseMicros(std::string_view text, int64_t* us);

// Reads `cluster_secret_file` into `cluster_secret` (nothing to do without one). Called when
// the daemon starts and by --check-config, not by the parser: a config stays readable where
// the secret is not (Squid's helper reads the same file).
Status LoadClusterSecret(Config* config);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONFIG_CONFIG_H_
