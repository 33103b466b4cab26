#include "daemon/relay_purge.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <string>

#include "daemon/http_client.h"
#include "peerbloom/escape.h"

namespace peerbloom::daemon {

nlohmann::json RunPurge(const Config& config, LocalStore* store, std::string_view url) {
  const std::string key(store->encoder()->FromUrl(url));
  const bool may_hold = store->filter().MayContain(store->hasher().Hash(key));
  nlohmann::json result = {{"node", config.node_id}, {"url", url}, {"may_hold", may_hold}};
  if (!may_hold) {
    result["action"] = "skipped";
  } else if (config.purge_squid.empty()) {
    result["action"] = "none";
  } else {
    result["action"] = "squid";
    const size_t colon = config.purge_squid.rfind(':');
    HttpRequest req;
    req.method = "PURGE";
    req.host = config.purge_squid.substr(0, colon);
    req.port = static_cast<uint16_t>(std::stoi(config.purge_squid.substr(colon + 1)));
    req.path = std::string(url);
    req.accept = "*/*";
    HttpGetLimits limits;
    limits.connect_timeout_ms = 500;
    limits.read_timeout_ms = 2000;
    limits.total_timeout_ms = 2000;
    limits.max_body_bytes = 64 << 10;
    const std::atomic<bool> stop{false};
    HttpResponse res;
    const Status s = HttpGet(req, limits, stop, &res);
    result["status"] = res.status;
    result["purged"] = s.ok() && res.status == 200;
    if (!s.ok()) result["error"] = s.message();
  }
  spdlog::info("purge {}: {}", QuoteBytes(url), result.dump());
  return result;
}

}  // namespace peerbloom::daemon
