// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/packed_ops.h"

#include <algorithm>
#include <optional>
#include <random>
#include <sstream>

#include "engine/support/error.h"

namespace tb::vta {

namespace {

// --- micro-op kernels ---------------------------------------------------------------------------

// One loop around a micro-op: extent and the index steps of the accumulator (dst), input or ALU
// source (src) and weight (wgt) indices.
struct Loop {
    int64_t extent = 1;
    int64_t dst = 0, src = 0, wgt = 0;
};

std::vector<Loop> dropUnitLoops(const std::vector<Loop>& loops) {
    std::vector<Loop> out;
    for (const Loop& l : loops)
        if (l.extent > 1) out.push_back(l);
    return out;
}

// TVM's FoldUopLoop on a tensorized GEMM nest (outermost loop first): loops of extent 1 are gone
// after simplification, the two outermost remaining loops become the GEMM's iter_out / iter_in,
// the others are unrolled into micro-ops in loop order.
UopKernel gemmKernel(const std::vector<Loop>& nest, int64_t dst, int64_t src, int64_t wgt, bool reset) {
    const std::vector<Loop> loops = dropUnitLoops(nest);
    const size_t folded = std::min<size_t>(2, loops.size());
    UopKernel k;
    for (size_t i = 0; i < folded; ++i)
        k.loopBegin(uint32_t(loops[i].extent), uint32_t(loops[i].dst), uint32_t(loops[i].src), uint32_t(loops[i].wgt));
    const std::vector<Loop> unrolled(loops.begin() + long(folded), loops.end());
    std::vector<int64_t> idx(unrolled.size(), 0);
    for (;;) {
        int64_t d = dst, s = src, w = wgt;
        for (size_t i = 0; i < unrolled.size(); ++i) {
            d += idx[i] * unrolled[i].dst;
            s += idx[i] * unrolled[i].src;
            w += idx[i] * unrolled[i].wgt;
        }
        k.pushGemm(uint32_t(d), uint32_t(s), uint32_t(w), reset);
        size_t i = unrolled.size();
        while (i > 0 && ++idx[i - 1] == unrolled[i - 1].extent) idx[--i] = 0;
        if (i == 0) break;
    }
    for (size_t i = 0; i < folded; ++i) k.loopEnd();
    return k;
}

// TVM's InjectALUIntrin: adjacent loops merge when the outer steps equal the inner extent times
// the inner steps (_flatten_loop); every remaining loop becomes a micro-op loop around a single
// micro-op, at most two (the ALU instruction's iter_out / iter_in).
UopKernel aluKernel(const std::vector<Loop>& nest, int64_t dst, int64_t src, AluOpcode op, bool useImm, int32_t imm) {
    std::vector<Loop> flat;
    for (const Loop& l : dropUnitLoops(nest)) {
        if (!flat.empty()) {
            Loop& inner = flat.back();
            // `flat` holds outer loops first; merge `l` (inner) into the previous one when contiguous.
            if (inner.dst == l.extent * l.dst && inner.src == l.extent * l.src) {
                inner = {inner.extent * l.extent, l.dst, l.src, 0};
                continue;
            }
        }
        flat.push_back(l);
    }
    TB_USER_CHECK(flat.size() <= 2) << "an ALU operation over " << flat.size()
                                    << " non-contiguous loop levels needs more than the two micro-op loops of an ALU instruction";
    UopKernel k;
    for (const Loop& l : flat) k.loopBegin(uint32_t(l.extent), uint32_t(l.dst), uint32_t(l.src), 0);
    k.pushAlu(op, uint32_t(dst), uint32_t(src), useImm, imm);
    for (size_t i = 0; i < flat.size(); ++i) k.loopEnd();
    return k;
}

// --- 2-D DMA patterns ---------------------------------------------------------------------------

struct Dma2d {
    uint32_t ySize = 1, xSize = 1, xStride = 1;
};

// The one 2-D DMA moving a tile of a row-major tensor (dims outermost first, as (tile extent,
// tensor extent) in buffer elements), as TVM's InjectDMAIntrin folds it: unit dims vanish, a dim
// merges into the next outer one when the inner dims are whole (contiguous), and what is left must
// be at most rows x columns. nullopt when it is not.
std::optional<Dma2d> fold2d(const std::vector<std::pair<int64_t, int64_t>>& dims) {
    struct Dim {
        int64_t extent, stride;
    };
    std::vector<int64_t> strides(dims.size());
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= dims[i].second;
    }
    std::vector<Dim> kept;  // innermost first
    for (size_t i = dims.size(); i-- > 0;) {
        if (dims[i].first == 1) continue;
        if (!kept.empty() && kept.back().extent * kept.back().stride == strides[i]) {
            kept.back().extent *= dims[i].first;
            continue;
        }
        kept.push_back({dims[i].first, strides[i]});
    }
    if (!kept.empty() && kept.front().stride != 1) kept.insert(kept.begin(), Dim{1, 1});
    if (kept.size() > 2) return std::nullopt;
    Dma2d d;
    if (!kept.empty()) d.xSize = uint32_t(kept[0].extent), d.xStride = uint32_t(kept[0].extent);
    if (kept.size() == 2) d.ySize = uint32_t(kept[1].extent), d.xStride = uint32_t(kept[1].stride);
    return d;
}

// --- epilogue -----------------------------------------------------------------------------------

// `chan`: the values of the per-channel constants at x's channel (AddChannel/MulChannel only).
int32_t applyEpilogueOp(int32_t x, const EpilogueOp& op, int32_t bias, const int32_t* chan) {
    switch (op.kind) {
    case EpilogueKind::ShrImm: return x >> op.imm;
    case EpilogueKind::ShlImm: return int32_t(uint32_t(x) << op.imm);
    case EpilogueKind::AddImm: return int32_t(uint32_t(x) + uint32_t(op.imm));
    case EpilogueKind::MulImm: return int32_t(uint32_t(x) * uint32_t(op.imm));
    case EpilogueKind::MinImm: return std::min(x, op.imm);
    case EpilogueKind::MaxImm: return std::max(x, op.imm);
    case EpilogueKind::AddBias: return int32_t(uint32_t(x) + uint32_t(bias));
    case EpilogueKind::AddChannel: return int32_t(uint32_t(x) + uint32_t(chan[op.imm]));
    case EpilogueKind::MulChannel: return int32_t(uint32_t(x) * uint32_t(chan[op.imm]));
    }
    return x;
}

int32_t applyEpilogue(int32_t x, const std::vector<EpilogueOp>& epilogue, int32_t bias, const int32_t* chan = nullptr) {
    for (const EpilogueOp& op : epilogue) x = applyEpilogueOp(x, op, bias, chan);
    return x;
}

bool isChannelOp(EpilogueKind kind) { return kind == EpilogueKind::AddChannel || kind == EpilogueKind::MulChannel; }

// The number of per-channel constants the epilogue reads (largest AddChannel/MulChannel index + 1).
int channelConstants(const std::vector<EpilogueOp>& epilogue) {
    int n = 0;
    for (const EpilogueOp& op : epilogue)
        if (isChannelOp(op.kind)) n = std::max(n, op.imm + 1);
    return n;
}

bool hasBias(const std::vector<EpilogueOp>& epilogue) {
    return std::any_of(epilogue.begin(), epilogue.end(), [](const EpilogueOp& op) { return op.kind == EpilogueKind::AddBias; });
}

void checkEpilogue(const std::vector<EpilogueOp>& epilogue, bool biasAllowed, const std::string& what,
                   bool channelAllowed = false) {
    int biases = 0;
    for (const EpilogueOp& op : epilogue) {
        if (isChannelOp(op.kind)) {
            TB_USER_CHECK(channelAllowed) << what << ": a per-channel constant add/multiply is only supported in "
                                          << "add.vta/multiply.vta's epilogue";
            TB_USER_CHECK(op.imm >= 0 && op.imm < 8) << what << ": per-channel constant index " << op.imm
                                                     << " is outside [0, 8)";
            continue;
        }
        if (op.kind == EpilogueKind::AddBias) {
            TB_USER_CHECK(biasAllowed) << what << ": a bias add is only supported in conv2d_packed's epilogue";
            ++biases;
            continue;
        }
        TB_USER_CHECK(op.imm >= -32768 && op.imm <= 32767)
            << what << ": epilogue immediate " << op.imm << " does not fit the ALU's signed 16-bit field";
        if (op.kind == EpilogueKind::ShrImm || op.kind == EpilogueKind::ShlImm) {
            TB_USER_CHECK(op.imm >= 0 && op.imm <= 31) << what << ": shift by " << op.imm << " is outside [0, 31]";
        }
    }
    TB_USER_CHECK(biases <= 1) << what << ": the epilogue adds the bias " << biases << " times (at most once)";
}

AluOpcode aluOpcodeOf(EpilogueKind kind) {
    switch (kind) {
    case EpilogueKind::ShrImm:
    case EpilogueKind::ShlImm: return AluOpcode::Shr;
    case EpilogueKind::AddImm:
    case EpilogueKind::AddChannel:
    case EpilogueKind::AddBias: return AluOpcode::Add;
    case EpilogueKind::MulImm:
    case EpilogueKind::MulChannel: return AluOpcode::Mul;
    case EpilogueKind::MinImm: return AluOpcode::Min;
    case EpilogueKind::MaxImm: return AluOpcode::Max;
    }
    return AluOpcode::Add;
}

// Source steps of a per-channel vector read over a tile of `tileLoops` (outermost loop = channel
// blocks): 1 over the channel blocks, 0 over the rest (the broadcast).
std::vector<Loop> broadcastLoops(std::vector<Loop> loops) {
    for (size_t i = 0; i < loops.size(); ++i) loops[i].src = i == 0 ? 1 : 0;
    return loops;
}

// The epilogue's ALU kernels over an accumulator tile of `tileLoops` (outermost first, dst steps
// set) at `accBase`; the bias (one vector per entry of the outermost loop) sits at `biasBase`, the
// k-th per-channel constant at `channelBase` + k * (outermost extent).
std::vector<UopKernel> epilogueKernels(const std::vector<EpilogueOp>& epilogue, const std::vector<Loop>& tileLoops,
                                       int64_t accBase, int64_t biasBase, int64_t channelBase = 0) {
    std::vector<UopKernel> kernels;
    for (const EpilogueOp& op : epilogue) {
        std::vector<Loop> loops = tileLoops;
        int64_t src = accBase;
        const bool fromSram = op.kind == EpilogueKind::AddBias || isChannelOp(op.kind);
        if (op.kind == EpilogueKind::AddBias) {
            loops = broadcastLoops(loops);
            src = biasBase;
        } else if (isChannelOp(op.kind)) {
            loops = broadcastLoops(loops);
            src = channelBase + op.imm * tileLoops.front().extent;
        } else {
            for (Loop& l : loops) l.src = l.dst;
        }
        const int32_t imm = fromSram ? 0 : op.kind == EpilogueKind::ShlImm ? -op.imm : op.imm;
        kernels.push_back(aluKernel(loops, accBase, src, aluOpcodeOf(op.kind), !fromSram, imm));
    }
    return kernels;
}

void checkInt8Core(const VtaConfig& cfg, const char* what) {
    TB_USER_CHECK(cfg.inpWidth() == 8 && cfg.wgtWidth() == 8 && cfg.accWidth() == 32)
        << "VTA " << what << ": the packed operators need int8 inputs and weights and int32 accumulators "
        << "(LOG_INP_WIDTH 3, LOG_WGT_WIDTH 3, LOG_ACC_WIDTH 5), as TVM's strategy asserts";
}

void checkSize(size_t got, int64_t want, const char* op, const char* tensor) {
    TB_USER_CHECK(int64_t(got) == want) << "VTA " << op << ": " << tensor << " has " << got << " values, the packed layout needs "
                                        << want;
}

// Token bookkeeping shared by the lowerings: `threads` copies of each SRAM tile, each reused
// round-robin (see the file comment of packed_ops.h).
class Tokens {
public:
    Tokens(CommandBuilder& cb, int threads) : m_cb(cb), m_threads(threads) {}
    // Before the loads of a reduction step: wait for the GEMM that last read this copy.
    void beforeLoad() {
        if (m_loadSteps++ >= m_threads) m_cb.depPop(kComputeStage, kLoadStage);
    }
    // Between the loads and the GEMM of a step.
    void loadToGemm() {
        m_cb.depPush(kLoadStage, kComputeStage);
        m_cb.depPop(kLoadStage, kComputeStage);
    }
    void afterGemm() { m_cb.depPush(kComputeStage, kLoadStage); }
    // Before the first write of a tile's accumulators: wait for the store that last read them.
    void beforeTile() {
        if (m_tiles++ >= m_threads) m_cb.depPop(kStoreStage, kComputeStage);
    }
    void afterEpilogue() { m_cb.depPush(kComputeStage, kStoreStage); }
    void beforeStore() { m_cb.depPop(kComputeStage, kStoreStage); }
    void afterStore() { m_cb.depPush(kStoreStage, kComputeStage); }
    // The tokens still in flight, popped before the stream ends.
    void drain() {
        for (int i = 0; i < std::min(m_loadSteps, m_threads); ++i) m_cb.depPop(kComputeStage, kLoadStage);
        for (int i = 0; i < std::min(m_tiles, m_threads); ++i) m_cb.depPop(kStoreStage, kComputeStage);
    }

private:
    CommandBuilder& m_cb;
    int m_threads;
    int m_loadSteps = 0;
    int m_tiles = 0;
};

// A split factor (tile) must divide its axis: the "factors" policy has no tails.
void checkDivides(const std::string& what, const char* knob, int64_t f, int64_t n) {
    TB_USER_CHECK(f > 0 && n % f == 0) << what << ": " << knob << " " << f << " does not divide the axis of " << n;
}

// Checks the SRAM use against the buffers, and the kernels against the micro-op buffer.
void checkSram(const VtaConfig& cfg, const SramUse& use, const std::string& what, const std::string& detail) {
    auto check = [&](const char* buffer, int64_t need, int64_t depth, int64_t bytes) {
        TB_USER_CHECK(need <= depth) << what << ": the " << buffer << " tiles need " << need << " elements (" << detail
                                     << ") but the " << buffer << " buffer holds " << depth << " (" << bytes << " bytes)";
    };
    check("inp", use.inp, cfg.inpBuffDepth(), cfg.inpBuffBytes());
    check("wgt", use.wgt, cfg.wgtBuffDepth(), cfg.wgtBuffBytes());
    check("acc", use.acc, cfg.accBuffDepth(), cfg.accBuffBytes());
}

int64_t checkKernels(const VtaConfig& cfg, const std::vector<UopKernel>& kernels, const std::string& what) {
    int64_t most = 0;
    for (const UopKernel& k : kernels) {
        most = std::max<int64_t>(most, int64_t(k.uops().size()));
        TB_USER_CHECK(int64_t(k.uops().size()) <= cfg.uopBuffDepth())
            << what << ": a micro-op kernel of " << k.uops().size() << " micro-ops does not fit the uop buffer of "
            << cfg.uopBuffDepth();
    }
    return most;
}

// Runs `build` (which throws tb::UserError for a bad config) and prefixes its message.
template <class F>
auto withContext(const std::string& what, F&& build) {
    try {
        return build();
    } catch (const UserError& e) {
        const std::string msg = e.what();
        if (msg.rfind(what, 0) == 0) throw;
        TB_USER_ERROR() << what << ": " << msg;
    }
}

void pushKernels(CommandBuilder& cb, const std::vector<UopKernel>& kernels) {
    for (const UopKernel& k : kernels) {
        if (k.mode() == UopKernel::Mode::Gemm)
            cb.pushGemmOp(k);
        else
            cb.pushAluOp(k);
    }
}

// --- conv2d_packed ------------------------------------------------------------------------------

struct ConvPlan {
    Conv2dWorkload wl;
    Conv2dSchedule s;
    std::vector<EpilogueOp> epilogue;
    int threads = 1;
    int64_t NB = 0, CI = 0, CO = 0, OH = 0, OW = 0;
    // Grouped (group_conv2d_packed): a group's input / output channel blocks (CI / CO when
    // groups == 1), the input channel blocks one output block further in a tile moves (CIg when
    // a group has one output block, else 0: a tile stays inside one group), and the channel
    // blocks of the input window (TVM's bound of c_o // COg * CIg + k_o over the tile).
    int64_t groups = 1, CIg = 0, COg = 0, chanStep = 0, inChans = 0;
    int64_t rowsT = 0, colsT = 0;            // input window per tile (with padding)
    int64_t inpTile = 0, wgtTile = 0, accTile = 0, accPerThread = 0;
    bool padded = false;
    Dma2d inpDma, wgtDma, outDma;            // inpDma only when not padded
    SramUse use;
    std::string what;

