// SPDX-License-Identifier: Apache-2.0
// ThreadPool: every index runs exactly once, the static partition is the documented one, errors
// reach the caller, nested regions run inline, and back-to-back jobs are correct whether the
// workers are caught spinning (the default) or asleep (spin 0) -- the two hand-off paths -- and idle
// workers fall asleep after the spin time; a worker that never shows up (frozen) does not hold up a
// job, and when it wakes it runs no chunk of a job that has ended.
#include <QtTest>

#include <csignal>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/support/thread_pool.h"

namespace {

// The ids of this process's threads (/proc/self/task).
std::set<long> threadIds() {
    std::set<long> ids;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ids.insert(std::stol(e.path().filename().string()));
    return ids;
}
std::vector<long> newThreads(const std::set<long>& before) {
    std::vector<long> out;
    for (long id : threadIds())
        if (!before.count(id)) out.push_back(id);
    return out;
}
// A thread's scheduler state, the field after the parenthesised name in /proc/self/task/<id>/stat:
// 'R' running or runnable, 'S' sleeping (interruptible, e.g. on a futex), ...; '?' if unreadable.
char threadState(long id) {
    std::ifstream f("/proc/self/task/" + std::to_string(id) + "/stat");
    std::string line;
    std::getline(f, line);
    const size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}
bool allInState(const std::vector<long>& ids, char state) {
    return std::all_of(ids.begin(), ids.end(), [&](long id) { return threadState(id) == state; });
}
QString describeStates(const std::vector<long>& ids) {
    QString s = QStringLiteral("worker thread states:");
    for (long id : ids) s += QStringLiteral(" %1=%2").arg(id).arg(QChar::fromLatin1(threadState(id)));
    return s;
}

// A thread that gets SIGUSR1 parks in the handler until g_release is set: a worker "descheduled"
// for as long as the test wants, deterministically (an oversubscribed core, made exact).
std::atomic<bool> g_release{false};
std::atomic<int> g_parked{0};
void parkHandler(int) {
    g_parked.fetch_add(1);
    while (!g_release.load()) {
        const timespec ts{0, 1000000};
        nanosleep(&ts, nullptr);
    }
    g_parked.fetch_sub(1);
}

}  // namespace

