// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file server_args.h
/// \brief The command line every light device server shares (tools/arm's AArch64 server,
/// tools/gpu's GPU server): `--name value` or `--name=value` arguments, and the options that
/// configure engine/rpc's RpcServer (--tracker, --key, --host, --port, --port-end, --custom-addr,
/// --token, --work-dir), read the same way by each. Header-only: the servers are built without the
/// engine's libraries.

#include <cstdlib>
#include <string>
#include <tuple>

#include "engine/rpc/rpc_server.h"
#include "engine/support/error.h"
#include "engine/support/process.h"

namespace tb::tools {

/// Walks argv: `while (r.next()) { if (r.is("--seed")) seed = r.value(); ... }`.
class ArgReader {
public:
    ArgReader(int argc, char** argv) : m_argc(argc), m_argv(argv) {}
    /// Moves to the next argument; false at the end.
    bool next() {
        if (m_i >= m_argc) return false;
        m_arg = m_argv[m_i++];
        return true;
    }
    const std::string& arg() const { return m_arg; }
    /// The current argument is `name` or `name=...`.
    bool is(const char* name) const { return m_arg == name || m_arg.rfind(std::string(name) + "=", 0) == 0; }
    /// The option's value: after '=', else the next argument (UserError "<arg> needs a value").
    std::string value() {
        const size_t eq = m_arg.find('=');
        if (eq != std::string::npos) return m_arg.substr(eq + 1);
        TB_USER_CHECK(m_i < m_argc) << m_arg << " needs a value";
        return m_argv[m_i++];
    }

private:
    int m_argc;
    char** m_argv;
    int m_i = 1;
    std::string m_arg;
};

/// Applies the current argument to `o` when it is one of the RpcServer options above (ports and
/// HOST:PORT checked: UserError); false when it is none of them.
inline bool applyServerOption(ArgReader& r, rpc::RpcServerOptions& o) {
    if (r.is("--tracker")) {
        std::tie(o.trackerHost, o.trackerPort) = parseHostPort(r.value(), "--tracker");
    } else if (r.is("--key")) {
        o.key = r.value();
    } else if (r.is("--host")) {
        o.host = r.value();
    } else if (r.is("--port-end")) {
        o.portEnd = parsePort(r.value(), "--port-end");
    } else if (r.is("--port")) {
        o.port = parsePort(r.value(), "--port");
    } else if (r.is("--custom-addr")) {
        o.customAddr = r.value();
    } else if (r.is("--token")) {
        o.token = r.value();
    } else if (r.is("--work-dir")) {
        o.workDir = r.value();
    } else {
        return false;
    }
    return true;
}

}  // namespace tb::tools
