// `peerbloom bench`: who-has latency and throughput through a running daemon's control
// endpoint, measured the way a client sees them (request sent to reply parsed).
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

namespace peerbloom::cli {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct BenchArgs {
  int single = 20000;
  int batch_size = 10000;
  int batches = 50;
  std::string prefix = "http://bench.example/";
};

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
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
  std::string token;
  if (Status s = ResolveToken(g, endpoint, &token); !s.ok()) return Error(s);
  client::ControlClient control(endpoint, g.timeout_ms);
  control.set_token(std::move(token));
  const nlohmann::json request = {{"op", client::kOpWhoHas}, {"input", "url"}};
  nlohmann::json reply;
  std::string body;
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(a.single));
  for (int i = 0; i < a.single; ++i) {
    const std::string key = a.prefix + std::to_string(i) + "\n";
    const auto t0 = Clock::now();
    Status s = control.Call(request, key, &reply, &body);
    const auto t1 = Clock::now();
    if (!s.ok()) return Error(s);
    micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::string batch;
  for (int i = 0; i < a.batch_size; ++i) batch += a.prefix + std::to_string(i) + "\n";
  std::vector<double> rates;
  uint64_t claimed = 0;
  for (int b = 0; b < a.batches; ++b) {
    const auto t0 = Clock::now();
    Status s = control.Call(request, batch, &reply, &body);
    const auto t1 = Clock::now();
    if (!s.ok()) return Error(s);
    claimed = reply.value("claimed", uint64_t{0});
    rates.push_back(a.batch_size / std::chrono::duration<double>(t1 - t0).count());
  }
  json out = {{"single_requests", a.single},
              {"single_p50_us", micros.empty() ? 0 : Percentile(micros, 0.5)},
              {"single_p99_us", micros.empty() ? 0 : Percentile(micros, 0.99)},
              {"batch_size", a.batch_size},
              {"batches", a.batches},
              {"batched_keys_per_s_median", rates.empty() ? 0 : Percentile(rates, 0.5)},
              {"claimed_per_batch", claimed}};
  if (g.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("who-has, one key per request (%d requests): p50 %.1f us, p99 %.1f us\n", a.single,
                out["single_p50_us"].get<double>(), out["single_p99_us"].get<double>());
    std::printf(
        "who-has, batches of %d keys (%d batches): median %.0f keys/s (%llu claimed "
        "per batch)\n",
        a.batch_size, a.batches, out["batched_keys_per_s_median"].get<double>(),
        static_cast<unsigned long long>(claimed));
  }
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
  return [g, a] { return RunBench(*g, *a); };
}

}  // namespace peerbloom::cli