    std::vector<Loop> gemmLoops() const {
        const int64_t kh = wl.hkernel, kw = wl.wkernel;
        // TVM's order inside the tensorized stage: k_o.inner, x_j, d_j, d_i, x_co, x_i.
        return {{s.tileCi, 0, rowsT * colsT, kh * kw},
                {s.tileW, 1, wl.wstride, 0},
                {kw, 0, 1, 1},
                {kh, 0, colsT, kw},
                {s.tileCo, int64_t(s.tileH) * s.tileW, chanStep * rowsT * colsT, int64_t(s.tileCi) * kh * kw},
                {s.tileH, s.tileW, wl.hstride * colsT, 0}};
    }
    // The reduction's init nest keeps the spatial loops inside k_o: x_j, x_co, x_i.
    std::vector<Loop> resetLoops() const {
        return {{s.tileW, 1, 0, 0}, {s.tileCo, int64_t(s.tileH) * s.tileW, 0, 0}, {s.tileH, s.tileW, 0, 0}};
    }
    std::vector<Loop> tileLoops() const {
        return {{s.tileCo, int64_t(s.tileH) * s.tileW, 0, 0}, {s.tileH, s.tileW, 0, 0}, {s.tileW, 1, 0, 0}};
    }
    std::vector<UopKernel> resetKernels(int t) const { return {gemmKernel(resetLoops(), t * accPerThread, 0, 0, true)}; }
    UopKernel gemm(int t) const { return gemmKernel(gemmLoops(), t * accPerThread, t * inpTile, t * wgtTile, false); }
    std::vector<UopKernel> epilogueKernelsOf(int t) const {
        return epilogueKernels(epilogue, tileLoops(), t * accPerThread, t * accPerThread + accTile);
    }
};

// `groups` 1: conv2d_packed.vta (wl validated by the caller); more: group_conv2d_packed.vta.
ConvPlan planConv2d(const VtaConfig& cfg, const Conv2dWorkload& wl, const Conv2dSchedule& s,
                    const std::vector<EpilogueOp>& epilogue, int groups = 1, const std::string& wlStr = {}) {
    checkInt8Core(cfg, groups == 1 && wlStr.empty() ? "conv2d_packed" : "group_conv2d_packed");
    if (wlStr.empty()) wl.validate(cfg);
    ConvPlan p;
    p.wl = wl;
    p.s = s;
    p.epilogue = epilogue;
    p.what = wlStr.empty() ? "VTA conv2d_packed.vta config [" + s.str() + "] for " + wl.str()
                           : "VTA group_conv2d_packed.vta config [" + s.str() + "] for " + wlStr;
    checkEpilogue(epilogue, true, p.what);
    p.NB = wl.batch / cfg.batch();
    p.CI = wl.inFilter / cfg.blockIn();
    p.CO = wl.outFilter / cfg.blockOut();
    p.OH = wl.outHeight();
    p.OW = wl.outWidth();
    p.groups = groups;
    p.CIg = p.CI / groups;
    p.COg = p.CO / groups;
    p.chanStep = p.COg == 1 ? p.CIg : 0;
    auto divides = [&](const char* knob, int64_t f, int64_t n) { checkDivides(p.what, knob, f, n); };
    divides("tile_b", s.tileB, p.NB);
    divides("tile_h", s.tileH, p.OH);
    divides("tile_w", s.tileW, p.OW);
    divides("tile_ci", s.tileCi, p.CIg);
    divides("tile_co", s.tileCo, p.CO);
    TB_USER_CHECK(p.COg == 1 || p.COg % s.tileCo == 0)
        << p.what << ": an output-channel tile of tile_co=" << s.tileCo << " blocks spans groups of " << p.COg
        << " output blocks: its input channel block c_o // " << p.COg << " * " << p.CIg
        << " + k_o is not affine over the tile, so no micro-op loop or 2-D DMA expresses it";
    p.inChans = s.tileCi + (s.tileCo - 1) * p.chanStep;
    TB_USER_CHECK((s.ocNthread == 1 || s.ocNthread == 2) && (s.hNthread == 1 || s.hNthread == 2))
        << p.what << ": oc_nthread and h_nthread must be 1 or 2";
    TB_USER_CHECK((p.CO / s.tileCo) % s.ocNthread == 0)
        << p.what << ": oc_nthread " << s.ocNthread << " does not divide the " << p.CO / s.tileCo
        << " output-channel tiles (the virtual-thread split would leave a tail)";
    TB_USER_CHECK((p.OH / s.tileH) % s.hNthread == 0)
        << p.what << ": h_nthread " << s.hNthread << " does not divide the " << p.OH / s.tileH
        << " row tiles (the virtual-thread split would leave a tail)";
    p.threads = s.ocNthread * s.hNthread;
    p.rowsT = int64_t(s.tileH - 1) * wl.hstride + wl.hkernel;
    p.colsT = int64_t(s.tileW - 1) * wl.wstride + wl.wkernel;
    p.inpTile = p.inChans * p.rowsT * p.colsT;
    p.wgtTile = int64_t(s.tileCo) * s.tileCi * wl.hkernel * wl.wkernel;
    p.accTile = int64_t(s.tileCo) * s.tileH * s.tileW;
    p.accPerThread = p.accTile + (hasBias(epilogue) ? s.tileCo : 0);
    p.padded = wl.hpad > 0 || wl.wpad > 0;
    if (p.padded) {
        TB_USER_CHECK(p.inChans == 1) << p.what << ": a padded input window of "
                                      << (p.inChans == s.tileCi ? "tile_ci=" : "") << p.inChans
                                      << " channel blocks is not one 2-D DMA (a padded load moves rows x columns of one block)";
    } else {
        const auto d = fold2d({{p.inChans, p.CI}, {p.rowsT, wl.height}, {p.colsT, wl.width}});
        TB_USER_CHECK(d) << p.what << ": the input window of " << p.inChans << " channel blocks x " << p.rowsT << " rows x "
                         << p.colsT << " columns is not one 2-D DMA (its rows are neither whole nor single)";
        p.inpDma = *d;
    }
    p.wgtDma = *fold2d({{s.tileCo, p.CO}, {int64_t(s.tileCi) * wl.hkernel * wl.wkernel, p.CIg * wl.hkernel * wl.wkernel}});
    const auto out = fold2d({{s.tileCo, p.CO}, {s.tileH, p.OH}, {s.tileW, p.OW}});
    TB_USER_CHECK(out) << p.what << ": the output tile of " << s.tileCo << " channel blocks x " << s.tileH << " rows x "
                       << s.tileW << " columns is not one 2-D DMA (its rows are neither whole nor single)";
    p.outDma = *out;
    p.use.threads = p.threads;
    p.use.inp = p.threads * p.inpTile;
    p.use.wgt = p.threads * p.wgtTile;
    p.use.acc = p.threads * p.accPerThread;
    std::ostringstream detail;
    detail << p.threads << " virtual thread(s) x (" << p.inChans << "x" << p.rowsT << "x" << p.colsT << " input, "
           << s.tileCo << "x" << s.tileCi << "x" << wl.hkernel << "x" << wl.wkernel << " weight, " << p.accPerThread
           << " accumulator)";
    checkSram(cfg, p.use, p.what, detail.str());
    p.use.maxKernelUops = withContext(p.what, [&] {
        std::vector<UopKernel> all = p.resetKernels(p.threads - 1);
        all.push_back(p.gemm(p.threads - 1));
        for (UopKernel& k : p.epilogueKernelsOf(p.threads - 1)) all.push_back(std::move(k));
        return checkKernels(cfg, all, p.what);
    });
    return p;
}

void emitConv2d(CommandBuilder& cb, const ConvPlan& p, uint32_t dataAddr, uint32_t kernelAddr, uint32_t biasAddr,
                uint32_t outAddr) {
    const Conv2dWorkload& wl = p.wl;
    const Conv2dSchedule& s = p.s;
    const int T = p.threads;
    const int64_t H = wl.height, W = wl.width;
    Tokens tokens(cb, T);
    std::vector<std::vector<UopKernel>> resets, epilogues;
    std::vector<UopKernel> gemms;
    for (int t = 0; t < T; ++t) {
        resets.push_back(p.resetKernels(t));
        gemms.push_back(p.gemm(t));
        epilogues.push_back(p.epilogueKernelsOf(t));
    }
    const int64_t rowGroups = p.OH / (int64_t(s.tileH) * s.hNthread), coGroups = p.CO / (int64_t(s.tileCo) * s.ocNthread);
    const int64_t colTiles = p.OW / s.tileW;
    // Outer loop order after TVM's reorders: (bo, i0, co0, j0) without virtual threads; the
    // thread split moves the batch loop inward ((i0, bo, co0, j0) for h_nthread alone, else
    // (i0, co0, bo, j0)).
    std::vector<int64_t> extents;
    int posB, posI, posC;
    if (T == 1)
        posB = 0, posI = 1, posC = 2;
    else if (s.ocNthread == 1)
        posI = 0, posB = 1, posC = 2;
    else
        posI = 0, posC = 1, posB = 2;
    extents.resize(3);
    extents[size_t(posB)] = p.NB, extents[size_t(posI)] = rowGroups, extents[size_t(posC)] = coGroups;
    int64_t it[3];
    for (it[0] = 0; it[0] < extents[0]; ++it[0])
        for (it[1] = 0; it[1] < extents[1]; ++it[1])
            for (it[2] = 0; it[2] < extents[2]; ++it[2])
                for (int64_t jw = 0; jw < colTiles; ++jw) {
                    const int64_t bo = it[posB], ig = it[posI], cg = it[posC];
                    const int64_t ow0 = jw * s.tileW;
                    struct Tile {
                        int64_t co0, oh0;
                    };
                    std::vector<Tile> tiles;
                    for (int vo = 0; vo < s.ocNthread; ++vo)
                        for (int vh = 0; vh < s.hNthread; ++vh)
                            tiles.push_back({(cg * s.ocNthread + vo) * s.tileCo, (ig * s.hNthread + vh) * s.tileH});
                    for (int t = 0; t < T; ++t) {
                        tokens.beforeTile();
                        pushKernels(cb, resets[size_t(t)]);
                    }
                    for (int64_t ko = 0; ko < p.CIg / s.tileCi; ++ko) {
                        const int64_t ci0 = ko * s.tileCi;
                        for (int t = 0; t < T; ++t) {
                            const Tile& tile = tiles[size_t(t)];
                            const int64_t inCi0 = tile.co0 / p.COg * p.CIg + ci0;  // the window's first block
                            tokens.beforeLoad();
                            const uint32_t inpBase = uint32_t(t * p.inpTile);
                            const int64_t y0 = tile.oh0 * wl.hstride - wl.hpad, x0 = ow0 * wl.wstride - wl.wpad;
                            if (p.padded) {
                                const int64_t yb = std::max<int64_t>(0, y0), ye = std::min<int64_t>(H, y0 + p.rowsT);
                                const int64_t xb = std::max<int64_t>(0, x0), xe = std::min<int64_t>(W, x0 + p.colsT);
                                cb.loadBuffer2D(dataAddr, uint32_t(((bo * p.CI + inCi0) * H + yb) * W + xb), uint32_t(xe - xb),
                                                uint32_t(ye - yb), uint32_t(W), uint32_t(xb - x0), uint32_t(yb - y0),
                                                uint32_t(x0 + p.colsT - xe), uint32_t(y0 + p.rowsT - ye), inpBase, MemId::Inp);
                            } else {
                                cb.loadBuffer2D(dataAddr, uint32_t(((bo * p.CI + inCi0) * H + y0) * W + x0), p.inpDma.xSize,
                                                p.inpDma.ySize, p.inpDma.xStride, 0, 0, 0, 0, inpBase, MemId::Inp);
                            }
                            cb.loadBuffer2D(kernelAddr, uint32_t((tile.co0 * p.CIg + ci0) * wl.hkernel * wl.wkernel),
                                            p.wgtDma.xSize, p.wgtDma.ySize, p.wgtDma.xStride, 0, 0, 0, 0,
                                            uint32_t(t * p.wgtTile), MemId::Wgt);
                            tokens.loadToGemm();
                            cb.pushGemmOp(gemms[size_t(t)]);
                            tokens.afterGemm();
                        }
                    }
                    for (int t = 0; t < T; ++t) {
                        if (biasAddr != 0)
                            cb.loadBuffer2D(biasAddr, uint32_t(bo * p.CO + tiles[size_t(t)].co0), uint32_t(s.tileCo), 1,
                                            uint32_t(s.tileCo), 0, 0, 0, 0, uint32_t(t * p.accPerThread + p.accTile), MemId::Acc);
                        pushKernels(cb, epilogues[size_t(t)]);
                        tokens.afterEpilogue();
                    }
                    for (int t = 0; t < T; ++t) {
                        const Tile& tile = tiles[size_t(t)];
                        tokens.beforeStore();
                        cb.storeBuffer2D(uint32_t(t * p.accPerThread), MemId::Out, outAddr,
                                         uint32_t(((bo * p.CO + tile.co0) * p.OH + tile.oh0) * p.OW + ow0), p.outDma.xSize,
                                         p.outDma.ySize, p.outDma.xStride);
                        tokens.afterStore();
                    }
                }
    tokens.drain();
}

// --- dense_packed -------------------------------------------------------------------------------

struct DensePlan {
    DenseWorkload wl;
    DenseSchedule s;
    std::vector<EpilogueOp> epilogue;
    int threads = 1;
    int64_t NB = 0, CI = 0, CO = 0;
    int64_t inpTile = 0, wgtTile = 0, accTile = 0;
    SramUse use;
    std::string what;

