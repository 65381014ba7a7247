// SPDX-License-Identifier: Apache-2.0
#include "engine/support/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <utility>

namespace tb {
namespace {
thread_local bool t_inWorker = false;

// Marks the current thread as a pool worker for the lifetime of the guard.
struct WorkerFlag {
    bool saved;
    WorkerFlag() : saved(t_inWorker) { t_inWorker = true; }
    ~WorkerFlag() { t_inWorker = saved; }
};
}  // namespace

ThreadPool::ThreadPool(int numThreads) {
    if (numThreads <= 0) numThreads = static_cast<int>(std::thread::hardware_concurrency());
    m_numThreads = numThreads < 1 ? 1 : numThreads;
    for (int i = 1; i < m_numThreads; ++i) m_threads.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_threads) t.join();
}

bool ThreadPool::inWorker() { return t_inWorker; }

void ThreadPool::workerLoop(int) {
    t_inWorker = true;
    uint64_t seen = 0;
    for (;;) {
        const std::function<void(int64_t)>* fn;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop) return;
            seen = m_generation;
            fn = m_chunkFn;
        }
        for (int64_t c; (c = m_nextChunk.fetch_add(1)) < m_numChunks;) {
            try {
                (*fn)(c);
            } catch (...) {
                std::lock_guard lock(m_mutex);
                if (!m_error) m_error = std::current_exception();
            }
        }
        std::lock_guard lock(m_mutex);
        if (--m_running == 0) m_done.notify_all();
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
        ++m_generation;
    }
    m_wake.notify_all();
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
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return m_running == 0; });
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
