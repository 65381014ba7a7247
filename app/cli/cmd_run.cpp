// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli run`: compile a network (tuned schedules from --log when given) and run it on
// inputs stored as ONNX TensorProto files, writing the outputs the same way, so a TuneBench run can
// be compared with ONNX Runtime or any ONNX tool. --check also runs the graph reference
// interpreter on the same inputs and prints the relative error of every output. With `--runner rpc
// --tracker H:P --key K --target T` the network is cross-compiled for T and run on a device of key
// K (app/cli/device_run.h), whose outputs are written and checked the same way.
#include <QCommandLineParser>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>

#include "app/cli/commands.h"
#include "app/cli/device_run.h"
#include "app/cli/network_loader.h"
#include "engine/graph/interpreter.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/tensor_io.h"
#include "engine/graph/zoo.h"
#include "engine/runtime/build_module.h"
#include "engine/runtime/network_eval.h"
#include "engine/support/error.h"

namespace tb::cli {

int runRun(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Compile a network and run it on .pb (ONNX TensorProto) inputs; write the outputs as .pb files."));
    p.addHelpOption();
    QCommandLineOption network(QStringLiteral("network"), QStringLiteral("Zoo network (mobilenet, resnet-18, ...)."),
                               QStringLiteral("NAME"));
    QCommandLineOption onnx(QStringLiteral("onnx"), QStringLiteral("ONNX model file."), QStringLiteral("FILE"));
    QCommandLineOption batch(QStringLiteral("batch"), QStringLiteral("Batch size of a zoo network (default 1)."),
                             QStringLiteral("N"), QStringLiteral("1"));
    QCommandLineOption layout(QStringLiteral("layout"),
                              QStringLiteral("NHWC or NCHW (default NHWC); NHWC converts an NCHW ONNX model "
                                             "(its inputs stay NCHW)."),
                              QStringLiteral("LAYOUT"), QStringLiteral("NHWC"));
    QCommandLineOption shape(QStringLiteral("shape"),
                             QStringLiteral("Bind an ONNX input shape, e.g. x=1,3,640,640 (default: the input files' shapes)."),
                             QStringLiteral("NAME=DIMS"));
    QCommandLineOption log(QStringLiteral("log"),
                           QStringLiteral("Tuning log: auto_scheduler or AutoTVM records (told by their lines; AutoTVM's x86 "
                                          "conv2d_NCHWc configs apply to NCHW convs: --layout NCHW)."),
                           QStringLiteral("FILE"));
    QCommandLineOption target(QStringLiteral("target"), QStringLiteral("TVM target string (default: this CPU)."),
                              QStringLiteral("TARGET"));
    QCommandLineOption input(QStringLiteral("input"),
                             QStringLiteral("Input tensor (.pb); repeat for several inputs (matched by name, else by order)."),
                             QStringLiteral("FILE"));
    QCommandLineOption output(QStringLiteral("output"),
                              QStringLiteral("Where to write output tensor i (.pb); repeat for several outputs."),
                              QStringLiteral("FILE"));
    QCommandLineOption check(QStringLiteral("check"),
                             QStringLiteral("Also run the graph reference interpreter and print the relative error."));
    QCommandLineOption tolerance(QStringLiteral("tolerance"),
                                 QStringLiteral("--check fails (exit 1) above this relative error (default 1e-4)."),
                                 QStringLiteral("X"), QStringLiteral("1e-4"));
    QCommandLineOption threads(QStringLiteral("threads"), QStringLiteral("Threads of the kernels' thread pool."),
                               QStringLiteral("N"));
    const NetworkOptions net;  // only its --no-winograd: run's --shape and --layout texts differ
    QCommandLineOption noLayoutRewrite(
        QStringLiteral("no-layout-rewrite"),
        QStringLiteral("Tuned kernels read their weights in the original layout, even when their records were timed "
                       "with the weights pre-transformed (layout_rewrite_option 2)."));
    p.addOptions({network, onnx, batch, layout, shape, log, target, input, output, check, tolerance, threads, net.noWinograd});
    p.addOption(noLayoutRewrite);
    const DeviceRunOptions device;
    p.addOptions(device.options());
    if (!p.parse(args)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    TB_USER_CHECK(p.isSet(network) != p.isSet(onnx)) << "give exactly one of --network NAME or --onnx FILE";
    TB_USER_CHECK(p.isSet(input)) << "--input FILE is required (an ONNX TensorProto .pb file)";
    if (p.isSet(threads)) {
        bool ok = false;
        const int t = p.value(threads).toInt(&ok);
        TB_USER_CHECK(ok && t >= 1) << "--threads must be a positive integer";
        setenv("TB_NUM_THREADS", std::to_string(t).c_str(), 1);
    }
    runtime::RemoteRunOptions ro;
    const bool remote = device.remote(p, &ro);
    TB_USER_CHECK(!remote || p.isSet(target))
        << "--runner rpc needs the device's --target, e.g. \"llvm -mtriple=aarch64-linux-gnu -mattr=+neon\"";
    ro.repeat = 1;
    ro.number = 1;
    bool tolOk = false;
    const double tol = p.value(tolerance).toDouble(&tolOk);
    TB_USER_CHECK(tolOk && tol > 0) << "--tolerance must be a positive number";
    const std::string lay = p.value(layout).toStdString();
    TB_USER_CHECK(lay == "NHWC" || lay == "NCHW") << "--layout must be NHWC or NCHW, got '" << lay << "'";

    std::vector<graph::NamedTensor> tensors;
    for (const QString& f : p.values(input)) tensors.push_back(graph::readTensorFile(f.toStdString()));

    graph::Graph g;
    if (p.isSet(network)) {
        TB_USER_CHECK(!p.isSet(shape)) << "--shape applies to --onnx models only";
        bool ok = false;
        const int64_t b = p.value(batch).toLongLong(&ok);
        TB_USER_CHECK(ok && b >= 1) << "--batch must be a positive integer";
        g = graph::makeNetwork(p.value(network).toStdString(), b, lay);
    } else {
        const std::string path = p.value(onnx).toStdString();
        graph::OnnxImportOptions opt;
        if (p.isSet(shape)) {
            for (const QString& s : p.values(shape))
                for (auto& [k, v] : graph::parseShapeMap(s.toStdString())) opt.inputShapes[k] = v;
        } else {
            // Bind dynamic dims from the input files, by name or else by position.
            const graph::OnnxModelInfo info = graph::inspectOnnx(path);
            for (size_t i = 0; i < tensors.size(); ++i) {
                std::string name = tensors[i].name;
                bool known = false;
                for (const auto& in : info.inputs) known |= in.name == name;
                if (!known && i < info.inputs.size()) name = info.inputs[i].name;
                opt.inputShapes[name] = tensors[i].data.type.shape;
            }
        }
        g = graph::importOnnx(path, opt);
        if (lay == "NHWC") g = graph::convertLayout(g, "NHWC");
    }

    runtime::BuildOptions bo;
    if (p.isSet(target)) bo.target = p.value(target).toStdString();
    if (p.isSet(log)) bo.logPath = p.value(log).toStdString();
    bo.winograd = net.winograd(p);
    bo.layoutRewrite = !p.isSet(noLayoutRewrite);
    bo.load = !remote;  // for a device: cross-compiled, not loaded here
    runtime::CompiledModule mod = runtime::build(g, bo);
    std::fprintf(stdout, "%s", mod.report().text().c_str());

    // Inputs in network order.
    const runtime::ExecGraph& eg = mod.graph();
    TB_USER_CHECK(tensors.size() == eg.inputs.size())
        << "the network has " << eg.inputs.size() << " inputs, " << tensors.size() << " --input given";
    std::vector<te::Buffer> inputs(eg.inputs.size());
    std::vector<bool> set(eg.inputs.size(), false);
    for (size_t i = 0; i < tensors.size(); ++i) {
        int byName = -1;
        for (size_t k = 0; k < eg.inputs.size(); ++k)
            if (eg.nodes[size_t(eg.inputs[k])].name == tensors[i].name) byName = int(k);
        const size_t index = byName >= 0 && !set[size_t(byName)] ? size_t(byName) : i;
        TB_USER_CHECK(!set[index]) << "two --input files for input " << index;
        TB_USER_CHECK(!tensors[i].data.f.empty() || tensors[i].data.i.empty())
            << p.values(input)[int(i)].toStdString() << ": only float tensors can be fed";
        inputs[index] = te::Buffer{tensors[i].data.type.shape, tensors[i].data.f};
        set[index] = true;
    }
    std::vector<te::Buffer> outs;
    bool deviceChecked = true;
    if (remote && mod.gpuModule()) {
        // A GPU device checks the outputs itself against the host interpreter's (they do not come back).
        const runtime::DeviceRun run = runtime::runGpuNetworkOnDevice(g, mod, inputs, ro, true, tol, [](const std::string& line) {
            std::fprintf(stdout, "%s\n", line.c_str());
            std::fflush(stdout);
        });
        if (!run.ran) {
            std::fprintf(stderr, "error: %s\n", run.error.c_str());
            return 1;
        }
        return run.checked ? 0 : 1;
    }
    if (remote) {
        QTemporaryDir tmp;
        TB_USER_CHECK(tmp.isValid()) << "cannot create a temporary directory for the export";
        mod.exportLibrary(tmp.path().toStdString());
        const runtime::DeviceRun run = runAndCheckOnDevice(g, eg, tmp.path().toStdString(), inputs, ro, p.isSet(check), tol);
        if (!run.ran) return 1;
        deviceChecked = run.checked;
        for (const auto& t : run.result.outputs) outs.push_back(te::Buffer{t.shape, t.data});
    } else {
        outs = mod.run(inputs);
    }
    const QStringList outFiles = p.values(output);
    for (size_t i = 0; i < outs.size(); ++i) {
        const std::string s = runtime::shapeString(outs[i].shape);
        size_t argmax = 0;
        for (size_t k = 1; k < outs[i].data.size(); ++k)
            if (outs[i].data[k] > outs[i].data[argmax]) argmax = k;
        std::fprintf(stdout, "output %zu: %s, argmax %zu (%.6g)\n", i, s.c_str(), argmax,
                     outs[i].data.empty() ? 0.0 : double(outs[i].data[argmax]));
        if (int(i) < outFiles.size()) {
            graph::writeTensorFile(outFiles[int(i)].toStdString(), "output_" + std::to_string(i), outs[i].shape,
                                   outs[i].data);
            std::fprintf(stdout, "  written to %s\n", qPrintable(outFiles[int(i)]));
        }
    }
    int rc = deviceChecked ? 0 : 1;
    if (p.isSet(check) && !remote) {
        std::map<std::string, te::Buffer> named;
        for (size_t i = 0; i < inputs.size(); ++i) named[g.node(g.inputs()[i]).name] = inputs[i];
        const auto ref = graph::runGraph(g, named);
        for (size_t i = 0; i < outs.size(); ++i) {
            const double err = runtime::relativeMaxError(outs[i].data.data(), ref.at(i).data.data(), outs[i].data.size());
            std::fprintf(stdout, "check output %zu against the reference interpreter: max abs error / max abs value = %.3g (%s)\n",
                         i, err, err <= tol ? "ok" : "FAILED");
            if (!(err <= tol)) rc = 1;
        }
    }
    return rc;
}

}  // namespace tb::cli
