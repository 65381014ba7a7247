// SPDX-License-Identifier: Apache-2.0
// One description of a tuning job for the CLI, the window and the engine: every `tunebench-cli
// tune` option lands in its tuning::TuningJob field, survives the way back to a command line, and
// survives the window's settings (session::TuningJob) in both directions; the job that buildTuner
// wires hands the runner options (cache flush included) to the runner it builds.
#include <QTemporaryDir>
#include <QtTest>

#include "app/cli/tune_options.h"
#include "app/session/engineadapter.h"
#include "engine/codegen/target.h"
#include "engine/measure/cpu_caches.h"
#include "engine/measure/machine_peak.h"
#include "engine/measure/gpu_runner.h"
#include "engine/measure/local_runner.h"
#include "engine/measure/roofline.h"
#include "engine/measure/rpc_runner.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"

using namespace tb;

namespace {

// The fields a `tune` option sets, as text, keyed by name.
QMap<QString, QString> fields(const tuning::TuningJob& j) {
    auto s = [](const std::string& x) { return QString::fromStdString(x); };
    auto b = [](bool x) { return x ? QStringLiteral("true") : QStringLiteral("false"); };
    QStringList shapes, ids;
    for (const auto& x : j.network.shapes) shapes << s(x);
    for (int id : j.taskIds) ids << QString::number(id);
    return {
        {QStringLiteral("network"), s(j.network.zooName)},
        {QStringLiteral("onnx"), s(j.network.onnxPath)},
        {QStringLiteral("shapes"), shapes.join(QLatin1Char(';'))},
        {QStringLiteral("batch"), QString::number(j.network.batch)},
        {QStringLiteral("layout"), s(j.network.layout)},
        {QStringLiteral("winograd"), b(j.network.winograd)},
        {QStringLiteral("winogradAlternatives"), b(j.network.winogradAlternatives)},
        {QStringLiteral("target"), s(j.target)},
        {QStringLiteral("targetHost"), s(j.targetHost)},
        {QStringLiteral("trials"), QString::number(j.search.trials)},
        {QStringLiteral("perRound"), QString::number(j.search.perRound)},
        {QStringLiteral("earlyStopping"), QString::number(j.search.earlyStopping)},
        {QStringLiteral("strategy"),
         j.search.strategy == tuning::TaskSchedulerOptions::Strategy::Gradient ? QStringLiteral("gradient")
                                                                             : QStringLiteral("round-robin")},
        {QStringLiteral("seed"), QString::number(j.search.seed)},
        {QStringLiteral("costModel"), s(j.search.costModel)},
        {QStringLiteral("defaultSeed"), b(j.search.seedDefaultSchedule)},
        {QStringLiteral("tasks"), ids.join(QLatin1Char(','))},
        {QStringLiteral("runner"), j.runner.kind == tuning::RunnerConfig::Kind::Rpc ? QStringLiteral("rpc") : QStringLiteral("local")},
        {QStringLiteral("trackerHost"), s(j.runner.trackerHost)},
        {QStringLiteral("trackerPort"), QString::number(j.runner.trackerPort)},
        {QStringLiteral("key"), s(j.runner.key)},
        {QStringLiteral("number"), QString::number(j.runner.number)},
        {QStringLiteral("repeat"), QString::number(j.runner.repeat)},
        {QStringLiteral("minRepeatMs"), QString::number(j.runner.minRepeatMs)},
        {QStringLiteral("timeoutS"), QString::number(j.runner.timeoutS)},
        {QStringLiteral("cacheFlush"), QString::fromLatin1(tuning::cacheFlushModeName(j.runner.cacheFlush))},
        {QStringLiteral("pipeline"), QString::number(j.runner.pipelineSlice)},
        {QStringLiteral("abandon"), QString::number(j.runner.abandonFactor)},
        {QStringLiteral("screen"), QString::number(j.runner.screenFactor)},
        {QStringLiteral("screenMs"), QString::number(j.runner.screenMs)},
        {QStringLiteral("rejectPreempted"), b(j.runner.rejectPreempted)},
        {QStringLiteral("slices"), QString::number(j.runner.slices)},
        {QStringLiteral("layoutRewrite"), j.layoutRewrite ? QString::number(int(*j.layoutRewrite)) : QStringLiteral("default")},
        {QStringLiteral("log"), s(j.logPath)},
        {QStringLiteral("resume"), b(j.resume)},
        {QStringLiteral("tsv"), s(j.latencyLogPath)},
    };
}

// Parses `tune` arguments (without the command) as the CLI does.
tuning::TuningJob parse(const QStringList& args, QStringList* seen = nullptr) {
    cli::TuneCommandLine cl;
    QCommandLineParser p;
    cl.addTo(p);
    if (!p.parse(cli::TuneCommandLine::normalized(QStringList{QStringLiteral("tune")} + args)))
        throw UserError(p.errorText().toStdString());
    if (seen) *seen += p.optionNames();
    return cl.job(p);
}

// The minimal command line; rows add to it (and name the network themselves when they change it).
QStringList withBase(const QStringList& args) {
    QStringList a = args;
    if (!a.contains(QStringLiteral("--network")) && !a.contains(QStringLiteral("--onnx")))
        a << QStringLiteral("--network") << QStringLiteral("mlp");
    if (!a.contains(QStringLiteral("--log"))) a << QStringLiteral("--log") << QStringLiteral("base.json");
    return a;
}

QStringList g_optionsSeen;  // across the rows of testOptionToJob

}  // namespace

