// The TOML parse and the value type checks that every peerbloom config reader makes, in the
// same words: the daemon's (daemon/config/) and the client library's (client_config.cc). The
// checks return InvalidArgument naming the key; the caller adds the file and line of `n`.
#ifndef PEERBLOOM_CLIENT_TOML_VALUES_H_
#define PEERBLOOM_CLIENT_TOML_VALUES_H_

#include <toml++/toml.h>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::client {

// Parses `text` as TOML into *root; a syntax error names `path`, the line and the cause.
inline Status TomlParse(std::string_view text, const std::string& path, toml::table* root) {
  try {
    *root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  return Status::Ok();
}

inline Status TomlString(const toml::node& n, std::string_view key, std::string* out) {
  if (!n.is_string()) return Status::InvalidArgument("'" + std::string(key) + "' must be a string");
  *out = *n.value<std::string>();
  return Status::Ok();
}

inline Status TomlBool(const toml::node& n, std::string_view key, bool* out) {
  if (!n.is_boolean()) {
    return Status::InvalidArgument("'" + std::string(key) + "' must be true or false");
  }
  *out = *n.value<bool>();
  return Status::Ok();
}

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_TOML_VALUES_H_
