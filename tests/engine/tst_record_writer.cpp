// SPDX-License-Identifier: Apache-2.0
// engine/record, durability: a writer process killed with SIGKILL loses nothing it reported as
// written, and the next writer does not glue its first record onto a torn line.
#include <QtTest>

#include <QTemporaryDir>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/record/record_io.h"
#include "engine/support/error.h"

using namespace tb::record;

namespace {

const std::string kResnet = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";

// The k-th record the child writes: a resnet record with a distinct timestamp, so every line of
// the output is identifiable.
MeasureRecord nth(const std::vector<MeasureRecord>& src, int k) {
    MeasureRecord r = src[size_t(k) % src.size()];
    r.timestamp = 1700000000 + k;
    return r;
}

bool readInt(int fd, int* v) {
    char* p = reinterpret_cast<char*>(v);
    size_t got = 0;
    while (got < sizeof(int)) {
        const ssize_t n = ::read(fd, p + got, sizeof(int) - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += size_t(n);
    }
    return true;
}

}  // namespace

class TestRecordWriter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testSigkillLosesNothingReported() {
        const auto src = readMeasureRecords(kResnet).records;
        QCOMPARE(src.size(), size_t(1265));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("tuning.json")).toStdString();
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        const pid_t pid = ::fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            // Child: append forever, reporting each record after append() returns.
            ::close(fds[0]);
            try {
                RecordWriter w(path);
                for (int k = 0;; ++k) {
                    w.append(nth(src, k));
                    const int done = k + 1;
                    if (::write(fds[1], &done, sizeof done) != sizeof done) ::_exit(3);
                }
            } catch (...) {
                ::_exit(2);
            }
        }
        ::close(fds[1]);
        int reported = 0, v = 0;
        while (reported < 3000 && readInt(fds[0], &v)) reported = v;
        QCOMPARE(::kill(pid, SIGKILL), 0);
        int status = 0;
        QCOMPARE(::waitpid(pid, &status, 0), pid);
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        // Reports already in the pipe when it died count too.
        while (readInt(fds[0], &v)) reported = v;
        ::close(fds[0]);
        QVERIFY(reported >= 3000);

        const auto log = readMeasureRecords(path);
        // Everything reported is there, in order, and equal to what was written; at most the one
        // record being written when the kill came follows (whole, or as a torn last line).
        QVERIFY(int(log.records.size()) >= reported);
        QVERIFY(int(log.records.size()) <= reported + 1);
        for (int k = 0; k < int(log.records.size()); ++k) {
            QCOMPARE(log.recordLines[size_t(k)], k + 1);
            if (log.records[size_t(k)].toLine() != nth(src, k).toLine()) QFAIL(qPrintable(QStringLiteral("record %1 differs").arg(k)));
        }
        QVERIFY(log.badLines.size() <= 1);
        if (!log.badLines.empty()) {
            QVERIFY(log.badLines.front().torn);
            QCOMPARE(log.badLines.front().line, log.totalLines);
        }

        // A new writer continues the file: its record is readable whatever the kill left.
        const int before = int(log.records.size());
        {
            RecordWriter w(path);
            w.append(nth(src, 100000));
        }
        const auto after = readMeasureRecords(path);
        QCOMPARE(int(after.records.size()), before + 1);
        QCOMPARE(after.records.back().toLine(), nth(src, 100000).toLine());
        QCOMPARE(after.badLines.size(), log.badLines.size());
    }

    void testAppendAfterTornLine() {
        const auto src = readMeasureRecords(kResnet).records;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("torn.json")).toStdString();
        const std::string full = src[0].toLine();
        {
            RecordWriter w(path, RecordWriter::Mode::Truncate);
            w.append(src[0]);
        }
        {
            // Simulate a writer killed mid-line.
            FILE* f = std::fopen(path.c_str(), "ab");
            QVERIFY(f);
            std::fwrite(full.data(), 1, full.size() / 3, f);
            std::fclose(f);
        }
        const auto torn = readMeasureRecords(path);
        QCOMPARE(torn.records.size(), size_t(1));
        QCOMPARE(torn.badLines.size(), size_t(1));
        QCOMPARE(torn.badLines[0].line, 2);
        QVERIFY(torn.badLines[0].torn);
        {
            RecordWriter w(path);
            w.append(src[1]);
            w.append(src[2]);
        }
        const auto healed = readMeasureRecords(path);
        QCOMPARE(healed.records.size(), size_t(3));
        QCOMPARE(healed.recordLines, (std::vector<int>{1, 3, 4}));
        QCOMPARE(healed.badLines.size(), size_t(1));
        QCOMPARE(healed.badLines[0].line, 2);
        QVERIFY(!healed.badLines[0].torn);  // now a bad middle line, reported, not fatal
        QCOMPARE(healed.records[1].toLine(), src[1].toLine());
    }

    void testTruncateAndOpenErrors() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("t.json")).toStdString();
        const auto src = readMeasureRecords("../shared/data/logs/ansor/tvm_ci_matmul.json").records;
        { RecordWriter(path).append(src[0]); }
        { RecordWriter(path).append(src[0]); }
        QCOMPARE(readMeasureRecords(path).records.size(), size_t(2));
        { RecordWriter(path, RecordWriter::Mode::Truncate).append(src[0]); }
        QCOMPARE(readMeasureRecords(path).records.size(), size_t(1));
        const std::string bad = dir.filePath(QStringLiteral("no/such/dir/x.json")).toStdString();
        QVERIFY_THROWS_EXCEPTION(tb::UserError, [&] { RecordWriter w(bad); }());
    }
};

QTEST_APPLESS_MAIN(TestRecordWriter)
#include "tst_record_writer.moc"
