#include "daemon/relay/relay_purge.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <string>

#include "daemon/digests/http_client.h"
#include "daemon/relay/json_text.h"
#include "daemon/relay/purge_command.h"
#include "peerbloom/escape.h"

namespace peerbloom::daemon {
namespace {

void PurgeSquid(const std::string& squid, const std::string& url, const std::atomic<bool>& stop,
                nlohmann::json* result) {
  const size_t colon = squid.rfind(':');
  HttpRequest req;
  req.method = "PURGE";
  req.host = squid.substr(0, colon);
  req.port = static_cast<uint16_t>(std::stoi(squid.substr(colon + 1)));
  req.path = url;
  req.accept = "*/*";
  HttpGetLimits limits;
  limits.connect_timeout_ms = 500;
  limits.read_timeout_ms = 2000;
  limits.total_timeout_ms = 2000;
  limits.max_body_bytes = 64 << 10;
  HttpResponse res;
  const Status s = HttpGet(req, limits, stop, &res);
  (*result)["status"] = res.status;
  (*result)["purged"] = s.ok() && res.status == 200;
  if (!s.ok()) (*result)["error"] = s.message();
}

// Deleting the file is what nginx's own cache manager does to evict: the keys zone may still
// list the key, and nginx then finds no file, counts a miss and fetches the object again.
void PurgeNginx(nlohmann::json* result) {
  uint64_t deleted = 0;
  std::string error;
  for (const auto& file : result->value("files", std::vector<std::string>())) {
    if (::unlink(file.c_str()) == 0) {
      ++deleted;
    } else if (errno != ENOENT && error.empty()) {
      error = file + ": " + std::strerror(errno);
    }
  }
  (*result)["deleted"] = deleted;
  (*result)["purged"] = deleted > 0;
  if (!error.empty()) (*result)["error"] = error;
}

}  // namespace

nlohmann::json CheckPurge(const Config& config, LocalStore* store, std::string_view url,
                          const NginxPurgeFiles& nginx_files) {
  const std::string key(store->encoder()->FromUrl(url));
  const bool may_hold = store->filter().MayContain(store->hasher().Hash(key));
  nlohmann::json result = {{"node", config.node_id}, {"url", url}, {"may_hold", may_hold}};
  if (!may_hold) {
    result["action"] = "skipped";
  } else if (!config.purge_command.empty()) {
    result["action"] = "command";
  } else if (!config.purge_squid.empty()) {
    result["action"] = "squid";
  } else if (config.purge_nginx && nginx_files) {
    result["action"] = "nginx";
    result["files"] = nginx_files(key);
  } else {
    result["action"] = "none";
  }
  if (!PurgeActionPending(result)) spdlog::info("purge {}: {}", QuoteBytes(url), JsonText(result));
  return result;
}

bool PurgeActionPending(const nlohmann::json& result) {
  const std::string action = result.value("action", std::string());
  return (action == "squid" || action == "command" || action == "nginx") &&
         !result.contains("purged");
}

void RunPurgeAction(const Config& config, const std::atomic<bool>& stop, nlohmann::json* result) {
  const std::string url = result->value("url", std::string());
  if ((*result)["action"] == "command") {
    RunPurgeCommand(config.purge_command, url, config.purge_command_timeout_ms, stop, result);
  } else if ((*result)["action"] == "nginx") {
    PurgeNginx(result);
  } else {
    PurgeSquid(config.purge_squid, url, stop, result);
  }
  spdlog::info("purge {}: {}", QuoteBytes(url), JsonText(*result));
}

}  // namespace peerbloom::daemon
