// How a fuzz target tells the corpus replay (replay_main.cc) whether the decoder under test
// accepted an input. Under libFuzzer nothing reads it: the targets still return 0 for every
// input, so fuzzing behaves as before. The replay resets it before each seed and checks it
// against the seed's name: valid-* must be accepted; corrupt-*, trunc-* and unsupported-*
// refused; seeds named otherwise are only replayed.
#ifndef PEERBLOOM_TESTS_FUZZ_VERDICT_H_
#define PEERBLOOM_TESTS_FUZZ_VERDICT_H_

namespace peerbloom::fuzz {

enum class Verdict { kNone, kAccepted, kRefused };

// The verdict reported for the last input (kNone when the target reported none).
inline Verdict& LastVerdict() {
  static Verdict verdict = Verdict::kNone;
  return verdict;
}

// Called once per input by a target, with the decoder's answer for the bytes as given (not
// for a resealed or otherwise mended copy).
inline void ReportVerdict(bool accepted) {
  LastVerdict() = accepted ? Verdict::kAccepted : Verdict::kRefused;
}

}  // namespace peerbloom::fuzz

#endif  // PEERBLOOM_TESTS_FUZZ_VERDICT_H_
