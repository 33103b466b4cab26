#include "tests/support/cluster_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "peerbloom/client/curve_keys.h"
#include "peerbloom/client/who_has.h"

namespace peerbloom::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteKeyPair(const std::string& path, std::string* pub) {
  char public_key[41] = {};
  char secret_key[41] = {};
  if (zmq_curve_keypair(public_key, secret_key) != 0) std::abort();
  {
    std::ofstream out(path);
    out << "public-key = " << public_key << "\nsecret-key = " << secret_key << "\n";
  }
  ::chmod(path.c_str(), 0600);
  std::ofstream(path + ".pub") << public_key << "\n";
  *pub = public_key;
}

// A socket bound to 127.0.0.1:port, not listening: while it is open no other process's
// ephemeral bind or connect gets the port. SO_REUSEADDR lets it bind beside the previous run's
// connections in TIME_WAIT; SOCK_CLOEXEC closes it in the child as it execs the next daemon,
// which then binds the port (the window between the two is the daemon's start-up, not the
// whole time the node was down). -1 when the port is taken already.
int ReservePort(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

uint64_t StatsCounter(Node* node, const char* group, const char* name) {
  const json stats = node->Stats();
  if (!stats.contains(group)) return 0;
  return stats[group].value(name, uint64_t{0});
}

bool SeesAlive(Node* observer, const std::string& node_id) {
  for (const json& p : observer->Peers()) {
    if (p.value("node_id", "") == node_id && p.value("alive", false)) return true;
  }
  return false;
}

pid_t DaemonPid(const std::string& node_dir) {
  std::ifstream in(node_dir + "/peerbloomd.lock");
  pid_t pid = 0;
  in >> pid;
  return pid;
}

uint64_t ProcStatusBytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

Node::Node(std::string name, std::string dir, std::string key_file)
    : name_(std::move(name)), dir_(std::move(dir)), key_file_(std::move(key_file)) {}

Node::~Node() {
  if (pid_ > 0) Kill9();
  if (reserved_port_fd_ >= 0) ::close(reserved_port_fd_);
}

bool Node::Exited() const {
  siginfo_t info{};
  return pid_ <= 0 ||
         (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid_);
}

void Node::ReapAndReservePort() {
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  if (port_ > 0 && reserved_port_fd_ < 0) reserved_port_fd_ = ReservePort(port_);
}

std::string Node::public_key() const {
  std::string key = ReadAll(key_file_ + ".pub");
  while (!key.empty() && key.back() == '\n') key.pop_back();
  return key;
}

std::string Node::log_tail() const {
  const std::string log = ReadAll(dir_ + "/stderr.log");
  return log.size() > 4000 ? log.substr(log.size() - 4000) : log;
}

void Node::ResetSocket() {
  socket_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::req);
  socket_->set(zmq::sockopt::linger, 0);
  // Call() polls for the answer; these only bound a receive or send that cannot block.
  socket_->set(zmq::sockopt::rcvtimeo, 5000);
  socket_->set(zmq::sockopt::sndtimeo, 5000);
  socket_->connect("ipc://" + dir_ + "/control.sock");
}

// Signatures are required by default (with curve). A cluster whose nodes or authorized keys
// lack sign keys (most tests: AddNode) runs as an upgrading cluster does, with
// `require_signatures = false`; one that is all signing (AddSigningNode) runs with the
// default. A test that sets the key itself keeps its own.
std::string Node::RequireSignaturesLine(const NodeOptions& o) const {
  if (o.signatures_default || o.extra.find("require_signatures") != std::string::npos) return "";
  if (o.extra.find("curve = false") != std::string::npos) return "";
  client::CurveKeyPair own;
  bool all_signed = client::ReadKeyFile(key_file_, &own).ok() && !own.sign_secret_key.empty();
  std::vector<client::AuthorizedKey> listed;
  if (client::ReadAuthorizedKeys(dir_ + "/../authorized_keys", &listed).ok()) {
    std::set<std::string> ids, signed_ids;
    for (const client::AuthorizedKey& k : listed) {
      ids.insert(k.node_id);
      if (!k.sign_key.empty()) signed_ids.insert(k.node_id);
    }
    all_signed = all_signed && ids == signed_ids;
  }
  return all_signed ? "" : "require_signatures = false\n";
}

