// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/timer.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <utility>

#include "engine/support/error.h"

namespace tb::measure {

namespace {

/// Involuntary context switches of all threads of this process so far.
long processInvoluntarySwitches() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nivcsw;
}

}  // namespace

std::vector<double> timeEvaluateUnpreempted(const std::function<void()>& f, const TimerOptions& o,
                                            const std::function<long()>& switchCounter) {
    using clock = std::chrono::steady_clock;
    TB_CHECK(o.number >= 1 && o.repeat >= 1) << "timer needs number >= 1 and repeat >= 1";
    const std::function<long()> involuntarySwitches = switchCounter ? switchCounter : std::function<long()>(processInvoluntarySwitches);
    std::vector<double> out;
    int sliceCalls = std::max(1, o.number);
    for (int i = 0; i < o.repeat; ++i) {
        double cleanMs = 0, totalMs = 0;
        long long cleanCalls = 0;
        std::vector<double> perCall;
        do {
            const long nv0 = involuntarySwitches();
            const auto t0 = clock::now();
            for (int k = 0; k < sliceCalls; ++k) f();
            const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
            const bool clean = involuntarySwitches() == nv0;
            totalMs += ms;
            perCall.push_back(ms / sliceCalls);
            if (clean) {
                cleanMs += ms;
                cleanCalls += sliceCalls;
            }
            // The next slice: about kSliceMs (a clock that read 0 doubles the calls).
            const double one = ms / sliceCalls;
            const double want = one > 0 ? std::ceil(kSliceMs / one) : 2.0 * sliceCalls;
            sliceCalls = int(std::clamp(want, 1.0, double(1 << 30)));
        } while (cleanMs < o.minRepeatMs && totalMs < kPreemptedCap * o.minRepeatMs && perCall.size() < (1u << 30));
        if (cleanCalls > 0) {
            out.push_back(cleanMs / 1e3 / double(cleanCalls));
        } else {
            std::nth_element(perCall.begin(), perCall.begin() + long(perCall.size() / 2), perCall.end());
            out.push_back(perCall[perCall.size() / 2] / 1e3);
        }
        if (o.cooldownIntervalMs > 0 && o.repeatsToCooldown > 0 && i % o.repeatsToCooldown == 0)
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.cooldownIntervalMs));
    }
    return out;
}

std::vector<double> timeEvaluate(const std::function<void()>& f, const TimerOptions& o,
                                 const std::function<void()>& preprocess) {
    using clock = std::chrono::steady_clock;
    TB_CHECK(o.number >= 1 && o.repeat >= 1) << "timer needs number >= 1 and repeat >= 1";
    if (!o.skipWarmup) f();
    if (o.abandonAboveS > 0) {
        if (preprocess) preprocess();
        const auto t0 = clock::now();
        f();
        const double s = std::chrono::duration<double>(clock::now() - t0).count();
        if (s > o.abandonAboveS) return {s};
    }
    if (o.rejectPreempted && !preprocess) return timeEvaluateUnpreempted(f, o);
    return timeEvaluateRounds(
        [&](int number) {
            const auto t0 = clock::now();
            for (int k = 0; k < number; ++k) f();
            return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        },
        o, preprocess);
}

std::vector<double> timeEvaluateRounds(const std::function<double(int number)>& timedRound, const TimerOptions& o,
                                       const std::function<void()>& preprocess) {
    TB_CHECK(o.number >= 1 && o.repeat >= 1) << "timer needs number >= 1 and repeat >= 1";
    std::vector<double> out;
    int number = o.number;
    for (int i = 0; i < o.repeat; ++i) {
        if (preprocess) preprocess();
        double durationMs = 0;
        bool timed = false;
        if (o.extendShortRound) {
            // A clock that never advances would double the calls forever: stop at 2^30 calls.
            auto extendTo = [&](double& ms, int& calls, double targetMs) {
                while (ms < targetMs && calls < (1 << 30)) {
                    // Per call so far; a clock that read 0 (a coarse device timer) doubles the calls.
                    const double perCall = ms / calls;
                    const double need = perCall > 0 ? std::ceil((targetMs - ms) / perCall) : double(calls);
                    const int more = int(std::clamp(need, 1.0, double((1 << 30) - calls)));
                    ms += timedRound(more);
                    calls += more;
                }
            };
            // The round is one slice of minRepeatMs (TVM), or the fastest of `slices` slices
            // (TimerOptions::slices): slices of >= sliceMs each, the preprocess before each, until the
            // round has lasted minRepeatMs and made at least `number` calls (what one TVM round costs).
            const int slices = std::max(1, o.slices);
            const double sliceMs = o.minRepeatMs / slices;
            double best = 0, totalMs = 0;
            // A round starts from `number` calls, as TVM's; the first of several slices from one call
            // (the calls per slice are not known yet).
            int totalCalls = 0, calls = i > 0 || slices == 1 ? number : 1;
            for (int k = 0; totalMs < o.minRepeatMs || totalCalls < o.number; ++k) {
                if (k > 0 && preprocess) preprocess();
                int c = calls;  // the previous slice's calls lasted about sliceMs
                double ms = timedRound(c);
                if (k == 0 && i == 0 && o.screenMs > 0 && o.screenAboveS > 0) {
                    // Round 0 is screened on its first screenMs.
                    extendTo(ms, c, std::min(o.screenMs, sliceMs));
                    if (ms / 1e3 / c > o.screenAboveS) return {ms / 1e3 / c};
                }
                extendTo(ms, c, sliceMs);
                best = k == 0 ? ms / 1e3 / c : std::min(best, ms / 1e3 / c);  // seconds per call
                totalMs += ms;
                totalCalls += c;
                calls = c;
                if (c >= (1 << 30)) break;  // a clock that never advances (extendTo's cap)
            }
            number = calls;  // the next rounds start where this one ended, as TVM's grown number does
            out.push_back(best);
            if (o.cooldownIntervalMs > 0 && o.repeatsToCooldown > 0 && i % o.repeatsToCooldown == 0)
                std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.cooldownIntervalMs));
            continue;
        }
        do {
            const double goldenRatio = 1.618;
            if (durationMs > 0.0)
                number = static_cast<int>(std::max(o.minRepeatMs / (durationMs / number) + 1, number * goldenRatio));
            else if (timed)  // a clock that read 0 (a coarse device timer): grow anyway
                number = static_cast<int>(number * goldenRatio) + 1;
            durationMs = timedRound(number);
            timed = true;
        } while (durationMs < o.minRepeatMs);
        out.push_back(durationMs / 1e3 / number);
        if (o.cooldownIntervalMs > 0 && o.repeatsToCooldown > 0 && i % o.repeatsToCooldown == 0)
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.cooldownIntervalMs));
    }
    return out;
}

