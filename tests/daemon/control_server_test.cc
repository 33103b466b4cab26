// ControlServer in-process: an operation that throws, or that leaves bytes that are not UTF-8
// in its reply, gets an error reply (or a repaired one) and the server goes on serving.
#include "daemon/control/control_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <zmq.hpp>

namespace peerbloom::daemon {
namespace {

using nlohmann::json;

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbctl.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    endpoint_ = "ipc://" + dir_ + "/control.sock";
    server_ = std::make_unique<ControlServer>(&context_, endpoint_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Sends raw frames on a REQ socket, serves until the reply comes (bounded), returns the
  // reply header's text.
  std::string Ask(const std::vector<std::string>& frames, const ControlServer::Handler& handler,
                  std::string* reply_body = nullptr) {
    zmq::socket_t s(context_, zmq::socket_type::req);
    s.set(zmq::sockopt::linger, 0);
    s.connect(endpoint_);
    for (size_t i = 0; i < frames.size(); ++i) {
      s.send(zmq::buffer(frames[i]),
             i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
    zmq::message_t head;
    for (int i = 0; i < 500; ++i) {
      std::vector<zmq::pollitem_t> items;
      server_->AppendPollItems(&items);
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(10));
      server_->Process(items.data(), items.size(), 1000 + i, handler);
      if (s.recv(head, zmq::recv_flags::dontwait)) break;
    }
    std::string body;
    while (s.get(zmq::sockopt::rcvmore)) {
      zmq::message_t part;
      (void)s.recv(part);
      body.assign(part.data<char>(), part.size());
    }
    if (reply_body != nullptr) *reply_body = body;
    return head.to_string();
  }

  std::string dir_;
  std::string endpoint_;
  zmq::context_t context_{1};
  std::unique_ptr<ControlServer> server_;
};

Status Echo(const json& request, std::string_view body, json* reply, std::string* reply_body) {
  (*reply)["op"] = request["op"];
  *reply_body = std::string(body);
  return Status::Ok();
}

TEST_F(ControlServerTest, AThrowingOperationGetsAnErrorReplyAndIsCounted) {
  auto throws = [](const json& request, std::string_view, json* reply, std::string* body) {
    (*reply)["partial"] = true;
    *body = "half";
    if (request["op"] == "bad-alloc") throw std::bad_alloc();
    if (request["op"] == "json") return Status(Status::InvalidArgument(json("\xff").dump()));
    throw std::runtime_error("boom \xff\n");
  };
  std::string body = "unchanged";
  EXPECT_EQ(Ask({R"({"op":"x"})"}, throws, &body),
            R"({"error":"internal error in op 'x': boom \\xff\\x0a","ok":false})");
  EXPECT_EQ(body, "");  // a partial reply body is not sent
  EXPECT_EQ(Ask({R"({"op":"bad-alloc"})"}, throws),
            R"({"error":"internal error in op 'bad-alloc': std::bad_alloc","ok":false})");
  EXPECT_EQ(Ask({R"({"op":"json"})"}, throws),
            R"({"error":"internal error in op 'json': [json.exception.type_error.316] invalid )"
            R"(UTF-8 byte at index 0: 0xFF","ok":false})");
  EXPECT_EQ(server_->stats().internal_errors, 3u);
  EXPECT_EQ(server_->stats().errors, 3u);
  EXPECT_EQ(server_->stats().malformed, 0u);
  // The server goes on.
  EXPECT_EQ(Ask({R"({"op":"ping"})", "body"}, Echo, &body), R"({"ok":true,"op":"ping"})");
  EXPECT_EQ(body, "body");
  EXPECT_EQ(server_->stats().requests, 4u);
}

TEST_F(ControlServerTest, ReplyBytesThatAreNotUtf8AreReplacedNotFatal) {
  auto raw = [](const json&, std::string_view body, json* reply, std::string*) {
    (*reply)["echo"] = std::string(body);
    return Status::Ok();
  };
  EXPECT_EQ(Ask({R"({"op":"x"})", "a\xff"}, raw), "{\"echo\":\"a\xef\xbf\xbd\",\"ok\":true}");
  EXPECT_EQ(server_->stats().internal_errors, 0u);
  EXPECT_EQ(Ask({R"({"op":"x"})", "caf\xc3\xa9"}, raw), "{\"echo\":\"caf\xc3\xa9\",\"ok\":true}");
}

TEST_F(ControlServerTest, HeadersThatAreNotUtf8OrNotJsonSaySo) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"op\":\"\xff\"}", "request header is not valid UTF-8"},
      {"{\"op\":\"add\",\"input\":\"\xc3\"}", "request header is not valid UTF-8"},
      {"{\"op\":\"a\x80"
       "b\"}",
       "request header is not valid UTF-8"},
      {"{\"op\":\"\xc0\xaf\"}", "request header is not valid UTF-8"},
      {"{\"op\":\"\xed\xa0\x80\"}", "request header is not valid UTF-8"},
      {"\xff", "request header is not valid UTF-8"},
      {R"({"op":"\ud800"})", "request header is not valid JSON"},  // a lone surrogate escape
      {R"({"op":)", "request header is not valid JSON"},
      {R"(["op"])", "request header must be a JSON object with an 'op'"},
      {R"({"op":1})", "request header must be a JSON object with an 'op'"},
  };
  int handled = 0;
  auto count = [&handled](const json&, std::string_view, json*, std::string*) {
    ++handled;
    return Status::Ok();
  };
  for (const auto& [header, error] : cases) {
    EXPECT_EQ(Ask({header}, count), json({{"ok", false}, {"error", error}}).dump()) << error;
  }
  EXPECT_EQ(handled, 0);
  EXPECT_EQ(server_->stats().malformed, cases.size());
  EXPECT_EQ(Ask({"{\"op\":\"caf\xc3\xa9\"}"}, Echo), "{\"ok\":true,\"op\":\"caf\xc3\xa9\"}");
}

}  // namespace
}  // namespace peerbloom::daemon
