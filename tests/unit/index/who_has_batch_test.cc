#include "peerbloom/who_has_batch.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace peerbloom {
namespace {

struct Answer {
  bool valid = false;
  bool local = false;
  std::vector<std::string> peers;
  bool operator==(const Answer&) const = default;
};

// What the batch must answer for input i: keys "key-<i>"; every 7th input is not a key.
struct Input {
  bool valid;
  std::string key;
};

std::vector<Input> Inputs(size_t n) {
  std::vector<Input> in;
  for (size_t i = 0; i < n; ++i) in.push_back({i % 7 != 3, "key-" + std::to_string(i)});
  return in;
}

class WhoHasBatchTest : public ::testing::Test {
 protected:
  WhoHasBatchTest() : hasher_(DeriveIndexKey("batch-test")) {
    EXPECT_TRUE(CountingBloomFilter::Create(16, 4, &filter_).ok());
    // Even-numbered keys are held here.
    for (size_t i = 0; i < 4000; i += 2) filter_.Add(hasher_.Hash("key-" + std::to_string(i)));
  }

  // A peer table that names peers from the key's hash, and checks that the hash it is given
  // is the hash of the key it is given.
  void Peers(std::string_view key, const KeyHash& hash, std::vector<PeerMatch>* out) {
    const KeyHash expected = hasher_.Hash(key);
    EXPECT_TRUE(expected.h1 == hash.h1 && expected.h2 == hash.h2) << key;
    for (uint64_t p = 0; p < 3; ++p) {
      if ((hash.h1 >> p) & 1) out->push_back(PeerMatch{"p" + std::to_string(p), "", 0, false});
    }
  }

  // One key at a time, without the batch.
  Answer Reference(const Input& in) {
    Answer a;
    a.valid = in.valid;
    if (!in.valid) return a;
    a.local = filter_.MayContain(hasher_.Hash(in.key));
    std::vector<PeerMatch> matches;
    Peers(in.key, hasher_.Hash(in.key), &matches);
    for (const PeerMatch& m : matches) a.peers.push_back(m.node_id);
    return a;
  }

  std::vector<Answer> Batched(const std::vector<Input>& inputs, WhoHasBatch** out_batch,
                              std::unique_ptr<WhoHasBatch>* holder) {
    answers_.clear();
    prefetched_ = 0;
    *holder = std::make_unique<WhoHasBatch>(
        filter_, hasher_,
        [this](std::string_view key, const KeyHash& hash, std::vector<PeerMatch>* out) {
          Peers(key, hash, out);
        },
        [this](const KeyHash&) { ++prefetched_; },
        [this](const WhoHasAnswer& w) {
          Answer a{w.valid, w.local, {}};
          for (const PeerMatch& m : *w.peers) a.peers.push_back(m.node_id);
          answers_.push_back(std::move(a));
        });
    *out_batch = holder->get();
    for (const Input& in : inputs) {
      if (in.valid) {
        std::string scratch = in.key;  // the batch copies: the caller's buffer is reused
        (*out_batch)->Add(scratch);
        scratch.assign(scratch.size(), 'x');
      } else {
        (*out_batch)->AddInvalid();
      }
    }
    (*out_batch)->Finish();
    return answers_;
  }

  IndexHasher hasher_;
  CountingBloomFilter filter_{10, 1};
  std::vector<Answer> answers_;
  size_t prefetched_ = 0;
};

TEST_F(WhoHasBatchTest, AnswersEqualOneKeyAtATimeAtEveryGroupBoundary) {
  for (size_t n : {size_t{0}, size_t{1}, WhoHasBatch::kGroup - 1, WhoHasBatch::kGroup,
                   WhoHasBatch::kGroup + 1, 2 * WhoHasBatch::kGroup + 1, size_t{1000}}) {
    const std::vector<Input> inputs = Inputs(n);
    std::vector<Answer> expected;
    uint64_t claimed = 0, invalid = 0;
    for (const Input& in : inputs) {
      expected.push_back(Reference(in));
      claimed += expected.back().local || !expected.back().peers.empty();
      invalid += !in.valid;
    }
    WhoHasBatch* batch = nullptr;
    std::unique_ptr<WhoHasBatch> holder;
    const std::vector<Answer> answers = Batched(inputs, &batch, &holder);
    EXPECT_EQ(answers, expected) << n << " inputs";
    EXPECT_EQ(answers.size(), n);
    uint64_t answered_claimed = 0, answered_invalid = 0;
    for (const Answer& a : answers) {
      answered_claimed += a.local || !a.peers.empty();
      answered_invalid += !a.valid;
    }
    EXPECT_EQ(answered_claimed, claimed) << n << " inputs";
    EXPECT_EQ(answered_invalid, invalid) << n << " inputs";
    EXPECT_EQ(prefetched_, n - invalid) << "the peer side is prefetched once per key";
  }
}

TEST_F(WhoHasBatchTest, EveryKeyHeldHereIsAnsweredLocal) {
  const std::vector<Input> inputs = Inputs(4000);
  WhoHasBatch* batch = nullptr;
  std::unique_ptr<WhoHasBatch> holder;
  const std::vector<Answer> answers = Batched(inputs, &batch, &holder);
  ASSERT_EQ(answers.size(), inputs.size());
  size_t held = 0;
  for (size_t i = 0; i < inputs.size(); i += 2) {
    if (!inputs[i].valid) continue;
    ++held;
    EXPECT_TRUE(answers[i].local) << inputs[i].key;
  }
  EXPECT_GT(held, 1500u);
}

TEST_F(WhoHasBatchTest, AnswersComeOutWhenTheirGroupIsFull) {
  size_t answered = 0;
  WhoHasBatch batch(
      filter_, hasher_, [](std::string_view, const KeyHash&, std::vector<PeerMatch>*) {}, nullptr,
      [&](const WhoHasAnswer&) { ++answered; });
  for (size_t i = 0; i + 1 < WhoHasBatch::kGroup; ++i) batch.Add("key-" + std::to_string(i));
  EXPECT_EQ(answered, 0u);
  batch.AddInvalid();
  EXPECT_EQ(answered, WhoHasBatch::kGroup);
  batch.Add("one more");
  EXPECT_EQ(answered, WhoHasBatch::kGroup);
  batch.Finish();
  EXPECT_EQ(answered, WhoHasBatch::kGroup + 1);
  batch.Finish();
  EXPECT_EQ(answered, WhoHasBatch::kGroup + 1);
}

}  // namespace
}  // namespace peerbloom
