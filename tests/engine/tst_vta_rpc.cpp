// SPDX-License-Identifier: Apache-2.0
// add.vta / multiply.vta as AutoTVM tasks (args as TVM's task extraction and seed 004 write them),
// their simulated measurement, seed 004's scalar-rhs record duplication with `log check`, and the
// VTA simulator as an RPC device: an in-process tracker + RpcServer(VtaSimExecutor) measuring
// conv2d_packed.vta and add.vta configs through the tracker with the same simulated seconds and
// counters as the in-process measure function; model mismatches and malformed programs answered
// with clear errors, never a number, and never the server's end.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/autotvm/log_check.h"
#include "engine/autotvm/vta_tune.h"
#include "engine/measure/vta_sim_executor.h"
#include "engine/record/record_io.h"
#include "engine/rpc/rpc_server.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/vta/vta_program.h"
#include "engine/vta/vta_task.h"
#include "test_rpc_util.h"
#include "test_util.h"

using namespace tb;
using namespace tb::vta;
using tb::test::userError;
using ojson = nlohmann::ordered_json;

namespace {

AluWorkload smallAlu(AluOpKind op = AluOpKind::Add) {
    AluWorkload wl;
    wl.op = op;
    wl.batch = 1, wl.channels = 64, wl.height = wl.width = 8;
    return wl;
}

Conv2dWorkload smallConv() {
    Conv2dWorkload wl;
    wl.batch = 1, wl.height = wl.width = 8, wl.inFilter = 32, wl.outFilter = 32;
    wl.hkernel = wl.wkernel = 3, wl.hpad = wl.wpad = 1;
    return wl;
}

std::string writeTemp(const std::string& name, const std::string& text) {
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream(path) << text;
    return path;
}

rpc::RunReply runProgram(measure::VtaSimExecutor& ex, const std::string& text) {
    rpc::RunRequest req;
    req.module = "p.vta.json";
    req.modulePath = writeTemp("tst_vta_rpc_program.vta.json", text);
    req.repeat = 3;
    return ex.run(req);
}

}  // namespace

