// What another local user can do to a daemon through the file system and the control
// endpoint: a data_dir they own, links planted in the data dir, a tcp control endpoint
// without the token; and the small refusals of bad paths and names. Each is refused with a
// message that names the problem, and nothing is written through a link.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

constexpr uid_t kNobody = 65534;

// A command's standard output and error together, and its exit code.
ProcessResult Shell(const std::string& command) { return RunShell(command, Merged()); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A port free right now on 127.0.0.1 (the OS picks it; the daemon binds it a moment later).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

class LocalUser : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pblocal.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    data_ = dir_ + "/data";
    ASSERT_EQ(::mkdir(data_.c_str(), 0700), 0);
    // A file only its owner may read or write (root-only when the tests run as root).
    victim_ = dir_ + "/victim";
    std::ofstream(victim_) << "precious bytes\n";
    ::chmod(victim_.c_str(), 0600);
  }
  void TearDown() override {
    daemon_.Stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string Config(const std::string& extra = "", const std::string& node_id = "solo") {
    const std::string path = dir_ + "/peerbloomd.toml";
    std::ofstream(path) << "node_id = \"" << node_id << "\"\n"
                        << "listen = \"tcp://127.0.0.1:0\"\n"
                        << "data_dir = \"" << data_ << "\"\n"
                        << "curve = false\n"
                        << "capacity = 10000\n"
                        << extra;
    return path;
  }

  ProcessResult Daemon(const std::string& args) {
    return Shell(std::string(PEERBLOOMD_BIN) + " " + args);
  }

  // Starts the daemon in the foreground as a child; true once `ready` holds.
  bool Start(const std::string& config, const std::function<bool()>& ready) {
    BackgroundOptions options;
    options.output_file = dir_ + "/stderr.log";
    if (!daemon_.Start({PEERBLOOMD_BIN, "--config", config, "--foreground"}, options)) {
      return false;
    }
    // An exited daemon ends the wait: give up.
    return WaitFor([&] { return !daemon_.running() || ready(); }, kWaitDeadline) &&
           daemon_.pid() > 0;
  }

  std::string log() const { return ReadAll(dir_ + "/stderr.log"); }

  std::string dir_, data_, victim_;
  BackgroundProcess daemon_;
};

// Before: a data_dir owned by another user was accepted, so that user could plant links and
// files in it.
TEST_F(LocalUser, DataDirOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  ASSERT_EQ(::chown(data_.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod(data_.c_str(), 0755), 0);
  const ProcessResult r = Daemon("--config " + Config() + " --foreground");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "peerbloomd: fatal: data_dir '" + data_ +
                "' is owned by uid '65534' with mode '0755': it must be owned by the "
                "daemon's user (uid '0') and not writable by group or others (run 'chown 0 " +
                data_ + "' and 'chmod go-w " + data_ + "')\n");
  EXPECT_FALSE(std::filesystem::exists(data_ + "/peerbloomd.lock"));
}

TEST_F(LocalUser, DataDirWritableByOthersIsRefused) {
  ASSERT_EQ(::chmod(data_.c_str(), 0777), 0);
  const std::string uid = std::to_string(::geteuid());
  const ProcessResult r = Daemon("--config " + Config() + " --foreground");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: data_dir '" + data_ + "' is owned by uid '" + uid +
                       "' with mode '0777': it must be owned by the daemon's user (uid '" + uid +
                       "') and not writable by group or others (run 'chown " + uid + " " + data_ +
                       "' and 'chmod go-w " + data_ + "')\n");
}

// Before: started as root, the daemon truncated a root-only file through a planted
// peerbloomd.lock link.
TEST_F(LocalUser, PlantedLockLinkIsRefusedAndItsTargetUnchanged) {
  ASSERT_EQ(::symlink(victim_.c_str(), (data_ + "/peerbloomd.lock").c_str()), 0);
  const ProcessResult r = Daemon("--config " + Config() + " --foreground");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: '" + data_ +
                       "/peerbloomd.lock' is a symbolic link: the daemon does not follow links "
                       "in its data dir (remove it)\n");
  EXPECT_EQ(ReadAll(victim_), "precious bytes\n");
}

