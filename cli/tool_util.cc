#include "cli/tool_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "peerbloom/client/client_config.h"

namespace peerbloom::cli {

std::string QuotePath(std::string_view path) { return QuoteBytes(path, std::string::npos); }

std::string JsonText(std::string_view value) {
  return IsValidUtf8(value) ? std::string(value) : EscapeBytes(value);
}

std::string HexBytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 0xf]);
  }
  return hex;
}

Status ReadFileBytes(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + QuotePath(path));
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return Status::Ok();
}

Status WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status::IOError("cannot write " + QuotePath(path));
  return Status::Ok();
}

void AddKeyingOptions(CLI::App* sub, KeyingArgs* a) {
  sub->add_option("--key-scheme", a->key_scheme,
                  "squid-md5 or raw (default: from --config, else squid-md5)");
  sub->add_option("--secret", a->secret,
                  "the cluster_secret the index hash is keyed with (default: from --config)");
  sub->add_flag("--key", a->keys, "inputs are key tokens (32 hex digits for squid-md5), not URLs");
}

Status ResolveKeying(const GlobalOptions& g, const KeyingArgs& a, const KeyScheme* fixed_scheme,
                     KeyScheme* scheme, SipKey* index_key, SquidUrlOptions* squid_url,
                     NginxKeyTemplate* nginx_key) {
  std::string secret = a.secret;
  *scheme = KeyScheme::kSquidMd5;
  *squid_url = SquidUrlOptions();
  if (!g.config_path.empty()) {
    client::ClientConfig config;
    PEERBLOOM_RETURN_IF_ERROR(client::LoadClientConfig(g.config_path, &config));
    if (secret.empty()) PEERBLOOM_RETURN_IF_ERROR(client::ClusterSecret(config, &secret));
    *scheme = config.key_scheme;
    *squid_url = config.squid_url;
    if (nginx_key != nullptr) *nginx_key = config.nginx_key;
  }
  if (!a.key_scheme.empty()) {
    auto parsed = ParseKeyScheme(a.key_scheme);
    if (!parsed) {
      return Status::InvalidArgument(
          "--key-scheme must be 'squid-md5', 'nginx-md5' or 'raw', got " +
          QuoteBytes(a.key_scheme));
    }
    *scheme = *parsed;
  }
  if (fixed_scheme != nullptr) *scheme = *fixed_scheme;
  *index_key = DeriveIndexKey(secret);
  return Status::Ok();
}

Status KeyMaker::Make(std::string_view line, std::string_view* key_bytes) {
  if (line.empty()) return Status::InvalidArgument("empty line");
  if (!keys_) {
    *key_bytes = encoder_.FromUrl(line);
    return Status::Ok();
  }
  PEERBLOOM_RETURN_IF_ERROR(KeyBytesFromToken(encoder_.scheme(), line, &scratch_));
  *key_bytes = scratch_;
  return Status::Ok();
}

LineInput::~LineInput() { Clear(); }

void LineInput::Clear() {
  if (tty_ && lines_ > 0xffff) std::fprintf(stderr, "\r\033[K");
  tty_ = false;  // once
}

Status LineInput::Open(const std::string& path) {
  tty_ = ::isatty(2) != 0;
  if (path == "-") {
    in_ = &std::cin;
    return Status::Ok();
  }
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) return Status::IOError("cannot open " + QuotePath(path));
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    size_ = static_cast<uint64_t>(st.st_size);
  }
  owned_ = std::move(file);
  in_ = owned_.get();
  return Status::Ok();
}

bool LineInput::Next(std::string* line) {
  if (!std::getline(*in_, *line)) {
    Clear();  // the progress line goes before any result is printed
    return false;
  }
  bytes_ += line->size() + 1;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  if ((++lines_ & 0xffff) == 0) Progress(false);
  return true;
}

void LineInput::Progress(bool done) {
  if (!tty_) return;
  if (size_ > 0) {
    const double fraction = std::min(1.0, static_cast<double>(bytes_) / static_cast<double>(size_));
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%% %llu lines%s", label_.c_str(), filled,
                 "##############################", kWidth - filled, "", 100.0 * fraction,
                 static_cast<unsigned long long>(lines_), done ? "\n" : "");
  } else {
    std::fprintf(stderr, "\r%s: %llu lines%s", label_.c_str(),
                 static_cast<unsigned long long>(lines_), done ? "\n" : "");
  }
}

}  // namespace peerbloom::cli