class TestThreadPool : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyIndexOnce_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("spinUs");
        for (int t : {1, 2, 4, 7})
            for (int s : {0, 200}) QTest::addRow("threads=%d spin=%dus", t, s) << t << s;
    }
    void everyIndexOnce() {
        QFETCH(int, threads);
        QFETCH(int, spinUs);
        tb::ThreadPool pool(threads, spinUs);
        QCOMPARE(pool.numThreads(), threads);
        // Many small jobs back to back: the hand-off between jobs is what the spin changes.
        for (int n : {0, 1, 2, 3, 5, 64, 1000}) {
            for (int rep = 0; rep < 300; ++rep) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
                pool.parallelFor(n, [&](int64_t i) { hits[size_t(i)].fetch_add(1); });
                for (int i = 0; i < n; ++i) QCOMPARE(hits[size_t(i)].load(), 1);
            }
        }
    }
    // Jobs whose size changes from one to the next, back to back: a worker still leaving job G
    // while the launcher writes job G+1 must not take a chunk of either that does not exist. (The
    // pool once let such a worker read G+1's chunk count against G's exhausted claim: it ran a chunk
    // twice and the launcher waited forever for a remaining count that had gone below zero.)
    void changingJobSizesRunEachChunkOnce_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("spinUs");
        for (int t : {2, 4, 7})
            for (int s : {0, 200}) QTest::addRow("threads=%d spin=%dus", t, s) << t << s;
    }
    void changingJobSizesRunEachChunkOnce() {
        QFETCH(int, threads);
        QFETCH(int, spinUs);
        tb::ThreadPool pool(threads, spinUs);
        std::vector<std::atomic<int>> hits(64);
        for (int rep = 0; rep < 20000; ++rep) {
            const int n = 2 + (rep * 7) % 23;  // 2..24, rising and falling
            for (int i = 0; i < n; ++i) hits[size_t(i)].store(0, std::memory_order_relaxed);
            if (rep % 2) {
                pool.parallelFor(n, [&](int64_t i) { hits[size_t(i)].fetch_add(1); });
            } else {
                pool.parallelForRange(n, [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
                });
            }
            for (int i = 0; i < n; ++i)
                if (hits[size_t(i)].load() != 1)
                    QFAIL(qPrintable(QStringLiteral("job %1 (n=%2): index %3 ran %4 times")
                                         .arg(rep).arg(n).arg(i).arg(hits[size_t(i)].load())));
        }
    }
    void staticPartition() {
        tb::ThreadPool pool(3, 50);
        for (int64_t n : {1, 2, 3, 10, 101}) {
            std::mutex m;
            std::vector<std::pair<int64_t, int64_t>> ranges;
            pool.parallelForRange(n, [&](int64_t b, int64_t e) {
                std::lock_guard lock(m);
                ranges.emplace_back(b, e);
            });
            std::sort(ranges.begin(), ranges.end());
            const int64_t chunks = std::min<int64_t>(n, 3);
            QCOMPARE(int64_t(ranges.size()), chunks);
            for (int64_t t = 0; t < chunks; ++t) {
                QCOMPARE(ranges[size_t(t)].first, t * n / chunks);
                QCOMPARE(ranges[size_t(t)].second, (t + 1) * n / chunks);
            }
        }
    }
    void exceptionReachesCaller() {
        for (int spin : {0, 200}) {
            tb::ThreadPool pool(2, spin);
            bool caught = false;
            try {
                pool.parallelFor(100, [&](int64_t i) {
                    if (i == 57) throw std::runtime_error("chunk 57 failed");
                });
            } catch (const std::runtime_error& e) {
                caught = QByteArray(e.what()) == "chunk 57 failed";
            }
            QVERIFY(caught);
            // The pool stays usable after an error.
            std::atomic<int64_t> sum{0};
            pool.parallelFor(100, [&](int64_t i) { sum += i; });
            QCOMPARE(sum.load(), int64_t(4950));
        }
    }
    void nestedRunsInline() {
        tb::ThreadPool pool(2, 100);
        std::atomic<int> inner{0};
        std::atomic<bool> allInWorker{true};
        pool.parallelFor(4, [&](int64_t) {
            if (!tb::ThreadPool::inWorker()) allInWorker = false;
            pool.parallelFor(10, [&](int64_t) { inner.fetch_add(1); });
        });
        QVERIFY(allInWorker.load());
        QCOMPARE(inner.load(), 40);
        QVERIFY(!tb::ThreadPool::inWorker());
    }
    void concurrentCallersAreSerialised() {
        tb::ThreadPool pool(2, 200);
        std::atomic<int64_t> total{0};
        auto caller = [&] {
            for (int rep = 0; rep < 500; ++rep) pool.parallelFor(16, [&](int64_t i) { total += i; });
        };
        std::thread a(caller), b(caller);
        a.join();
        b.join();
        QCOMPARE(total.load(), int64_t(2 * 500 * 120));
    }
    void idleWorkersSleepAfterTheSpin() {
        // After the spin time the workers block on the condition variable: the kernel reports each
        // worker thread as sleeping ('S'), whatever else loads the machine. A thread that spins (or
        // yields in a loop) is running or runnable ('R') however little CPU it gets, so this fails
        // if the workers never stop spinning, and not because other processes are busy.
        const std::set<long> before = threadIds();
        tb::ThreadPool pool(3, 1000);
        const std::vector<long> workers = newThreads(before);
        QCOMPARE(int(workers.size()), 2);  // the caller is worker 0
        pool.parallelFor(8, [](int64_t) {});
        // Within a bound far above the 1 ms spin (the workers may wait long for a core on a loaded
        // machine before they see that the spin time is over), every worker goes to sleep ...
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!allInState(workers, 'S') && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        // ... and stays asleep: sampled every 5 ms for 300 ms, no worker is ever running.
        for (int i = 0; i < 60; ++i) {
            QVERIFY2(allInState(workers, 'S'), qPrintable(describeStates(workers)));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        // And it still wakes for the next job.
        std::atomic<int> n{0};
        pool.parallelFor(8, [&](int64_t) { n++; });
        QCOMPARE(n.load(), 8);
    }
    void frozenWorkerDoesNotHoldUpJobs_data() {
        QTest::addColumn<int>("spinUs");
        // A worker spinning for a minute never takes the pool's mutex; one that sleeps at once is
        // frozen only once it sleeps on the condition variable (which has released the mutex). A
        // signal landing while the worker held the mutex on its way to sleep would freeze it holding
        // the lock, and the first job would then block until the end of the test's timeout.
        QTest::newRow("worker spinning") << 60 * 1000 * 1000;
        QTest::newRow("worker asleep") << 0;
    }
    void frozenWorkerDoesNotHoldUpJobs() {
        // Two threads: the caller and one worker. The worker is frozen in a signal handler; every job
        // must still finish, all its chunks run by the caller (the old barrier waited for every
        // worker to check in, so this test hung until the worker was released).
        QFETCH(int, spinUs);
        struct sigaction sa {}, old {};
        sa.sa_handler = parkHandler;
        sigemptyset(&sa.sa_mask);
        QVERIFY(sigaction(SIGUSR1, &sa, &old) == 0);
        g_release = false;
        const std::set<long> before = threadIds();
        auto pool = std::make_unique<tb::ThreadPool>(2, spinUs);
        const std::vector<long> workers = newThreads(before);
        QCOMPARE(int(workers.size()), 1);
        if (spinUs == 0) {
            const auto asleepBy = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!allInState(workers, 'S') && std::chrono::steady_clock::now() < asleepBy)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            QVERIFY2(allInState(workers, 'S'), qPrintable(describeStates(workers)));
        }
        QVERIFY(syscall(SYS_tgkill, getpid(), workers[0], SIGUSR1) == 0);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (g_parked.load() == 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        QCOMPARE(g_parked.load(), 1);

        const std::thread::id caller = std::this_thread::get_id();
        std::vector<std::atomic<int>> hits(400);
        std::atomic<int> onOtherThread{0};
        for (int job = 0; job < 200; ++job) {
            pool->parallelForRange(2, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) hits[size_t(job * 2 + i)]++;
                if (std::this_thread::get_id() != caller) onOtherThread++;
            });
        }
        for (const auto& h : hits) QCOMPARE(h.load(), 1);
        QCOMPARE(onOtherThread.load(), 0);
        QCOMPARE(g_parked.load(), 1);  // still frozen: nothing waited for it

        // Released, the worker finds those jobs over: it runs nothing of them, and joins new ones.
        g_release = true;
        while (g_parked.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::atomic<int64_t> sum{0};
        for (int job = 0; job < 50; ++job) pool->parallelFor(100, [&](int64_t i) { sum += i; });
        QCOMPARE(sum.load(), int64_t(50 * 4950));
        for (const auto& h : hits) QCOMPARE(h.load(), 1);
        pool.reset();
        QVERIFY(sigaction(SIGUSR1, &old, nullptr) == 0);
    }
    void spinningWorkersAreSeenRunning() {
        // The control for the test above: workers spinning for a minute are never seen asleep, so
        // the thread state tells a spinning pool from an idle one. Destroying the pool ends the spin.
        const std::set<long> before = threadIds();
        auto pool = std::make_unique<tb::ThreadPool>(3, 60 * 1000 * 1000);
        const std::vector<long> workers = newThreads(before);
        QCOMPARE(int(workers.size()), 2);
        pool->parallelFor(8, [](int64_t) {});
        for (int i = 0; i < 20; ++i) {
            QVERIFY2(allInState(workers, 'R'), qPrintable(describeStates(workers)));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        pool.reset();
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