// Before: the daemon overwrote a root-only file through a planted peer.endpoint link. Now it
// writes a fresh file and renames it over the link.
TEST_F(LocalUser, PlantedEndpointLinkIsReplacedNotFollowed) {
  const std::string endpoint = data_ + "/peer.endpoint";
  ASSERT_EQ(::symlink(victim_.c_str(), endpoint.c_str()), 0);
  ASSERT_TRUE(Start(Config(), [&] {
    struct stat st;
    return ::lstat(endpoint.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  })) << log();
  EXPECT_EQ(ReadAll(victim_), "precious bytes\n");
  EXPECT_EQ(ReadAll(endpoint).rfind("tcp://127.0.0.1:", 0), 0u) << ReadAll(endpoint);
}

TEST_F(LocalUser, PlantedLogLinkIsRefusedAndItsTargetUnchanged) {
  const std::string log_file = data_ + "/peerbloomd.log";
  ASSERT_EQ(::symlink(victim_.c_str(), log_file.c_str()), 0);
  const ProcessResult r = Daemon("--config " + Config());  // not --foreground: logs to the file
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: '" + log_file +
                       "' is a symbolic link: the daemon does not follow links in its data dir "
                       "(remove it)\n");
  EXPECT_EQ(ReadAll(victim_), "precious bytes\n");
}

// Before: a tcp control endpoint had no authentication: any local user could add, remove or
// purge. Now every request needs the token of control_token_file (created 0600 at start).
TEST_F(LocalUser, TcpControlNeedsTheToken) {
  const int port = FreePort();
  ASSERT_GT(port, 0);
  const std::string control = "tcp://127.0.0.1:" + std::to_string(port);
  const std::string config = Config("control = \"" + control + "\"\n");
  const std::string token_file = data_ + "/control.token";
  // The token file is written whole (then the control endpoint binds; the CLI's timeout
  // covers that).
  ASSERT_TRUE(Start(config, [&] { return ReadAll(token_file).size() == 33; })) << log();
  struct stat st;
  ASSERT_EQ(::stat(token_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string cli = std::string(PEERBLOOM_CLI_BIN) + " --timeout 60000 ";

  ProcessResult r = Shell(cli + "--control " + control + " stats");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "peerbloom: error: missing or wrong control token\n");
  const std::string wrong = dir_ + "/wrong.token";
  std::ofstream(wrong) << "0123456789abcdef0123456789abcdef\n";
  ::chmod(wrong.c_str(), 0600);
  r = Shell(cli + "--control " + control + " --token-file " + wrong + " stats");
  EXPECT_EQ(r.out, "peerbloom: error: missing or wrong control token\n");

  r = Shell(cli + "--control " + control + " --token-file " + token_file + " --json stats");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["control"]["unauthorized"], 2);
  r = Shell(cli + "--config " + config + " --json stats");  // the token from the config
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

// One request on a new REQ socket; the reply's head, or null when none came in 2 minutes.
json AskTcp(zmq::context_t* context, const std::string& endpoint, const json& head,
            zmq::message_t body) {
  zmq::socket_t s(*context, zmq::socket_type::req);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 120000);
  s.connect(endpoint);
  s.send(zmq::buffer(head.dump()), zmq::send_flags::sndmore);
  s.send(body, zmq::send_flags::none);
  zmq::message_t reply;
  if (!s.recv(reply)) return json();
  return json::parse(reply.to_string_view());
}