    UopKernel reset(int t, int64_t row) const {
        return gemmKernel({{s.tileCo, 1, 0, 0}}, t * accTile + row * s.tileCo, 0, 0, true);
    }
    // The dense stage's loops inside k_o.outer: k_o.inner, x_co.
    UopKernel gemm(int t, int64_t row) const {
        return gemmKernel({{s.tileCi, 0, 1, 1}, {s.tileCo, 1, 0, s.tileCi}}, t * accTile + row * s.tileCo, t * inpTile,
                          t * wgtTile, false);
    }
    std::vector<UopKernel> epilogueKernelsOf(int t) const {
        return epilogueKernels(epilogue, {{s.tileB, s.tileCo, 0, 0}, {s.tileCo, 1, 0, 0}}, t * accTile, 0);
    }
};

DensePlan planDense(const VtaConfig& cfg, const DenseWorkload& wl, const DenseSchedule& s,
                    const std::vector<EpilogueOp>& epilogue) {
    checkInt8Core(cfg, "dense_packed");
    wl.validate(cfg);
    DensePlan p;
    p.wl = wl;
    p.s = s;
    p.epilogue = epilogue;
    p.what = "VTA dense_packed.vta config [" + s.str() + "] for " + wl.str();
    checkEpilogue(epilogue, false, p.what);
    p.NB = wl.batch / cfg.batch();
    p.CI = wl.inFeat / cfg.blockIn();
    p.CO = wl.outFeat / cfg.blockOut();
    auto divides = [&](const char* knob, int64_t f, int64_t n) { checkDivides(p.what, knob, f, n); };
    divides("tile_b", s.tileB, p.NB);
    divides("tile_ci", s.tileCi, p.CI);
    divides("tile_co", s.tileCo, p.CO);
    TB_USER_CHECK(s.ocNthread == 1 || s.ocNthread == 2) << p.what << ": oc_nthread must be 1 or 2";
    TB_USER_CHECK((p.CO / s.tileCo) % s.ocNthread == 0)
        << p.what << ": oc_nthread " << s.ocNthread << " does not divide the " << p.CO / s.tileCo
        << " output-channel tiles (the virtual-thread split would leave a tail)";
    p.threads = s.ocNthread;
    p.inpTile = s.tileCi;
    p.wgtTile = int64_t(s.tileCo) * s.tileCi;
    p.accTile = int64_t(s.tileB) * s.tileCo;
    p.use.threads = p.threads;
    p.use.inp = p.threads * p.inpTile;
    p.use.wgt = p.threads * p.wgtTile;
    p.use.acc = p.threads * p.accTile;
    std::ostringstream detail;
    detail << p.threads << " virtual thread(s) x (" << s.tileCi << " input, " << s.tileCo << "x" << s.tileCi << " weight, "
           << s.tileB << "x" << s.tileCo << " accumulator)";
    checkSram(cfg, p.use, p.what, detail.str());
    p.use.maxKernelUops = withContext(p.what, [&] {
        std::vector<UopKernel> all = p.epilogueKernelsOf(p.threads - 1);
        all.push_back(p.reset(p.threads - 1, s.tileB - 1));
        all.push_back(p.gemm(p.threads - 1, s.tileB - 1));
        return checkKernels(cfg, all, p.what);
    });
    return p;
}

void emitDense(CommandBuilder& cb, const DensePlan& p, uint32_t dataAddr, uint32_t weightAddr, uint32_t outAddr) {
    const DenseSchedule& s = p.s;
    const int T = p.threads;
    Tokens tokens(cb, T);
    std::vector<std::vector<UopKernel>> epilogues;
    for (int t = 0; t < T; ++t) epilogues.push_back(p.epilogueKernelsOf(t));
    const int64_t rowTiles = p.NB / s.tileB, coGroups = p.CO / (int64_t(s.tileCo) * T);
    // (x_bo, x_co) without virtual threads; the oc thread split moves x_bo inward: (x_co, x_bo).
    const int64_t outer = T == 1 ? rowTiles : coGroups, inner = T == 1 ? coGroups : rowTiles;
    for (int64_t a = 0; a < outer; ++a)
        for (int64_t b = 0; b < inner; ++b) {
            const int64_t bt = T == 1 ? a : b, cg = T == 1 ? b : a;
            const int64_t b0 = bt * s.tileB;
            for (int64_t row = 0; row < s.tileB; ++row) {
                for (int t = 0; t < T; ++t) {
                    if (row == 0) tokens.beforeTile();
                    cb.pushGemmOp(p.reset(t, row));
                }
                for (int64_t ko = 0; ko < p.CI / s.tileCi; ++ko)
                    for (int t = 0; t < T; ++t) {
                        const int64_t co0 = (cg * T + t) * s.tileCo;
                        tokens.beforeLoad();
                        cb.loadBuffer2D(dataAddr, uint32_t((b0 + row) * p.CI + ko * s.tileCi), uint32_t(s.tileCi), 1,
                                        uint32_t(s.tileCi), 0, 0, 0, 0, uint32_t(t * p.inpTile), MemId::Inp);
                        cb.loadBuffer2D(weightAddr, uint32_t(co0 * p.CI + ko * s.tileCi), uint32_t(s.tileCi),
                                        uint32_t(s.tileCo), uint32_t(p.CI), 0, 0, 0, 0, uint32_t(t * p.wgtTile), MemId::Wgt);
                        tokens.loadToGemm();
                        cb.pushGemmOp(p.gemm(t, row));
                        tokens.afterGemm();
                    }
            }
            for (int t = 0; t < T; ++t) {
                pushKernels(cb, epilogues[size_t(t)]);
                tokens.afterEpilogue();
            }
            for (int t = 0; t < T; ++t) {
                const int64_t co0 = (cg * T + t) * s.tileCo;
                tokens.beforeStore();
                cb.storeBuffer2D(uint32_t(t * p.accTile), MemId::Out, outAddr, uint32_t(b0 * p.CO + co0), uint32_t(s.tileCo),
                                 uint32_t(s.tileB), uint32_t(p.CO));
                tokens.afterStore();
            }
        }
    tokens.drain();
}

// --- add.vta / multiply.vta ---------------------------------------------------------------------

struct AluPlan {
    AluWorkload wl;
    AluSchedule s;
    std::vector<EpilogueOp> epilogue;
    int64_t NB = 0, C = 0;
    int64_t tile = 0;     // accumulator vectors of the lhs (and output) tile, at 0
    int64_t rhsTile = 0;  // of the rhs, at `tile`: `tile`, or tile_co for a per-channel rhs
    int channels = 0;     // per-channel constants of the epilogue, tile_co vectors each after the rhs
    Dma2d dma;
    SramUse use;
    std::string what;