std::string Node::WriteConfig(const NodeOptions& o, const std::vector<Node*>& seeds) {
  std::filesystem::create_directories(dir_);
  std::ostringstream cfg;
  cfg << "node_id = \"" << name_ << "\"\n"
      << "listen = \"tcp://" << o.listen_host << ":" << port_ << "\"\n"
      << "data_dir = \"" << (o.data_dir.empty() ? dir_ : o.data_dir) << "\"\n"
      << "control = \"ipc://" << dir_ << "/control.sock\"\n"
      << "key_file = \"" << key_file_ << "\"\n"
      << "authorized_keys = \"" << dir_ << "/../authorized_keys\"\n"
      << (o.cluster_secret_file.empty()
              ? "cluster_secret = \"" + std::string(kClusterSecret) + "\"\n"
              : "cluster_secret_file = \"" + o.cluster_secret_file + "\"\n")
      << "key_scheme = \"" << o.key_scheme << "\"\n"
      << "capacity = " << o.capacity << "\n"
      << "gossip_interval = \"" << o.gossip_interval_ms << "ms\"\n"
      << "failure_timeout = \"" << o.failure_timeout_ms << "ms\"\n"
      << "anti_entropy_interval = \"" << o.anti_entropy_interval_ms << "ms\"\n"
      << "max_message_bytes = " << o.max_message_bytes << "\n"
      << "link_heartbeat_interval = \"200ms\"\n"
      << "link_heartbeat_timeout = \"1s\"\n"
      << "log_level = \"debug\"\n"
      << RequireSignaturesLine(o) << o.extra << "\n";
  for (Node* seed : seeds) {
    cfg << "[[seeds]]\nendpoint = \"" << seed->endpoint() << "\"\npublic_key = \""
        << seed->public_key() << "\"\n";
  }
  const std::string config_path = dir_ + "/peerbloomd.toml";
  std::ofstream(config_path) << cfg.str();
  return config_path;
}

bool Node::Reload(const NodeOptions& options, const std::vector<Node*>& seeds) {
  if (pid_ <= 0) return false;
  WriteConfig(options, seeds);
  return ::kill(pid_, SIGHUP) == 0;
}

bool Node::Start(const NodeOptions& o, const std::vector<Node*>& seeds) {
  const std::string config_path = WriteConfig(o, seeds);
  const std::string log_path = dir_ + "/stderr.log";
  // Made before fork: the child of a threaded process may only make async-signal-safe calls.
  std::vector<std::string> args = o.exec_prefix;
  const char* binary = o.daemon_binary.empty() ? PEERBLOOMD_BIN : o.daemon_binary.c_str();
  for (const char* a : {binary, "--config", config_path.c_str(), "--foreground"}) {
    args.emplace_back(a);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ > 0 && reserved_port_fd_ >= 0) {
    ::close(reserved_port_fd_);  // the child's copy closes as it execs the daemon
    reserved_port_fd_ = -1;
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) std::_Exit(1);
    if (!o.netns.empty()) {
      const int ns = ::open(o.netns.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) std::_Exit(126);
      ::close(ns);
    }
    if (o.max_open_files > 0) {
      const rlimit limit{o.max_open_files, o.max_open_files};
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) std::_Exit(125);
    }
    FILE* log = std::fopen(log_path.c_str(), "a");
    if (log != nullptr) {
      ::dup2(fileno(log), 1);
      ::dup2(fileno(log), 2);
    }
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  ResetSocket();
  json reply;
  std::string body;
  const bool up = WaitFor(
      [&] {
        if (Exited()) return true;  // give up
        return Call({{"op", "ping"}}, "", &reply, &body);
      },
      kCallTimeout);
  if (!up || !reply.contains("endpoint")) {
    Kill9();
    return false;
  }
  endpoint_ = reply["endpoint"].get<std::string>();
  port_ = std::stoi(endpoint_.substr(endpoint_.rfind(':') + 1));
  return true;
}

