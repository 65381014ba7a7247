// SPDX-License-Identifier: Apache-2.0
// GUI event-loop stall probe: opens the TuneBench window, tunes a network with the real engine,
// and fires a 5 ms QTimer the whole time; every gap between two timeouts beyond the period is
// time the GUI thread was busy (model updates, chart rebuilds, table layout, repaints) and could
// not answer the user. Prints the longest stall and the gap distribution, per phase.
//
//   bench_gui_stall [--network mlp] [--trials 64] [--per-round 16] [--cost-model random]
//                   [--seconds 120] [--dag-clicks]
// Run under xvfb-run (real X11 painting) or with QT_QPA_PLATFORM=offscreen.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include "app/session/tuningsession.h"
#include "widgets/mainwindow.h"
#include "widgets/models/tasktablemodel.h"

namespace {

// CPU time of the calling (GUI) thread: tells a stall spent in our code from one where the
// thread was runnable but not scheduled (a loaded machine).
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct Probe {
    QElapsedTimer clock;
    qint64 last = -1;
    double lastCpu = 0;
    std::vector<double> gapsMs;  // timer-to-timer intervals
    double worstMs = 0;
    double worstCpuMs = 0;       // GUI-thread CPU time inside the worst gap
    double worstAtS = 0;
    double busiestCpuMs = 0;     // the most GUI-thread CPU time inside any one gap
    void tick() {
        const qint64 now = clock.nsecsElapsed();
        const double cpu = threadCpuMs();
        if (last >= 0) {
            const double gap = (now - last) / 1e6;
            gapsMs.push_back(gap);
            if (gap > worstMs) {
                worstMs = gap;
                worstAtS = now / 1e9;
                worstCpuMs = cpu - lastCpu;
            }
            busiestCpuMs = std::max(busiestCpuMs, cpu - lastCpu);
        }
        last = now;
        lastCpu = cpu;
    }
    double percentile(double q) const {
        if (gapsMs.empty()) return 0;
        std::vector<double> v = gapsMs;
        const size_t k = std::min(v.size() - 1, size_t(q * double(v.size() - 1)));
        std::nth_element(v.begin(), v.begin() + long(k), v.end());
        return v[k];
    }
    int over(double ms) const { return int(std::count_if(gapsMs.begin(), gapsMs.end(), [ms](double g) { return g > ms; })); }
};

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("GUI event-loop stall probe during a tuning run."));
    p.addHelpOption();
    QCommandLineOption network(QStringLiteral("network"), QStringLiteral("Zoo network (default mlp)."), QStringLiteral("NAME"),
                               QStringLiteral("mlp"));
    QCommandLineOption trials(QStringLiteral("trials"), QStringLiteral("Trial budget (default 64)."), QStringLiteral("N"),
                              QStringLiteral("64"));
    QCommandLineOption perRound(QStringLiteral("per-round"), QStringLiteral("Measures per round (default 16)."),
                                QStringLiteral("N"), QStringLiteral("16"));
    QCommandLineOption costModel(QStringLiteral("cost-model"), QStringLiteral("xgb or random (default random)."),
                                 QStringLiteral("M"), QStringLiteral("random"));
    QCommandLineOption seconds(QStringLiteral("seconds"), QStringLiteral("Stop the job after this long (default 120)."),
                               QStringLiteral("S"), QStringLiteral("120"));
    QCommandLineOption clicks(QStringLiteral("dag-clicks"), QStringLiteral("Also select a new task every second (DAG requests)."));
    p.addOptions({network, trials, perRound, costModel, seconds, clicks});
    p.process(app);

    QTemporaryDir dir;
    tb::session::TuningSession session;
    tb::widgets::MainWindow window(&session, nullptr);
    tb::session::TuningJob job;
    job.network = p.value(network);
    job.trials = p.value(trials).toInt();
    job.perRound = p.value(perRound).toInt();
    job.costModel = p.value(costModel);
    job.minRepeatMs = 20;
    job.logPath = dir.filePath(QStringLiteral("bench.json"));
    window.setJob(job);
    window.show();

    Probe idle, tuning;
    Probe* current = &idle;
    QTimer probeTimer;
    probeTimer.setTimerType(Qt::PreciseTimer);
    probeTimer.setInterval(5);
    QObject::connect(&probeTimer, &QTimer::timeout, &app, [&] { current->tick(); });
    idle.clock.start();
    tuning.clock.start();
    idle.lastCpu = tuning.lastCpu = threadCpuMs();
    probeTimer.start();

    int rounds = 0, rows = 0;
    QObject::connect(&session, &tb::session::TuningSession::measurementsAvailable, &app,
                     [&](const QList<tb::session::MeasureRow>& r) {
                         ++rounds;
                         rows += int(r.size());
                     });
    QObject::connect(&session, &tb::session::TuningSession::tuningFinished, &app, [&] { app.quit(); });
    QObject::connect(&session, &tb::session::TuningSession::tuningFailed, &app, [&](const QString& m) {
        std::fprintf(stderr, "tuning failed: %s\n", qPrintable(m));
        app.quit();
    });
    QTimer clicker;
    if (p.isSet(clicks)) {
        QObject::connect(&clicker, &QTimer::timeout, &app, [&] {
            const int n = window.taskModel()->rowCount();
            if (n > 0) window.selectTask((window.selectedTask() + 1) % n);
        });
        clicker.start(1000);
    }
    // One second of an idle window as the baseline, then tune.
    QTimer::singleShot(1000, &app, [&] {
        current = &tuning;
        tuning.clock.restart();
        tuning.last = -1;
        tuning.lastCpu = threadCpuMs();
        window.startTuning();
    });
    QTimer::singleShot(int(p.value(seconds).toDouble() * 1000) + 1000, &app, [&] { session.stop(); });
    app.exec();
    probeTimer.stop();

    auto report = [](const char* name, const Probe& pr) {
        std::printf("%-8s ticks %6zu  median %6.2f ms  p99 %7.2f ms  max %8.2f ms (at %.1f s, %.1f ms of it on the GUI "
                    "thread's CPU)  gaps>50ms %d  >100ms %d  most GUI CPU in one gap %.1f ms\n",
                    name, pr.gapsMs.size(), pr.percentile(0.5), pr.percentile(0.99), pr.worstMs, pr.worstAtS, pr.worstCpuMs,
                    pr.over(50), pr.over(100), pr.busiestCpuMs);
    };
    std::printf("bench_gui_stall: %s, %d rounds, %d measurements, 5 ms probe timer, platform %s\n",
                qPrintable(job.network), rounds, rows, qPrintable(QGuiApplication::platformName()));
    report("idle", idle);
    report("tuning", tuning);
    std::printf("longest GUI stall during tuning: %.1f ms (GUI thread busy %.1f ms of it); longest busy stretch %.1f ms\n",
                tuning.worstMs, tuning.worstCpuMs, tuning.busiestCpuMs);
    session.shutdown();
    return 0;
}
