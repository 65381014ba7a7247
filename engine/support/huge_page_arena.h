// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// \brief One block of memory backed by 2 MiB transparent huge pages, for the tensors a compiled
/// network keeps for its whole life (its weights and its planned intermediates).
///
/// Why: a network's weights are read cold, from DRAM, once per inference (resnet-50: 102-152 MB,
/// far beyond the last-level cache). On 4 KiB pages each 4 KiB of a streamed weight costs a TLB
/// miss and a page walk (nested, under a VM), and the hardware prefetchers stop at every 4 KiB
/// boundary; on 2 MiB pages one TLB entry covers 512 times as much. The tuner times candidates in
/// huge-page buffers too (measure::GuardedBuffer), so the network then runs its kernels on the
/// memory they were tuned on. Linux only: elsewhere, or where the kernel gives no huge page
/// (`transparent_hugepage` = never), the block is ordinary 4 KiB pages and everything still works.
#include <cstddef>
#include <cstdint>

namespace tb::support {

class HugePageArena {
public:
    /// Maps `bytes` (rounded up to whole 2 MiB pages) of zeroed memory, 2 MiB aligned, advised
    /// MADV_HUGEPAGE, and touches it so that the pages exist before the first timed use. With
    /// `hugePages` false: the same mapping without the advice (4 KiB pages, for A/B runs).
    /// Throws InternalError when the mapping fails (out of memory).
    explicit HugePageArena(size_t bytes, bool hugePages = true);
    ~HugePageArena();
    HugePageArena(const HugePageArena&) = delete;
    HugePageArena& operator=(const HugePageArena&) = delete;

    /// The start of the block (2 MiB aligned), or null when `bytes` was 0.
    void* data() const { return m_base; }
    /// Usable bytes (the request rounded up to 2 MiB).
    size_t size() const { return m_size; }
    /// Bytes of the block the kernel backs with huge pages now (from /proc/self/smaps; -1 where that
    /// cannot be read).
    int64_t hugePageBytes() const;

private:
    void* m_map = nullptr;
    size_t m_mapBytes = 0;
    void* m_base = nullptr;
    size_t m_size = 0;
};

/// True unless the environment variable TB_HUGE_PAGES is "0" (then networks allocate their
/// tensors on 4 KiB pages: the A/B switch of bench runs).
bool hugePagesEnabled();

}  // namespace tb::support
