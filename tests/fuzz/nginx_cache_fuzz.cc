// Fuzzes the nginx cache file header parser (ParseNginxCacheHeader), which reads files any
// process with write access to the cache directory may have written, and the URL side of the
// nginx key scheme: the input's first line as a URL through a template of every variable, and
// as a template, a levels value and a file name. Properties: no crash; a kValid key is the
// bytes after "\nKEY: " and within the bound; a valid head cut one byte short is kPartial. The
// verdict is the header parser's: accepted for kValid.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/nginx_cache.h"
#include "tests/fuzz/verdict.h"

namespace {

void CheckHeader(std::string_view input) {
  std::string key, why;
  const peerbloom::NginxFileState state = peerbloom::ParseNginxCacheHeader(input, &key, &why);
  peerbloom::fuzz::ReportVerdict(state == peerbloom::NginxFileState::kValid);
  if (state != peerbloom::NginxFileState::kValid) {
    if (why.empty()) std::abort();
    return;
  }
  const size_t key_at = peerbloom::kNginxHeaderBytes + peerbloom::kNginxKeyPrefix.size();
  if (key.size() > peerbloom::kNginxMaxKeyBytes || input.substr(key_at, key.size()) != key) {
    std::abort();
  }
  const size_t header_start = key_at + key.size() + 1;
  std::string shorter;
  if (peerbloom::ParseNginxCacheHeader(input.substr(0, header_start - 1), &shorter, &why) !=
      peerbloom::NginxFileState::kPartial) {
    std::abort();
  }
}

void CheckUrlSide(std::string_view input) {
  const std::string_view line = input.substr(0, std::min(input.find('\n'), size_t{2048}));
  static const peerbloom::NginxKeyTemplate kEvery = [] {
    peerbloom::NginxKeyTemplate t;
    if (!peerbloom::NginxKeyTemplate::Parse(
             "$scheme|$host|$http_host|$server_port|$request_uri|$uri|$args|$is_args|$proxy_host",
             "backend", &t)
             .ok()) {
      std::abort();
    }
    return t;
  }();
  std::string key;
  (void)kEvery.Build(line, &key);
  peerbloom::NginxKeyTemplate parsed;
  if (peerbloom::NginxKeyTemplate::Parse(line, "backend", &parsed).ok()) {
    (void)parsed.Build("http://h/a?b", &key);
  }
  std::vector<int> levels;
  if (peerbloom::ParseNginxLevels(line, &levels).ok() && levels.size() > 3) std::abort();
  peerbloom::NginxKey name;
  if (peerbloom::ParseNginxCacheFileName(line, &name) && peerbloom::NginxKeyHex(name) != line) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckHeader(input);
  CheckUrlSide(input);
  return 0;
}
