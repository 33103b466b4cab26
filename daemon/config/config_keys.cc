// The table of top-level config keys (docs/config.md documents exactly these; a test
// checks). Each setter reads its value with the Parser's readers, whose messages the docs and
// tests quote.
#include "daemon/config/config_parser.h"
#include "peerbloom/client/client_config.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom::daemon {
namespace config_internal {
namespace {

constexpr uint64_t kMaxCapacity = uint64_t{1} << 32;

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
       // Imported Squid digests are named "squid:HOST:PORT" (docs/gossip.md).
       if (p.c().node_id.rfind(kImportedIdPrefix, 0) == 0) {
         return p.Error(n, "'node_id' must not start with '" + std::string(kImportedIdPrefix) +
                               "' (reserved for imported Squid digests), got '" + p.c().node_id +
                               "'");
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
    {"cluster_secret_file", "string", "\"\"",
     "a file whose first line is the cluster secret, instead of cluster_secret",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().cluster_secret_file);
     }},
    {"key_scheme", "string", "\"squid-md5\"", "how a URL becomes key bytes",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       return p.Placed(n, client::ParseKeySchemeValue(name, &p.c().key_scheme));
     }},
    {"squid_uri_whitespace", "string", "\"strip\"", "Squid's uri_whitespace, for canonical URLs",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       PEERBLOOM_RETURN_IF_ERROR(
           p.Placed(n, client::ParseUriWhitespaceValue(name, &p.c().squid_url)));
       p.NoteSquidUrlKey(n);
       return Status::Ok();
     }},
    {"squid_append_domain", "string", "\"\"", "Squid's append_domain, for canonical URLs",
     [](Parser& p, const N& n, std::string_view key) {
       std::string domain;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &domain));
       PEERBLOOM_RETURN_IF_ERROR(
           p.Placed(n, client::ParseAppendDomainValue(domain, &p.c().squid_url)));
       p.NoteSquidUrlKey(n);
       return Status::Ok();
     }},
    {"squid_peer_names", "table", "{}",
     "node id -> Squid cache_peer name, for `peerbloom squid-helper`",
     [](Parser& p, const N& n, std::string_view) {
       // The helper reads it too (lib/client/client_config.cc); the daemon maps the route
       // log's cache_peer names back to node ids with it.
       const toml::table* table = n.as_table();
       if (table == nullptr) return p.Error(n, "'squid_peer_names' must be a table");
       for (auto&& [id, v] : *table) {
         const std::string name = v.value_or(std::string());
         PEERBLOOM_RETURN_IF_ERROR(
             p.Placed(v, client::CheckSquidPeerNameValue(id.str(), v.is_string() ? name : "")));
         p.c().squid_peer_names[std::string(id.str())] = name;
       }
       return Status::Ok();
     }},
    {"squid_route_log", "string", "\"\"",
     "Squid's route log (logformat peerbloom), read to count routed requests' outcomes",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().squid_route_log);
     }},
    // nginx (docs/nginx.md).
    {"nginx_cache_key", "string", "\"http://$proxy_host$request_uri\"",
     "nginx's proxy_cache_key, to key URLs as the cache does",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().nginx_cache_key);
     }},
    {"nginx_proxy_host", "string", "\"\"", "the value of $proxy_host in nginx_cache_key",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().nginx_proxy_host);
     }},
    {"nginx_route_socket", "string", "\"\"",
     "unix socket nginx's auth_request asks which peer holds a miss",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().nginx_route_socket));
       const std::string& v = p.c().nginx_route_socket;
       if (!v.empty() && v[0] != '/') {
         return p.Error(n, "'nginx_route_socket' must be an absolute path, got '" + v + "'");
       }
       if (v.size() > 107) return p.Error(n, "'nginx_route_socket' is longer than 107 bytes");
       return Status::Ok();
     }},
    {"nginx_route_socket_group", "string", "\"\"",
     "group given the route socket (mode 0660), such as www-data",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().nginx_route_socket_group);
     }},
    {"nginx_siblings", "table", "{}", "node id -> HOST:PORT of its nginx sibling server",
     [](Parser& p, const N& n, std::string_view) {
       const toml::table* table = n.as_table();
       if (table == nullptr) return p.Error(n, "'nginx_siblings' must be a table");
       for (auto&& [id, v] : *table) {
         const std::string addr = v.value_or(std::string());
         std::string host;
         int port = 0;
         if (!v.is_string() || !ParseListenAddress(addr, &host, &port).ok() || port == 0 ||
             addr.find_first_of(" \t\r\n\"") != std::string::npos) {
           return p.Error(v, "'nginx_siblings." + std::string(id.str()) +
                                 "' must be \"HOST:PORT\" with a port, got '" + addr + "'");
         }
         p.c().nginx_siblings[std::string(id.str())] = addr;
       }
       return Status::Ok();
     }},
    {"purge_nginx", "bool", "false", "purges delete the URL's nginx cache files",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Bool(n, key, &p.c().purge_nginx);
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
    {"filter_sizes", "string", "\"exact\"", "counter counts the filter may take",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       if (name != "power-of-two" && name != "exact") {
         return p.Error(n, "'filter_sizes' must be 'power-of-two' or 'exact', got '" + name + "'");
       }
       p.c().filter_sizes = name == "exact" ? SizeSteps::kExact : SizeSteps::kPowerOfTwo;
       p.c().filter_sizes_set = true;
       return Status::Ok();
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
    {"failure_detector", "string", "\"probe\"", "how members are judged alive",
     [](Parser& p, const N& n, std::string_view key) {
       std::string name;
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &name));
       if (name != "heartbeat" && name != "probe") {
         return p.Error(n, "'failure_detector' must be 'heartbeat' or 'probe', got '" + name + "'");
       }
       p.c().failure_detector =
           name == "probe" ? FailureDetector::kProbe : FailureDetector::kHeartbeat;
       return Status::Ok();
     }},
    {"probe_interval", "duration", "\"0s\"", "probe detector: protocol period",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 0, &p.c().probe_interval_ms);
     }},
    {"suspicion_timeout", "duration", "\"0s\"", "probe detector: suspected to dead",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 0, &p.c().suspicion_timeout_ms);
     }},
    {"anti_entropy_interval", "duration", "\"5s\"", "period of digest exchanges",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 10, &p.c().anti_entropy_interval_ms);
     }},
    {"fanout", "integer", "4", "live members linked to besides the seeds",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 1, 64, &p.c().fanout);
     }},
    {"publish_batch", "integer", "0", "pending positions that publish at once",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 0, int64_t{1} << 32, &p.c().publish_batch);
     }},
    {"publish_max_delay", "duration", "\"0s\"", "longest wait of a change for publication",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 0, &p.c().publish_max_delay_ms);
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
    {"control_token_file", "string", "\"<data_dir>/control.token\" for tcp control",
     "the secret clients of a tcp control endpoint send",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().control_token_file);
     }},
    {"allow_remote_control", "bool", "false", "whether control may be non-loopback tcp",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Bool(n, key, &p.c().allow_remote_control);
     }},
    {"who_has_socket", "string", "\"<data_dir>/who-has.sock\"",
     "the who-has line socket; \"\" turns it off",
     [](Parser& p, const N& n, std::string_view key) {
       p.c().who_has_socket_set = true;
       return p.String(n, key, &p.c().who_has_socket);
     }},
    {"who_has_socket_group", "string", "\"\"",
     "a group given access to the who-has socket (mode 0660), e.g. \"proxy\"",
     [](Parser& p, const N& n, std::string_view key) {
       return p.String(n, key, &p.c().who_has_socket_group);
     }},
    {"control_busy_poll", "string", "\"0us\"", "polling without sleep after a request",
     [](Parser& p, const N& n, std::string_view key) {
       if (!n.is_string() || !ParseMicros(*n.value<std::string>(), &p.c().control_busy_poll_us) ||
           p.c().control_busy_poll_us > 10000) {
         return p.Error(n, "'" + std::string(key) +
                               "' must be a duration like \"50us\" or \"1ms\", at most \"10ms\"");
       }
       return Status::Ok();
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
    {"metrics_listen", "string", "\"\"", "HOST:PORT of the /metrics HTTP endpoint",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().metrics_listen));
       if (p.c().metrics_listen.empty()) return Status::Ok();
       std::string host;
       int port = 0;
       const Status s = ParseListenAddress(p.c().metrics_listen, &host, &port);
       return s.ok() ? s : p.Error(n, "'metrics_listen': " + s.message());
     }},
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
    {"require_signatures", "bool", "true (false with curve = false)",
     "refuse what nodes without a sign key originate, not only forged signatures",
     [](Parser& p, const N& n, std::string_view key) {
       p.c().require_signatures_set = true;
       return p.Bool(n, key, &p.c().require_signatures);
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
    {"max_peer_summary_bytes", "integer", "0 (no bound beyond members x summary bound)",
     "bytes all members' summaries held may take",
     [](Parser& p, const N& n,
        std::string_view
            key) { return p.Int(n, key, 0, int64_t{1} << 40, &p.c().max_peer_summary_bytes); }},
    {"max_imports_per_importer", "integer", "64", "imported digests one importer may hold here",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Int(n, key, 1, 65536, &p.c().max_imports_per_importer);
     }},
    {"max_import_bytes_per_importer", "integer", "67108864 (64 MiB)",
     "digest bytes one importer's imports may hold here",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Int(n, key, 1 << 20, int64_t{1} << 34, &p.c().max_import_bytes_per_importer);
     }},
    {"max_links", "integer", "1024", "outgoing peer links open at most",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Int(n, key, 1, 65536, &p.c().max_links);
     }},
    {"max_clock_skew", "duration", "\"1h\"",
     "unsigned claims of epochs further ahead of the clock are refused",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 1000, &p.c().max_clock_skew_ms);
     }},
    {"link_heartbeat_interval", "duration", "\"1s\"", "ZMTP heartbeat period, 0 for none",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 0, &p.c().link_heartbeat_interval_ms);
     }},
    {"link_heartbeat_timeout", "duration", "\"5s\"", "unanswered heartbeats that close a link",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 100, &p.c().link_heartbeat_timeout_ms);
     }},
    // Test-only: fault injection and a stepped wall clock. Never set in production.
    {"test_fault_drop", "float", "0", "TEST ONLY: fraction of peer messages dropped",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Fraction(n, key, 0, 1, &p.c().test_fault_drop);
     }},
    {"test_fault_duplicate", "float", "0", "TEST ONLY: fraction of peer messages sent twice",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Fraction(n, key, 0, 1, &p.c().test_fault_duplicate);
     }},
    {"test_fault_reorder", "float", "0", "TEST ONLY: fraction of peer messages sent late",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Fraction(n, key, 0, 1, &p.c().test_fault_reorder);
     }},
    {"test_fault_blocked", "array of strings", "none",
     "TEST ONLY: peer endpoints all messages to which are dropped",
     [](Parser& p, const N& n, std::string_view key) {
       const toml::array* a = n.as_array();
       if (a == nullptr) return p.Error(n, "'test_fault_blocked' must be an array of strings");
       p.c().test_fault_blocked.clear();
       for (const toml::node& e : *a) {
         std::string endpoint;
         PEERBLOOM_RETURN_IF_ERROR(p.String(e, key, &endpoint));
         p.c().test_fault_blocked.push_back(endpoint);
       }
       return Status::Ok();
     }},
    {"test_wall_clock_offset", "integer", "0", "TEST ONLY: milliseconds added to the wall clock",
     [](Parser& p, const N& n, std::string_view key) {
       constexpr int64_t kYearMs = int64_t{366} * 24 * 3600 * 1000;
       return p.Int(n, key, -kYearMs, kYearMs, &p.c().test_wall_clock_offset_ms);
     }},
    // Broadcast relay.
    {"relay_links", "array of strings", "none", "node ids of this node's relay links",
     [](Parser& p, const N& n, std::string_view key) {
       const toml::array* peers = n.as_array();
       if (peers == nullptr) return p.Error(n, "'relay_links' must be an array of node ids");
       p.c().relay_links.clear();
       for (const N& item : *peers) {
         std::string peer;
         PEERBLOOM_RETURN_IF_ERROR(p.String(item, key, &peer));
         if (!IsValidNodeId(peer)) {
           return p.Error(item, "'relay_links' must hold node ids, got '" + peer + "'");
         }
         for (const std::string& other : p.c().relay_links) {
           if (other == peer) return p.Error(item, "'relay_links' names '" + peer + "' twice");
         }
         p.c().relay_links.push_back(std::move(peer));
       }
       return Status::Ok();
     }},
    {"relay_hop_limit", "integer", "16", "links a broadcast may travel",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 1, 65535, &p.c().relay_hop_limit);
     }},
    {"relay_rate_limit", "integer", "1000", "broadcasts relayed per origin per second, 0: any",
     [](Parser& p, const N& n, std::string_view key) {
       return p.IntTo(n, key, 0, 1000000, &p.c().relay_rate_limit);
     }},
    {"relay_max_payload_bytes", "integer", "65536", "largest broadcast payload",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Int(n, key, 2, int64_t{1} << 20, &p.c().relay_max_payload_bytes);
     }},
    {"purge_squid", "string", "\"\"", "HOST:PORT of the local Squid that purges go to",
     [](Parser& p, const N& n, std::string_view key) {
       PEERBLOOM_RETURN_IF_ERROR(p.String(n, key, &p.c().purge_squid));
       const std::string& v = p.c().purge_squid;
       const size_t colon = v.rfind(':');
       const bool ok = colon != std::string::npos && colon > 0 && colon + 1 < v.size() &&
                       v.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                       v.size() - colon - 1 <= 5 && std::stoi(v.substr(colon + 1)) > 0 &&
                       std::stoi(v.substr(colon + 1)) < 65536;
       if (!v.empty() && !ok) {
         return p.Error(n, "'purge_squid' must be HOST:PORT, got '" + v + "'");
       }
       return Status::Ok();
     }},
    {"purge_command", "array of strings", "none",
     "program and arguments run for a purge, URL appended",
     [](Parser& p, const N& n, std::string_view key) {
       const toml::array* argv = n.as_array();
       if (argv == nullptr || argv->empty()) {
         return p.Error(n, "'purge_command' must be a non-empty array of strings");
       }
       p.c().purge_command.clear();
       for (const N& item : *argv) {
         std::string arg;
         PEERBLOOM_RETURN_IF_ERROR(p.String(item, key, &arg));
         if (arg.find('\0') != std::string::npos) {
           return p.Error(item, "'purge_command' arguments must not hold NUL bytes");
         }
         p.c().purge_command.push_back(std::move(arg));
       }
       if (p.c().purge_command[0].empty() || p.c().purge_command[0][0] != '/') {
         return p.Error(n, "'purge_command' must start with an absolute path, got '" +
                               p.c().purge_command[0] + "'");
       }
       return Status::Ok();
     }},
    {"purge_command_timeout", "duration", "\"10s\"", "a purge command is killed after this",
     [](Parser& p, const N& n, std::string_view key) {
       return p.Duration(n, key, 100, &p.c().purge_command_timeout_ms);
     }},
};

}  // namespace

const KeySpec* FindKey(std::string_view key) {
  for (const KeySpec& spec : kKeys) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

}  // namespace config_internal

std::vector<ConfigKeyInfo> ConfigReference() {
  std::vector<ConfigKeyInfo> out;
  for (const config_internal::KeySpec& k : config_internal::kKeys)
    out.push_back({k.key, k.type, k.default_value, k.description});
  return out;
}

}  // namespace peerbloom::daemon
