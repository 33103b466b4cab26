#include "lib/util/huge_page_allocator.h"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace peerbloom {

void* AllocateLargeBlock(size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* block = nullptr;
  if (bytes >= kHugePageBytes) {
    // aligned_alloc wants a multiple of the alignment; the rounding wastes < 2 MiB of
    // address space and nothing more (untouched tail pages are never faulted in).
    const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    block = std::aligned_alloc(kHugePageBytes, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (block != nullptr) (void)madvise(block, rounded, MADV_HUGEPAGE);  // advisory only
#endif
  } else {
    block = std::malloc(bytes);
  }
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

void FreeLargeBlock(void* block) noexcept { std::free(block); }

}  // namespace peerbloom
