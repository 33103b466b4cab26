// Bytes that are not UTF-8 through every way into a running peerbloomd: every CLI command,
// every control operation that takes input, raw control frames, a line feed and a store.log
// feed. After each the daemon must still answer, the answer must be valid JSON or clear text
// with the exact expected error, and the data added before must still be there (exact item
// count, plus who-has of URLs held: no false negatives, so that check cannot flake).
//
// The node uses the squid-md5 key scheme: there a key token must be 32 hex digits, so a token
// that is not UTF-8 is an error whose message quotes it (`remove --key $'\xff'` used to end
// the daemon that way).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "peerbloom/escape.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

using std::chrono::milliseconds;

struct Input {
  std::string bytes;
  std::string escaped;  // as messages quote it
  bool utf8;
  std::string unknown_command_hint;  // what `peerbloom BYTES` adds after the quoted command
};

const std::vector<Input>& Inputs() {
  static const std::vector<Input> kInputs = {
      {"\xff", R"(\xff)", false, " (see 'peerbloom --help')"},
      {"\xc3", R"(\xc3)", false, " (see 'peerbloom --help')"},  // truncated sequence
      {"a\x80"
       "b",
       R"(a\x80b)", false, ", did you mean 'add'?"},                    // lone continuation byte
      {"\xc0\xaf", R"(\xc0\xaf)", false, " (see 'peerbloom --help')"},  // overlong '/'
      {"\xed\xa0\x80", R"(\xed\xa0\x80)", false, " (see 'peerbloom --help')"},  // surrogate
      {"caf\xc3\xa9", "caf\xc3\xa9", true, " (see 'peerbloom --help')"},        // valid: control
  };
  return kInputs;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (char c : bytes) {
    hex.push_back(kDigits[static_cast<unsigned char>(c) >> 4]);
    hex.push_back(kDigits[static_cast<unsigned char>(c) & 0xf]);
  }
  return hex;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

constexpr const char* kHeld[] = {"http://held.example/1", "http://held.example/2"};
constexpr const char* kHexKey = "1DCD286542CB5C0FEE897C41AB94173F";

class NonUtf8 : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = cluster_.AddNode("solo");
    dir_ = cluster_.dir();
    NodeOptions o;
    o.key_scheme = "squid-md5";
    o.extra = "[[feeds]]\npath = \"" + dir_ + "/line.feed\"\n[[feeds]]\npath = \"" + dir_ +
              "/store.log\"\nformat = \"squid-store-log\"\n";
    ASSERT_TRUE(node_->Start(o, {})) << node_->log_tail();
    control_ = "ipc://" + dir_ + "/solo/control.sock";
    ASSERT_TRUE(node_->Add({kHeld[0], kHeld[1]}));
    items_ = 2;
    // `query` below reads the published summary: wait until it holds the two URLs.
    ASSERT_TRUE(WaitFor(
        [&] {
          json reply;
          std::string body;
          return node_->Call({{"op", "summary"}}, "", &reply, &body) &&
                 reply["summary"]["estimated_items"] == 2;
        },
        milliseconds(5000)));
  }

  // Runs the peerbloom binary with exactly these arguments (no shell), `input` on stdin.
  ProcessResult Cli(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv = {PEERBLOOM_CLI_BIN, "--timeout", "5000"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.input = input;
    options.timeout = milliseconds(30000);
    return RunProgram(argv, options);
  }

  ProcessResult Online(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--control", control_});
    return Cli(args, input);
  }

  // The daemon answers, holds exactly items_ keys and still claims the URLs added first.
  void ExpectIntact(const std::string& after) {
    SCOPED_TRACE("after " + after);
    const json stats = node_->Stats();
    ASSERT_TRUE(stats.contains("filter")) << "the daemon does not answer\n" << node_->log_tail();
    EXPECT_EQ(stats["filter"]["items"], items_);
    EXPECT_EQ(stats["control"]["internal_errors"], 0);
    const auto held = node_->WhoHas({kHeld[0], kHeld[1]});
    ASSERT_EQ(held.size(), 2u);
    for (const auto& ids : held) EXPECT_EQ(ids, std::vector<std::string>{"solo"});
  }

  // One control request on a DEALER (so any frames can be sent); returns the reply header's
  // text, or "" when no reply came within 5 s.
  std::string RawAsk(const std::vector<std::string>& frames) {
    zmq::socket_t s(context_, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 5000);
    s.connect(control_);
    for (size_t i = 0; i < frames.size(); ++i) {
      s.send(zmq::buffer(frames[i]),
             i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
    zmq::message_t delimiter, head;
    if (!s.recv(delimiter) || !s.get(zmq::sockopt::rcvmore) || !s.recv(head)) return "";
    return head.to_string();
  }

  // Sends [empty][frames...] and expects {"ok": false, "error": error} as valid JSON.
  void ExpectRawError(const std::vector<std::string>& frames, const std::string& error) {
    std::vector<std::string> all = {""};
    all.insert(all.end(), frames.begin(), frames.end());
    const std::string head = RawAsk(all);
    ASSERT_FALSE(head.empty()) << "no reply to " << EscapeBytes(frames[0]);
    const json reply = json::parse(head, nullptr, false);
    ASSERT_TRUE(reply.is_object()) << EscapeBytes(head);
    EXPECT_EQ(reply["ok"], false);
    EXPECT_EQ(reply["error"], error) << EscapeBytes(frames[0]);
  }

  Cluster cluster_;
  Node* node_ = nullptr;
  std::string dir_;
  std::string control_;
  uint64_t items_ = 0;
  zmq::context_t context_{1};
};

TEST_F(NonUtf8, DaemonCommandsOfTheCliAnswerAndTheDaemonKeepsItsData) {
  for (const Input& x : Inputs()) {
    SCOPED_TRACE("input " + x.escaped);
    const std::string url = "http://t.example/" + x.bytes;
    const std::string url_escaped = "http://t.example/" + x.escaped;

    // A URL is bytes: any of these is added, found and removed like any other.
    ProcessResult r = Online({"add", url});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(r.out, "added 1\n");
    ++items_;
    ExpectIntact("add URL");
    r = Online({"who-has", url});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(StartsWith(r.out, url + ": solo (local, tcp://127.0.0.1:")) << r;
    r = Online({"--json", "who-has", url});
    EXPECT_EQ(r.exit_code, 0) << r;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r;
    EXPECT_EQ(j["claimed"], true);
    EXPECT_EQ(j["key"], x.utf8 ? url : url_escaped);
    EXPECT_EQ(j.contains("key_hex"), !x.utf8);
    if (!x.utf8) {
      EXPECT_EQ(j["key_hex"], Hex(url));
    }
    EXPECT_EQ(j["nodes"][0]["node_id"], "solo");
    r = Online({"who-has", "-"}, url + "\n" + kHeld[0] + "\n");
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(StartsWith(r.out, url + ": solo (local, ")) << r;
    EXPECT_NE(r.out.find(std::string("\n") + kHeld[0] + ": solo (local, "), std::string::npos);
    r = Online({"remove", url});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(r.out, "removed 1\n");
    --items_;
    ExpectIntact("remove URL");
    r = Online({"add", "-"}, url + "\n");
    EXPECT_EQ(r.out, "added 1\n") << r;
    r = Online({"remove", "-"}, url + "\n");
    EXPECT_EQ(r.out, "removed 1\n") << r;
    ExpectIntact("add/remove from stdin");

    // A key token must be 32 hex digits: an error that quotes the token escaped.
    const std::string key_error =
        "peerbloom: error: 1 invalid: line 1: key '" + x.escaped + "' is not 32 hex digits\n";
    r = Online({"add", "--key", x.bytes});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "added 0\n");
    EXPECT_EQ(r.err, key_error);
    ExpectIntact("add --key");
    r = Online({"remove", "--key", x.bytes});  // the request that used to end the daemon
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "removed 0\n");
    EXPECT_EQ(r.err, key_error);
    ExpectIntact("remove --key");
    r = Online({"remove", "--key", "-"}, x.bytes + "\n");
    EXPECT_EQ(r.err, key_error) << r;
    ExpectIntact("remove --key from stdin");
    r = Online({"who-has", "--key", x.bytes});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, x.bytes + ": invalid key\n");
    r = Online({"--json", "who-has", "--key", x.bytes});
    EXPECT_EQ(r.exit_code, 1);
    j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r;
    EXPECT_EQ(j["key"], x.utf8 ? x.bytes : x.escaped);
    EXPECT_EQ(j.contains("key_hex"), !x.utf8);
    EXPECT_EQ(j["error"], "invalid key");
    EXPECT_EQ(j["claimed"], false);
    ExpectIntact("who-has --key");

    // summary: a node id is ASCII, and JSON could not carry these bytes.
    r = Online({"summary", "--node", x.bytes});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, x.utf8 ? "peerbloom: error: no summary held for node '" + x.escaped + "'\n"
                            : "peerbloom: error: --node '" + x.escaped + "' is not a node id\n");
    const std::string summary_path = dir_ + "/s-" + x.bytes;
    r = Online({"summary", "-o", summary_path});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_NE(r.out.find("origin: solo\n"), std::string::npos) << r;
    r = Cli({"--json", "inspect", summary_path});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(json::parse(r.out, nullptr, false).value("origin", ""), "solo");

    // bench takes a URL prefix: keys with these bytes are just keys.
    r = Online({"bench", "--prefix", url, "--single", "2", "--batch-size", "2", "--batches", "1"});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(StartsWith(r.out, "who-has, one key per request (2 requests): p50 ")) << r;

    // Global options and the command name.
    r = Cli({"--control", "ipc://" + dir_ + "/no-" + x.bytes, "stats"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: control socket '" + dir_ + "/no-" + x.escaped +
                         "' does not exist (is peerbloomd running? see --control, --config)\n");
    r = Cli({"--config", dir_ + "/no-" + x.bytes + ".toml", "stats"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: " + dir_ + "/no-" + x.escaped +
                         ".toml: cannot open config file: No such file or directory\n");
    r = Cli({x.bytes});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: unknown command '" + x.escaped + "'" +
                         x.unknown_command_hint + "\n");
    ExpectIntact("summary, bench and global options");
  }
  // The commands that take no input still answer.
  ProcessResult r = Online({"stats"});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("\n  internal_errors  0\n"), std::string::npos) << r;
  r = Online({"peers"});
  EXPECT_EQ(r.exit_code, 0) << r;
}

