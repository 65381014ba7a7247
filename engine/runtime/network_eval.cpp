// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/network_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/graph/interpreter.h"
#include "engine/codegen/gpu_module.h"
#include "engine/measure/rpc_runner.h"
#include "engine/measure/timer.h"
#include "engine/runtime/build_module.h"
#include "engine/support/error.h"

namespace tb::runtime {

namespace {

void emit(const LineSink& out, const std::string& line) {
    if (out) out(line);
}

template <typename... A>
std::string format(const char* fmt, A... args) {
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    std::string s(size_t(std::max(n, 0)), '\0');
    std::snprintf(s.data(), s.size() + 1, fmt, args...);
    return s;
}

// One line comparing a tensor with the interpreter's; false when it is off.
bool checkTensor(const std::string& what, const rpc::NamedTensor& got, const te::Buffer& want, double tolerance,
                 double* rel, const LineSink& out) {
    if (got.shape != want.shape || got.data.size() != want.data.size()) {
        emit(out, format("check %s: the device's shape %s differs from the interpreter's %s (FAILED)", what.c_str(),
                         shapeString(got.shape).c_str(), shapeString(want.shape).c_str()));
        return false;
    }
    double maxAbs = 0;
    for (size_t k = 0; k < got.data.size(); ++k)
        maxAbs = std::max(maxAbs, std::fabs(double(got.data[k]) - double(want.data[k])));
    *rel = relativeMaxError(got.data.data(), want.data.data(), got.data.size());
    const bool ok = *rel <= tolerance;
    emit(out, format("check %s (%s) against the host interpreter: max abs error %.3g, max abs error / max abs value "
                     "%.3g (%s, tolerance %g)",
                     what.c_str(), shapeString(got.shape).c_str(), maxAbs, *rel, ok ? "ok" : "FAILED", tolerance));
    return ok;
}

std::map<std::string, te::Buffer> inputsByName(const graph::Graph& g, const std::vector<te::Buffer>& inputs) {
    std::map<std::string, te::Buffer> byName;
    for (size_t i = 0; i < inputs.size() && i < g.inputs().size(); ++i) byName[g.node(g.inputs()[i]).name] = inputs[i];
    return byName;
}

// The exec-graph node whose value is the input of a final softmax kernel, or -1. The zoo's
// Xavier-initialized networks end in a softmax that is uniform to float precision (mobilenet: every
// value 0.001), so equal outputs say little about the layers before it: the logits are checked too.
int logitsNode(const graph::Graph& g, const ExecGraph& eg) {
    if (g.outputs().size() != 1 || eg.outputs.size() != 1) return -1;
    const graph::Node& out = g.node(g.outputs()[0]);
    const ExecNode& last = eg.nodes[size_t(eg.outputs[0])];
    if (out.kind != graph::NodeKind::Op || out.op != "nn.softmax" || last.kind != ExecNode::Kind::Op ||
        last.inputs.size() != 1 || last.func.find("softmax") == std::string::npos)
        return -1;
    const int in = last.inputs[0];
    return eg.nodes[size_t(in)].kind == ExecNode::Kind::Op ? in : -1;
}

}  // namespace

std::vector<te::Buffer> seededInputs(const ExecGraph& g) {
    std::vector<te::Buffer> inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        te::Buffer b = te::Buffer::zeros(g.nodes[size_t(g.inputs[i])].shape);
        measure::fillRandom(b.data.data(), b.data.size(), 1 + i);
        inputs.push_back(std::move(b));
    }
    return inputs;
}

std::string shapeString(const std::vector<int64_t>& shape) {
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
    return s;
}

OutputCheck checkAgainstInterpreter(const graph::Graph& g, const std::vector<te::Buffer>& inputs,
                                    const std::vector<rpc::NamedTensor>& outputs, double tolerance,
                                    const LineSink& out) {
    const std::vector<te::Buffer> ref = graph::runGraph(g, inputsByName(g, inputs));
    OutputCheck c;
    c.ok = ref.size() == outputs.size();
    if (!c.ok)
        emit(out, format("check: the device returned %zu outputs, the interpreter %zu (FAILED)", outputs.size(),
                         ref.size()));
    for (size_t i = 0; i < std::min(ref.size(), outputs.size()); ++i) {
        double rel = 0;
        c.ok = checkTensor("output " + std::to_string(i), outputs[i], ref[i], tolerance, &rel, out) && c.ok;
        c.maxRelError = std::max(c.maxRelError, rel);
    }
    return c;
}

DeviceRun runAndCheckOnDevice(const graph::Graph& g, const ExecGraph& eg, const std::string& dir,
                              const std::vector<te::Buffer>& inputs, RemoteRunOptions ro, bool check,
                              double tolerance, const LineSink& out) {
    std::vector<rpc::NamedTensor> named;
    for (size_t i = 0; i < inputs.size() && i < eg.inputs.size(); ++i)
        named.push_back({eg.nodes[size_t(eg.inputs[i])].name, inputs[i].shape, inputs[i].data});
    ro.progress = out;
    const int logits = check ? logitsNode(g, eg) : -1;
    if (logits >= 0) ro.debugNodes = {logits};
    DeviceRun run;
    try {
        run.result = runOnDevice(dir, named, ro);
    } catch (const RemoteRunError& e) {
        run.error = e.what();
        return run;
    }
    run.ran = true;
    const RemoteRunResult& r = run.result;
    emit(out, format("Ran on %s (%s): %d kernel thread(s); uploaded %.2f MB in %.2f s; loaded in %.3f s, first run "
                     "%.3f ms",
                     r.server.c_str(), r.serverKey.c_str(), r.deviceThreads, double(r.uploadBytes) / 1e6,
                     r.uploadSeconds, r.loadSeconds, r.firstRunSeconds * 1e3));
    if (!check) return run;

    const OutputCheck c = checkAgainstInterpreter(g, inputs, r.outputs, tolerance, out);
    run.checked = c.ok;
    run.maxRelError = c.maxRelError;
    if (logits >= 0) {
        graph::Graph beforeSoftmax = g;
        beforeSoftmax.setOutputs({g.node(g.outputs()[0]).inputs.at(0)});
        const std::vector<te::Buffer> refLogits = graph::runGraph(beforeSoftmax.pruned(), inputsByName(g, inputs));
        double rel = 0;
        run.checked =
            checkTensor("the final softmax's input", r.debugOutputs.at(0), refLogits.at(0), tolerance, &rel, out) &&
            run.checked;
        run.maxRelError = std::max(run.maxRelError, rel);
    }
    return run;
}