namespace {

#if defined(__x86_64__)
bool cpuHasClflushopt() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    return (ebx >> 23) & 1u;
}

__attribute__((target("clflushopt"))) void flushLinesOpt(const char* p, size_t bytes) {
    for (size_t off = 0; off < bytes; off += 64) __builtin_ia32_clflushopt(p + off);
}
#endif

}  // namespace

bool flushCacheUsesClflushopt() {
#if defined(__x86_64__)
    static const bool has = cpuHasClflushopt();
    return has;
#else
    return false;
#endif
}

void flushCache(const void* data, size_t bytes) {
    const char* p = static_cast<const char*>(data);
#if defined(__x86_64__)
    if (flushCacheUsesClflushopt())
        flushLinesOpt(p, bytes);
    else
        for (size_t off = 0; off < bytes; off += 64) __builtin_ia32_clflush(p + off);
    __builtin_ia32_mfence();  // orders clflushopt: every line is out before the kernel starts
#elif defined(__aarch64__)
    for (size_t off = 0; off < bytes; off += 64) asm volatile("dc civac, %0" ::"r"(p + off) : "memory");
    asm volatile("dsb ish" ::: "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

namespace {
constexpr unsigned char kCanary = 0xA5;
constexpr size_t kHugePage = size_t(2) << 20;
size_t pageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
}  // namespace

GuardedBuffer::GuardedBuffer(size_t elements) : m_elements(elements) {
    const size_t page = pageSize();
    const size_t dataBytes = (elements * sizeof(float) + 63) / 64 * 64;
    // The writable part is whole 2 MiB transparent huge pages, 2 MiB aligned: the data then lies in
    // physically contiguous memory whose cache-set mapping follows its virtual address, the same in
    // every measurement (timer.h). Where the kernel gives no huge page, 4 KiB pages remain.
    const size_t inner = (dataBytes + 64 + kHugePage - 1) / kHugePage * kHugePage;  // >= 64 bytes of front canary
    m_mapBytes = inner + kHugePage + 2 * page;
    m_map = mmap(nullptr, m_mapBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TB_CHECK(m_map != MAP_FAILED) << "cannot map " << m_mapBytes << " bytes for an argument buffer";
    const uintptr_t first = reinterpret_cast<uintptr_t>(m_map) + page;  // a guard page before
    m_lo = reinterpret_cast<unsigned char*>((first + kHugePage - 1) / kHugePage * kHugePage);
    m_hi = m_lo + inner;  // the page after m_hi stays PROT_NONE: the guard after
    TB_CHECK(mprotect(m_lo, inner, PROT_READ | PROT_WRITE) == 0) << "mprotect failed";
    madvise(m_lo, inner, MADV_HUGEPAGE);  // advice: failure leaves 4 KiB pages
    m_data = reinterpret_cast<float*>(m_hi - dataBytes);
    std::memset(m_lo, kCanary, inner);
    std::memset(m_data, 0, elements * sizeof(float));
}

GuardedBuffer::GuardedBuffer(GuardedBuffer&& o) noexcept
    : m_map(std::exchange(o.m_map, nullptr)), m_mapBytes(o.m_mapBytes), m_lo(o.m_lo), m_hi(o.m_hi), m_data(o.m_data),
      m_elements(o.m_elements) {}

GuardedBuffer::~GuardedBuffer() {
    if (m_map) munmap(m_map, m_mapBytes);
}

namespace {
// True when every byte of [p, end) is kCanary; word at a time (the slack is up to 2 MiB).
bool allCanary(const unsigned char* p, const unsigned char* end) {
    constexpr uint64_t word = 0x0101010101010101ull * kCanary;
    for (; p < end && reinterpret_cast<uintptr_t>(p) % 8 != 0; ++p)
        if (*p != kCanary) return false;
    uint64_t diff = 0;
    for (; p + 8 <= end; p += 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        diff |= w ^ word;
    }
    for (; p < end; ++p) diff |= uint64_t(*p ^ kCanary);
    return diff == 0;
}
}  // namespace

bool GuardedBuffer::intact() const {
    return allCanary(m_lo, reinterpret_cast<const unsigned char*>(m_data)) &&
           allCanary(reinterpret_cast<const unsigned char*>(m_data + m_elements), m_hi);
}

void fillRandom(float* data, size_t n, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; ++i) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        data[i] = static_cast<float>(static_cast<double>(z >> 40) / double(1ull << 24) * 2.0 - 1.0);
    }
}

}  // namespace tb::measure