TEST_F(NonUtf8, OfflineCommandsOfTheCliAnswerClearly) {
  const std::string summary_path = dir_ + "/held.summary";
  ASSERT_EQ(Online({"summary", "-o", summary_path}).exit_code, 0);
  for (const Input& x : Inputs()) {
    SCOPED_TRACE("input " + x.escaped);
    const std::string url = "http://b.example/" + x.bytes;
    const std::string path_escaped_prefix = dir_ + "/";

    // build: file names and lines with these bytes.
    const std::string urls = dir_ + "/urls-" + x.bytes;
    std::ofstream(urls, std::ios::binary) << url << "\n" << kHeld[0] << "\n";
    const std::string built = dir_ + "/b-" + x.bytes + ".summary";
    ProcessResult r = Cli({"build", "-i", urls, "-o", built, "--secret", "integration-secret"});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(StartsWith(r.out, "wrote '" + dir_ + "/b-" + x.escaped + ".summary': 2 keys, "))
        << r;
    r = Cli({"--json", "build", "-i", urls, "-o", built, "--secret", "integration-secret"});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(json::parse(r.out, nullptr, false).value("output", ""),
              dir_ + "/b-" + (x.utf8 ? x.bytes : x.escaped) + ".summary");
    // No false negatives: a URL built into a summary is always "maybe".
    r = Cli({"query", "-s", built, "--secret", "integration-secret", url});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(r.out, url + ": maybe\n");
    const std::string keys = dir_ + "/keys-" + x.bytes;
    std::ofstream(keys, std::ios::binary) << x.bytes << "\n" << kHexKey << "\n";
    r = Cli({"build", "--key", "-i", keys, "-o", built});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(StartsWith(r.out, "wrote '" + dir_ + "/b-" + x.escaped + ".summary': 1 keys, "))
        << r;
    EXPECT_EQ(r.err, "peerbloom: warning: skipped 1 invalid lines\n");
    r = Cli({"build", "-i", urls, "-o", built, "--origin", x.bytes});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: --origin '" + x.escaped + "' is not a node id\n");
    r = Cli({"build", "-i", urls, "-o", built, "--key-scheme", x.bytes});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err,
              "peerbloom: error: --key-scheme must be 'squid-md5', 'nginx-md5' or 'raw', got '" +
                  x.escaped + "'\n");
    r = Cli({"build", "-i", dir_ + "/missing-" + x.bytes, "-o", built});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: cannot open '" + dir_ + "/missing-" + x.escaped + "'\n");

    // query: a key token that is not hex is an invalid key, in text and in JSON.
    r = Cli({"query", "-s", summary_path, "--key", x.bytes});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, x.bytes + ": invalid key\n");
    r = Cli({"--json", "query", "-s", summary_path, "--key", "-"}, x.bytes + "\n");
    EXPECT_EQ(r.exit_code, 1);
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r;
    EXPECT_EQ(j["key"], x.utf8 ? x.bytes : x.escaped);
    EXPECT_EQ(j.contains("key_hex"), !x.utf8);
    if (!x.utf8) {
      EXPECT_EQ(j["key_hex"], Hex(x.bytes));
    }
    EXPECT_EQ(j["maybe"], false);
    EXPECT_EQ(j["error"], "invalid key");
    r = Cli({"query", "-s", summary_path, "--secret", "integration-secret", kHeld[0]});
    EXPECT_EQ(r.out, std::string(kHeld[0]) + ": maybe\n") << r;
    r = Cli({"query", "-s", dir_ + "/missing-" + x.bytes, "x"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: '" + dir_ + "/missing-" + x.escaped + "': cannot open '" +
                         dir_ + "/missing-" + x.escaped + "'\n");

    // inspect, dedup, calc, keygen.
    r = Cli({"inspect", dir_ + "/missing-" + x.bytes});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "peerbloom: error: cannot open '" + dir_ + "/missing-" + x.escaped + "'\n");
    r = Cli({"dedup"}, x.bytes + "\n" + x.bytes + "\n");
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(r.out, x.bytes + "\n");  // lines are bytes: passed through as they were
    r = Cli({"calc", "--items", x.bytes, "--fpr", "0.1"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(StartsWith(
        r.err, "peerbloom: error: --items: Value " + x.escaped + " not in range 0.000000 to "))
        << r;
    EXPECT_TRUE(IsValidUtf8(r.err));
    const std::string key_file = dir_ + "/k-" + x.bytes;
    r = Cli({"keygen", "-o", key_file});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(StartsWith(r.out, "wrote '" + dir_ + "/k-" + x.escaped +
                                      "' (secret, mode 0600) and '" + dir_ + "/k-" + x.escaped +
                                      ".pub'\npublic key: "))
        << r;
    EXPECT_TRUE(std::filesystem::exists(key_file + ".pub"));
  }
  ExpectIntact("offline commands");
}

