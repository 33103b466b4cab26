// The who-has reply costs per key only its indexes: the node table is JSON once per reply,
// the body is plain decimal lines (docs/control-protocol.md).
#include "peerbloom/client/who_has.h"

#include <charconv>

#include "peerbloom/escape.h"

namespace peerbloom::client {
namespace {

using nlohmann::json;

Status Malformed(const std::string& what) {
  return Status::Corruption("malformed who-has reply: " + what);
}

// Reads an optional field; absent leaves *out as it is.
template <typename T>
Status Field(const json& object, const char* name, T* out) {
  const auto it = object.find(name);
  if (it == object.end()) return Status::Ok();
  try {
    *out = it->template get<T>();
  } catch (const json::exception&) {
    return Malformed("'" + std::string(name) + "' has the wrong type");
  }
  return Status::Ok();
}

Status DecodeNode(const json& j, WhoHasNode* node) {
  if (!j.is_object() || !j.contains("node_id") || !j.contains("endpoint")) {
    return Malformed("a node is not an object with 'node_id' and 'endpoint'");
  }
  PEERBLOOM_RETURN_IF_ERROR(Field(j, "node_id", &node->node_id));
  PEERBLOOM_RETURN_IF_ERROR(Field(j, "endpoint", &node->endpoint));
  PEERBLOOM_RETURN_IF_ERROR(Field(j, "local", &node->local));
  PEERBLOOM_RETURN_IF_ERROR(Field(j, "imported", &node->imported));
  return Field(j, "summary_age_ms", &node->summary_age_ms);
}

// One body line: "!", "" or node indexes one space apart, each below `nodes`.
Status DecodeLine(std::string_view line, size_t nodes, WhoHasAnswer* answer) {
  if (line == "!") {
    answer->invalid = true;
    return Status::Ok();
  }
  const char* p = line.data();
  const char* end = p + line.size();
  while (p != end) {
    size_t index = 0;
    const auto [next, ec] = std::from_chars(p, end, index);
    if (ec != std::errc() || index >= nodes || (next != end && *next != ' ') || next + 1 == end) {
      return Malformed("line " + QuoteBytes(line) + " is not node indexes below '" +
                       std::to_string(nodes) + "'");
    }
    answer->nodes.push_back(index);
    p = next == end ? end : next + 1;
  }
  return Status::Ok();
}

}  // namespace

json WhoHasNodeJson(const WhoHasNode& node) {
  return {{"node_id", node.node_id},
          {"endpoint", node.endpoint},
          {"local", node.local},
          {"imported", node.imported},
          {"summary_age_ms", node.summary_age_ms}};
}

WhoHasEncoder::WhoHasEncoder(std::string self_id, std::string self_endpoint, std::string* body)
    : self_{std::move(self_id), std::move(self_endpoint), 0, false}, body_(body) {}

void WhoHasEncoder::AddInvalid() {
  ++count_;
  ++invalid_;
  body_->append("!\n");
}

void WhoHasEncoder::AddAnswer(bool local, std::span<const PeerMatch> peers) {
  ++count_;
  if (local || !peers.empty()) ++claimed_;
  if (local) {
    // The table entry of this node is made once per reply, not per key.
    if (self_index_ == SIZE_MAX) self_index_ = IndexOf(self_, true);
    AppendIndex(self_index_);
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    if (local || i > 0) body_->push_back(' ');
    AppendIndex(IndexOf(peers[i], false));
  }
  body_->push_back('\n');
}

void WhoHasEncoder::Finish(json* reply) const {
  json nodes = json::array();
  for (const WhoHasNode& node : nodes_) nodes.push_back(WhoHasNodeJson(node));
  (*reply)["count"] = count_;
  (*reply)["claimed"] = claimed_;
  (*reply)["invalid"] = invalid_;
  (*reply)["nodes"] = std::move(nodes);
}

size_t WhoHasEncoder::IndexOf(const PeerMatch& node, bool local) {
  auto [it, inserted] = index_of_.try_emplace(node.node_id, nodes_.size());
  if (inserted) {
    nodes_.push_back({node.node_id, node.endpoint, local, node.imported, node.summary_age_ms});
  }
  return it->second;
}

void WhoHasEncoder::AppendIndex(size_t index) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), index);
  body_->append(digits, end);
}

Status DecodeWhoHasReply(const json& reply, std::string_view body, WhoHasReply* out) {
  if (!reply.is_object() || !reply.contains("nodes") || !reply["nodes"].is_array()) {
    return Malformed("no 'nodes' array");
  }
  WhoHasReply r;
  PEERBLOOM_RETURN_IF_ERROR(Field(reply, "count", &r.count));
  PEERBLOOM_RETURN_IF_ERROR(Field(reply, "claimed", &r.claimed));
  PEERBLOOM_RETURN_IF_ERROR(Field(reply, "invalid", &r.invalid));
  for (const json& j : reply["nodes"]) {
    PEERBLOOM_RETURN_IF_ERROR(DecodeNode(j, &r.nodes.emplace_back()));
  }
  // Every line ends in '\n'; a last one without it is read all the same.
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    PEERBLOOM_RETURN_IF_ERROR(
        DecodeLine(body.substr(0, nl), r.nodes.size(), &r.answers.emplace_back()));
    body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
  }
  if (reply.contains("count") && r.answers.size() != r.count) {
    return Malformed("'" + std::to_string(r.answers.size()) + "' lines for 'count' '" +
                     std::to_string(r.count) + "'");
  }
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace peerbloom::client
