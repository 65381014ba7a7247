// SPDX-License-Identifier: Apache-2.0
#include "app/cli/device_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "engine/graph/interpreter.h"
#include "engine/measure/timer.h"
#include "engine/runtime/build_module.h"
#include "engine/support/error.h"
#include "engine/support/process.h"

namespace tb::cli {

namespace {

double seconds(const QCommandLineParser& p, const QCommandLineOption& o) {
    bool ok = false;
    const double v = p.value(o).toDouble(&ok);
    TB_USER_CHECK(ok && v > 0) << "--" << o.names().first().toStdString() << " must be a number of seconds > 0, got '"
                               << p.value(o).toStdString() << "'";
    return v;
}

// One line comparing a device tensor with the interpreter's; false when it is off.
bool checkTensor(const std::string& what, const rpc::NamedTensor& got, const te::Buffer& want, double tolerance) {
    if (got.shape != want.shape || got.data.size() != want.data.size()) {
        std::fprintf(stdout, "check %s: the device's shape %s differs from the interpreter's %s (FAILED)\n", what.c_str(),
                     shapeText(got.shape).c_str(), shapeText(want.shape).c_str());
        return false;
    }
    double maxAbs = 0;
    for (size_t k = 0; k < got.data.size(); ++k)
        maxAbs = std::max(maxAbs, std::fabs(double(got.data[k]) - double(want.data[k])));
    const double rel = runtime::relativeMaxError(got.data.data(), want.data.data(), got.data.size());
    const bool ok = rel <= tolerance;
    std::fprintf(stdout,
                 "check %s (%s) against the host interpreter: max abs error %.3g, max abs error / max abs value %.3g "
                 "(%s, tolerance %g)\n",
                 what.c_str(), shapeText(got.shape).c_str(), maxAbs, rel, ok ? "ok" : "FAILED", tolerance);
    return ok;
}

// The exec-graph node whose value is the input of a final softmax kernel, or -1. The zoo's
// Xavier-initialized networks end in a softmax that is uniform to float precision (mobilenet: every
// value 0.001), so equal outputs say little about the layers before it: the logits are checked too.
int logitsNode(const graph::Graph& g, const runtime::ExecGraph& eg) {
    if (g.outputs().size() != 1 || eg.outputs.size() != 1) return -1;
    const graph::Node& out = g.node(g.outputs()[0]);
    const runtime::ExecNode& last = eg.nodes[size_t(eg.outputs[0])];
    if (out.kind != graph::NodeKind::Op || out.op != "nn.softmax" || last.kind != runtime::ExecNode::Kind::Op ||
        last.inputs.size() != 1 || last.func.find("softmax") == std::string::npos)
        return -1;
    const int in = last.inputs[0];
    return eg.nodes[size_t(in)].kind == runtime::ExecNode::Kind::Op ? in : -1;
}

}  // namespace

bool DeviceRunOptions::remote(const QCommandLineParser& p, runtime::RemoteRunOptions* ro) const {
    const std::string kind = p.value(runner).toStdString();
    TB_USER_CHECK(kind == "local" || kind == "rpc") << "--runner must be local or rpc, got '" << kind << "'";
    if (kind == "local") {
        for (const auto* o : {&tracker, &key, &token})
            TB_USER_CHECK(!p.isSet(*o)) << "--" << o->names().first().toStdString() << " needs --runner rpc";
        return false;
    }
    TB_USER_CHECK(p.isSet(tracker) && p.isSet(key)) << "--runner rpc needs --tracker HOST:PORT and --key KEY";
    std::tie(ro->trackerHost, ro->trackerPort) = parseHostPort(p.value(tracker).toStdString(), "--tracker");
    ro->key = p.value(key).toStdString();
    ro->token = p.value(token).toStdString();
    ro->timeoutS = seconds(p, timeout);
    ro->requestTimeoutS = seconds(p, requestTimeout);
    return true;
}

std::vector<te::Buffer> seededInputs(const runtime::ExecGraph& g) {
    std::vector<te::Buffer> inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        te::Buffer b = te::Buffer::zeros(g.nodes[size_t(g.inputs[i])].shape);
        measure::fillRandom(b.data.data(), b.data.size(), 1 + i);
        inputs.push_back(std::move(b));
    }
    return inputs;
}

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
    return s;
}

DeviceRun runAndCheckOnDevice(const graph::Graph& g, const runtime::ExecGraph& eg, const std::string& dir,
                              const std::vector<te::Buffer>& inputs, runtime::RemoteRunOptions ro, bool check,
                              double tolerance) {
    std::vector<rpc::NamedTensor> named;
    for (size_t i = 0; i < inputs.size() && i < eg.inputs.size(); ++i)
        named.push_back({eg.nodes[size_t(eg.inputs[i])].name, inputs[i].shape, inputs[i].data});
    ro.progress = [](const std::string& line) {
        std::fprintf(stdout, "%s\n", line.c_str());
        std::fflush(stdout);
    };
    const int logits = check ? logitsNode(g, eg) : -1;
    if (logits >= 0) ro.debugNodes = {logits};
    DeviceRun run;
    try {
        run.result = runtime::runOnDevice(dir, named, ro);
    } catch (const runtime::RemoteRunError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return run;
    }
    run.ran = true;
    const runtime::RemoteRunResult& r = run.result;
    std::fprintf(stdout,
                 "Ran on %s (%s): %d kernel thread(s); uploaded %.2f MB in %.2f s; loaded in %.3f s, first run %.3f ms\n",
                 r.server.c_str(), r.serverKey.c_str(), r.deviceThreads, double(r.uploadBytes) / 1e6, r.uploadSeconds,
                 r.loadSeconds, r.firstRunSeconds * 1e3);
    if (!check) return run;

    // The reference: the graph interpreter on this machine, same inputs.
    std::map<std::string, te::Buffer> byName;
    for (size_t i = 0; i < inputs.size() && i < g.inputs().size(); ++i) byName[g.node(g.inputs()[i]).name] = inputs[i];
    const std::vector<te::Buffer> ref = graph::runGraph(g, byName);
    run.checked = ref.size() == r.outputs.size();
    if (!run.checked)
        std::fprintf(stdout, "check: the device returned %zu outputs, the interpreter %zu (FAILED)\n", r.outputs.size(),
                     ref.size());
    for (size_t i = 0; i < std::min(ref.size(), r.outputs.size()); ++i)
        run.checked = checkTensor("output " + std::to_string(i), r.outputs[i], ref[i], tolerance) && run.checked;
    if (logits >= 0) {
        graph::Graph beforeSoftmax = g;
        beforeSoftmax.setOutputs({g.node(g.outputs()[0]).inputs.at(0)});
        const std::vector<te::Buffer> refLogits = graph::runGraph(beforeSoftmax.pruned(), byName);
        run.checked =
            checkTensor("the final softmax's input", r.debugOutputs.at(0), refLogits.at(0), tolerance) && run.checked;
    }
    return run;
}

}  // namespace tb::cli