TEST_F(NonUtf8, EveryControlOperationThatTakesInputAnswersValidJson) {
  for (const Input& x : Inputs()) {
    SCOPED_TRACE("input " + x.escaped);
    const std::string url = "http://c.example/" + x.bytes;
    json reply;
    std::string body, error;
    // who-has, add, remove: URL lines are bytes.
    ASSERT_TRUE(node_->Call({{"op", "add"}}, url + "\n", &reply, &body, &error)) << error;
    EXPECT_EQ(reply["applied"], 1);
    ++items_;
    ExpectIntact("add");
    ASSERT_TRUE(node_->Call({{"op", "who-has"}, {"input", "url"}}, url + "\n", &reply, &body));
    EXPECT_EQ(reply["claimed"], 1);
    EXPECT_EQ(body, "0\n");
    EXPECT_EQ(reply["nodes"][0]["node_id"], "solo");
    ASSERT_TRUE(node_->Call({{"op", "remove"}}, url + "\r\n", &reply, &body));
    EXPECT_EQ(reply["applied"], 1);
    --items_;
    ExpectIntact("remove");
    // Key lines must be hex: counted invalid, first_error quotes them escaped.
    for (const char* op : {"add", "remove"}) {
      ASSERT_TRUE(
          node_->Call({{"op", op}, {"input", "key"}}, x.bytes + "\n" + x.bytes, &reply, &body));
      EXPECT_EQ(reply["count"], 2);
      EXPECT_EQ(reply["invalid"], 2);
      EXPECT_EQ(reply["applied"], 0);
      EXPECT_EQ(reply["first_error"], "line 1: key '" + x.escaped + "' is not 32 hex digits");
      ExpectIntact(op);
    }
    ASSERT_TRUE(node_->Call({{"op", "who-has"}, {"input", "key"}}, x.bytes + "\n", &reply, &body));
    EXPECT_EQ(body, "!\n");
    EXPECT_EQ(reply["invalid"], 1);
    // Operations without input ignore a body.
    for (const char* op : {"stats", "peers", "ping", "snapshot", "summary"}) {
      EXPECT_TRUE(node_->Call({{"op", op}}, x.bytes, &reply, &body, &error)) << op << error;
    }
    ExpectIntact("operations without input");
  }
  // JSON fields hold UTF-8 only (the raw-frame test sends the rest): quoted in the errors.
  json reply;
  std::string body, error;
  EXPECT_FALSE(node_->Call({{"op", "caf\xc3\xa9"}}, "", &reply, &body, &error));
  EXPECT_EQ(error,
            "unknown op 'caf\xc3\xa9' (who-has, add, remove, stats, peers, summary, ping, "
            "snapshot, rebuild, report, log-level, broadcast, listen, purge)");
  EXPECT_FALSE(node_->Call({{"op", "log-level"}, {"level", "\x1b[2J"}}, "", &reply, &body, &error));
  EXPECT_EQ(
      error,
      R"('level' must be one of trace, debug, info, warn, error, critical, off, got '\x1b[2J')");
  EXPECT_FALSE(node_->Call({{"op", "add"}, {"input", "\x1b[2J"}}, "x", &reply, &body, &error));
  EXPECT_EQ(error, R"('input' must be 'url' or 'key', got '\x1b[2J')");
  EXPECT_FALSE(
      node_->Call({{"op", "summary"}, {"format", "caf\xc3\xa9"}}, "", &reply, &body, &error));
  EXPECT_EQ(error, "'format' must be 'describe' or 'bytes', got 'caf\xc3\xa9'");
  EXPECT_FALSE(
      node_->Call({{"op", "summary"}, {"node", "caf\xc3\xa9\n"}}, "", &reply, &body, &error));
  EXPECT_EQ(error, "no summary held for node 'caf\xc3\xa9\\x0a'");
  ExpectIntact("field errors");
}

