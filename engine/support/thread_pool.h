// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file thread_pool.h
/// \brief The engine's persistent thread pool and `parallelFor` (TVM `support::parallel_for` and the
/// runtime's `TVMBackendParallelLaunch`).
///
/// Two users share it: generated kernels, whose `parallel` loops are outlined by codegen into a
/// function that the pool runs on every worker (static partition of the iteration range, as TVM's
/// runtime thread pool does), and engine code that wants a batch of independent jobs run on all
/// cores (building candidates, feature extraction). Threads are created once; between jobs a worker
/// first spins on the job counter for a short while and only then sleeps on a condition variable,
/// and the launching thread spins the same way for the workers to finish. A network's kernels are
/// launched back to back, so most launches find the workers still spinning and cost a cache-line
/// handoff (~0.1-1 us) instead of a futex wake-up (tens of us on a loaded VM). This is what TVM's
/// runtime thread pool does (TVM_THREAD_POOL_SPIN_COUNT) and what OpenMP's active wait policy does.
/// The spin time is TB_THREAD_POOL_SPIN_US microseconds (default 200; 0 sleeps at once).
///
/// Chunks are claimed, not assigned: every thread (the launcher included) takes the next unclaimed
/// chunk until none is left, and the launcher returns as soon as every chunk is *done*; it never
/// waits for a worker that has not shown up. On an oversubscribed machine (a tuning run or a build
/// beside a benchmark, more runnable threads than cores) a descheduled worker costs at most the
/// serial time of the chunks it did not take, instead of the scheduler's time slice (ms) that a
/// "wait until every worker has checked in" barrier costs: a 30 us dense kernel measured 0.06-3.5 ms
/// at 2 threads on a loaded 2-core machine with that barrier. A claim carries the job's generation
/// (one 64-bit atomic: generation << 32 | chunks not yet claimed), so a worker that wakes up after
/// its job ended can never run a chunk of a job, or a function, that is gone; whether a chunk is left
/// is read from that word alone, and the job's other fields only once a claim holds the job open.
///
/// A `parallelFor` issued from inside a pool worker (nested parallelism) runs serially on the
/// calling thread, as TVM's runtime does for nested parallel loops. Jobs are run one at a time;
/// concurrent callers from different threads are serialised by a mutex.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tb {

class ThreadPool {
public:
    /// A pool of `numThreads` workers (the calling thread counts as worker 0, so numThreads - 1
    /// threads are spawned). numThreads <= 0 means std::thread::hardware_concurrency(). spinUs is how
    /// long (microseconds) an idle worker or a waiting launcher spins before it sleeps; < 0 means
    /// TB_THREAD_POOL_SPIN_US, else 200.
    explicit ThreadPool(int numThreads = 0, int64_t spinUs = -1);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int numThreads() const { return m_numThreads; }

    /// Run fn(begin, end) over a static partition of [0, n) into at most numThreads() contiguous
    /// chunks (chunk t gets [t*n/T, (t+1)*n/T)); returns when all chunks are done. Exceptions thrown
    /// by fn are rethrown here (the first one). n <= 0 returns immediately.
    void parallelForRange(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

    /// Run fn(i) for every i in [0, n), dynamically load-balanced over the workers (one index at a
    /// time; meant for coarse jobs such as compiling one candidate).
    void parallelFor(int64_t n, const std::function<void(int64_t i)>& fn);

    /// True when called from one of this process's pool worker threads (or the caller while it runs
    /// a job): nested parallel regions then run serially.
    static bool inWorker();

    /// The process-wide pool. Its size is TB_NUM_THREADS when set, else the hardware concurrency.
    static ThreadPool& global();

private:
    void workerLoop(int index);
    void runJob(int64_t numChunks, const std::function<void(int64_t chunk)>& chunkFn);
    // Claims and runs chunks of job `generation` until none is left or another job has started.
    void runChunks(uint64_t generation);

    int m_numThreads = 1;
    std::vector<std::thread> m_threads;
    std::mutex m_jobMutex;  // serialises jobs from different callers

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    std::atomic<uint64_t> m_generation{0};  // bumped (under m_mutex) to publish a job
    std::atomic<bool> m_stop{false};
    // The current job. Read only by a thread holding a claim on it (ordered by m_claim's acquire);
    // atomics because the launcher rewrites them while a late worker may still test the claim word.
    std::atomic<const std::function<void(int64_t)>*> m_chunkFn{nullptr};
    std::atomic<int64_t> m_numChunks{0};
    std::atomic<uint64_t> m_claim{0};      // (generation & 0xffffffff) << 32 | chunks not yet claimed
    std::atomic<int64_t> m_remaining{0};   // chunks of the current job not finished yet
    int64_t m_spinNs = 200000;  // spin before sleeping, in ns (TB_THREAD_POOL_SPIN_US)
    std::exception_ptr m_error;
};

/// Shorthand for ThreadPool::global().parallelFor(n, fn).
void parallelFor(int64_t n, const std::function<void(int64_t i)>& fn);

}  // namespace tb
