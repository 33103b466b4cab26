// The key=value log line: spdlog's pattern for the fixed fields and a custom flag (%*) that
// quotes the message.
#include "daemon/observe/log_format.h"

#include <spdlog/pattern_formatter.h>

#include <array>

#include "peerbloom/escape.h"

namespace peerbloom::daemon {
namespace {

constexpr std::array<std::string_view, 7> kLevels = {"trace", "debug",    "info", "warn",
                                                     "error", "critical", "off"};

class QuotedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    AppendQuotedLogValue(std::string_view(msg.payload.data(), msg.payload.size()), &dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<QuotedMessage>();
  }
};

void Append(spdlog::memory_buf_t* out, std::string_view s) {
  out->append(s.data(), s.data() + s.size());
}

}  // namespace

void AppendQuotedLogValue(std::string_view text, spdlog::memory_buf_t* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (ch == '\n') {
      Append(out, "\\n");
    } else if (ch == '\t') {
      Append(out, "\\t");
    } else if (ch == '\r') {
      Append(out, "\\r");
    } else if (b < 0x20 || b == 0x7f) {
      const char hex[4] = {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
      out->append(hex, hex + 4);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

std::unique_ptr<spdlog::formatter> MakeLogFormatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<QuotedMessage>('*').set_pattern("ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l msg=%*");
  return formatter;
}

Status SetLogLevel(std::string_view name, std::string* previous) {
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] != name) continue;
    *previous = CurrentLogLevel();
    spdlog::set_level(static_cast<spdlog::level::level_enum>(i));
    return Status::Ok();
  }
  return Status::InvalidArgument(
      "'level' must be one of trace, debug, info, warn, error, critical, off, got " +
      QuoteBytes(name));
}

std::string CurrentLogLevel() {
  const auto level = static_cast<size_t>(spdlog::get_level());
  return level < kLevels.size() ? std::string(kLevels[level]) : "off";
}

}  // namespace peerbloom::daemon
