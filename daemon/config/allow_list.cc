// authorized_keys, grouped by node id.
#include "daemon/config/allow_list.h"

#include "peerbloom/client/curve_keys.h"

namespace peerbloom::daemon {

Status LoadAllowList(const Config& config, std::map<std::string, std::string>* authorized,
                     std::vector<ListedNode>* listed) {
  std::vector<client::AuthorizedKey> lines;
  if (!config.authorized_keys.empty()) {
    PEERBLOOM_RETURN_IF_ERROR(client::ReadAuthorizedKeys(config.authorized_keys, &lines));
  }
  return AllowListOf(config, lines, authorized, listed);
}

Status AllowListOf(const Config& config, const std::vector<client::AuthorizedKey>& lines,
                   std::map<std::string, std::string>* authorized,
                   std::vector<ListedNode>* listed) {
  authorized->clear();
  listed->clear();
  {
    std::map<std::string, size_t> at;
    for (const client::AuthorizedKey& key : lines) {
      (*authorized)[key.curve_key] = key.node_id;
      auto [it, added] = at.emplace(key.node_id, listed->size());
      if (added) listed->push_back(ListedNode{key.node_id, {}, ""});
      ListedNode& node = (*listed)[it->second];
      node.public_keys.push_back(key.curve_key);
      if (!key.endpoint.empty() && !node.endpoint.empty() && key.endpoint != node.endpoint) {
        return Status::InvalidArgument(config.authorized_keys + ":" + std::to_string(key.line) +
                                       ": node '" + key.node_id + "' already has endpoint '" +
                                       node.endpoint + "'");
      }
      if (!key.endpoint.empty()) node.endpoint = key.endpoint;
    }
  }
  // A seed is a member like any other: its key must say which node it speaks for.
  for (const Seed& seed : config.seeds) {
    if (!seed.public_key.empty() && authorized->count(seed.public_key) == 0) {
      return Status::InvalidArgument("seed '" + seed.endpoint + "' has key '" + seed.public_key +
                                     "', which authorized_keys does not list (add a line "
                                     "'KEY NODE-ID' for it)");
    }
  }
  return Status::Ok();
}

}  // namespace peerbloom::daemon
