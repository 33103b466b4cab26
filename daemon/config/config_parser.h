// The config parser's internals, shared by config.cc (the value readers, the array-of-tables
// keys and the cross-key checks) and config_keys.cc (the table of top-level keys). Not for
// use outside these two files.
#ifndef PEERBLOOM_DAEMON_CONFIG_CONFIG_PARSER_H_
#define PEERBLOOM_DAEMON_CONFIG_CONFIG_PARSER_H_

#include <toml++/toml.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "daemon/config/config.h"

namespace peerbloom::daemon::config_internal {

// Reads the keys of one file into a Config. The per-key work is the table in config_keys.cc;
// these are the value readers its setters share, each producing the exact message
// docs/config.md shows.
class Parser {
 public:
  Parser(const std::string& path, Config* config) : path_(path), c_(config) {}

  Status Parse(const toml::table& root);

  Config& c() { return *c_; }
  Status Error(const toml::node& node, const std::string& what) const {
    return At(node.source().begin.line, what);
  }
  // `s`, its message placed at `node`'s line.
  Status Placed(const toml::node& node, const Status& s) const {
    return s.ok() ? s : Error(node, s.message());
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
  Status FinishEndpoints(const toml::table& root);
  Status CheckCombinations(const toml::table& root) const;
  // The line of `key` in `root`, or 1 when it is absent.
  uint32_t LineOf(const toml::table& root, std::string_view key) const;

  std::string path_;
  Config* c_;
  uint32_t squid_feed_line_ = 0;    // line of a store.log feed's format, 0 when none
  uint32_t nginx_feed_line_ = 0;    // line of an nginx-cache feed's format, 0 when none
  uint32_t squid_digest_line_ = 0;  // line of the first [[squid_digest]], 0 when none
  uint32_t squid_url_line_ = 0;     // line of the first squid_uri_* / append_domain key
};

// One top-level key: its name, the TOML type it takes, its default as docs/config.md shows
// it, what it is for, and the setter that checks and stores its value.
struct KeySpec {
  std::string_view key;
  std::string_view type;
  std::string_view default_value;
  std::string_view description;
  Status (*set)(Parser& p, const toml::node& n, std::string_view key);
};

// The table entry of `key`, null for an unknown key.
const KeySpec* FindKey(std::string_view key);

}  // namespace peerbloom::daemon::config_internal

#endif  // PEERBLOOM_DAEMON_CONFIG_CONFIG_PARSER_H_
