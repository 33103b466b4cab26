// Value checks shared by the config parser and the CLI: endpoints, durations, seed key files.
#include <cerrno>
#include <cstring>
#include <fstream>

#include "daemon/config.h"

namespace peerbloom::daemon {
namespace {
constexpr int64_t kMaxDurationMs = int64_t{24} * 3600 * 1000;
}  // namespace

bool ParseTcpEndpoint(std::string_view endpoint, std::string* host, int* port) {
  constexpr std::string_view kPrefix = "tcp://";
  if (endpoint.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = endpoint.substr(kPrefix.size());
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

bool ParseDuration(std::string_view text, int64_t* ms) {
  size_t digits = 0;
  int64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (value > kMaxDurationMs) return false;
    value = value * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0) return false;
  const std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60 * 1000;
  } else if (unit == "h") {
    scale = 3600 * 1000;
  } else {
    return false;
  }
  if (value > kMaxDurationMs / scale + 1) return false;
  *ms = value * scale;
  return true;
}

Status ResolveSeedKeys(Config* config) {
  for (size_t i = 0; i < config->seeds.size() && i < config->seed_key_files.size(); ++i) {
    const std::string& path = config->seed_key_files[i];
    if (path.empty()) continue;
    std::ifstream in(path);
    std::string key;
    if (!(in >> key)) {
      return Status::IOError("cannot read seed key file '" + path + "': " + std::strerror(errno));
    }
    if (key.size() != 40) {
      return Status::InvalidArgument("seed key file '" + path +
                                     "' does not hold a 40-character Z85 key");
    }
    config->seeds[i].public_key = key;
  }
  return Status::Ok();
}

}  // namespace peerbloom::daemon