    std::vector<Loop> tileLoops() const {
        return {{s.tileCo, int64_t(s.tileH) * s.tileW, 0, 0}, {s.tileH, s.tileW, 0, 0}, {s.tileW, 1, 0, 0}};
    }
    std::vector<UopKernel> kernels() const {
        std::vector<Loop> loops = tileLoops();
        if (wl.rhsBroadcast)
            loops = broadcastLoops(loops);
        else
            for (Loop& l : loops) l.src = l.dst;
        std::vector<UopKernel> all{
            aluKernel(loops, 0, tile, wl.op == AluOpKind::Add ? AluOpcode::Add : AluOpcode::Mul, false, 0)};
        for (UopKernel& k : epilogueKernels(epilogue, tileLoops(), 0, 0, tile + rhsTile)) all.push_back(std::move(k));
        return all;
    }
};

AluPlan planAlu(const VtaConfig& cfg, const AluWorkload& wl, const AluSchedule& s, const std::vector<EpilogueOp>& epilogue) {
    checkInt8Core(cfg, aluTemplateName(wl.op));
    wl.validate(cfg);
    AluPlan p;
    p.wl = wl;
    p.s = s;
    p.epilogue = epilogue;
    p.what = std::string("VTA ") + aluTemplateName(wl.op) + " config [" + s.str() + "] for " + wl.str();
    checkEpilogue(epilogue, false, p.what, true);
    p.NB = wl.batch / cfg.batch();
    p.C = wl.channels / cfg.blockOut();
    auto divides = [&](const char* knob, int64_t f, int64_t n) { checkDivides(p.what, knob, f, n); };
    divides("tile_co", s.tileCo, p.C);
    divides("tile_h", s.tileH, wl.height);
    divides("tile_w", s.tileW, wl.width);
    p.tile = int64_t(s.tileCo) * s.tileH * s.tileW;
    const auto d = fold2d({{s.tileCo, p.C}, {s.tileH, wl.height}, {s.tileW, wl.width}});
    TB_USER_CHECK(d) << p.what << ": the tile of " << s.tileCo << " channel blocks x " << s.tileH << " rows x " << s.tileW
                     << " columns is not one 2-D DMA (its rows are neither whole nor single)";
    p.dma = *d;
    p.rhsTile = wl.rhsBroadcast ? s.tileCo : p.tile;
    p.channels = channelConstants(epilogue);
    p.use.acc = p.tile + p.rhsTile + p.channels * int64_t(s.tileCo);
    checkSram(cfg, p.use, p.what,
              "operand tiles of " + std::to_string(p.tile) + " and " + std::to_string(p.rhsTile) + " and " +
                  std::to_string(p.channels) + " per-channel tiles of " + std::to_string(s.tileCo));
    p.use.maxKernelUops = withContext(p.what, [&] { return checkKernels(cfg, p.kernels(), p.what); });
    return p;
}

void emitAlu(CommandBuilder& cb, const AluPlan& p, uint32_t lhsAddr, uint32_t rhsAddr,
             const std::vector<uint32_t>& channelAddrs, uint32_t outAddr) {
    const AluSchedule& s = p.s;
    const int64_t H = p.wl.height, W = p.wl.width;
    Tokens tokens(cb, 1);
    const std::vector<UopKernel> kernels = p.kernels();
    const MemId lhsType = p.wl.lhsInt8 ? MemId::Acc8Bit : MemId::Acc, rhsType = p.wl.rhsInt8 ? MemId::Acc8Bit : MemId::Acc;
    // TVM's order: x_bo, x_i0, x_co0, x_j0.
    for (int64_t bo = 0; bo < p.NB; ++bo)
        for (int64_t h0 = 0; h0 < H; h0 += s.tileH)
            for (int64_t c0 = 0; c0 < p.C; c0 += s.tileCo)
                for (int64_t w0 = 0; w0 < W; w0 += s.tileW) {
                    const auto offset = uint32_t(((bo * p.C + c0) * H + h0) * W + w0);
                    tokens.beforeTile();
                    cb.loadBuffer2D(lhsAddr, offset, p.dma.xSize, p.dma.ySize, p.dma.xStride, 0, 0, 0, 0, 0, lhsType);
                    if (p.wl.rhsBroadcast)
                        cb.loadBuffer2D(rhsAddr, uint32_t(c0), uint32_t(s.tileCo), 1, uint32_t(s.tileCo), 0, 0, 0, 0,
                                        uint32_t(p.tile), rhsType);
                    else
                        cb.loadBuffer2D(rhsAddr, offset, p.dma.xSize, p.dma.ySize, p.dma.xStride, 0, 0, 0, 0,
                                        uint32_t(p.tile), rhsType);
                    for (size_t k = 0; k < channelAddrs.size(); ++k)
                        cb.loadBuffer2D(channelAddrs[k], uint32_t(c0), uint32_t(s.tileCo), 1, uint32_t(s.tileCo), 0, 0, 0, 0,
                                        uint32_t(p.tile + p.rhsTile + int64_t(k) * s.tileCo), MemId::Acc);
                    pushKernels(cb, kernels);
                    tokens.afterEpilogue();
                    tokens.beforeStore();
                    cb.storeBuffer2D(0, MemId::Out, outAddr, offset, p.dma.xSize, p.dma.ySize, p.dma.xStride);
                    tokens.afterStore();
                }
    tokens.drain();
}

// --- running ------------------------------------------------------------------------------------

template <class T>
uint32_t upload(Simulator& sim, const std::vector<T>& values) {
    const uint32_t addr = sim.dram().alloc(values.size() * sizeof(T));
    sim.dram().writeArray(addr, values);
    return addr;
}

PackedOpResult finish(Simulator& sim, CommandBuilder& cb, uint32_t outAddr, size_t outValues) {
    PackedOpResult r;
    r.report = cb.synchronize();
    r.instructions = size_t(r.report.instructions[0] + r.report.instructions[1] + r.report.instructions[2]);
    r.output = sim.dram().readArray<int8_t>(outAddr, outValues);
    return r;
}

std::vector<int8_t> toInt8(const std::vector<int32_t>& values, const char* op, const char* tensor) {
    std::vector<int8_t> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        TB_USER_CHECK(values[i] >= -128 && values[i] <= 127)
            << "VTA " << op << ": int8 " << tensor << " value " << values[i] << " at " << i << " is outside [-128, 127]";
        out[i] = int8_t(values[i]);
    }
    return out;
}

