// SPDX-License-Identifier: Apache-2.0
#include "engine/support/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tb {
namespace {
thread_local bool t_inWorker = false;

// Marks the current thread as a pool worker for the lifetime of the guard.
struct WorkerFlag {
    bool saved;
    WorkerFlag() : saved(t_inWorker) { t_inWorker = true; }
    ~WorkerFlag() { t_inWorker = saved; }
};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Spins until done() or spinNs nanoseconds have passed; returns done()'s last value. The clock is
// read every 64 pauses, and the thread yields its core there: when the machine is oversubscribed
// (a tuning run beside a benchmark, more threads than cores) the thread we wait for may need this
// core, and a pure pause loop would hold it for the whole spin.
template <typename Pred>
bool spinUntil(int64_t spinNs, Pred done) {
    if (done()) return true;
    if (spinNs <= 0) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(spinNs);
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            cpuRelax();
            if (done()) return true;
        }
        if (std::chrono::steady_clock::now() >= deadline) return done();
        std::this_thread::yield();
    }
}

int64_t spinNs(int64_t spinUs) {
    if (spinUs < 0) {
        const char* env = std::getenv("TB_THREAD_POOL_SPIN_US");
        spinUs = (env && *env) ? std::max<long long>(0, std::atoll(env)) : 200;
    }
    return spinUs * 1000;
}
}  // namespace

ThreadPool::ThreadPool(int numThreads, int64_t spinUs) : m_spinNs(spinNs(spinUs)) {
    if (numThreads <= 0) numThreads = static_cast<int>(std::thread::hardware_concurrency());
    m_numThreads = numThreads < 1 ? 1 : numThreads;
    for (int i = 1; i < m_numThreads; ++i) m_threads.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_generation.fetch_add(1);
    }
    m_wake.notify_all();
    for (auto& t : m_threads) t.join();
}

bool ThreadPool::inWorker() { return t_inWorker; }

void ThreadPool::workerLoop(int) {
    t_inWorker = true;
    uint64_t seen = 0;
    for (;;) {
        // Spin for the next job first; sleep only when none came within the spin time.
        if (!spinUntil(m_spinNs, [&] { return m_generation.load(std::memory_order_acquire) != seen; })) {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_generation.load(std::memory_order_acquire) != seen; });
        }
        seen = m_generation.load(std::memory_order_acquire);
        if (m_stop.load()) return;
        runChunks(seen);
    }
}

void ThreadPool::runChunks(uint64_t generation) {
    const uint64_t tag = (generation & 0xffffffffu) << 32;
    uint64_t claim = m_claim.load(std::memory_order_acquire);
    for (;;) {
        // The claim word counts the chunks still unclaimed, so whether one is left is decided by
        // the word alone. Nothing else about the job is read before the claim succeeds: a worker
        // still in an earlier job could otherwise read the next job's fields, which the launcher
        // writes before it opens that job's claims, and take a chunk that does not exist (it ran a
        // chunk twice and drove m_remaining below zero, so the launcher waited forever).
        if ((claim & ~uint64_t(0xffffffffu)) != tag) return;  // a later job (or none) is current
        const int64_t unclaimed = int64_t(claim & 0xffffffffu);
        if (unclaimed == 0) return;
        if (!m_claim.compare_exchange_weak(claim, claim - 1, std::memory_order_acq_rel, std::memory_order_acquire))
            continue;  // `claim` holds the current value
        // The claim holds job `generation` open: its launcher waits for this chunk (m_remaining)
        // before it returns or writes another job, and the acquire above saw the fields it wrote
        // before opening the claims.
        const std::function<void(int64_t)>* fn = m_chunkFn.load(std::memory_order_relaxed);
        const int64_t c = m_numChunks.load(std::memory_order_relaxed) - unclaimed;
        try {
            (*fn)(c);
        } catch (...) {
            std::lock_guard lock(m_mutex);
            if (!m_error) m_error = std::current_exception();
        }
        // The thread that finishes the last chunk wakes the launcher if it went to sleep. It takes
        // the mutex before notifying, so a launcher between its predicate check and its wait cannot
        // miss it.
        if (m_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard lock(m_mutex);
            m_done.notify_all();
        }
        claim = m_claim.load(std::memory_order_acquire);
    }
}

void ThreadPool::runJob(int64_t numChunks, const std::function<void(int64_t)>& chunkFn) {
    if (numChunks <= 0) return;
    // Nested region, a single chunk or a single thread: run inline (no wake-up cost).
    if (t_inWorker || numChunks == 1 || m_threads.empty()) {
        WorkerFlag flag;
        for (int64_t c = 0; c < numChunks; ++c) chunkFn(c);
        return;
    }
    // A claim counts chunks in 32 bits: a larger job runs as several.
    constexpr int64_t kMaxChunks = 0xffffffff;
    if (numChunks > kMaxChunks) {
        for (int64_t base = 0; base < numChunks; base += kMaxChunks) {
            const std::function<void(int64_t)> part = [&](int64_t c) { chunkFn(base + c); };
            runJob(std::min(kMaxChunks, numChunks - base), part);
        }
        return;
    }
    std::lock_guard jobLock(m_jobMutex);
    uint64_t generation;
    {
        std::lock_guard lock(m_mutex);
        m_chunkFn.store(&chunkFn, std::memory_order_relaxed);
        m_numChunks.store(numChunks, std::memory_order_relaxed);
        m_remaining.store(numChunks, std::memory_order_relaxed);
        m_error = nullptr;
        generation = m_generation.load(std::memory_order_relaxed) + 1;
        // Opens the claims (publishes the fields above to claimers), then the job to sleepers.
        m_claim.store((generation & 0xffffffffu) << 32 | uint64_t(numChunks), std::memory_order_release);
        m_generation.store(generation, std::memory_order_release);
    }
    m_wake.notify_all();  // no system call when every worker is still spinning
    {
        WorkerFlag flag;
        runChunks(generation);
    }
    // Only chunks that a worker has claimed can still be running: wait for those, not for workers
    // that have not shown up (they will find no chunk left).
    if (!spinUntil(m_spinNs, [&] { return m_remaining.load(std::memory_order_acquire) == 0; })) {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return m_remaining.load(std::memory_order_acquire) == 0; });
    }
    std::lock_guard lock(m_mutex);
    m_chunkFn.store(nullptr, std::memory_order_relaxed);
    if (m_error) std::rethrow_exception(std::exchange(m_error, nullptr));
}

void ThreadPool::parallelForRange(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    const int64_t chunks = std::min<int64_t>(n, m_numThreads);
    runJob(chunks, [&](int64_t t) { fn(t * n / chunks, (t + 1) * n / chunks); });
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t)>& fn) { runJob(n, fn); }

ThreadPool& ThreadPool::global() {
    static ThreadPool pool([] {
        const char* env = std::getenv("TB_NUM_THREADS");
        return env ? std::atoi(env) : 0;
    }());
    return pool;
}

void parallelFor(int64_t n, const std::function<void(int64_t)>& fn) { ThreadPool::global().parallelFor(n, fn); }

}  // namespace tb