std::string deviceExecutionSummary(const RemoteRunResult& r) {
    return "Execution time on " + r.server + " (" + r.serverKey + "):\n" + r.bench.summary();
}

DeviceRun runGpuNetworkOnDevice(const graph::Graph& g, const CompiledModule& mod, const std::vector<te::Buffer>& inputs,
                                const RemoteRunOptions& ro, bool check, double tolerance, const LineSink& out) {
    auto say = [&](const std::string& line) {
        if (out) out(line);
    };
    DeviceRun run;
    const codegen::GpuModule* gm = mod.gpuModule();
    TB_USER_CHECK(gm) << "runGpuNetworkOnDevice needs a network compiled for a GPU target";
    const ExecGraph& eg = mod.graph();
    TB_USER_CHECK(inputs.size() == eg.inputs.size())
        << "the network has " << eg.inputs.size() << " inputs, got " << inputs.size();
    auto spec = std::make_shared<measure::CheckSpec>();
    spec->inputs.resize(size_t(gm->numArgs));
    spec->expected.resize(size_t(gm->numArgs));
    std::vector<te::Buffer> reference;
    if (check) {
        std::map<std::string, te::Buffer> named;
        for (size_t i = 0; i < inputs.size(); ++i) named[g.node(g.inputs()[i]).name] = inputs[i];
        reference = graph::runGraph(g, named);
    }
    double atol = 0;
    const std::vector<int>& argNodes = mod.gpuArgumentNodes();
    for (size_t b = 0; b < argNodes.size(); ++b) {
        const ExecNode& n = eg.nodes[size_t(argNodes[b])];
        if (n.kind == ExecNode::Kind::Param) {
            spec->inputs[b] = mod.params().at(n.name).data;
            continue;
        }
        for (size_t i = 0; i < eg.inputs.size(); ++i)
            if (eg.inputs[i] == argNodes[b]) spec->inputs[b] = inputs[i].data;
        for (size_t o = 0; check && o < eg.outputs.size(); ++o) {
            if (eg.outputs[o] != argNodes[b]) continue;
            spec->expected[b] = reference.at(o).data;
            for (float v : spec->expected[b]) atol = std::max(atol, double(std::fabs(v)) * tolerance);
        }
    }
    spec->rtol = tolerance;
    spec->atol = atol;

    measure::RpcRunnerOptions o;
    o.trackerHost = ro.trackerHost;
    o.trackerPort = ro.trackerPort;
    o.key = ro.key;
    o.token = ro.token;
    o.priority = ro.priority;
    o.nParallel = 1;
    o.timeoutS = ro.timeoutS;
    o.number = ro.number;
    o.repeat = ro.repeat;
    o.minRepeatMs = ro.minRepeatMs;
    o.requestTimeoutS = ro.requestTimeoutS;
    o.trackerRetryTimeoutS = ro.trackerRetryTimeoutS;
    o.ioTimeoutS = ro.ioTimeoutS;
    o.target = codegen::Target::parse(mod.report().target);
    o.onEvent = [&](const measure::RpcRunnerEvent& e) {
        if (!e.server.empty() && run.result.server.empty()) {
            run.result.server = e.server;
            run.result.serverKey = e.serverKey;
        }
    };
    say("Request a device of key '" + ro.key + "' (" + codegen::gpuLanguageName(gm->language) + ") from " +
        ro.trackerHost + ":" + std::to_string(ro.trackerPort) + " and run the network (" +
        std::to_string(gm->launches.size()) + " kernel launches) there...");
    std::unique_ptr<measure::ProgramRunner> runner = measure::makeRpcRunner(o);
    measure::MeasureInput in;
    in.gpuModule = std::make_shared<codegen::GpuModule>(*gm);
    in.check = spec;
    in.workloadKey = "network";
    measure::BuildResult br;
    br.gpuModule = in.gpuModule;
    const std::vector<measure::MeasureResult> res = runner->run({in}, {br});
    const measure::MeasureResult& r = res.at(0);
    if (r.errorNo == measure::MeasureErrorNo::WrongAnswer) {
        run.ran = true;
        run.checked = false;
        say("check against the host interpreter on the device: FAILED (" + r.errorMsg + ")");
        return run;
    }
    if (r.errorNo != measure::MeasureErrorNo::NoError) {
        run.error = std::string(measure::errorName(r.errorNo)) + ": " + r.errorMsg;
        say("the device failed: " + run.error);
        return run;
    }
    run.ran = true;
    if (check) {
        char buf[200];
        std::snprintf(buf, sizeof(buf),
                      "check of %zu output(s) against the host interpreter on the device: ok (|got - want| <= %g x "
                      "(max|want| + |want|))",
                      eg.outputs.size(), tolerance);
        say(buf);
    }
    run.result.bench = BenchmarkResult::fromResults(r.costs);
    return run;
}

}  // namespace tb::runtime