// Checks the operand sizes of add/multiply (AluOperands) and the int8 ranges; returns the
// output's values.
size_t checkAluOperands(const VtaConfig& cfg, const AluWorkload& wl, const std::vector<EpilogueOp>& epilogue,
                        const AluOperands& o) {
    const char* name = aluTemplateName(wl.op);
    const size_t n = size_t(wl.batch) * wl.channels * wl.height * wl.width;
    const int64_t perChannel = int64_t(wl.channels) * cfg.batch();
    checkSize(o.lhs.size(), int64_t(n), name, "lhs");
    checkSize(o.rhs.size(), wl.rhsBroadcast ? perChannel : int64_t(n), name, wl.rhsBroadcast ? "per-channel rhs" : "rhs");
    const int need = channelConstants(epilogue);
    TB_USER_CHECK(int(o.channel.size()) >= need) << "VTA " << name << ": the epilogue reads " << need
                                                 << " per-channel constants, the operands hold " << o.channel.size();
    for (int k = 0; k < need; ++k) checkSize(o.channel[size_t(k)].size(), perChannel, name, "per-channel constant");
    if (wl.lhsInt8) toInt8(o.lhs, name, "lhs");
    if (wl.rhsInt8) toInt8(o.rhs, name, "rhs");
    return n;
}

