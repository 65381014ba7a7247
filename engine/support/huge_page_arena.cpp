// SPDX-License-Identifier: Apache-2.0
#include "engine/support/huge_page_arena.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "engine/support/error.h"

namespace tb::support {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}

HugePageArena::HugePageArena(size_t bytes, bool hugePages) {
    if (bytes == 0) return;
    m_size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
#if defined(__linux__)
    m_mapBytes = m_size + kHugePage;  // slack to align the start to 2 MiB
    m_map = mmap(nullptr, m_mapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TB_CHECK(m_map != MAP_FAILED) << "out of memory mapping " << m_mapBytes << " bytes for a network's tensors";
    const uintptr_t first = reinterpret_cast<uintptr_t>(m_map);
    m_base = reinterpret_cast<void*>((first + kHugePage - 1) / kHugePage * kHugePage);
    if (hugePages) madvise(m_base, m_size, MADV_HUGEPAGE);  // advice: failure leaves 4 KiB pages
#else
    m_map = std::aligned_alloc(kHugePage, m_size);
    TB_CHECK(m_map) << "out of memory allocating " << m_size << " bytes for a network's tensors";
    m_base = m_map;
    (void)hugePages;
#endif
    std::memset(m_base, 0, m_size);  // fault every page in now, not in the first timed run
}

HugePageArena::~HugePageArena() {
    if (!m_map) return;
#if defined(__linux__)
    munmap(m_map, m_mapBytes);
#else
    std::free(m_map);
#endif
}

int64_t HugePageArena::hugePageBytes() const {
#if defined(__linux__)
    if (!m_base) return 0;
    std::ifstream smaps("/proc/self/smaps");
    if (!smaps) return -1;
    const uintptr_t lo = reinterpret_cast<uintptr_t>(m_base), hi = lo + m_size;
    std::string line;
    int64_t total = 0;
    bool inside = false;
    while (std::getline(smaps, line)) {
        uintptr_t a = 0, b = 0;
        char dash = 0;
        std::istringstream head(line);
        if (line.find('-') != std::string::npos && (head >> std::hex >> a >> dash >> b) && dash == '-' &&
            line.find(':') > line.find(' ')) {
            inside = a < hi && b > lo;  // a mapping line: does it overlap the block?
            continue;
        }
        if (inside && line.rfind("AnonHugePages:", 0) == 0) {
            std::istringstream v(line.substr(14));
            int64_t kb = 0;
            v >> kb;
            total += kb * 1024;
        }
    }
    return total;
#else
    return -1;
#endif
}

bool hugePagesEnabled() {
    const char* v = std::getenv("TB_HUGE_PAGES");
    return !(v && std::string(v) == "0");
}

}  // namespace tb::support
