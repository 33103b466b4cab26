// Value checks of the config parser: durations, seed key files. Endpoint checks shared with
// clients live in lib/client/client_config.cc.
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>

#include "daemon/config/config.h"

namespace peerbloom::daemon {
namespace {
constexpr int64_t kMaxDurationMs = int64_t{24} * 3600 * 1000;
}  // namespace

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

bool ParseMicros(std::string_view text, int64_t* us) {
  constexpr int64_t kMaxUs = int64_t{10} * 1000 * 1000;
  size_t digits = 0;
  int64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (value > kMaxUs) return false;
    value = value * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0) return false;
  const std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit == "us") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1000;
  } else if (unit.empty() && value == 0) {
    scale = 1;
  } else {
    return false;
  }
  if (value > kMaxUs / scale) return false;
  *us = value * scale;
  return true;
}

int64_t WallClockMs(const Config& config) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
             .count() +
         config.test_wall_clock_offset_ms;
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

Status ParseListenAddress(std::string_view text, std::string* host, int* port) {
  const Status bad =
      Status::InvalidArgument("'" + std::string(text) + "' is not HOST:PORT or [IPV6]:PORT");
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad;
  std::string_view h = text.substr(0, colon);
  const std::string_view p = text.substr(colon + 1);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return bad;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return bad;
  }
  int value = -1;
  const auto r = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || r.ec != std::errc() || r.ptr != p.data() + p.size() || value < 0 ||
      value > 65535) {
    return bad;
  }
  *host = std::string(h);
  *port = value;
  return Status::Ok();
}

}  // namespace peerbloom::daemon