int64_t conv2dOutputValues(const Conv2dWorkload& wl) {
    return int64_t(wl.batch) * wl.outFilter * wl.outHeight() * wl.outWidth();
}

void checkConvOperands(const Conv2dWorkload& wl, const std::vector<EpilogueOp>& epilogue,
                       const Conv2dOperands& o, int groups = 1) {
    const char* op = groups == 1 ? "conv2d_packed" : "group_conv2d_packed";
    checkSize(o.data.size(), int64_t(wl.batch) * wl.inFilter * wl.height * wl.width, op, "data");
    checkSize(o.kernel.size(), int64_t(wl.outFilter) * (wl.inFilter / groups) * wl.hkernel * wl.wkernel, op, "kernel");
    checkSize(o.bias.size(), hasBias(epilogue) ? int64_t(wl.batch) * wl.outFilter : 0, op, "bias");
}

Conv2dOperands randomConvOperands(const Conv2dWorkload& wl, int groups, bool withBias, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> i8(-128, 127), b(-(1 << 14), (1 << 14) - 1);
    Conv2dOperands o;
    o.data.resize(size_t(wl.batch) * wl.inFilter * wl.height * wl.width);
    o.kernel.resize(size_t(wl.outFilter) * size_t(wl.inFilter / groups) * wl.hkernel * wl.wkernel);
    for (auto& v : o.data) v = int8_t(i8(rng));
    for (auto& v : o.kernel) v = int8_t(i8(rng));
    if (withBias) {
        o.bias.resize(size_t(wl.batch) * wl.outFilter);
        for (auto& v : o.bias) v = b(rng);
    }
    return o;
}