void Node::Kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ReapAndReservePort();
}

bool Node::Stop() {
  if (pid_ <= 0) return true;
  ::kill(pid_, SIGTERM);
  // The final snapshot is written with fsyncs, slow on a busy disk: a minute before SIGKILL.
  const bool exited = WaitFor([this] { return Exited(); }, kCallTimeout);
  if (!exited) ::kill(pid_, SIGKILL);
  ReapAndReservePort();
  return exited;
}

bool Node::Call(const json& request, const std::string& body, json* reply, std::string* reply_body,
                std::string* error) {
  try {
    const std::string head = request.dump();
    const bool sent = socket_
                          ->send(zmq::buffer(head),
                                 body.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore)
                          .has_value() &&
                      (body.empty() || socket_->send(zmq::buffer(body)).has_value());
    // Wait for the answer while the daemon runs: a slow answer is not a missing one.
    const auto deadline = std::chrono::steady_clock::now() + kCallTimeout;
    bool ready = false;
    while (sent && !ready) {
      zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      ready = (item.revents & ZMQ_POLLIN) != 0;
      if (!ready && (Exited() || std::chrono::steady_clock::now() >= deadline)) break;
    }
    zmq::message_t first;
    if (!ready || !socket_->recv(first)) {
      ResetSocket();
      if (error) *error = "no answer";
      return false;
    }
    reply_body->clear();
    while (socket_->get(zmq::sockopt::rcvmore)) {
      zmq::message_t part;
      if (!socket_->recv(part)) break;
      reply_body->assign(part.data<char>(), part.size());
    }
    *reply = json::parse(first.to_string_view());
  } catch (const std::exception& e) {
    ResetSocket();
    if (error) *error = e.what();
    return false;
  }
  if (!reply->value("ok", false)) {
    if (error) *error = reply->value("error", "refused");
    return false;
  }
  return true;
}

std::vector<std::vector<std::string>> Node::WhoHas(const std::vector<std::string>& keys) {
  return WhoHasAs("url", keys);
}

std::vector<std::vector<std::string>> Node::WhoHasKeys(const std::vector<std::string>& keys) {
  return WhoHasAs("key", keys);
}

std::vector<std::vector<std::string>> Node::WhoHasAs(const std::string& input,
                                                     const std::vector<std::string>& keys) {
  std::string body;
  for (const std::string& k : keys) body += k + "\n";
  json reply;
  std::string answer;
  std::vector<std::vector<std::string>> out;
  if (!Call({{"op", "who-has"}, {"input", input}}, body, &reply, &answer)) return out;
  client::WhoHasReply decoded;
  if (!client::DecodeWhoHasReply(reply, answer, &decoded).ok()) return out;
  for (const client::WhoHasAnswer& a : decoded.answers) {
    std::vector<std::string>& ids = out.emplace_back();
    for (size_t i : a.nodes) ids.push_back(decoded.nodes[i].node_id);
  }
  return out;
}

json Node::Stats() {
  json reply;
  std::string body;
  return Call({{"op", "stats"}}, "", &reply, &body) ? reply["stats"] : json::object();
}

json Node::Peers() {
  json reply;
  std::string body;
  return Call({{"op", "peers"}}, "", &reply, &body) ? reply["peers"] : json::array();
}

bool Node::Add(const std::vector<std::string>& keys) {
  std::string body;
  for (const std::string& k : keys) body += k + "\n";
  json reply;
  std::string answer;
  return Call({{"op", "add"}}, body, &reply, &answer) &&
         reply.value("applied", uint64_t{0}) == keys.size();
}

