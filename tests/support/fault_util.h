// Helpers shared by the fault tests: counting false negatives over a whole cluster, and
// timing a wait.
#ifndef PEERBLOOM_TESTS_SUPPORT_FAULT_UTIL_H_
#define PEERBLOOM_TESTS_SUPPORT_FAULT_UTIL_H_

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {

// Keys each node holds, by node name.
using Holdings = std::map<std::string, std::vector<std::string>>;

// How many (observer, holder, key) triples are missing from who-has answers: every node asked
// about every key every node holds (itself included). *checked receives the number asked.
inline size_t CountFalseNegatives(const std::vector<Node*>& observers, const Holdings& held,
                                  size_t* checked = nullptr) {
  size_t missing = 0, asked = 0;
  for (Node* observer : observers) {
    for (const auto& [holder, keys] : held) {
      const auto answers = observer->WhoHas(keys);
      for (size_t i = 0; i < keys.size(); ++i) {
        ++asked;
        if (answers.size() != keys.size() ||
            std::find(answers[i].begin(), answers[i].end(), holder) == answers[i].end()) {
          ++missing;
        }
      }
    }
  }
  if (checked != nullptr) *checked = asked;
  return missing;
}

inline std::vector<std::string> Keys(const std::string& prefix, int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_FAULT_UTIL_H_