class TestTuningJob : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testOptionToJob_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("changed");  // "field=value" beyond the base job
        auto row = [](const char* name, QStringList args, QStringList changed) {
            QTest::addRow("%s", name) << args << changed;
        };
        row("base", {}, {});
        row("--network", {QStringLiteral("--network"), QStringLiteral("resnet-18")}, {QStringLiteral("network=resnet-18")});
        row("--onnx --shape", {QStringLiteral("--onnx"), QStringLiteral("/m/det.onnx"), QStringLiteral("--shape"),
                               QStringLiteral("x=1,3,640,640"), QStringLiteral("--shape"), QStringLiteral("y=1,2")},
            {QStringLiteral("onnx=/m/det.onnx"), QStringLiteral("shapes=x=1,3,640,640;y=1,2"), QStringLiteral("network=mobilenet")});
        row("--batch", {QStringLiteral("--batch"), QStringLiteral("4")}, {QStringLiteral("batch=4")});
        row("--layout", {QStringLiteral("--layout"), QStringLiteral("NCHW")}, {QStringLiteral("layout=NCHW")});
        row("--no-winograd", {QStringLiteral("--no-winograd")}, {QStringLiteral("winograd=false")});
        row("--winograd-or-direct", {QStringLiteral("--winograd-or-direct")}, {QStringLiteral("winogradAlternatives=true")});
        row("--target", {QStringLiteral("--target"), QStringLiteral("llvm -mcpu=core-avx2")},
            {QStringLiteral("target=llvm -mcpu=core-avx2")});
        row("--target --target-host",
            {QStringLiteral("--target"), QStringLiteral("opencl -device=mali"), QStringLiteral("--target-host"),
             QStringLiteral("llvm -mtriple=aarch64-linux-gnu")},
            {QStringLiteral("target=opencl -device=mali"), QStringLiteral("targetHost=llvm -mtriple=aarch64-linux-gnu")});
        row("--trials", {QStringLiteral("--trials"), QStringLiteral("320")}, {QStringLiteral("trials=320")});
        row("--per-round", {QStringLiteral("--per-round"), QStringLiteral("16")}, {QStringLiteral("perRound=16")});
        row("--early-stopping", {QStringLiteral("--early-stopping"), QStringLiteral("200")},
            {QStringLiteral("earlyStopping=200")});
        row("--strategy", {QStringLiteral("--strategy"), QStringLiteral("round-robin")},
            {QStringLiteral("strategy=round-robin")});
        row("--seed", {QStringLiteral("--seed"), QStringLiteral("12345678901")}, {QStringLiteral("seed=12345678901")});
        row("--cost-model", {QStringLiteral("--cost-model"), QStringLiteral("random")}, {QStringLiteral("costModel=random")});
        row("--cost-model xgb-rank", {QStringLiteral("--cost-model"), QStringLiteral("xgb-rank")},
            {QStringLiteral("costModel=xgb-rank")});
        row("--cost-model xgb-tvm", {QStringLiteral("--cost-model"), QStringLiteral("xgb-tvm")},
            {QStringLiteral("costModel=xgb-tvm")});
        row("--no-default-seed", {QStringLiteral("--no-default-seed")}, {QStringLiteral("defaultSeed=false")});
        row("--tasks", {QStringLiteral("--tasks"), QStringLiteral("2, 5,0")}, {QStringLiteral("tasks=2,5,0")});
        row("--runner rpc --tracker --key",
            {QStringLiteral("--runner"), QStringLiteral("rpc"), QStringLiteral("--tracker"), QStringLiteral("10.0.0.7:9191"),
             QStringLiteral("--key"), QStringLiteral("rasp4b-64")},
            {QStringLiteral("runner=rpc"), QStringLiteral("trackerHost=10.0.0.7"), QStringLiteral("trackerPort=9191"),
             QStringLiteral("key=rasp4b-64")});
        row("--number", {QStringLiteral("--number"), QStringLiteral("7")}, {QStringLiteral("number=7")});
        row("--repeat", {QStringLiteral("--repeat"), QStringLiteral("5")}, {QStringLiteral("repeat=5")});
        row("--min-repeat-ms", {QStringLiteral("--min-repeat-ms"), QStringLiteral("300")}, {QStringLiteral("minRepeatMs=300")});
        row("--timeout", {QStringLiteral("--timeout"), QStringLiteral("2.5")}, {QStringLiteral("timeoutS=2.5")});
        // A bare --cache-flush (before it took a value) means on, last or before another option.
        row("--cache-flush", {QStringLiteral("--cache-flush")}, {QStringLiteral("cacheFlush=on")});
        row("--cache-flush --number",
            {QStringLiteral("--cache-flush"), QStringLiteral("--number"), QStringLiteral("7")},
            {QStringLiteral("cacheFlush=on"), QStringLiteral("number=7")});
        row("--cache-flush off", {QStringLiteral("--cache-flush"), QStringLiteral("off")}, {QStringLiteral("cacheFlush=off")});
        row("--cache-flush=on", {QStringLiteral("--cache-flush=on")}, {QStringLiteral("cacheFlush=on")});
        row("--cache-flush auto", {QStringLiteral("--cache-flush"), QStringLiteral("auto")}, {});
        row("--pipeline", {QStringLiteral("--pipeline"), QStringLiteral("8")}, {QStringLiteral("pipeline=8")});
        row("--abandon-factor", {QStringLiteral("--abandon-factor"), QStringLiteral("4")}, {QStringLiteral("abandon=4")});
        row("--abandon-factor 0", {QStringLiteral("--abandon-factor"), QStringLiteral("0")}, {QStringLiteral("abandon=0")});
        row("--screen", {QStringLiteral("--screen"), QStringLiteral("1.25")}, {QStringLiteral("screen=1.25")});
        row("--screen-ms", {QStringLiteral("--screen-ms"), QStringLiteral("5")}, {QStringLiteral("screenMs=5")});
        row("--reject-preempted", {QStringLiteral("--reject-preempted")}, {QStringLiteral("rejectPreempted=true")});
        row("--slices", {QStringLiteral("--slices"), QStringLiteral("3")}, {QStringLiteral("slices=3")});
        row("--slices 1", {QStringLiteral("--slices"), QStringLiteral("1")}, {});
        row("--layout-rewrite 0", {QStringLiteral("--layout-rewrite"), QStringLiteral("0")}, {QStringLiteral("layoutRewrite=0")});
        row("--layout-rewrite 2", {QStringLiteral("--layout-rewrite"), QStringLiteral("2")}, {QStringLiteral("layoutRewrite=2")});
        row("--log --resume", {QStringLiteral("--log"), QStringLiteral("/tmp/r18.json"), QStringLiteral("--resume")},
            {QStringLiteral("log=/tmp/r18.json"), QStringLiteral("resume=true")});
        row("--tsv", {QStringLiteral("--tsv"), QStringLiteral("/tmp/lat.tsv")}, {QStringLiteral("tsv=/tmp/lat.tsv")});
        row("--tsv empty", {QStringLiteral("--tsv"), QString()}, {QStringLiteral("tsv=")});
    }
    void testOptionToJob() {
        QFETCH(QStringList, args);
        QFETCH(QStringList, changed);
        const tuning::TuningJob job = parse(withBase(args), &g_optionsSeen);

        // The option sets its field and nothing else.
        QMap<QString, QString> want = fields(parse(withBase({})));
        for (const QString& c : changed) {
            const qsizetype eq = c.indexOf(QLatin1Char('='));
            QVERIFY2(want.contains(c.left(eq)), qPrintable(c));
            want[c.left(eq)] = c.mid(eq + 1);
        }
        QCOMPARE(fields(job), want);

        // Back to a command line and parsed again: the same job.
        const QStringList back = cli::TuneCommandLine::arguments(job);
        QCOMPARE(fields(parse(back)), want);
        QCOMPARE(cli::TuneCommandLine::arguments(parse(back)), back);

        // Through the window's settings and back: the window carries every option.
        const session::TuningJob window = session::adapter::sessionJob(job);
        QCOMPARE(fields(session::adapter::engineJob(window)), want);
        QCOMPARE(session::adapter::sessionJob(session::adapter::engineJob(window)), window);
    }

    // Runs after the rows above (Qt Test keeps declaration order): each option had a row.
    void testEveryOptionHasARow() {
        cli::TuneCommandLine cl;
        QStringList missing;
        for (const QCommandLineOption& o : cl.options())
            if (!g_optionsSeen.contains(o.names().first())) missing << o.names().first();
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("no row sets: ") + missing.join(QStringLiteral(", "))));
    }

    void testBadOptions_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("no log") << QStringList{QStringLiteral("--network"), QStringLiteral("mlp")} << QStringLiteral("--log");
        QTest::addRow("both networks") << QStringList{QStringLiteral("--onnx"), QStringLiteral("m.onnx")} + withBase({})
                                       << QStringLiteral("exactly one");
        QTest::addRow("shape for a zoo network") << withBase({QStringLiteral("--shape"), QStringLiteral("x=1")})
                                                 << QStringLiteral("--shape");
        QTest::addRow("trials") << withBase({QStringLiteral("--trials"), QStringLiteral("many")}) << QStringLiteral("--trials");
        QTest::addRow("winograd contradiction")
            << withBase({QStringLiteral("--no-winograd"), QStringLiteral("--winograd-or-direct")})
            << QStringLiteral("--winograd-or-direct");
        QTest::addRow("number") << withBase({QStringLiteral("--number"), QStringLiteral("0")}) << QStringLiteral("--number");
        QTest::addRow("min repeat") << withBase({QStringLiteral("--min-repeat-ms"), QStringLiteral("0.5")})
                                    << QStringLiteral("--min-repeat-ms");
        QTest::addRow("timeout") << withBase({QStringLiteral("--timeout"), QStringLiteral("0")}) << QStringLiteral("--timeout");
        QTest::addRow("pipeline") << withBase({QStringLiteral("--pipeline"), QStringLiteral("-1")}) << QStringLiteral("--pipeline");
        QTest::addRow("abandon factor 1") << withBase({QStringLiteral("--abandon-factor"), QStringLiteral("1")})
                                          << QStringLiteral("--abandon-factor");
        QTest::addRow("abandon factor word") << withBase({QStringLiteral("--abandon-factor"), QStringLiteral("x")})
                                             << QStringLiteral("--abandon-factor");
        QTest::addRow("screen factor 1") << withBase({QStringLiteral("--screen"), QStringLiteral("1")}) << QStringLiteral("--screen");
        QTest::addRow("screen ms 0") << withBase({QStringLiteral("--screen-ms"), QStringLiteral("0")}) << QStringLiteral("--screen-ms");
        QTest::addRow("slices 0") << withBase({QStringLiteral("--slices"), QStringLiteral("0")}) << QStringLiteral("--slices must be");
        QTest::addRow("slices not a number") << withBase({QStringLiteral("--slices"), QStringLiteral("five")}) << QStringLiteral("--slices must be");
        QTest::addRow("slices with reject-preempted")
            << withBase({QStringLiteral("--slices"), QStringLiteral("3"), QStringLiteral("--reject-preempted")})
            << QStringLiteral("--slices does not combine with --reject-preempted");
        QTest::addRow("reject-preempted with flush")
            << withBase({QStringLiteral("--reject-preempted"), QStringLiteral("--cache-flush")}) << QStringLiteral("--reject-preempted");
        QTest::addRow("layout rewrite 1") << withBase({QStringLiteral("--layout-rewrite"), QStringLiteral("1")})
                                          << QStringLiteral("--layout-rewrite");
        QTest::addRow("strategy") << withBase({QStringLiteral("--strategy"), QStringLiteral("greedy")}) << QStringLiteral("greedy");
        QTest::addRow("cost model") << withBase({QStringLiteral("--cost-model"), QStringLiteral("mlp")})
                                    << QStringLiteral("--cost-model");
        QTest::addRow("rpc without key") << withBase({QStringLiteral("--runner"), QStringLiteral("rpc")}) << QStringLiteral("--key");
        QTest::addRow("tracker") << withBase({QStringLiteral("--tracker"), QStringLiteral("localhost")})
                                 << QStringLiteral("HOST:PORT");
        QTest::addRow("tasks") << withBase({QStringLiteral("--tasks"), QStringLiteral("1,x")}) << QStringLiteral("'x'");
        QTest::addRow("cache flush value") << withBase({QStringLiteral("--cache-flush=sometimes")})
                                           << QStringLiteral("--cache-flush must be on, off or auto, got 'sometimes'");
        QTest::addRow("cache flush word") << withBase({QStringLiteral("--cache-flush"), QStringLiteral("sometimes")})
                                          << QStringLiteral("unexpected argument 'sometimes'");
    }
    void testBadOptions() {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        try {
            parse(args);
            QFAIL("no error");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(mentions), e.what());
        }
    }

    // The window's target host reaches the engine's target (TVM `Target(target, host=...)`): a GPU
    // job for a Mali board is built with the board's AArch64 host, and records leave the host out.
    void testTargetHostReachesTuner() {
        QTemporaryDir dir;
        session::TuningJob window;
        window.network = QStringLiteral("mlp");
        window.target = QStringLiteral("opencl -device=mali");
        window.targetHost = QStringLiteral("llvm -mtriple=aarch64-linux-gnu");
        window.logPath = dir.filePath(QStringLiteral("mali.json"));
        const auto tuner = tuning::buildTuner(session::adapter::engineJob(window));
        const codegen::Target& t = tuner->target().target;
        QVERIFY(t.isMali());
        QCOMPARE(t.targetHost, codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu").str());
        QVERIFY(t.hostTarget().has_value());
        QCOMPARE(t.hostTarget()->mtriple, std::string("aarch64-linux-gnu"));
        QVERIFY2(tuner->target().recordString.find("aarch64") == std::string::npos, tuner->target().recordString.c_str());
        QVERIFY(dynamic_cast<const measure::GpuLocalRunner*>(&tuner->runner()));

        // A host that is not an llvm target is refused with the parser's sentence.
        window.targetHost = QStringLiteral("cuda");
        try {
            tuning::buildTuner(session::adapter::engineJob(window));
            QFAIL("a cuda host was accepted");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("host")), e.what());
        }
    }

    // The window's cache-flush setting reaches the runner the job builds, local and remote (the
    // worker builds its engine exactly so: adapter::engineJob, then tuning::buildTuner), and every
    // task's measurement policy: on/off for all; auto per task from this machine's LLC (local) or
    // warm (rpc: the device's LLC is unknown); the window's task rows show it.
    // --winograd-or-direct: the tuner's task list holds TVM's tasks, then the direct alternatives,
    // each pointing at its winograd task's position in the tuner's list (also when --tasks picks a
    // subset), and the scheduler counts each pair once.
    void testWinogradAlternativesReachScheduler() {
        QTemporaryDir dir;
        session::TuningJob window;
        window.network = QStringLiteral("resnet-18");
        window.winogradOrDirect = true;
        window.logPath = dir.filePath(QStringLiteral("wod.json"));
        const auto all = tuning::buildTuner(session::adapter::engineJob(window));
        QCOMPARE(all->extractedTasks(), 30);
        const auto& tasks = all->network().tasks();
        int alternatives = 0;
        for (size_t i = 0; i < tasks.size(); ++i) {
            if (tasks[i].alternativeOf < 0) continue;
            ++alternatives;
            QVERIFY(i >= 24);
            const auto& w = tasks[size_t(tasks[i].alternativeOf)];
            QVERIFY2(w.task.desc.find("winograd") != std::string::npos, w.task.desc.c_str());
            QCOMPARE(tasks[i].weight, w.weight);
        }
        QCOMPARE(alternatives, 6);
        // A subset: winograd task 14 and its alternative (extraction index 28), plus task 2 without
        // one; and alternative 29 alone, whose winograd task 15 is not tuned (no pair then).
        window.taskIds = {2, 14, 28, 29};
        const auto some = tuning::buildTuner(session::adapter::engineJob(window));
        const auto& st = some->network().tasks();
        QCOMPARE(st.size(), size_t(4));
        QCOMPARE(some->taskIndices(), (std::vector<int>{2, 14, 28, 29}));
        QCOMPARE(st[0].alternativeOf, -1);
        QCOMPARE(st[1].alternativeOf, -1);
        QCOMPARE(st[2].alternativeOf, 1);
        QCOMPARE(st[3].alternativeOf, -1);
    }

    void testCacheFlushReachesRunner_data() {
        QTest::addColumn<QString>("runner");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("network");
        const QString mlp = QStringLiteral("mlp");
        QTest::addRow("local, flush") << QStringLiteral("local") << QStringLiteral("on") << mlp;
        QTest::addRow("local, no flush") << QStringLiteral("local") << QStringLiteral("off") << mlp;
        QTest::addRow("local, auto") << QStringLiteral("local") << QStringLiteral("auto") << mlp;
        // mobilenet's 16.9 MB of weights: over a quarter of an LLC under 68 MB (this project's
        // machines), so `auto` flushes the weights of its conv and dense tasks only.
        QTest::addRow("local, auto, mobilenet") << QStringLiteral("local") << QStringLiteral("auto") << QStringLiteral("mobilenet");
        QTest::addRow("rpc, flush") << QStringLiteral("rpc") << QStringLiteral("on") << mlp;
        QTest::addRow("rpc, auto") << QStringLiteral("rpc") << QStringLiteral("auto") << mlp;
    }
    void testCacheFlushReachesRunner() {
        QFETCH(QString, runner);
        QFETCH(QString, mode);
        QFETCH(QString, network);
        const bool flush = mode == QLatin1String("on");
        QTemporaryDir dir;
        session::TuningJob window;
        window.network = network;
        window.runner = runner;
        window.deviceKey = QStringLiteral("nobody");  // the RPC runner contacts the tracker only when it runs
        window.cacheFlush = mode;
        window.number = 2;
        window.repeat = 4;
        window.minRepeatMs = 7;
        window.timeoutS = 3;
        window.logPath = dir.filePath(QStringLiteral("flush.json"));
        const auto tuner = tuning::buildTuner(session::adapter::engineJob(window));
        QVERIFY(!tuner->network().tasks().empty());
        QCOMPARE(tuner->extractedTasks(), int(tuner->network().tasks().size()));
        if (runner == QLatin1String("local")) {
            const auto* r = dynamic_cast<const measure::LocalRunner*>(&tuner->runner());
            QVERIFY(r);
            QCOMPARE(r->options().enableCpuCacheFlush, flush);
            QCOMPARE(r->options().number, 2);
            QCOMPARE(r->options().repeat, 4);
            QCOMPARE(r->options().minRepeatMs, 7.0);
            QCOMPARE(r->options().timeoutS, 3.0);
        } else {
            const auto* r = dynamic_cast<const measure::RpcRunner*>(&tuner->runner());
            QVERIFY(r);
            QCOMPARE(r->options().enableCpuCacheFlush, flush);
            QCOMPARE(r->options().key, std::string("nobody"));
            QCOMPARE(r->options().repeat, 4);
            QCOMPARE(r->options().trackerRetryTimeoutS, window.trackerRetryTimeoutS);
        }
        const QString summary = QString::fromStdString(tuner->runnerSummary());
        // A local runner times a flushed kernel as TVM's LocalRunner does, and says so.
        const QString flushedTiming = QStringLiteral(" (a flushed kernel: number 1, repeat 10, min_repeat_ms 0)");
        if (mode == QLatin1String("off") || (mode == QLatin1String("on") && runner != QLatin1String("local")))
            QVERIFY2(summary.endsWith(QStringLiteral("cache flush ") + mode), qPrintable(summary));
        else if (mode == QLatin1String("on"))
            QVERIFY2(summary.endsWith(QStringLiteral("cache flush on") + flushedTiming), qPrintable(summary));

        // Per task: the policy the tuner chose is on the task (hence on every MeasureInput the
        // measurer makes) and in the window's rows.
        const int64_t llc = runner == QLatin1String("local") ? measure::effectiveLastLevelCacheBytes() : 0;
        int64_t weights = 0;
        const graph::Graph net = tuning::loadNetwork(tuner->job().network);  // outlives the loop
        for (const graph::Node& n : net.nodes())
            if (n.kind == graph::NodeKind::Constant) weights += int64_t(n.value->f.size() * sizeof(float));
        QVERIFY(weights > 0);
        const auto& policies = tuner->measurePolicies();
        const auto& tasks = tuner->network().tasks();
        QCOMPARE(policies.size(), tasks.size());
        const QList<session::TaskRow> rows = session::adapter::taskRows(tuner->network(), -1);
        int flushed = 0;
        int weightsOnly = 0;
        for (size_t i = 0; i < tasks.size(); ++i) {
            // The task's constants (graph::ExtractedTask::constantArgs) are what a weights-only
            // flush evicts: placeholders, never the output, their bytes the policy's.
            const auto& ts = tasks[i].task.dag->tensors();
            int64_t flushBytes = 0;
            for (int a : tasks[i].task.flushArgs) {
                QVERIFY(a >= 0 && size_t(a) + 1 < ts.size() && ts[size_t(a)].op()->isPlaceholder());
                flushBytes += measure::tensorBytes(ts[size_t(a)]);
            }
            QCOMPARE(policies[i].weightsOnly, !tasks[i].task.flushArgs.empty());
            if (policies[i].weightsOnly) {
                QCOMPARE(flushBytes, policies[i].taskWeightBytes);
                ++weightsOnly;
            }
            const auto want = tuning::chooseMeasurePolicy(measure::dagTraffic(*tasks[i].task.dag).inputBytes, weights,
                                                          tuning::parseCacheFlushMode(mode.toStdString()), llc,
                                                          policies[i].taskWeightBytes);
            QCOMPARE(policies[i].weightsOnly, want.weightsOnly);
            QCOMPARE(policies[i].networkWeightBytes, weights);
            QCOMPARE(policies[i].llcBytes, llc);
            QCOMPARE(policies[i].flush, want.flush);
            QCOMPARE(tasks[i].task.cacheFlush, std::optional<bool>(want.flush));
            QCOMPARE(rows[qsizetype(i)].cacheFlush, want.flush ? QStringLiteral("flush") : QStringLiteral("warm"));
            QCOMPARE(rows[qsizetype(i)].cacheFlushReason, QString::fromStdString(want.reason()));
            if (mode != QLatin1String("auto")) QCOMPARE(want.flush, flush);
            flushed += want.flush ? 1 : 0;
        }
        if (network == QLatin1String("mobilenet") && runner == QLatin1String("local")) {
            // 20 conv and dense tasks flush their weights alone, pooling and softmax stay warm.
            QCOMPARE(weightsOnly, weights > llc / 4 ? 20 : 0);
            QCOMPARE(flushed, weights > llc / 4 ? 20 : 0);
        } else if (mode != QLatin1String("auto") || runner != QLatin1String("local")) {
            QCOMPARE(weightsOnly, 0);  // --cache-flush on is TVM's flush of every argument but the first
        }
        if (mode == QLatin1String("auto")) {
            if (llc > 0)
                QVERIFY2(summary.endsWith(QStringLiteral("cache flush auto: %1 of %2 tasks flushed, LLC %3 MB measured (sysfs %4 MB)")
                                                  .arg(flushed)
                                                  .arg(tasks.size())
                                                  .arg(double(llc) / 1e6, 0, 'f', 1)
                                                  .arg(double(measure::hostLastLevelCacheBytes()) / 1e6, 0, 'f', 1) +
                                              (flushed > 0 ? flushedTiming : QString())),
                         qPrintable(summary));
            else
                QVERIFY2(summary.endsWith(QStringLiteral("cache flush auto: LLC unknown, every task warm")), qPrintable(summary));
        }
    }

    // --tasks keeps the named tasks, in extraction order, with the target's hardware params.
    void testTaskSelection() {
        QTemporaryDir dir;
        tuning::TuningJob job = parse(withBase({QStringLiteral("--tasks"), QStringLiteral("2,0"), QStringLiteral("--log"),
                                                dir.filePath(QStringLiteral("t.json"))}));
        job.latencyLogPath.clear();
        const auto tuner = tuning::buildTuner(job);
        QCOMPARE(tuner->taskIndices(), (std::vector<int>{0, 2}));
        QCOMPARE(int(tuner->network().tasks().size()), 2);
        QVERIFY(tuner->extractedTasks() > 2);
        QCOMPARE(tuner->hardware(), measure::defaultHardwareParams(tuner->target().target));
        for (const auto& t : tuner->network().tasks()) QCOMPARE(t.task.hardware, tuner->hardware());
        job.taskIds = {99};
        try {
            tuning::buildTuner(job);
            QFAIL("task 99 accepted");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("task 99")), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTuningJob)
#include "tst_tuning_job.moc"