TEST_F(NonUtf8, RawControlFramesWithBytesThatAreNotUtf8) {
  uint64_t malformed = 0;
  for (const Input& x : Inputs()) {
    SCOPED_TRACE("input " + x.escaped);
    auto header = [&x](const std::string& before, const std::string& after) {
      return before + x.bytes + after;
    };
    // The bytes inside the JSON header frame, in every field an operation reads.
    const std::string not_utf8 = "request header is not valid UTF-8";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {header(R"({"op":")", R"("})"),
         x.utf8 ? "unknown op '" + x.escaped +
                      "' (who-has, add, remove, stats, peers, summary, ping, snapshot, rebuild, "
                      "report, log-level, broadcast, listen, purge)"
                : not_utf8},
        {header(R"({"op":"who-has","input":")", R"("})"),
         "'input' must be 'url' or 'key', got '" + x.escaped + "'"},
        {header(R"({"op":"add","input":")", R"("})"),
         "'input' must be 'url' or 'key', got '" + x.escaped + "'"},
        {header(R"({"op":"remove","input":")", R"("})"),
         "'input' must be 'url' or 'key', got '" + x.escaped + "'"},
        {header(R"({"op":"summary","node":")", R"("})"),
         "no summary held for node '" + x.escaped + "'"},
        {header(R"({"op":"summary","format":")", R"("})"),
         "'format' must be 'describe' or 'bytes', got '" + x.escaped + "'"},
    };
    for (const auto& [text, error] : cases) {
      ExpectRawError({text}, x.utf8 ? error : not_utf8);
      if (!x.utf8) ++malformed;
    }
    // In a key of the header object, and as the whole header.
    const std::string in_key = header(R"({"op":"stats",")", R"(":1})");
    if (x.utf8) {
      const json reply = json::parse(RawAsk({"", in_key}), nullptr, false);
      EXPECT_EQ(reply.value("ok", false), true);
    } else {
      ExpectRawError({in_key}, not_utf8);
      ExpectRawError({x.bytes}, not_utf8);
      malformed += 2;
    }
    // In the body, and in frames where none belongs.
    const json reply =
        json::parse(RawAsk({"", R"({"op":"add","input":"key"})", x.bytes}), nullptr, false);
    EXPECT_EQ(reply["first_error"], "line 1: key '" + x.escaped + "' is not 32 hex digits");
    ExpectRawError({R"({"op":"stats"})", x.bytes, x.bytes},
                   "a request is [empty delimiter][header][body?] frames");
    EXPECT_EQ(RawAsk({x.bytes, R"({"op":"stats"})"}),
              R"({"error":"a request is [empty delimiter][header][body?] frames","ok":false})");
    malformed += 2;
    ExpectIntact("raw frames");
  }
  ExpectRawError({R"({"op":"\ud800"})"}, "request header is not valid JSON");  // lone surrogate
  ExpectRawError({std::string(64 * 1024, '\xff')}, "request header is not valid UTF-8");
  ExpectRawError({std::string(64 * 1024 + 1, '\xff')}, "request header larger than 65536 bytes");
  malformed += 3;
  ExpectIntact("oversized headers");
  EXPECT_EQ(node_->Stats()["control"]["malformed"], malformed);
}

