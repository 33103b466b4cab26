// `peerbloom squid-helper`: Squid's external ACL helper protocol answered from the local
// daemon's who-has (docs/squid.md, "Routing misses with the summaries").
//
// Squid writes one request a line, "ID URL" with `concurrency=N` (ID is Squid's channel id)
// or "URL" without; the helper answers "ID OK peer=NAME" when a peer's summary claims the URL
// (NAME is that peer's cache_peer name) and "ID ERR" when none does, when the line is not a
// request, or when the daemon does not answer within the bound. Lines that wait together go
// to the daemon as one who-has batch.
#ifndef PEERBLOOM_CLI_SQUID_HELPER_H_
#define PEERBLOOM_CLI_SQUID_HELPER_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/client/who_has.h"

namespace peerbloom::cli {

// One request line of Squid's.
struct HelperRequest {
  std::string channel;  // "" without concurrency
  std::string url;      // percent-decoded; "" when the line holds no URL
};

// Splits "ID URL [ignored...]" or "URL [ignored...]" and decodes the URL's %XX escapes
// (Squid escapes the arguments it sends to external ACL helpers).
HelperRequest ParseHelperLine(std::string_view line);

// %XX decoded; a '%' not followed by two hex digits is kept as it is.
std::string PercentDecode(std::string_view text);

// The cache_peer name a node is answered as: `names` (squid_peer_names) first, else the node
// id when it is a valid cache_peer name, else "" (the node is not routed to).
std::string PeerName(const std::map<std::string, std::string>& names, std::string_view node_id);

// What the helper answered since it started. It sends them to the daemon in a report line
// on the who-has socket (daemon/observe/helper_reports.h), so they reach stats, /metrics and `top`.
struct HelperCounters {
  uint64_t peer = 0;     // OK peer=NAME
  uint64_t none = 0;     // ERR: no peer's summary claims the URL
  uint64_t invalid = 0;  // ERR: the line held no URL
  // ERR because the daemon could not be asked, by cause (client::SocketFailure); answers
  // given at once during --retry-ms after a failure count under that failure's cause.
  uint64_t no_socket = 0;
  uint64_t denied = 0;
  uint64_t refused = 0;
  uint64_t timeout = 0;
  uint64_t other = 0;
  // "\x01peerbloom-helper pid=P peer=N ..." without the newline.
  std::string ReportLine(long pid) const;
  bool operator==(const HelperCounters&) const = default;
};

// Appends one answer line per request to *out. `reply` is null when the daemon gave no
// answer: every request is then answered ERR. The peer named is the first non-local node
// with a name; the answering node itself is never named (a local hit needs no route).
// `counts`, when given, counts the OK, no-peer and not-a-URL answers.
void AppendHelperAnswers(const std::vector<HelperRequest>& requests,
                         const client::WhoHasReply* reply,
                         const std::map<std::string, std::string>& names, std::string* out,
                         HelperCounters* counts = nullptr);

// The same from the who-has socket's answer lines (one per request, each ending in '\n': node
// ids one space apart, "" none, "!" not a URL). `self` is this node's id, never named.
void AppendSocketAnswers(const std::vector<HelperRequest>& requests, std::string_view lines,
                         const std::map<std::string, std::string>& names, std::string_view self,
                         std::string* out, HelperCounters* counts = nullptr);

struct SquidHelperOptions {
  // Default: "". The daemon's who-has socket; when set the helper asks there, else through
  // the control endpoint below.
  std::string who_has_socket;
  std::string node_id;                       // this node's id (the socket's answers name it)
  std::string control;                       // the daemon's control endpoint
  std::string token;                         // its control token, "" for none
  int wait_ms = 100;                         // Default: 100. Bound on one who-has call
  int retry_ms = 1000;                       // Default: 1000. After a failed call, ERR at once
                                             // for this long before asking the daemon again
  size_t max_batch = 4096;                   // Default: 4096. Requests per who-has call
  std::map<std::string, std::string> names;  // squid_peer_names
  int report_ms = 1000;                      // Default: 1000. Counters go to the daemon at
                                             // most this often (with a batch), and alone
                                             // after this long without requests
};

// Serves Squid on `in_fd`/`out_fd` until end of input. Returns an exit code.
int RunSquidHelper(const SquidHelperOptions& options, int in_fd, int out_fd);

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_SQUID_HELPER_H_
