// JSON text of values that may hold bytes from outside (URLs in purges, keys, paths): a
// string that is not UTF-8 is written with U+FFFD for its bad bytes instead of making
// nlohmann::json::dump() throw. Every dump of such a value goes through here.
#ifndef PEERBLOOM_DAEMON_RELAY_JSON_TEXT_H_
#define PEERBLOOM_DAEMON_RELAY_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>

namespace peerbloom::daemon {

inline std::string JsonText(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_JSON_TEXT_H_
