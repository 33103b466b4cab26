// `peerbloom bench`: who-has latency and throughput through a running daemon's control
// endpoint (and its who-has socket when given), measured the way a client sees them (request
// sent to reply received).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/cli.h"
#include "peerbloom/client/client_config.h"
#include "peerbloom/client/control_client.h"
#include "peerbloom/client/control_protocol.h"
#include "peerbloom/client/who_has_socket.h"

namespace peerbloom::cli {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct BenchArgs {
  int single = 20000;
  int batch_size = 10000;
  int batches = 50;
  std::string prefix = "http://bench.example/";
  std::string who_has_socket;  // "": only the control endpoint
  int busy_poll_us = 0;
  bool skip_control = false;  // only the who-has socket
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

struct Figures {
  std::vector<double> micros;  // one per single-key request
  std::vector<double> rates;   // keys/s, one per batch
  std::vector<double> batch_micros;
  uint64_t claimed = 0;  // of the last batch
};

// Times `ask(body)` once per single key, then once per batch.
template <typename Ask>
Status Measure(const BenchArgs& a, const std::string& batch, Ask&& ask, Figures* f) {
  f->micros.reserve(static_cast<size_t>(a.single));
  for (int i = 0; i < a.single; ++i) {
    const std::string key = a.prefix + std::to_string(i) + "\n";
    const auto t0 = Clock::now();
    PEERBLOOM_RETURN_IF_ERROR(ask(key, nullptr));
    const auto t1 = Clock::now();
    f->micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  for (int b = 0; b < a.batches; ++b) {
    const auto t0 = Clock::now();
    PEERBLOOM_RETURN_IF_ERROR(ask(batch, &f->claimed));
    const auto t1 = Clock::now();
    f->rates.push_back(a.batch_size / std::chrono::duration<double>(t1 - t0).count());
    f->batch_micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return Status::Ok();
}

void AddFigures(const std::string& prefix, const Figures& f, json* out) {
  (*out)[prefix + "single_p50_us"] = Percentile(f.micros, 0.5);
  (*out)[prefix + "single_p99_us"] = Percentile(f.micros, 0.99);
  (*out)[prefix + "single_p999_us"] = Percentile(f.micros, 0.999);
  (*out)[prefix + "batched_keys_per_s_median"] = Percentile(f.rates, 0.5);
  (*out)[prefix + "batch_p50_us"] = Percentile(f.batch_micros, 0.5);
  (*out)[prefix + "batch_p99_us"] = Percentile(f.batch_micros, 0.99);
  (*out)[prefix + "batch_p999_us"] = Percentile(f.batch_micros, 0.999);
  (*out)[prefix + "claimed_per_batch"] = f.claimed;
}

void PrintFigures(const char* what, const BenchArgs& a, const Figures& f) {
  std::printf("%s, one key per request (%d requests): p50 %.1f us, p99 %.1f us, p99.9 %.1f us\n",
              what, a.single, Percentile(f.micros, 0.5), Percentile(f.micros, 0.99),
              Percentile(f.micros, 0.999));
  std::printf(
      "%s, batches of %d keys (%d batches): median %.0f keys/s (%llu claimed per batch); "
      "per batch p50 %.0f us, p99 %.0f us, p99.9 %.0f us\n",
      what, a.batch_size, a.batches, Percentile(f.rates, 0.5),
      static_cast<unsigned long long>(f.claimed), Percentile(f.batch_micros, 0.5),
      Percentile(f.batch_micros, 0.99), Percentile(f.batch_micros, 0.999));
}

// Batches over the control endpoint: who-has with input "url".
Status MeasureControl(const GlobalOptions& g, const BenchArgs& a, const std::string& endpoint,
                      const std::string& batch, Figures* figures) {
  std::string token;
  PEERBLOOM_RETURN_IF_ERROR(ResolveToken(g, endpoint, &token));
  client::ControlClient control(endpoint, g.timeout_ms);
  control.set_busy_poll_us(a.busy_poll_us);
  control.set_token(std::move(token));
  const nlohmann::json request = {{"op", client::kOpWhoHas}, {"input", "url"}};
  nlohmann::json reply;
  std::string body;
  return Measure(
      a, batch,
      [&](const std::string& keys, uint64_t* claimed) {
        PEERBLOOM_RETURN_IF_ERROR(control.Call(request, keys, &reply, &body));
        if (claimed != nullptr) *claimed = reply.value("claimed", uint64_t{0});
        return Status::Ok();
      },
      figures);
}

// Batches over the who-has socket.
Status MeasureSocket(const GlobalOptions& g, const BenchArgs& a, const std::string& batch,
                     Figures* figures) {
  client::WhoHasSocketClient socket(a.who_has_socket, g.timeout_ms, a.busy_poll_us);
  std::string answers;
  return Measure(
      a, batch,
      [&](const std::string& keys, uint64_t* claimed) {
        PEERBLOOM_RETURN_IF_ERROR(socket.Ask(keys, &answers));
        if (claimed != nullptr) {
          // A line that is not empty names at least one node.
          uint64_t n = 0;
          for (size_t i = 0; i < answers.size(); ++i) {
            n += answers[i] != '\n' && (i == 0 || answers[i - 1] == '\n');
          }
          *claimed = n;
        }
        return Status::Ok();
      },
      figures);
}

int RunBench(const GlobalOptions& g, const BenchArgs& a) {
  std::string endpoint = g.control;
  if (endpoint.empty() && !g.config_path.empty()) {
    client::ClientConfig config;
    Status s = client::LoadClientConfig(g.config_path, &config);
    if (!s.ok()) return Error(s);
    endpoint = config.control;
  }
  if (endpoint.empty()) return Error("give --control or --config");
  std::string batch;
  for (int i = 0; i < a.batch_size; ++i) batch += a.prefix + std::to_string(i) + "\n";

  Figures zmq_figures;
  if (!a.skip_control) {
    if (Status s = MeasureControl(g, a, endpoint, batch, &zmq_figures); !s.ok()) return Error(s);
  }
  Figures socket_figures;
  if (!a.who_has_socket.empty()) {
    if (Status s = MeasureSocket(g, a, batch, &socket_figures); !s.ok()) return Error(s);
  }

  json out = {{"single_requests", a.single},
              {"batch_size", a.batch_size},
              {"batches", a.batches},
              {"busy_poll_us", a.busy_poll_us}};
  if (!a.skip_control) AddFigures("", zmq_figures, &out);
  if (!a.who_has_socket.empty()) AddFigures("socket_", socket_figures, &out);
  if (g.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  if (!a.skip_control) PrintFigures("who-has", a, zmq_figures);
  if (!a.who_has_socket.empty()) PrintFigures("who-has socket", a, socket_figures);
  return 0;
}

}  // namespace

Runner SetUpBench(CLI::App* sub, const GlobalOptions* g) {
  auto a = std::make_shared<BenchArgs>();
  sub->add_option("--single", a->single, "single-key requests to time")
      ->check(CLI::Range(0, 10000000));
  sub->add_option("--batch-size", a->batch_size, "keys per batched request")
      ->check(CLI::Range(1, 10000000));
  sub->add_option("--batches", a->batches, "batched requests to time")
      ->check(CLI::Range(0, 100000));
  sub->add_option("--prefix", a->prefix, "URL prefix (keys are PREFIX0, PREFIX1, ...)");
  sub->add_option("--who-has-socket", a->who_has_socket,
                  "also time the daemon's who-has socket at this path");
  sub->add_option("--busy-poll", a->busy_poll_us,
                  "microseconds to wait for a reply without sleeping (0: block at once)")
      ->check(CLI::Range(0, 10000));
  sub->add_flag("--skip-control", a->skip_control,
                "time only the who-has socket, not the control endpoint");
  return [g, a] { return RunBench(*g, *a); };
}

}  // namespace peerbloom::cli
