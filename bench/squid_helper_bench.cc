// `peerbloom squid-helper` as Squid drives it: "ID URL" lines on a pipe, answers read back.
//
//   squid_helper_bench PEERBLOOM_BIN CONTROL URL_PREFIX KEYS [LOOKUPS] [WINDOW]
//
// Starts the helper on CONTROL (a running daemon), then
//   1. one lookup at a time: the time from writing a line to reading its answer, which is
//      what a lookup adds to a request in Squid (median, p99);
//   2. WINDOW lookups outstanding at once (Squid's concurrency=), LOOKUPS in all: lookups/s
//      of one helper process.
// URLs are URL_PREFIX0 .. URL_PREFIX(KEYS-1) (those the daemon's peers hold) interleaved with
// URLs nobody holds. Prints figures and the share answered "OK"; asserts nothing on time.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Helper {
  pid_t pid = -1;
  int to = -1;    // its stdin
  int from = -1;  // its stdout
  std::string buffered;
};

bool Spawn(const char* bin, const char* control, Helper* h) {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return false;
  h->pid = ::fork();
  if (h->pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    ::execl(bin, bin, "--control", control, "squid-helper", "--wait-ms", "1000",
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  h->to = in[1];
  h->from = out[0];
  return h->pid > 0;
}

bool WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads one answer line.
bool ReadLine(Helper* h, std::string* line) {
  for (;;) {
    const size_t nl = h->buffered.find('\n');
    if (nl != std::string::npos) {
      *line = h->buffered.substr(0, nl);
      h->buffered.erase(0, nl + 1);
      return true;
    }
    char buf[65536];
    const ssize_t n = ::read(h->from, buf, sizeof(buf));
    if (n <= 0) return false;
    h->buffered.append(buf, static_cast<size_t>(n));
  }
}

std::string Url(const std::string& prefix, uint64_t i, uint64_t keys) {
  // Even lookups: a URL some peer holds; odd: one nobody holds.
  if (i % 2 == 0) return prefix + std::to_string((i / 2) % keys);
  return "http://nobody.example/" + std::to_string(i);
}

bool IsOk(const std::string& answer) { return answer.find(" OK ") != std::string::npos; }

// 1. One at a time: microseconds from writing each line to reading its answer, and how many
// were "OK".
bool OneAtATime(Helper* h, const std::string& prefix, uint64_t keys, std::vector<double>* us,
                uint64_t* ok) {
  std::string line;
  for (uint64_t i = 0; i < 20000; ++i) {
    const auto start = Clock::now();
    if (!WriteAll(h->to, std::to_string(i) + " " + Url(prefix, i, keys) + "\n") ||
        !ReadLine(h, &line)) {
      return false;
    }
    us->push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    *ok += IsOk(line) ? 1 : 0;
  }
  return true;
}

void PrintOneAtATime(std::vector<double> us, uint64_t ok) {
  std::sort(us.begin(), us.end());
  std::printf(
      "squid-helper, one lookup at a time: p50 %.1f us, p99 %.1f us (%llu lookups, %.0f%% OK)\n",
      us[us.size() / 2], us[us.size() * 99 / 100], static_cast<unsigned long long>(us.size()),
      100.0 * static_cast<double>(ok) / static_cast<double>(us.size()));
}

// 2. WINDOW outstanding, as Squid with concurrency=WINDOW keeps them: seconds for `lookups`.
bool Windowed(Helper* h, const std::string& prefix, uint64_t keys, uint64_t lookups,
              uint64_t window, double* seconds, uint64_t* ok) {
  std::string line;
  uint64_t sent = 0, answered = 0;
  const auto start = Clock::now();
  while (answered < lookups) {
    std::string batch;
    while (sent < lookups && sent - answered < window) {
      batch += std::to_string(sent % 100000) + " " + Url(prefix, sent, keys) + "\n";
      ++sent;
    }
    if (!batch.empty() && !WriteAll(h->to, batch)) return false;
    // Every answer read so far, then refill the window.
    do {
      if (!ReadLine(h, &line)) return false;
      ++answered;
      *ok += IsOk(line) ? 1 : 0;
    } while (h->buffered.find('\n') != std::string::npos);
  }
  *seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return true;
}

void PrintWindowed(uint64_t window, uint64_t lookups, double s, uint64_t ok) {
  std::printf(
      "squid-helper, %llu outstanding: %.0f lookups/s (%llu lookups in %.2f s, %.0f%% OK)\n",
      static_cast<unsigned long long>(window), static_cast<double>(lookups) / s,
      static_cast<unsigned long long>(lookups), s,
      100.0 * static_cast<double>(ok) / static_cast<double>(lookups));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: squid_helper_bench PEERBLOOM_BIN CONTROL URL_PREFIX KEYS [LOOKUPS] "
                 "[WINDOW]\n");
    return 2;
  }
  const std::string prefix = argv[3];
  const uint64_t keys = std::strtoull(argv[4], nullptr, 10);
  const uint64_t lookups = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 200000;
  const uint64_t window = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 1000;
  Helper h;
  if (keys == 0 || !Spawn(argv[1], argv[2], &h)) return 2;

  std::vector<double> us;
  uint64_t ok = 0;
  if (!OneAtATime(&h, prefix, keys, &us, &ok)) return 2;
  PrintOneAtATime(std::move(us), ok);

  ok = 0;
  double s = 0;
  if (!Windowed(&h, prefix, keys, lookups, window, &s, &ok)) return 2;
  PrintWindowed(window, lookups, s, ok);
  ::close(h.to);
  int status = 0;
  ::waitpid(h.pid, &status, 0);
  return 0;
}
