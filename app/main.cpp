// SPDX-License-Identifier: Apache-2.0
// `tunebench`: the workbench window. Started bare it is the embedded default of DESIGN.md §4: an
// in-process tracker on a free loopback port with one local RPC server (key `local`) shown in the
// tracker panel, and mobilenet, NHWC, batch 1, the host CPU and a small trial budget in the setup
// panel, tuned after one click (or at once with --autostart).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QGuiApplication>
#include <QHash>
#include <QLocale>
#include <QPixmap>
#include <QPushButton>
#include <QScreen>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>

#include "app/session/trackermonitor.h"
#include "app/session/tuningsession.h"
#include "widgets/dagview.h"
#include "widgets/loginspector.h"
#include "widgets/mainwindow.h"
#include "widgets/models/tasktablemodel.h"
#include "widgets/sessionpage.h"

namespace {
void setApplicationNames() {
    QCoreApplication::setApplicationName(QStringLiteral("TuneBench"));
    QCoreApplication::setOrganizationName(QStringLiteral("TuneBench"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TB_VERSION));
}
// --add-session "key=rasp4b-64;target=llvm -mtriple=aarch64-linux-gnu -mattr=+neon;log=arm.json":
// `;`-separated fields over the first session's job (target strings may hold commas).
// target=host (or empty) is this CPU; host=H is a GPU target's host target (TVM's host=); key=K
// measures on the devices of K through the tracker.
QString applySessionSpec(const QString& spec, tb::session::TuningJob& job) {
    job.logPath.clear();  // a log of its own unless log= names one
    for (const QString& field : spec.split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        const QString name = field.section(QLatin1Char('='), 0, 0).trimmed();
        const QString value = field.section(QLatin1Char('='), 1).trimmed();
        if (name == QLatin1String("target")) {
            job.target = value == QLatin1String("host") ? QString() : value;
        } else if (name == QLatin1String("host")) {
            job.targetHost = value;
        } else if (name == QLatin1String("key")) {
            job.deviceKey = value;
            job.runner = value.isEmpty() ? QStringLiteral("local") : QStringLiteral("rpc");
        } else if (name == QLatin1String("network")) {
            job.network = value;
        } else if (name == QLatin1String("trials")) {
            job.trials = value.toInt();
        } else if (name == QLatin1String("log")) {
            job.logPath = value;
        } else {
            return QStringLiteral("unknown field '%1' (target, host, key, network, trials, log)").arg(name);
        }
    }
    if (job.target.isEmpty()) return {};  // this CPU
    if (const QString err = tb::session::TuningSession::validateTarget(job.target, job.targetHost); !err.isEmpty()) return err;
    return {};
}
}  // namespace