class TestVtaRpc : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void testAluArgs() {
        const VtaConfig cfg = VtaConfig::forTarget("intelfocl");
        const autotvm::Task t = autotvm::makeVtaAluTask(cfg, smallAlu());
        QCOMPARE(t.taskName, std::string("add.vta"));
        QCOMPARE(t.target, std::string("ext_dev -keys=vta,cpu -device=vta -model=intelfocl_1x16_i8w8a32_15_15_18_17"));
        QCOMPARE(t.args.dump(), std::string(R"([["TENSOR",[1,4,8,8,1,16],"int32"],["TENSOR",[1,4,8,8,1,16],"int32"]])"));
        QCOMPARE(t.space.size(), std::size_t(3 * 4 * 4));  // divisors of 4 channel blocks x 8 rows x 8 columns
        // Round trip, both forms; the scalar form reads as seed 004's merged task.
        bool scalar = true;
        AluWorkload back = aluWorkloadFromArgs("add.vta", t.args, nullptr, &scalar);
        QVERIFY(!scalar);
        QCOMPARE(back.str(), smallAlu().str());
        AluWorkload mixed = smallAlu(AluOpKind::Multiply);
        mixed.lhsInt8 = true;
        const ojson sArgs = aluTaskArgs(cfg, mixed, true);
        QCOMPARE(sArgs[1].dump(), std::string(R"(["TENSOR",[],"int32"])"));
        back = aluWorkloadFromArgs("multiply.vta", sArgs, nullptr, &scalar);
        QVERIFY(scalar);
        QCOMPARE(back.str(), mixed.str());
        QCOMPARE(vtaTaskSpace("multiply.vta", sArgs).size(), t.space.size());
        // Errors name the problem.
        QVERIFY(userError([&] { aluWorkloadFromArgs("add.vta", ojson::array({t.args[0]})); }).contains(QLatin1String("[lhs, rhs]")));
        ojson f = t.args;
        f[1][2] = "float32";
        QVERIFY(userError([&] { aluWorkloadFromArgs("add.vta", f); }).contains(QLatin1String("int8 or int32")));
        ojson r4 = t.args;
        r4[0][1] = ojson::array({1, 64, 8, 8});
        QVERIFY(userError([&] { aluWorkloadFromArgs("add.vta", r4); }).contains(QLatin1String("rank 6")));
        ojson other = t.args;
        other[1][1][2] = 4;
        QVERIFY(userError([&] { aluWorkloadFromArgs("add.vta", other); }).contains(QLatin1String("neither the lhs's")));
        QVERIFY(userError([&] { aluWorkloadFromArgs("conv2d_packed.vta", t.args); }).contains(QLatin1String("not an ALU task")));
        QVERIFY(userError([&] { autotvm::makeVtaAluTask(VtaConfig::forTarget("pynq"), smallAlu()); })
                    .contains(QLatin1String("no ALU-only operators")));
        QCOMPARE(resnet18AluWorkloads(cfg).size(), std::size_t(8));
        QCOMPARE(resnet18AluWorkloads(cfg).front().name, std::string("add_64x56x56"));
    }

    void testAluMeasure() {
        const VtaConfig cfg = VtaConfig::forTarget("intelfocl");
        const autotvm::Task t = autotvm::makeVtaAluTask(cfg, smallAlu(AluOpKind::Multiply));
        const auto measure = autotvm::vtaSimMeasureFunction(cfg);
        int ok = 0;
        std::vector<autotvm::ConfigEntity> all;
        for (std::int64_t i = 0; i < std::int64_t(t.space.size()); ++i) all.push_back(t.space.get(i));
        const auto rs = measure(t, all);
        for (const auto& r : rs) {
            QVERIFY2(r.errorNo != measure::MeasureErrorNo::WrongAnswer, r.errorMsg.c_str());  // bit-exact
            if (r.ok()) {
                ++ok;
                QVERIFY(r.costs.size() == 1 && r.costs[0] > 0 && r.costs[0] < 1e-2);
                QVERIFY(r.deviceCounters.at("alu_counter") > 0);
                QVERIFY(r.deviceCounters.at("acc_load_nbytes") > 0);
                QCOMPARE(r.deviceCounters.at("gemm_counter"), std::uint64_t(0));
            } else {
                QCOMPARE(r.errorNo, measure::MeasureErrorNo::InstantiationError);
                QVERIFY2(r.errorMsg.find("multiply.vta") != std::string::npos, r.errorMsg.c_str());  // names the template
                QVERIFY(r.deviceCounters.empty());
            }
        }
        QVERIFY(ok > 0);
    }

    void testDuplicationAndLogCheck() {
        const VtaConfig cfg = VtaConfig::forTarget("intelfocl");
        const autotvm::Task alu = autotvm::makeVtaAluTask(cfg, smallAlu());
        const autotvm::Task conv = autotvm::makeVtaConv2dTask(cfg, smallConv());
        const auto measure = autotvm::vtaSimMeasureFunction(cfg);
        const std::string path = (std::filesystem::temp_directory_path() / "tst_vta_rpc_dup.log").string();
        {
            record::RecordWriter w(path, record::RecordWriter::Mode::Truncate);
            for (std::int64_t i : {0, 5, 17}) {
                const auto c = alu.space.get(i);
                const auto recs = autotvm::logToFileRecords(alu, c, measure(alu, {c}).front());
                QCOMPARE(recs.size(), std::size_t(2));
                QCOMPARE(recs[1].args[1].dump(), std::string(R"(["TENSOR",[],"int32"])"));
                QCOMPARE(recs[1].args[0], recs[0].args[0]);
                QCOMPARE(recs[1].costs, recs[0].costs);
                for (const auto& r : recs) w.append(r);
            }
            const auto c = conv.space.get(0);
            QCOMPARE(autotvm::logToFileRecords(conv, c, measure(conv, {c}).front()).size(), std::size_t(1));
        }
        const autotvm::LogCheckReport rep = autotvm::checkLogFile(path);
        QCOMPARE(rep.records, 6);
        QCOMPARE(rep.checked, 6);
        QCOMPARE(rep.agree, 6);
        QVERIFY(!scalarRhsArgs(conv.args));
        std::filesystem::remove(path);
    }

    void testMalformedPrograms() {
        const VtaConfig cfg = VtaConfig::forTarget("intelfocl");
        measure::VtaSimExecutor ex(cfg);
        const autotvm::Task t = autotvm::makeVtaAluTask(cfg, smallAlu());
        const VtaProgram good = autotvm::makeVtaProgram(t, t.space.get(3));
        rpc::RunReply r = runProgram(ex, good.toText());
        QCOMPARE(r.errorNo, 0);
        QCOMPARE(r.costs.size(), std::size_t(3));
        QVERIFY(r.costs[0] > 0 && r.costs[0] == r.costs[2]);
        QVERIFY(r.deviceCounters.at("alu_counter") > 0);
        auto refused = [&](const std::string& text, const char* what) {
            const rpc::RunReply rr = runProgram(ex, text);
            QCOMPARE(rr.errorNo, 3);  // COMPILE_DEVICE
            QVERIFY2(QString::fromStdString(rr.errorMsg).contains(QLatin1String(what)), rr.errorMsg.c_str());
            QVERIFY(rr.deviceCounters.empty());
        };
        refused("not json", "malformed VTA program: not a JSON object");
        ojson j = ojson::parse(good.toText());
        ojson v = j;
        v["version"] = 2;
        refused(v.dump(), "version 2 is not the version 1");
        ojson u = j;
        u["extra"] = 1;
        refused(u.dump(), "unknown key 'extra'");
        ojson idx = j;
        idx["config"]["index"] = 4;
        refused(idx.dump(), "decodes to");
        ojson out = j;
        out["config"]["index"] = 100000;
        refused(out.dump(), "outside the task's space");
        ojson task = j;
        task["task"] = "dense_packed.vta";
        refused(task.dump(), "malformed VTA program");
        // Another VTA: the pynq program on this intelfocl simulator.
        const autotvm::Task pynq = autotvm::makeVtaConv2dTask(VtaConfig::forTarget("pynq"), smallConv());
        refused(autotvm::makeVtaProgram(pynq, pynq.space.get(0)).toText(),
                "VTA model mismatch: the program is for pynq_1x16_i8w8a32_15_15_18_17");
        // Still serving.
        QCOMPARE(runProgram(ex, good.toText()).errorNo, 0);
    }

    void testRemoteEqualsLocal() {
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        rpc::Tracker tracker(to);
        tracker.start();
        const VtaConfig cfg = VtaConfig::forTarget("intelfocl");
        rpc::RpcServer server(test::serverOptions(tracker.port(), "intelfocl"),
                              std::make_shared<measure::VtaSimExecutor>(cfg));
        // A server simulating a pynq VTA registered under a key of its own.
        rpc::RpcServer wrong(test::serverOptions(tracker.port(), "wrong-model"),
                             std::make_shared<measure::VtaSimExecutor>(VtaConfig::forTarget("pynq")));
        server.start();
        wrong.start();
        QVERIFY(test::waitForServers(tracker.port(), "intelfocl", 1));
        QVERIFY(test::waitForServers(tracker.port(), "wrong-model", 1));

        measure::RpcRunnerOptions o;  // TVM RPCRunner(env.TARGET, host, port, number=5, timeout=60)
        o.trackerHost = "127.0.0.1";
        o.trackerPort = tracker.port();
        o.key = "intelfocl";
        o.number = 5;
        o.repeat = 3;
        o.minRepeatMs = 0;
        o.timeoutS = 60;
        const auto remote = autotvm::vtaRpcMeasureFunction(cfg, o);
        const auto local = autotvm::vtaSimMeasureFunction(cfg);
        int okCount = 0, refusedCount = 0;
        for (const autotvm::Task& t : {autotvm::makeVtaConv2dTask(cfg, smallConv()), autotvm::makeVtaAluTask(cfg, smallAlu())}) {
            std::vector<autotvm::ConfigEntity> configs;
            for (std::int64_t i = 0; i < std::int64_t(t.space.size()); i += 7) configs.push_back(t.space.get(i));
            const auto rr = remote(t, configs);
            const auto lr = local(t, configs);
            QCOMPARE(rr.size(), configs.size());
            for (size_t i = 0; i < configs.size(); ++i) {
                QVERIFY2(rr[i].errorNo == lr[i].errorNo, (t.taskName + " #" + std::to_string(configs[i].index) + ": " +
                                                          rr[i].errorMsg + " / " + lr[i].errorMsg).c_str());
                if (lr[i].ok()) {
                    ++okCount;
                    QCOMPARE(rr[i].costs.size(), std::size_t(3));
                    for (double c : rr[i].costs) QCOMPARE(c, lr[i].costs[0]);  // the same simulated seconds
                    QCOMPARE(rr[i].deviceCounters, lr[i].deviceCounters);
                } else {
                    ++refusedCount;
                    QCOMPARE(rr[i].errorMsg, lr[i].errorMsg);  // refused here, before any upload
                }
            }
        }
        QVERIFY(okCount > 4);
        QVERIFY(refusedCount > 0);

        // A device simulating another VTA model answers with a clear error, never a number.
        measure::RpcRunnerOptions w = o;
        w.key = "wrong-model";
        const autotvm::Task t = autotvm::makeVtaAluTask(cfg, smallAlu());
        const auto mismatch = autotvm::vtaRpcMeasureFunction(cfg, w)(t, {t.space.get(3)}).front();
        QCOMPARE(mismatch.errorNo, measure::MeasureErrorNo::CompileDevice);
        QVERIFY2(mismatch.errorMsg.find("VTA model mismatch: the program is for intelfocl_1x16_i8w8a32_15_15_18_17") !=
                     std::string::npos,
                 mismatch.errorMsg.c_str());
        QVERIFY(mismatch.errorMsg.find("this server simulates pynq_1x16_i8w8a32_15_15_18_17") != std::string::npos);
        QCOMPARE(mismatch.costs, std::vector<double>{measure::kMaxFloat});

        // A malformed upload through a session does not end the server: the next request is served.
        QVERIFY(test::waitForServers(tracker.port(), "intelfocl", 1));
        {
            rpc::ConnectOptions co;
            auto ts = rpc::TrackerSession::connect("127.0.0.1", tracker.port(), co);
            rpc::RpcSession s = rpc::requestSession(ts, "intelfocl");
            s.upload("bad.vta.json", "{\"format\": 1}");
            rpc::RunRequest req;
            req.module = "bad.vta.json";
            const rpc::RunReply bad = s.run(req);
            QCOMPARE(bad.errorNo, 3);
            QVERIFY2(bad.errorMsg.find("malformed VTA program") != std::string::npos, bad.errorMsg.c_str());
            s.close();
        }
        QVERIFY(test::waitForServers(tracker.port(), "intelfocl", 1));
        QVERIFY(remote(t, {t.space.get(3)}).front().ok());
        wrong.stop();
        server.stop();
        tracker.stop();
    }
};

QTEST_GUILESS_MAIN(TestVtaRpc)
#include "tst_vta_rpc.moc"