bool Node::Remove(const std::vector<std::string>& keys) {
  std::string body;
  for (const std::string& k : keys) body += k + "\n";
  json reply;
  std::string answer;
  return Call({{"op", "remove"}}, body, &reply, &answer) &&
         reply.value("applied", uint64_t{0}) == keys.size();
}

Cluster::Cluster() {
  char pattern[] = "/tmp/pbit.XXXXXX";
  dir_ = ::mkdtemp(pattern);
  std::ofstream(dir_ + "/authorized_keys");
}

Cluster::~Cluster() {
  nodes_.clear();  // kills every daemon still running
  if (std::getenv("PEERBLOOM_KEEP_TEST_DIRS") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Node* Cluster::AddNode(const std::string& name) {
  const std::string key_file = dir_ + "/" + name + ".key";
  std::string pub;
  WriteKeyPair(key_file, &pub);
  std::ofstream(dir_ + "/authorized_keys", std::ios::app) << pub << " " << name << "\n";
  nodes_.push_back(std::make_unique<Node>(name, dir_ + "/" + name, key_file));
  return nodes_.back().get();
}

std::string Cluster::AuthorizeExtraKey(std::string* public_key, std::string* secret_key) {
  char pub[41] = {};
  char sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) std::abort();
  *public_key = pub;
  *secret_key = sec;
  std::ofstream(dir_ + "/authorized_keys", std::ios::app) << pub << " test-client\n";
  return dir_ + "/authorized_keys";
}

Node* Cluster::AddSigningNode(const std::string& name) {
  const std::string key_file = dir_ + "/" + name + ".key";
  client::CurveKeyPair pair;
  if (!client::GenerateCurveKeyPair(&pair).ok() || !client::GenerateSignKeys(&pair).ok() ||
      !client::WriteKeyFile(key_file, pair, false).ok()) {
    std::abort();
  }
  std::ofstream(dir_ + "/authorized_keys", std::ios::app)
      << pair.public_key << " " << name << " sign=" << pair.sign_public_key << "\n";
  nodes_.push_back(std::make_unique<Node>(name, dir_ + "/" + name, key_file));
  return nodes_.back().get();
}

void Cluster::AuthorizeExtraSigningKey(const std::string& node_id, std::string* public_key,
                                       std::string* secret_key, std::string* sign_secret_key) {
  client::CurveKeyPair pair;
  if (!client::GenerateCurveKeyPair(&pair).ok() || !client::GenerateSignKeys(&pair).ok()) {
    std::abort();
  }
  std::ofstream(dir_ + "/authorized_keys", std::ios::app)
      << pair.public_key << " " << node_id << " sign=" << pair.sign_public_key << "\n";
  *public_key = pair.public_key;
  *secret_key = pair.secret_key;
  *sign_secret_key = pair.sign_secret_key;
}

std::string Cluster::AddKeyFor(const std::string& name, std::string* public_key,
                               std::string* secret_key) {
  char pub[41] = {};
  char sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) std::abort();
  *public_key = pub;
  *secret_key = sec;
  const std::string key_file = dir_ + "/" + name + ".key" + std::to_string(++extra_keys_);
  {
    std::ofstream out(key_file);
    out << "public-key = " << pub << "\nsecret-key = " << sec << "\n";
  }
  ::chmod(key_file.c_str(), 0600);
  std::ofstream(key_file + ".pub") << pub << "\n";
  std::ofstream(dir_ + "/authorized_keys", std::ios::app) << pub << " " << name << "\n";
  return key_file;
}

void Cluster::RemoveKey(const std::string& public_key) {
  const std::string path = dir_ + "/authorized_keys";
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.compare(0, public_key.size(), public_key) != 0) kept += line + "\n";
  }
  in.close();
  std::ofstream(path + ".new") << kept;
  std::filesystem::rename(path + ".new", path);
}

}  // namespace peerbloom::testing
