// Value checks of the config parser: durations, seed key files. Endpoint checks shared with
// clients live in lib/client/client_config.cc.
#include <cerrno>
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