int main(int argc, char** argv) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("TuneBench: auto-tuning of tensor programs (TVM auto-scheduler style)."));
    const QCommandLineOption help = p.addHelpOption();
    const QCommandLineOption version = p.addVersionOption();
    QCommandLineOption autostart(QStringLiteral("autostart"), QStringLiteral("Start tuning at once."));
    QCommandLineOption benchAtStart(QStringLiteral("benchmark"),
                                    QStringLiteral("Compile && benchmark the network at once (its kernels then show on the "
                                                   "Roofline tab); not with --autostart."));
    QCommandLineOption network(QStringLiteral("network"), QStringLiteral("Zoo network (default mobilenet)."),
                               QStringLiteral("NAME"), QStringLiteral("mobilenet"));
    QCommandLineOption onnx(QStringLiteral("onnx"), QStringLiteral("ONNX model to tune instead of a zoo network."),
                            QStringLiteral("FILE"));
    QCommandLineOption trials(QStringLiteral("trials"), QStringLiteral("Total measured trials (default 640; 0 = 64 x tasks)."),
                              QStringLiteral("N"), QStringLiteral("640"));
    QCommandLineOption perRound(QStringLiteral("per-round"), QStringLiteral("Measures per round (default 16)."),
                                QStringLiteral("N"), QStringLiteral("16"));
    QCommandLineOption costModel(QStringLiteral("cost-model"), QStringLiteral("xgb or random (default xgb)."),
                                 QStringLiteral("M"), QStringLiteral("xgb"));
    QCommandLineOption target(QStringLiteral("target"), QStringLiteral("TVM target string (default: this CPU)."),
                              QStringLiteral("TARGET"));
    QCommandLineOption targetHost(QStringLiteral("target-host"),
                                  QStringLiteral("Host target of a GPU target, e.g. \"llvm -mtriple=aarch64-linux-gnu\" (TVM's host=)."),
                                  QStringLiteral("HOST"));
    QCommandLineOption fleetMali(QStringLiteral("fleet-mali"),
                                 QStringLiteral("Emulated Mali boards to start (scripts/mali-board on PoCL, key rk3399; default 0)."),
                                 QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption dagTab(QStringLiteral("dag-tab"),
                              QStringLiteral("Tab the DAG view opens on: graph, dag, state, loop-nest, llvm-ir, assembly "
                                             "(default graph; loop-nest shows a GPU task's kernel source beside its loop nest)."),
                              QStringLiteral("TAB"), QStringLiteral("graph"));
    QCommandLineOption selectTaskOpt(QStringLiteral("task"),
                                     QStringLiteral("Select task ID in the task table once the job lists it (its compute DAG, "
                                                    "loop state and code show below)."),
                                     QStringLiteral("ID"));
    QCommandLineOption log(QStringLiteral("log"), QStringLiteral("Record log (default tunebench_<network>.json)."),
                           QStringLiteral("FILE"));
    QCommandLineOption winogradOrDirect(QStringLiteral("winograd-or-direct"),
                                        QStringLiteral("Also tune each winograd task's direct conv2d task; compile "
                                                       "runs the faster per convolution (as tunebench-cli tune)."));
    QCommandLineOption resume(QStringLiteral("resume"), QStringLiteral("Continue from the records already in the log."));
    QCommandLineOption lang(QStringLiteral("lang"), QStringLiteral("User interface language: en or zh_CN (default: the system's)."),
                            QStringLiteral("LOCALE"));
    QCommandLineOption noTracker(QStringLiteral("no-tracker"), QStringLiteral("Do not start the local tracker and server."));
    QCommandLineOption fleetVta(QStringLiteral("fleet-vta"),
                                QStringLiteral("Simulated VTA devices to start (rpc-server --device vta, key intelfocl; default 0)."),
                                QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption fleetArm(QStringLiteral("fleet-arm"),
                                QStringLiteral("Start N emulated ARM boards (key rasp4b-64) with the local tracker."),
                                QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption fleetHost(QStringLiteral("fleet-host"),
                                 QStringLiteral("Start N sandboxed host servers (key local) with the local tracker."),
                                 QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption key(QStringLiteral("key"),
                           QStringLiteral("Measure on the devices of KEY through the local tracker (RPC runner)."),
                           QStringLiteral("KEY"));
    // Not --session: QApplication takes that one (X11 session management) before we see it.
    QCommandLineOption sessionOpt(
        QStringLiteral("add-session"),
        QStringLiteral("Tune in one more session beside the first, e.g. \"key=rasp4b-64;target=llvm -mtriple=aarch64-linux-gnu\" "
                       "or \"target=host\" (fields: target, host, key, network, trials, log; repeatable)."),
        QStringLiteral("SPEC"));
    QCommandLineOption inspect(QStringLiteral("inspect"), QStringLiteral("Open the log inspector on a TVM tuning log."),
                               QStringLiteral("LOG"));
    QCommandLineOption compare(QStringLiteral("compare"),
                               QStringLiteral("With --inspect: compare that log with LOG, workload by workload."),
                               QStringLiteral("LOG"));
    QCommandLineOption mode(QStringLiteral("mode"),
                            QStringLiteral("Search mode: auto-scheduler or autotvm (the zoo network's AutoTVM tasks, NCHW)."),
                            QStringLiteral("MODE"), QStringLiteral("auto-scheduler"));
    QCommandLineOption tuner(QStringLiteral("tuner"), QStringLiteral("AutoTVM tuner: xgb, ga, random, gridsearch, ... (default xgb)."),
                             QStringLiteral("NAME"), QStringLiteral("xgb"));
    QCommandLineOption nTrial(QStringLiteral("n-trial"), QStringLiteral("AutoTVM configs per task (default 100)."),
                              QStringLiteral("N"), QStringLiteral("100"));
    QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Save a screenshot to FILE, then quit."),
                            QStringLiteral("FILE"));
    QCommandLineOption shotAfter(QStringLiteral("screenshot-after"),
                                 QStringLiteral("Seconds to wait before the screenshot (default 30)."),
                                 QStringLiteral("S"), QStringLiteral("30"));
    p.addOptions({autostart, benchAtStart, network, onnx, trials, perRound, costModel, target, targetHost, log, resume,
                  winogradOrDirect, lang, noTracker,
                  fleetArm, fleetHost, fleetMali, fleetVta, key, sessionOpt, inspect, compare, mode, tuner, nTrial, dagTab, selectTaskOpt, shot, shotAfter});
    {
        // --help and --version need no display: answer them before the GUI application exists
        // (it aborts without one). Errors wait for it: Qt's own options (-platform ...) are
        // known only to QApplication.
        QStringList args;
        for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
        p.parse(args);
        if (p.isSet(help) || p.isSet(version) || args.contains(QStringLiteral("--help-all"))) {
            QCoreApplication core(argc, argv);
            setApplicationNames();
            p.process(core);  // prints and exits
        }
    }
    QApplication app(argc, argv);
    setApplicationNames();
    QApplication::setDesktopFileName(QStringLiteral("tunebench"));
    p.process(app);
    if (p.value(mode) != QLatin1String("auto-scheduler") && p.value(mode) != QLatin1String("autotvm")) {
        std::fprintf(stderr, "tunebench: --mode is auto-scheduler or autotvm, not '%s'\n", qPrintable(p.value(mode)));
        return 2;
    }
    const QStringList dagTabs{QStringLiteral("graph"),   QStringLiteral("dag"),     QStringLiteral("state"),
                              QStringLiteral("loop-nest"), QStringLiteral("llvm-ir"), QStringLiteral("assembly")};
    if (!dagTabs.contains(p.value(dagTab))) {
        std::fprintf(stderr, "tunebench: --dag-tab is one of %s, not '%s'\n", qPrintable(dagTabs.join(QStringLiteral(", "))),
                     qPrintable(p.value(dagTab)));
        return 2;
    }
    if (p.isSet(compare) && !p.isSet(inspect)) {
        std::fprintf(stderr, "tunebench: --compare needs --inspect LOG (the log to compare with)\n");
        return 2;
    }

    tb::session::TuningSession session;
    tb::session::TrackerMonitor tracker;
    tb::widgets::MainWindow window(&session, &tracker);

    QString locale = p.isSet(lang) ? p.value(lang) : QLocale::system().name();
    if (locale == QLatin1String("zh_CN") || locale.startsWith(QLatin1String("zh_Hans"))) {
        if (!window.setLanguage(QStringLiteral("zh_CN")))
            std::fprintf(stderr, "tunebench: the zh_CN translation is missing from this build\n");
    } else if (p.isSet(lang) && locale != QLatin1String("en")) {
        std::fprintf(stderr, "tunebench: no translation for '%s'; using English\n", qPrintable(locale));
    }

    tb::session::TuningJob job;
    job.network = p.value(network);
    job.onnxPath = p.value(onnx);
    job.layout = QStringLiteral("NHWC");
    job.batch = 1;
    job.target = p.value(target);
    job.targetHost = p.value(targetHost);
    if (!job.target.isEmpty()) {
        if (const QString err = tb::session::TuningSession::validateTarget(job.target, job.targetHost); !err.isEmpty()) {
            std::fprintf(stderr, "tunebench: --target: %s\n", qPrintable(err));
            return 2;
        }
    }
    job.trials = p.value(trials).toInt();
    job.perRound = std::max(1, p.value(perRound).toInt());
    job.costModel = p.value(costModel);
    // One log per device key: sessions on other keys or targets (--add-session) get their own.
    job.logPath = p.isSet(log)   ? p.value(log)
                  : p.isSet(key) ? QStringLiteral("tunebench_%1_%2.json").arg(job.network, p.value(key))
                                 : QStringLiteral("tunebench_%1.json").arg(job.network);
    job.resume = p.isSet(resume);
    job.winogradOrDirect = p.isSet(winogradOrDirect);
    job.autotvm = p.value(mode) == QLatin1String("autotvm");
    job.tuner = p.value(tuner);
    job.nTrial = std::max(1, p.value(nTrial).toInt());
    if (job.autotvm) job.layout = QStringLiteral("NCHW");
    window.setJob(job);
    window.dagView()->tabs()->setCurrentIndex(int(dagTabs.indexOf(p.value(dagTab))));
    if (p.isSet(selectTaskOpt)) {
        bool ok = false;
        const int id = p.value(selectTaskOpt).toInt(&ok);
        if (!ok || id < 0) {
            std::fprintf(stderr, "tunebench: --task takes a task ID (0, 1, ...), not '%s'\n", qPrintable(p.value(selectTaskOpt)));
            return 2;
        }
        // The task list arrives from the worker after the job starts: select it once it is there.
        auto* poll = new QTimer(&window);
        QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, id] {
            if (!window.taskModel()->task(id)) return;
            window.selectTask(id);
            poll->deleteLater();
        });
        poll->start(200);
    }
    for (const QString& spec : p.values(sessionOpt)) {
        tb::session::TuningJob j = job;
        if (const QString err = applySessionSpec(spec, j); !err.isEmpty()) {
            std::fprintf(stderr, "tunebench: --add-session \"%s\": %s\n", qPrintable(spec), qPrintable(err));
            return 2;
        }
        window.addSession(j);
    }
    if (!window.sessionPages().isEmpty()) {
        // Side by side: as much of the screen as there is.
        if (const QScreen* screen = window.screen()) window.resize(screen->availableGeometry().size());
    }
    window.show();

    if (!p.isSet(noTracker)) {
        // The embedded default: a tracker on a free loopback port and one sandboxed server `local`.
        QObject::connect(&tracker, &tb::session::TrackerMonitor::localTrackerStarted, &window,
                         [&window, deviceKey = p.value(key)](const QString& host, int port) {
                             tb::session::TuningJob j = window.job();
                             j.trackerHost = host;
                             j.trackerPort = port;
                             j.deviceKey = deviceKey.isEmpty() ? QStringLiteral("local") : deviceKey;
                             if (!deviceKey.isEmpty()) j.runner = QStringLiteral("rpc");
                             window.setJob(j);
                             for (tb::widgets::SessionPage* page : window.sessionPages()) {
                                 tb::session::TuningJob pj = page->job();
                                 pj.trackerHost = host;
                                 pj.trackerPort = port;
                                 page->setJob(pj);
                             }
                         });
        tracker.startLocalFleet();
        // A device fleet beside it (issue 21): child processes registering with that tracker.
        const int arm = p.value(fleetArm).toInt(), hosts = p.value(fleetHost).toInt(), mali = p.value(fleetMali).toInt(),
                  vta = p.value(fleetVta).toInt();
        if (arm > 0 || hosts > 0 || mali > 0 || vta > 0) {
            tracker.startDeviceFleet(hosts, arm, mali, vta);
            window.showFleetPanel();
        }
    }
    if (p.isSet(benchAtStart) && !p.isSet(autostart))
        QTimer::singleShot(0, &window, [&window] { window.benchButton()->click(); });
    if (p.isSet(autostart)) {
        // Every session at once; those measuring on a fleet once its devices of their key have registered.
        auto startAll = [&window] {
            window.startTuning();
            for (tb::widgets::SessionPage* page : window.sessionPages()) page->start();
        };
        QHash<QString, int> wanted;  // "server:<key>" -> devices to wait for
        auto want = [&](const QString& k) {
            const int n = std::max(1, k == tb::session::TrackerMonitor::armKey()    ? p.value(fleetArm).toInt()
                                      : k == tb::session::TrackerMonitor::maliKey() ? p.value(fleetMali).toInt()
                                      : k == tb::session::TrackerMonitor::vtaKey()  ? p.value(fleetVta).toInt()
                                      : k == tb::session::TrackerMonitor::hostKey() ? p.value(fleetHost).toInt() + 1
                                                                                    : 1);
            wanted.insert(QStringLiteral("server:") + k, n);
        };
        if (p.isSet(key)) want(p.value(key));
        for (const tb::widgets::SessionPage* page : window.sessionPages())
            if (page->job().runner == QLatin1String("rpc")) want(page->job().deviceKey);
        if (wanted.isEmpty() || p.isSet(noTracker)) {
            QTimer::singleShot(0, &window, startAll);
        } else {
            QObject::connect(&tracker, &tb::session::TrackerMonitor::queueChanged, &window,
                             [startAll, wanted, started = false](const tb::session::DeviceQueueSnapshot& s) mutable {
                                 QHash<QString, int> n;
                                 for (const auto& srv : s.servers) ++n[srv.key];
                                 for (auto it = wanted.cbegin(); it != wanted.cend(); ++it)
                                     if (n.value(it.key()) < it.value()) return;
                                 if (started) return;
                                 started = true;
                                 startAll();
                             });
        }
    }
    if (p.isSet(inspect)) {
        tb::widgets::LogInspector* inspector = window.openLogInspector(p.value(inspect));
        if (p.isSet(compare)) inspector->openLog(p.value(compare), true);
    }

    if (p.isSet(shot)) {
        const QString file = p.value(shot);
        const int ms = int(p.value(shotAfter).toDouble() * 1000);
        QTimer::singleShot(ms, &window, [&window, file] {
            // The whole screen under a real display (menus, dialogs and all); the window offscreen.
            QPixmap pm;
            if (QGuiApplication::platformName() == QLatin1String("xcb") && window.screen())
                pm = window.screen()->grabWindow(0);
            if (pm.isNull()) pm = window.grab();
            const bool ok = pm.save(file);
            std::fprintf(stderr, "tunebench: screenshot %s %s\n", qPrintable(QDir::toNativeSeparators(file)),
                         ok ? "saved" : "could not be saved");
            window.close();
        });
    }
    return app.exec();
}
