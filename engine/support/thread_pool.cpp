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
        // Spin for the next job first; sleep only when none came within the spin time. The job's
        // fields are written before m_generation is bumped, so the acquire load publishes them.
        if (!spinUntil(m_spinNs, [&] { return m_generation.load(std::memory_order_acquire) != seen; })) {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_generation.load(std::memory_order_acquire) != seen; });
        }
        seen = m_generation.load(std::memory_order_acquire);
        if (m_stop.load()) return;
        const std::function<void(int64_t)>* fn = m_chunkFn;
        const int64_t numChunks = m_numChunks;
        for (int64_t c; (c = m_nextChunk.fetch_add(1)) < numChunks;) {
            try {
                (*fn)(c);
            } catch (...) {
                std::lock_guard lock(m_mutex);
                if (!m_error) m_error = std::current_exception();
            }
        }
        // The last worker out wakes the launching thread if it went to sleep. It takes the mutex
        // before notifying, so a launcher between its predicate check and its wait cannot miss it.
        if (m_running.fetch_sub(1) == 1) {
            std::lock_guard lock(m_mutex);
            m_done.notify_all();
        }
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
    std::lock_guard jobLock(m_jobMutex);
    {
        std::lock_guard lock(m_mutex);
        m_chunkFn = &chunkFn;
        m_numChunks = numChunks;
        m_nextChunk = 0;
        m_running = static_cast<int>(m_threads.size());
        m_error = nullptr;
        m_generation.fetch_add(1);  // publishes the fields above to spinning workers
    }
    m_wake.notify_all();  // no system call when every worker is still spinning
    {
        WorkerFlag flag;
        for (int64_t c; (c = m_nextChunk.fetch_add(1)) < numChunks;) {
            try {
                chunkFn(c);
            } catch (...) {
                std::lock_guard lock(m_mutex);
                if (!m_error) m_error = std::current_exception();
            }
        }
    }
    if (!spinUntil(m_spinNs, [&] { return m_running.load(std::memory_order_acquire) == 0; })) {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return m_running.load() == 0; });
    }
    std::lock_guard lock(m_mutex);
    m_chunkFn = nullptr;
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
