// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/target.h"

#include <algorithm>
#include <mutex>
#include <sstream>

#include "engine/codegen/llvm_headers.h"
#include "engine/codegen/llvm_init.h"
#include "engine/support/error.h"

namespace tb::codegen {
namespace {

std::vector<std::string> splitComma(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream is(s);
    while (std::getline(is, cur, ','))
        if (!cur.empty()) out.push_back(cur);
    return out;
}

int parseInt(const std::string& text, const std::string& key, const std::string& v) {
    size_t pos = 0;
    int r = 0;
    try {
        r = std::stoi(v, &pos);
    } catch (...) {
        pos = std::string::npos;
    }
    TB_USER_CHECK(pos == v.size() && r >= 0) << "target '" << text << "': -" << key << " needs a non-negative integer, got '" << v << "'";
    return r;
}

std::vector<std::string> hostFeatures() {
    llvm::StringMap<bool> feats;
    std::vector<std::string> out;
    if (llvm::sys::getHostCPUFeatures(feats)) {
        for (auto& kv : feats)
            if (kv.getValue()) out.push_back("+" + kv.getKey().str());
        std::sort(out.begin(), out.end());
    }
    return out;
}

std::string archOf(const std::string& triple) { return llvm::Triple(triple).getArchName().str(); }

// The host CPU as LLVM names it. LLVM answers "generic" for an x86 CPU newer than it knows (LLVM 16
// on AMD Zen 5, family 0x1A). That name is written into every record and every target string
// ("llvm -keys=cpu -mcpu=generic"), and parsed again (compile, replay) it means baseline x86-64:
// SSE2 code, 3.8x slower than AVX-512 on mobilenet here. So take instead the newest CPU LLVM knows
// whose instruction set the host has: its name carries its ISA and its scheduling model through
// every re-parse. System features a VM or the OS may mask (protection keys, monitor/wait,
// cache-control, TSX, SGX, ...) never appear in generated kernels and do not disqualify a CPU.
std::string hostCpuName(const llvm::Target& lt, const std::string& triple) {
    const std::string name = llvm::sys::getHostCPUName().str();
    if (name != "generic" || !llvm::Triple(triple).isX86()) return name;
    llvm::StringMap<bool> host;
    if (!llvm::sys::getHostCPUFeatures(host)) return name;
    static const char* const kSystemFeatures[] = {
        "pku", "mwaitx", "monitorx", "wbnoinvd", "rdpru", "clzero", "sgx", "pconfig", "waitpkg", "shstk",
        "ptwrite", "uintr", "enqcmd", "serialize", "tsxldtrk", "cldemote", "movdiri", "movdir64b",
        "invpcid", "rtm", "hreset", "clwb", "clflushopt", "rdpid", "rdseed", "rdrnd", "prfchw", "kl",
        "widekl", "lwp", "xsave", "xsaveopt", "xsavec", "xsaves", "fsgsbase", "sahf"};
    // Newest first, per vendor family; x86-64-v4/v3/v2 are LLVM's ISA levels without a CPU model.
    static const char* const kCandidates[] = {"znver4", "sapphirerapids", "icelake-server", "skylake-avx512",
                                              "x86-64-v4", "znver3", "alderlake", "znver2", "skylake",
                                              "znver1", "haswell", "x86-64-v3", "x86-64-v2"};
    for (const char* cpu : kCandidates) {
        std::unique_ptr<llvm::MCSubtargetInfo> sti(lt.createMCSubtargetInfo(triple, cpu, ""));
        if (!sti || !sti->isCPUStringValid(cpu)) continue;
        bool fits = true;
        for (const auto& kv : host) {
            if (kv.getValue()) continue;
            const std::string f = kv.getKey().str();
            if (std::find(std::begin(kSystemFeatures), std::end(kSystemFeatures), f) != std::end(kSystemFeatures)) continue;
            if (sti->checkFeatures("+" + f)) {
                fits = false;
                break;
            }
        }
        if (fits) return cpu;
    }
    return name;
}

}  // namespace

Target Target::parse(const std::string& text) {
    initializeLlvm();
    std::istringstream is(text);
    std::vector<std::string> tokens;
    for (std::string tok; is >> tok;) tokens.push_back(tok);
    TB_USER_CHECK(!tokens.empty()) << "empty target string: expected e.g. 'llvm -mcpu=znver4'";
    Target t;
    t.kind = tokens[0];
    TB_USER_CHECK(t.kind == "llvm") << "target '" << text << "': unsupported target kind '" << t.kind
                                    << "' (supported: llvm)";
    t.keys.clear();
    bool haveMattr = false;
    for (size_t i = 1; i < tokens.size(); ++i) {
        const std::string& tok = tokens[i];
        TB_USER_CHECK(tok.size() > 1 && tok[0] == '-') << "target '" << text << "': expected an option '-key=value', got '" << tok << "'";
        const size_t eq = tok.find('=');
        TB_USER_CHECK(eq != std::string::npos) << "target '" << text << "': option '" << tok << "' has no '=value'";
        const std::string key = tok.substr(1, eq - 1), value = tok.substr(eq + 1);
        TB_USER_CHECK(!value.empty()) << "target '" << text << "': option -" << key << " has an empty value";
        if (key == "mtriple") {
            t.mtriple = value;
        } else if (key == "mcpu") {
            t.mcpu = value;
        } else if (key == "mattr") {
            haveMattr = true;
            for (auto& f : splitComma(value)) {
                TB_USER_CHECK(f[0] == '+' || f[0] == '-') << "target '" << text << "': -mattr entry '" << f
                                                          << "' must start with '+' or '-'";
                t.mattr.push_back(f);
            }
        } else if (key == "keys") {
            t.keys = splitComma(value);
        } else if (key == "num-cores") {
            t.numCores = parseInt(text, key, value);
        } else if (key == "opt-level") {
            t.optLevel = parseInt(text, key, value);
            TB_USER_CHECK(t.optLevel <= 3) << "target '" << text << "': -opt-level must be 0..3";
        } else if (key == "model") {
            t.model = value;
        } else if (key == "mabi" || key == "device") {
            // Accepted for compatibility with TVM strings; no effect on CPU code.
        } else {
            TB_USER_ERROR() << "target '" << text << "': unknown option -" << key
                            << " (known: -mtriple -mcpu -mattr -keys -num-cores -opt-level -model -mabi -device)";
        }
    }
    const std::string hostTriple = llvm::sys::getProcessTriple();
    if (t.mtriple.empty()) t.mtriple = hostTriple;
    std::string err;
    const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.mtriple, err);
    TB_USER_CHECK(lt) << "target '" << text << "': LLVM does not know the triple '" << t.mtriple << "' (" << err << ")";
    const bool host = archOf(t.mtriple) == archOf(hostTriple);
    if (t.mcpu.empty()) {
        t.mcpu = host ? hostCpuName(*lt, t.mtriple) : "generic";
        if (host && !haveMattr) t.mattr = hostFeatures();
    }
    {
        std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(t.mtriple, "", ""));
        TB_USER_CHECK(t.mcpu == "generic" || (sti && sti->isCPUStringValid(t.mcpu)))
            << "target '" << text << "': LLVM does not know the CPU '" << t.mcpu << "' for " << t.mtriple;
    }
    if (t.keys.empty()) t.keys = host || llvm::Triple(t.mtriple).isX86() ? std::vector<std::string>{"cpu"}
                                                                         : std::vector<std::string>{"arm_cpu", "cpu"};
    return t;
}