// Before: a tcp control endpoint received every request whole before it looked for the token:
// 8 concurrent requests with 250 MiB bodies and no token were all refused, but the daemon's
// RSS peaked at 1,768 MiB first. Now the token is checked on the header frame and the body of
// a request without it is read and dropped as it arrives. Bound: the daemon's peak RSS
// (VmHWM) grows by less than 64 MiB while all 8 are answered; an honest client with the token
// is served meanwhile.
TEST_F(LocalUser, TcpControlHoldsNoBodyWithoutTheToken) {
  const int port = FreePort();
  ASSERT_GT(port, 0);
  const std::string control = "tcp://127.0.0.1:" + std::to_string(port);
  const std::string token_file = data_ + "/control.token";
  ASSERT_TRUE(Start(Config("control = \"" + control + "\"\n"), [&] {
    return ReadAll(token_file).size() == 33;
  })) << log();
  const std::string token = ReadAll(token_file).substr(0, 32);
  zmq::context_t context(2);
  const json stats = {{"op", "stats"}, {"token", token}};
  ASSERT_TRUE(
      WaitFor([&] { return AskTcp(&context, control, stats, zmq::message_t()).value("ok", false); },
              kWaitDeadline));
  const uint64_t peak_before = ProcStatusBytes(daemon_.pid(), "VmHWM");

  // One mapping serves every body: never written, its pages are the kernel's zero page, so
  // the test itself stays small; ZeroMQ sends from it without a copy.
  constexpr size_t kBody = size_t{250} << 20;
  void* zeros = ::mmap(nullptr, kBody, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(zeros, MAP_FAILED);
  constexpr int kClients = 8;
  std::vector<json> replies(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      zmq::message_t body(
          zeros, kBody, [](void*, void*) {}, nullptr);
      replies[i] = AskTcp(&context, control, {{"op", "add"}}, std::move(body));
    });
  }
  const json honest = AskTcp(&context, control, {{"op", "add"}, {"token", token}},
                             zmq::message_t(std::string("http://honest/1\n")));
  for (std::thread& t : clients) t.join();
  ::munmap(zeros, kBody);

  const uint64_t peak_after = ProcStatusBytes(daemon_.pid(), "VmHWM");
  std::printf("tcp control: VmHWM %.1f -> %.1f MiB\n", peak_before / 1048576.0,
              peak_after / 1048576.0);
  EXPECT_LT(peak_after, peak_before + (uint64_t{64} << 20));
  for (const json& r : replies) {
    EXPECT_EQ(r, json({{"ok", false}, {"error", "missing or wrong control token"}}));
  }
  EXPECT_EQ(honest.value("applied", 0), 1) << honest;
  const json after = AskTcp(&context, control, stats, zmq::message_t());
  EXPECT_EQ(after["stats"]["control"].value("unauthorized", 0), kClients) << after;
}

TEST_F(LocalUser, ConfigThatIsNotARegularFileIsRefused) {
  ProcessResult r = Daemon("--config " + dir_ + " --check-config");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: " + dir_ + ": config file is a directory\n");
  const std::string fifo = dir_ + "/fifo.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = Daemon("--config " + fifo + " --check-config");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: " + fifo + ": config file is not a regular file\n");
}

TEST_F(LocalUser, ImportedDigestPrefixIsRefusedAsNodeId) {
  const std::string config = Config("", "squid:10.0.0.1:3128");
  const ProcessResult r = Daemon("--config " + config + " --check-config");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: " + config +
                       ":1: 'node_id' must not start with 'squid:' (reserved for imported Squid "
                       "digests), got 'squid:10.0.0.1:3128'\n");
}

TEST_F(LocalUser, KeyFileThatIsADirectorySaysSo) {
  const std::string keys = dir_ + "/keys";
  ASSERT_EQ(::mkdir(keys.c_str(), 0700), 0);
  std::string config = Config("key_file = \"" + keys + "\"\n");
  // curve = false skips keys: turn it back on.
  std::string text = ReadAll(config);
  text.replace(text.find("curve = false\n"), 14, "");
  std::ofstream(config) << text;
  const ProcessResult r = Daemon("--config " + config + " --check-config");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: key file '" + keys +
                       "' is a directory, not a key file (create one with 'peerbloom keygen -o " +
                       keys + "')\n");
}

