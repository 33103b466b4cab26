// The type checks of TOML values that every peerbloom config reader makes, in the same words:
// the daemon's (daemon/config/) and the client library's (client_config.cc). Each returns
// InvalidArgument naming the key; the caller adds the file and line of `n`.
#ifndef PEERBLOOM_CLIENT_TOML_VALUES_H_
#define PEERBLOOM_CLIENT_TOML_VALUES_H_

#include <toml++/toml.h>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::client {

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
