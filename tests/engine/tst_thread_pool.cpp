// SPDX-License-Identifier: Apache-2.0
// ThreadPool: every index runs exactly once, the static partition is the documented one, errors
// reach the caller, nested regions run inline, and back-to-back jobs are correct whether the
// workers are caught spinning (the default) or asleep (spin 0) -- the two hand-off paths.
#include <QtTest>

#include <atomic>
#include <algorithm>
#include <ctime>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/support/thread_pool.h"

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
        // After the spin time the workers block: a pool left idle uses (almost) no CPU.
        tb::ThreadPool pool(2, 1000);
        pool.parallelFor(8, [](int64_t) {});
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the 1 ms spin
        timespec t0{}, t1{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        const double cpuMs = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        QVERIFY2(cpuMs < 50.0, qPrintable(QStringLiteral("idle pool used %1 ms of CPU in 200 ms").arg(cpuMs)));
        // And it still wakes for the next job.
        std::atomic<int> n{0};
        pool.parallelFor(8, [&](int64_t) { n++; });
        QCOMPARE(n.load(), 8);
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