// Before: --check-config passed a config whose files the start then refused (a data_dir
// writable by others, a cluster secret file others may read, a missing key file, an ipc
// socket directory or a token file that cannot be used). Now it makes Start's checks of them,
// with Start's messages.
TEST_F(LocalUser, CheckConfigRefusesTheFilesStartRefuses) {
  const std::string uid = std::to_string(::geteuid());
  auto refused = [&](const std::string& what, const std::string& path, const std::string& mode) {
    return "peerbloomd: fatal: " + what + " '" + path + "' is owned by uid '" + uid +
           "' with mode '" + mode + "': it must be owned by the daemon's user (uid '" + uid +
           "') and not writable by group or others (run 'chown " + uid + " " + path +
           "' and 'chmod go-w " + path + "')\n";
  };
  // Each config is refused by --check-config and by the start with the same message (the
  // start may log lines before it).
  auto expect_refused = [&](const std::string& config, const std::string& message) {
    const ProcessResult check = Daemon("--config " + config + " --check-config");
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_EQ(check.out, message);
    const ProcessResult start = Daemon("--config " + config + " --foreground");
    EXPECT_EQ(start.exit_code, 1);
    EXPECT_TRUE(start.out.ends_with("\n" + message) || start.out == message) << start.out;
  };

  ASSERT_EQ(::chmod(data_.c_str(), 0777), 0);
  expect_refused(Config(), refused("data_dir", data_, "0777"));
  ASSERT_EQ(::chmod(data_.c_str(), 0700), 0);

  const std::string shared = dir_ + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  expect_refused(Config("control = \"ipc://" + shared + "/control.sock\"\n"),
                 refused("control socket directory", shared, "0777"));

  const std::string secret = dir_ + "/secret";
  std::ofstream(secret) << "s3cret\n";
  ASSERT_EQ(::chmod(secret.c_str(), 0644), 0);
  expect_refused(Config("cluster_secret_file = \"" + secret + "\"\n"),
                 "peerbloomd: fatal: cluster_secret_file '" + secret +
                     "' is accessible by others or writable by its group; chmod 600 it (or 640 "
                     "to share it with its group)\n");

  const std::string token = dir_ + "/token";
  ASSERT_EQ(::mkdir(token.c_str(), 0700), 0);
  expect_refused(Config("control = \"tcp://127.0.0.1:" + std::to_string(FreePort()) +
                        "\"\ncontrol_token_file = \"" + token + "\"\n"),
                 "peerbloomd: fatal: control token file '" + token + "' is a directory\n");

  // curve = false skips keys: turn it back on.
  std::string text = ReadAll(Config());
  text.replace(text.find("curve = false\n"), 14, "");
  std::ofstream(dir_ + "/peerbloomd.toml") << text;
  const std::string key_file = data_ + "/node.key";
  expect_refused(dir_ + "/peerbloomd.toml",
                 "peerbloomd: fatal: cannot open key file '" + key_file +
                     "': No such file or directory (create one with 'peerbloom keygen -o " +
                     key_file + "')\n");

  // What the start creates when missing is not required beforehand.
  const std::string fresh = dir_ + "/fresh";
  text = ReadAll(Config());
  text.replace(text.find(data_), data_.size(), fresh);
  std::ofstream(dir_ + "/peerbloomd.toml") << text;
  const ProcessResult check = Daemon("--config " + dir_ + "/peerbloomd.toml --check-config");
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_FALSE(std::filesystem::exists(fresh));
}

// A URL with a C1 control (U+009B, a terminal's CSI): the warning reaches the log escaped
// (and the log line format doubles the backslash of the escape). Feed::Malformed escapes any
// message that would still hold such bytes, whatever parser wrote it.
TEST_F(LocalUser, FeedWarningsEscapeControlBytes) {
  const std::string feed = dir_ + "/feed.log";
  std::ofstream(feed) << "+url \xc2\x9b"
                         "31mred\n";
  const std::string config = Config("[[feeds]]\npath = \"" + feed + "\"\n");
  ASSERT_TRUE(Start(config, [&] {
    return log().find("feed '" + feed + "': line 1:") != std::string::npos;
  })) << log();
  const std::string text = log();
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_NE(text.find("line 1: '\\\\u009b31mred' is not an absolute url"), std::string::npos)
      << text;
}

TEST_F(LocalUser, ControlBodyOverTheLimitGetsAnErrorReply) {
  ASSERT_TRUE(Start(Config(), [&] { return std::filesystem::exists(data_ + "/peer.endpoint"); }))
      << log();
  zmq::context_t context(1);
  zmq::socket_t s(context, zmq::socket_type::req);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 120000);
  s.connect("ipc://" + data_ + "/control.sock");
  zmq::message_t body((size_t{256} << 20) + 1);
  std::memset(body.data(), 'x', body.size());
  s.send(zmq::str_buffer("{\"op\": \"add\"}"), zmq::send_flags::sndmore);
  s.send(body, zmq::send_flags::none);
  zmq::message_t reply;
  ASSERT_TRUE(s.recv(reply));
  EXPECT_EQ(json::parse(reply.to_string()),
            json({{"ok", false}, {"error", "request body larger than 268435456 bytes"}}));
}

}  // namespace
}  // namespace peerbloom::testing
