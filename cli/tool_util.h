// Shared pieces of the CLI's tools: reading files, keying like a cluster, line input with a
// progress line on a terminal, putting input lines in messages and JSON output.
#ifndef PEERBLOOM_CLI_TOOL_UTIL_H_
#define PEERBLOOM_CLI_TOOL_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <istream>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "peerbloom/escape.h"
#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom::cli {

// A path (or other argument) quoted whole for a message: 'PATH', escaped (peerbloom/escape.h).
std::string QuotePath(std::string_view path);

// JSON text for a value the user gave: the value itself when it is UTF-8, else escaped.
std::string JsonText(std::string_view value);

// Lower-case hex of every byte.
std::string HexBytes(std::string_view bytes);

// Sets (*j)["key"] to an input line for --json output. JSON strings are UTF-8, so a line that
// is not gets "key" escaped and "key_hex" with its exact bytes in lower-case hex.
template <typename Json>
void PutKey(std::string_view line, Json* j) {
  (*j)["key"] = JsonText(line);
  if (!IsValidUtf8(line)) (*j)["key_hex"] = HexBytes(line);
}

Status ReadFileBytes(const std::string& path, std::string* out);
Status WriteFileBytes(const std::string& path, const std::string& bytes);

// How keys are made: the scheme and the cluster secret, from flags or a daemon config.
struct KeyingArgs {
  std::string key_scheme;  // empty: from --config, else squid-md5
  std::string secret;      // --secret; empty: from --config, else ""
  bool keys = false;       // inputs are key tokens, not URLs
};
void AddKeyingOptions(CLI::App* sub, KeyingArgs* a);
// Resolves scheme, index key and how squid-md5 canonicalizes URLs (the config's
// squid_uri_whitespace and squid_append_domain, else Squid's defaults). `fixed_scheme`, when
// set, wins (a summary's own scheme).
// `nginx_key`: the config's nginx_cache_key (nginx-md5), unparsed without a config.
Status ResolveKeying(const GlobalOptions& g, const KeyingArgs& a, const KeyScheme* fixed_scheme,
                     KeyScheme* scheme, SipKey* index_key, SquidUrlOptions* squid_url,
                     NginxKeyTemplate* nginx_key = nullptr);

// Turns input lines into key bytes under a scheme.
class KeyMaker {
 public:
  KeyMaker(KeyScheme scheme, const SquidUrlOptions& squid_url, bool keys,
           NginxKeyTemplate nginx_key = {})
      : encoder_(scheme, squid_url, std::move(nginx_key)), keys_(keys) {}
  // InvalidArgument for an empty line or a bad key token.
  Status Make(std::string_view line, std::string_view* key_bytes);

 private:
  KeyEncoder encoder_;
  bool keys_;
  std::string scratch_;
};

// Reads lines from a file or stdin ("-"); shows "\r<label>: N lines (P%)" on stderr every
// 2^16 lines when stderr is a terminal, and clears it at the end.
class LineInput {
 public:
  LineInput(std::string label) : label_(std::move(label)) {}
  ~LineInput();
  Status Open(const std::string& path);
  bool Next(std::string* line);
  uint64_t lines() const { return lines_; }

 private:
  void Progress(bool done);
  void Clear();

  std::string label_;
  std::unique_ptr<std::istream> owned_;
  std::istream* in_ = nullptr;
  uint64_t lines_ = 0;
  uint64_t bytes_ = 0;
  uint64_t size_ = 0;  // 0 when unknown
  bool tty_ = false;
};

}  // namespace peerbloom::cli

#endif  // PEERBLOOM_CLI_TOOL_UTIL_H_