Target Target::host() { return parse("llvm"); }

std::string Target::str() const {
    std::ostringstream os;
    os << kind;
    if (!keys.empty()) {
        os << " -keys=";
        for (size_t i = 0; i < keys.size(); ++i) os << (i ? "," : "") << keys[i];
    }
    if (!mattr.empty()) os << " -mattr=" << featureString();
    if (!mcpu.empty()) os << " -mcpu=" << mcpu;
    if (!model.empty()) os << " -model=" << model;
    if (!mtriple.empty()) os << " -mtriple=" << mtriple;
    if (numCores > 0) os << " -num-cores=" << numCores;
    if (optLevel != 3) os << " -opt-level=" << optLevel;
    return os.str();
}

std::string Target::featureString() const {
    std::string s;
    for (size_t i = 0; i < mattr.size(); ++i) s += (i ? "," : "") + mattr[i];
    return s;
}

bool Target::runsOnHost() const {
    initializeLlvm();
    return archOf(mtriple) == archOf(llvm::sys::getProcessTriple());
}

bool Target::hasFeature(const std::string& name) const {
    // An explicit -mattr mention wins (the last one, as in LLVM's feature strings); otherwise the
    // CPU's default feature set decides.
    for (size_t i = mattr.size(); i-- > 0;)
        if (mattr[i].substr(1) == name) return mattr[i][0] == '+';
    initializeLlvm();
    std::string err;
    const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(mtriple, err);
    if (!lt) return false;
    std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(mtriple, mcpu, featureString()));
    return sti && sti->checkFeatures("+" + name);
}

int Target::vectorBits() const {
    if (!llvm::Triple(mtriple).isX86()) return 128;  // NEON and the other 128-bit SIMD ISAs
    if (hasFeature("avx512f")) return 512;
    if (hasFeature("avx2") || hasFeature("avx")) return 256;
    return 128;
}

}  // namespace tb::codegen