PackedOpResult runConv(Simulator& sim, const ConvPlan& plan, const Conv2dOperands& operands) {
    checkConvOperands(plan.wl, plan.epilogue, operands, int(plan.groups));
    const uint32_t data = upload(sim, operands.data), kernel = upload(sim, operands.kernel);
    const uint32_t bias = operands.bias.empty() ? 0 : upload(sim, operands.bias);
    const int64_t outValues = conv2dOutputValues(plan.wl);
    const uint32_t out = sim.dram().alloc(size_t(outValues));
    CommandBuilder cb(sim);
    emitConv2d(cb, plan, data, kernel, bias, out);
    return finish(sim, cb, out, size_t(outValues));
}

// conv2d_packed's and group_conv2d_packed's reference (`groups` 1: conv2d), wl validated.
std::vector<int8_t> convReference(const VtaConfig& cfg, const Conv2dWorkload& wl, int groups,
                                  const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& o) {
    checkEpilogue(epilogue, true, groups == 1 ? "VTA conv2d_packed reference" : "VTA group_conv2d_packed reference");
    checkConvOperands(wl, epilogue, o, groups);
    const int64_t B = cfg.batch(), BI = cfg.blockIn(), BO = cfg.blockOut();
    const int64_t NB = wl.batch / B, CI = wl.inFilter / BI, CO = wl.outFilter / BO;
    const int64_t CIg = CI / groups, COg = CO / groups;
    const int64_t H = wl.height, W = wl.width, KH = wl.hkernel, KW = wl.wkernel, OH = wl.outHeight(), OW = wl.outWidth();
    std::vector<int8_t> out(size_t(conv2dOutputValues(wl)));
    for (int64_t bo = 0; bo < NB; ++bo)
        for (int64_t co = 0; co < CO; ++co)
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow)
                    for (int64_t b = 0; b < B; ++b)
                        for (int64_t c = 0; c < BO; ++c) {
                            uint32_t acc = 0;
                            for (int64_t ko = 0; ko < CIg; ++ko)
                                for (int64_t kh = 0; kh < KH; ++kh) {
                                    const int64_t y = oh * wl.hstride + kh - wl.hpad;
                                    if (y < 0 || y >= H) continue;
                                    const int64_t ci = co / COg * CIg + ko;
                                    for (int64_t kw = 0; kw < KW; ++kw) {
                                        const int64_t x = ow * wl.wstride + kw - wl.wpad;
                                        if (x < 0 || x >= W) continue;
                                        const int8_t* d = &o.data[size_t(((((bo * CI + ci) * H + y) * W + x) * B + b) * BI)];
                                        const int8_t* k = &o.kernel[size_t(((((co * CIg + ko) * KH + kh) * KW + kw) * BO + c) * BI)];
                                        for (int64_t i = 0; i < BI; ++i) acc += uint32_t(int32_t(d[i]) * int32_t(k[i]));
                                    }
                                }
                            const int32_t bias = o.bias.empty() ? 0 : o.bias[size_t((bo * CO + co) * B * BO + b * BO + c)];
                            out[size_t(((((bo * CO + co) * OH + oh) * OW + ow) * B + b) * BO + c)] =
                                int8_t(applyEpilogue(int32_t(acc), epilogue, bias));
                        }
    return out;
}

ConvPlan planGroupConv2d(const VtaConfig& cfg, const GroupConv2dWorkload& wl, const Conv2dSchedule& s,
                         const std::vector<EpilogueOp>& epilogue) {
    wl.validate(cfg);
    return planConv2d(cfg, wl, s, epilogue, wl.groups, wl.str());
}

}  // namespace

std::vector<EpilogueOp> conv2dEpilogue(bool withBias) {
    std::vector<EpilogueOp> e{{EpilogueKind::ShrImm, 8}};
    if (withBias) e.push_back({EpilogueKind::AddBias, 0});
    e.push_back({EpilogueKind::MinImm, 127});
    e.push_back({EpilogueKind::MaxImm, 0});
    return e;
}

std::vector<EpilogueOp> clipEpilogue(int shift) {
    std::vector<EpilogueOp> e;
    if (shift > 0) e.push_back({EpilogueKind::ShrImm, shift});
    e.push_back({EpilogueKind::MinImm, 127});
    e.push_back({EpilogueKind::MaxImm, 0});
    return e;
}

Conv2dOperands randomConv2dOperands(const VtaConfig& cfg, const Conv2dWorkload& wl, bool withBias, uint32_t seed) {
    wl.validate(cfg);
    return randomConvOperands(wl, 1, withBias, seed);
}

Conv2dOperands randomGroupConv2dOperands(const VtaConfig& cfg, const GroupConv2dWorkload& wl, bool withBias,
                                         uint32_t seed) {
    wl.validate(cfg);
    return randomConvOperands(wl, wl.groups, withBias, seed);
}

DenseOperands randomDenseOperands(const VtaConfig& cfg, const DenseWorkload& wl, uint32_t seed) {
    wl.validate(cfg);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> i8(-128, 127);
    DenseOperands o;
    o.data.resize(size_t(wl.batch) * wl.inFeat);
    o.weight.resize(size_t(wl.outFeat) * wl.inFeat);
    for (auto& v : o.data) v = int8_t(i8(rng));
    for (auto& v : o.weight) v = int8_t(i8(rng));
    return o;
}

AluOperands randomAluOperands(const VtaConfig& cfg, const AluWorkload& wl, uint32_t seed) {
    wl.validate(cfg);
    std::mt19937 rng(seed);
    const size_t n = size_t(wl.batch) * wl.channels * wl.height * wl.width;
    auto fill = [&](bool int8) {
        std::uniform_int_distribution<int32_t> d(int8 ? -128 : -512, int8 ? 127 : 511);
        std::vector<int32_t> v(n);
        for (auto& x : v) x = d(rng);
        return v;
    };
    AluOperands o;
    o.lhs = fill(wl.lhsInt8);
    o.rhs = fill(wl.rhsInt8);
    if (wl.rhsBroadcast) o.rhs.resize(size_t(wl.channels) * size_t(cfg.batch()));
    return o;
}

