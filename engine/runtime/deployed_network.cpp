// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/deployed_network.h"

#include <dlfcn.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "engine/runtime/graph_json.h"
#include "engine/support/error.h"

namespace tb::runtime {

std::string readFileBytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    TB_USER_CHECK(f.good()) << "cannot read '" << path << "'";
    std::ostringstream ss;
    ss << f.rdbuf();
    TB_USER_CHECK(!f.bad()) << "cannot read '" << path << "'";
    return ss.str();
}

std::unique_ptr<DeployedNetwork> DeployedNetwork::load(const std::string& libPath, const std::string& graphJson,
                                                       const std::string& paramsBytes, const std::string& graphSource,
                                                       const std::string& paramsSource) {
    const auto params = loadParams(paramsBytes, paramsSource);
    std::vector<std::string> paramNames;
    for (const auto& [name, _] : params) paramNames.push_back(name);
    ExecGraph g = graphFromJson(graphJson, paramNames, graphSource);

    std::unique_ptr<DeployedNetwork> net(new DeployedNetwork());
    net->m_lib = dlopen(libPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!net->m_lib) {
        const char* why = dlerror();
        TB_USER_ERROR() << "cannot load '" << libPath << "': " << (why ? why : "dlopen failed");
    }
    std::vector<KernelFn> funcs(g.nodes.size(), nullptr);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (g.nodes[i].kind != ExecNode::Kind::Op) continue;
        void* sym = dlsym(net->m_lib, g.nodes[i].func.c_str());
        TB_USER_CHECK(sym) << libPath << " has no kernel '" << g.nodes[i].func << "'";
        funcs[i] = reinterpret_cast<KernelFn>(sym);
    }
    net->m_runtime = std::make_unique<GraphRuntime>(std::move(g), std::move(funcs));
    GraphRuntime& rt = *net->m_runtime;
    for (size_t i = 0; i < rt.graph().nodes.size(); ++i) {
        const ExecNode& n = rt.graph().nodes[i];
        if (n.kind != ExecNode::Kind::Param) continue;
        const auto it = params.find(n.name);
        TB_USER_CHECK(it != params.end()) << paramsSource << " has no parameter '" << n.name << "'";
        rt.setParam(int(i), it->second.data.data(), it->second.data.size());
    }
    return net;
}

std::unique_ptr<DeployedNetwork> DeployedNetwork::loadDirectory(const std::string& dir) {
    const std::string graph = dir + "/deploy_graph.json", params = dir + "/deploy_param.params";
    return load(dir + "/deploy_lib.so", readFileBytes(graph), readFileBytes(params), graph, params);
}

DeployedNetwork::~DeployedNetwork() {
    m_runtime.reset();
    if (m_lib) dlclose(m_lib);
}

}  // namespace tb::runtime