TEST_F(NonUtf8, FeedLinesAreAppliedOrCountedAndLoggedEscaped) {
  std::string line_feed, store_log;
  size_t i = 0;
  for (const Input& x : Inputs()) {
    line_feed += "+url http://f.example/" + x.bytes + "\n";  // a URL: added
    line_feed += "+ " + x.bytes + "\n";                      // not hex: malformed
    line_feed += x.bytes + " junk\n";                        // not a command: malformed
    const std::string key = std::string(31, '0') + std::to_string(++i);
    store_log += "1795327317.643 SWAPOUT 00 00000000 " + key +
                 "  200 1795327317 1795327306 1795413717 text/plain 1354/1354 GET "
                 "http://s.example/" +
                 x.bytes + "\n";
    store_log += "1795327317.643 SWAPOUT 00 00000000 " + x.bytes +
                 " 200 1 1 1 text/plain 1/1 GET http://s.example/\n";  // malformed key
  }
  std::ofstream(dir_ + "/line.feed", std::ios::binary | std::ios::app) << line_feed;
  std::ofstream(dir_ + "/store.log", std::ios::binary | std::ios::app) << store_log;
  const size_t n = Inputs().size();
  ASSERT_TRUE(WaitFor(
      [&] {
        const json s = node_->Stats();
        return s["feeds"][0]["lines"] == 3 * n && s["feeds"][1]["lines"] == 2 * n;
      },
      milliseconds(10000)))
      << node_->Stats()["feeds"].dump();
  const json stats = node_->Stats();
  EXPECT_EQ(stats["feeds"][0]["adds"], n);
  EXPECT_EQ(stats["feeds"][0]["malformed"], 2 * n);
  EXPECT_EQ(stats["feeds"][1]["adds"], n);
  EXPECT_EQ(stats["feeds"][1]["malformed"], n);
  items_ += 2 * n;
  ExpectIntact("feed lines");
  // Every URL fed is held (no false negatives), whatever its bytes.
  std::vector<std::string> urls;
  for (const Input& x : Inputs()) urls.push_back("http://f.example/" + x.bytes);
  for (const auto& ids : node_->WhoHas(urls)) EXPECT_EQ(ids, std::vector<std::string>{"solo"});
  // The log quotes the bad lines escaped (at most 5 lines per 10 s per feed), and as a whole
  // stays valid UTF-8. The message's own backslashes are doubled in the log's msg="..." field.
  const std::string log = ReadAll(dir_ + "/solo/stderr.log");
  EXPECT_TRUE(IsValidUtf8(log));
  const std::string line_path = dir_ + "/line.feed";
  EXPECT_NE(log.find("feed '" + line_path + R"(': line 2: key '\\xff' is not 32 hex digits)"),
            std::string::npos)
      << node_->log_tail();
  EXPECT_NE(log.find("feed '" + line_path +
                     R"(': line 6: unknown command '\\xc3' (expected '+', '-', '+url', )"),
            std::string::npos)
      << node_->log_tail();
  EXPECT_NE(log.find("feed '" + dir_ + R"(/store.log': line 4: store key '\\xc3' is not 32 )"),
            std::string::npos)
      << node_->log_tail();
}

}  // namespace
}  // namespace peerbloom::testing