SramUse checkConv2dSchedule(const VtaConfig& cfg, const Conv2dWorkload& wl, const Conv2dSchedule& sched,
                            const std::vector<EpilogueOp>& epilogue) {
    return planConv2d(cfg, wl, sched, epilogue).use;
}

SramUse checkGroupConv2dSchedule(const VtaConfig& cfg, const GroupConv2dWorkload& wl, const Conv2dSchedule& sched,
                                 const std::vector<EpilogueOp>& epilogue) {
    return planGroupConv2d(cfg, wl, sched, epilogue).use;
}

SramUse checkDenseSchedule(const VtaConfig& cfg, const DenseWorkload& wl, const DenseSchedule& sched,
                           const std::vector<EpilogueOp>& epilogue) {
    return planDense(cfg, wl, sched, epilogue).use;
}

SramUse checkAluSchedule(const VtaConfig& cfg, const AluWorkload& wl, const AluSchedule& sched,
                         const std::vector<EpilogueOp>& epilogue) {
    return planAlu(cfg, wl, sched, epilogue).use;
}

PackedOpResult runConv2dPacked(Simulator& sim, const Conv2dWorkload& wl, const Conv2dSchedule& sched,
                               const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& operands) {
    return runConv(sim, planConv2d(sim.config(), wl, sched, epilogue), operands);
}

PackedOpResult runGroupConv2dPacked(Simulator& sim, const GroupConv2dWorkload& wl, const Conv2dSchedule& sched,
                                    const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& operands) {
    return runConv(sim, planGroupConv2d(sim.config(), wl, sched, epilogue), operands);
}

PackedOpResult runDensePacked(Simulator& sim, const DenseWorkload& wl, const DenseSchedule& sched,
                              const std::vector<EpilogueOp>& epilogue, const DenseOperands& operands) {
    const DensePlan plan = planDense(sim.config(), wl, sched, epilogue);
    checkSize(operands.data.size(), int64_t(wl.batch) * wl.inFeat, "dense_packed", "data");
    checkSize(operands.weight.size(), int64_t(wl.outFeat) * wl.inFeat, "dense_packed", "weight");
    const uint32_t data = upload(sim, operands.data), weight = upload(sim, operands.weight);
    const size_t outValues = size_t(wl.batch) * wl.outFeat;
    const uint32_t out = sim.dram().alloc(outValues);
    CommandBuilder cb(sim);
    emitDense(cb, plan, data, weight, out);
    return finish(sim, cb, out, outValues);
}

PackedOpResult runAluPacked(Simulator& sim, const AluWorkload& wl, const AluSchedule& sched,
                            const std::vector<EpilogueOp>& epilogue, const AluOperands& operands) {
    const AluPlan plan = planAlu(sim.config(), wl, sched, epilogue);
    const char* name = aluTemplateName(wl.op);
    const size_t n = checkAluOperands(sim.config(), wl, epilogue, operands);
    const uint32_t lhs = wl.lhsInt8 ? upload(sim, toInt8(operands.lhs, name, "lhs")) : upload(sim, operands.lhs);
    const uint32_t rhs = wl.rhsInt8 ? upload(sim, toInt8(operands.rhs, name, "rhs")) : upload(sim, operands.rhs);
    std::vector<uint32_t> channel;
    for (int k = 0; k < plan.channels; ++k) channel.push_back(upload(sim, operands.channel[size_t(k)]));
    const uint32_t out = sim.dram().alloc(n);
    CommandBuilder cb(sim);
    emitAlu(cb, plan, lhs, rhs, channel, out);
    return finish(sim, cb, out, n);
}

std::vector<int8_t> conv2dPackedReference(const VtaConfig& cfg, const Conv2dWorkload& wl,
                                          const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& o) {
    wl.validate(cfg);
    return convReference(cfg, wl, 1, epilogue, o);
}

std::vector<int8_t> groupConv2dPackedReference(const VtaConfig& cfg, const GroupConv2dWorkload& wl,
                                               const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& o) {
    wl.validate(cfg);
    return convReference(cfg, wl, wl.groups, epilogue, o);
}

std::vector<int8_t> densePackedReference(const VtaConfig& cfg, const DenseWorkload& wl,
                                         const std::vector<EpilogueOp>& epilogue, const DenseOperands& o) {
    wl.validate(cfg);
    checkEpilogue(epilogue, false, "VTA dense_packed reference");
    checkSize(o.data.size(), int64_t(wl.batch) * wl.inFeat, "dense_packed", "data");
    checkSize(o.weight.size(), int64_t(wl.outFeat) * wl.inFeat, "dense_packed", "weight");
    const int64_t B = cfg.batch(), BI = cfg.blockIn(), BO = cfg.blockOut();
    const int64_t NB = wl.batch / B, CI = wl.inFeat / BI, CO = wl.outFeat / BO;
    std::vector<int8_t> out(size_t(wl.batch) * wl.outFeat);
    for (int64_t bo = 0; bo < NB; ++bo)
        for (int64_t co = 0; co < CO; ++co)
            for (int64_t b = 0; b < B; ++b)
                for (int64_t c = 0; c < BO; ++c) {
                    uint32_t acc = 0;
                    for (int64_t ci = 0; ci < CI; ++ci)
                        for (int64_t i = 0; i < BI; ++i)
                            acc += uint32_t(int32_t(o.data[size_t(((bo * CI + ci) * B + b) * BI + i)]) *
                                            int32_t(o.weight[size_t(((co * CI + ci) * BO + c) * BI + i)]));
                    out[size_t(((bo * CO + co) * B + b) * BO + c)] = int8_t(applyEpilogue(int32_t(acc), epilogue, 0));
                }
    return out;
}

std::vector<int8_t> aluPackedReference(const VtaConfig& cfg, const AluWorkload& wl, const std::vector<EpilogueOp>& epilogue,
                                       const AluOperands& o) {
    wl.validate(cfg);
    const char* name = aluTemplateName(wl.op);
    checkEpilogue(epilogue, false, std::string("VTA ") + name + " reference", true);
    const size_t n = checkAluOperands(cfg, wl, epilogue, o);
    const int need = channelConstants(epilogue);
    // Packed (N/B, C/BO, H, W, B, BO): the per-channel index (c0 * B + b) * BO + c1.
    const int64_t B = cfg.batch(), BO = cfg.blockOut(), C0 = wl.channels / BO, HW = int64_t(wl.height) * wl.width;
    std::vector<int8_t> out(n);
    std::vector<int32_t> chan(size_t(std::max(need, 1)));
    for (size_t i = 0; i < n; ++i) {
        const int64_t k = int64_t(i);
        const int64_t c0 = (k / (HW * B * BO)) % C0, b = (k / BO) % B, c1 = k % BO;
        const size_t ch = size_t((c0 * B + b) * BO + c1);
        for (int j = 0; j < need; ++j) chan[size_t(j)] = o.channel[size_t(j)][ch];
        const uint32_t a = uint32_t(o.lhs[i]), r = uint32_t(o.rhs[wl.rhsBroadcast ? ch : i]);
        const int32_t x = int32_t(wl.op == AluOpKind::Add ? a + r : a * r);
        out[i] = int8_t(applyEpilogue(x, epilogue, 0, chan.data()));
    }
    return out;
}

}  // namespace tb::vta
