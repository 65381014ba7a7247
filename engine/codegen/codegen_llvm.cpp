// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/codegen_llvm.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/codegen/kernel_abi.h"
#include "engine/codegen/llvm_headers.h"
#include "engine/codegen/llvm_init.h"
#include "engine/lower/prefetch.h"
#include "engine/lower/simplify.h"
#include "engine/support/error.h"
#include "engine/support/md5.h"
#include "engine/te/printer.h"


namespace tb::codegen {

using lower::Buffer;
using lower::Stmt;
using te::DType;
using te::Expr;
using te::ExprKind;

void initializeLlvm() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeAllTargetInfos();
        llvm::InitializeAllTargets();
        llvm::InitializeAllTargetMCs();
        llvm::InitializeAllAsmPrinters();
        llvm::InitializeAllAsmParsers();
    });
}

namespace {

// Weight prefetch (prefetch.h) is decided at code generation: a function with weights is compiled
// with prefetches unless TB_PREFETCH=0, and its cache key says so.
bool prefetchesWeights(const lower::LoweredFunc& f) { return !f.weightArgs.empty() && lower::weightPrefetchEnabled(); }

constexpr int kMaxLanes = 64;
constexpr int64_t kMaxStackBytes = 256 * 1024;
// Unrolled loops are expanded (lower::expandUnrolled) only while the copies hold at most this
// many stores; bigger ones (random search states can annotate big loops) run as serial loops.
constexpr int64_t kMaxUnrolledStores = 16384;

const te::BinaryNode* bin(const Expr& e) { return static_cast<const te::BinaryNode*>(e.get()); }

// Coefficient of v in e when e is affine in v (0 when e does not use v); nullopt otherwise.
std::optional<int64_t> laneStride(const Expr& e, const te::Var& v) {
    if (!lower::usesVar(e, v)) return 0;
    switch (e.kind()) {
        case ExprKind::Var: return e.same(v) ? std::optional<int64_t>(1) : std::optional<int64_t>(0);
        case ExprKind::Add: case ExprKind::Sub: {
            auto a = laneStride(bin(e)->a, v), b = laneStride(bin(e)->b, v);
            if (!a || !b) return std::nullopt;
            return e.kind() == ExprKind::Add ? *a + *b : *a - *b;
        }
        case ExprKind::Mul: {
            int64_t c;
            if (te::isConstInt(bin(e)->b, &c)) {
                auto a = laneStride(bin(e)->a, v);
                if (a) return *a * c;
            } else if (te::isConstInt(bin(e)->a, &c)) {
                auto b = laneStride(bin(e)->b, v);
                if (b) return *b * c;
            }
            return std::nullopt;
        }
        case ExprKind::Cast:
            if (te::isInt(e.dtype())) return laneStride(e.as<te::CastNode>()->value, v);
            return std::nullopt;
        default: return std::nullopt;
    }
}

// Serial loops whose body holds more stores than this (unrolled copies) are marked
// llvm.loop.vectorize.enable = false (see emitSerialLoop).
constexpr int64_t kMaxStoresForLoopVectorizer = 64;

// BufferStore statements written in s (a loop's body counted once, not per iteration).
int64_t countStores(const Stmt& s) {
    int64_t n = 0;
    lower::preOrderVisit(s, [&](const Stmt& x) { n += x->kind == lower::StmtKind::BufferStore; });
    return n;
}

// Can a Vectorized loop over `lane` run `s` as one vector iteration?
bool canVectorize(const Stmt& s, const te::Var& lane) {
    if (!s) return true;
    switch (s->kind) {
        case lower::StmtKind::For: {
            auto* f = lower::as<lower::ForNode>(s);
            if (f->forKind == lower::ForKind::Parallel) return false;
            if (lower::usesVar(f->min, lane) || lower::usesVar(f->extent, lane)) return false;
            return canVectorize(f->body, lane);
        }
        case lower::StmtKind::Allocate: return false;
        case lower::StmtKind::BufferStore: {
            auto* st = lower::as<lower::BufferStoreNode>(s);
            Expr flat = lower::simplify(lower::flatIndex(st->buffer, st->indices));
            return lower::usesVar(flat, lane);
        }
        case lower::StmtKind::IfThenElse: {
            auto* i = lower::as<lower::IfThenElseNode>(s);
            return canVectorize(i->thenCase, lane) && canVectorize(i->elseCase, lane);
        }
        case lower::StmtKind::Seq:
            for (auto& c : lower::as<lower::SeqNode>(s)->seq)
                if (!canVectorize(c, lane)) return false;
            return true;
        case lower::StmtKind::Attr: return canVectorize(lower::as<lower::AttrNode>(s)->body, lane);
        case lower::StmtKind::Barrier: return false;
        case lower::StmtKind::Prefetch: return false;
    }
    return false;
}

class CodeGen {
public:
    CodeGen(llvm::LLVMContext& ctx, llvm::Module& mod, const Target& target)
        : m_ctx(ctx), m_mod(mod), m_b(ctx), m_target(target) {
        m_f32 = llvm::Type::getFloatTy(ctx);
        m_f64 = llvm::Type::getDoubleTy(ctx);
        m_i64 = llvm::Type::getInt64Ty(ctx);
        m_i32 = llvm::Type::getInt32Ty(ctx);
        m_i1 = llvm::Type::getInt1Ty(ctx);
        m_ptr = llvm::PointerType::get(ctx, 0);
        llvm::FastMathFlags fmf;
        fmf.setAllowContract(true);
        m_b.setFastMathFlags(fmf);
    }

    void emitFunction(const lower::LoweredFunc& f) {
        // Inner function with noalias buffer parameters; the entry unpacks args[] and calls it. The
        // kernel pipeline does not inline it: inlined, the noalias facts become scoped-alias metadata
        // on every load and store, and LLVM's pipeline took half as long again on a tuning run's
        // candidates (the call costs nanoseconds per kernel launch).
        std::vector<llvm::Type*> params(f.args.size(), m_ptr);
        auto* implTy = llvm::FunctionType::get(llvm::Type::getVoidTy(m_ctx), params, false);
        auto* impl = llvm::Function::Create(implTy, llvm::Function::InternalLinkage, f.name + "_compute", m_mod);
        setAttributes(impl);
        for (unsigned i = 0; i < f.args.size(); ++i) {
            impl->addParamAttr(i, llvm::Attribute::NoAlias);
            impl->getArg(i)->setName(f.args[i]->name);
        }
        beginFunction(impl);
        for (unsigned i = 0; i < f.args.size(); ++i) m_bufs[f.args[i]->key.get()] = {f.args[i], impl->getArg(i)};
        // Unrolling happens in the loop IR (copies simplified there), not while emitting LLVM IR.
        Stmt body = lower::expandUnrolled(lower::unrollLoops(f.body), kMaxUnrolledStores);
        if (prefetchesWeights(f)) {
            std::vector<Buffer> weights;
            for (int i : f.weightArgs) weights.push_back(f.args.at(static_cast<size_t>(i)));
            body = lower::insertWeightPrefetch(body, weights);
        }
        emitStmt(body);
        m_b.CreateRetVoid();
        m_bufs.clear();

        auto* entryTy = llvm::FunctionType::get(m_i32, {m_ptr}, false);
        auto* entry = llvm::Function::Create(entryTy, llvm::Function::ExternalLinkage, f.name, m_mod);
        setAttributes(entry);
        entry->getArg(0)->setName("args");
        beginFunction(entry);
        std::vector<llvm::Value*> callArgs;
        for (unsigned i = 0; i < f.args.size(); ++i) {
            llvm::Value* slot = m_b.CreateConstInBoundsGEP1_64(m_ptr, entry->getArg(0), i);
            callArgs.push_back(m_b.CreateLoad(m_ptr, slot, f.args[i]->name));
        }
        m_b.CreateCall(impl, callArgs);
        m_b.CreateRet(llvm::ConstantInt::get(m_i32, 0));
    }

private:
    struct BufBinding {
        Buffer buf;
        llvm::Value* ptr = nullptr;
        /// A Local buffer on the stack (a register tile). Its region was inferred over every
        /// iteration of the loops around its accesses, guards ignored, so a lane the guard masks off
        /// still lies inside it: contiguous vector accesses to it need no mask, which lets LLVM keep
        /// the tile in registers (a masked load/store pins it to memory: dense 40x6625 with a
        /// masked last vector ran at 25 GFLOP/s).
        bool stack = false;
    };

    void setAttributes(llvm::Function* fn) {
        fn->addFnAttr("target-cpu", m_target.mcpu);
        const std::string fs = m_target.featureString();
        if (!fs.empty()) fn->addFnAttr("target-features", fs);
        fn->addFnAttr("prefer-vector-width", std::to_string(m_target.vectorBits()));
        fn->addFnAttr(llvm::Attribute::NoUnwind);
    }

    void beginFunction(llvm::Function* fn) {
        m_fn = fn;
        m_entry = llvm::BasicBlock::Create(m_ctx, "entry", fn);
        m_b.SetInsertPoint(m_entry);
    }

    llvm::Type* scalarType(DType t) {
        switch (t) {
            case DType::Bool: return m_i1;
            case DType::Int32: case DType::Int64: return m_i64;
            case DType::Float32: return m_f32;
            case DType::Float64: return m_f64;
        }
        return m_f32;
    }
    // Buffer element type in memory (int32 buffers hold 32-bit values).
    llvm::Type* memType(DType t) {
        switch (t) {
            case DType::Bool: return llvm::Type::getInt8Ty(m_ctx);
            case DType::Int32: return m_i32;
            case DType::Int64: return m_i64;
            case DType::Float32: return m_f32;
            case DType::Float64: return m_f64;
        }
        return m_f32;
    }

    llvm::Value* splat(llvm::Value* v) {
        if (m_lanes <= 1 || v->getType()->isVectorTy()) return v;
        return m_b.CreateVectorSplat(m_lanes, v);
    }
    static bool isVec(llvm::Value* v) { return v->getType()->isVectorTy(); }
    void matchLanes(llvm::Value*& a, llvm::Value*& b) {
        if (isVec(a) && !isVec(b)) b = splat(b);
        if (isVec(b) && !isVec(a)) a = splat(a);
    }

    llvm::Value* laneMask() { return m_mask ? m_mask : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(m_i1, m_lanes)); }

    // ---- expressions ----------------------------------------------------------------------

    llvm::Value* emit(const Expr& e) {
        TB_CHECK(e) << "null expression in codegen";
        switch (e.kind()) {
            case ExprKind::IntImm: {
                int64_t v = e.as<te::IntImmNode>()->value;
                return e.dtype() == DType::Bool ? llvm::ConstantInt::get(m_i1, v != 0) : llvm::ConstantInt::get(m_i64, v, true);
            }
            case ExprKind::FloatImm: return llvm::ConstantFP::get(scalarType(e.dtype()), e.as<te::FloatImmNode>()->value);
            case ExprKind::Var: {
                if (m_laneVar && e.same(*m_laneVar)) {
                    std::vector<llvm::Constant*> steps;
                    for (int i = 0; i < m_lanes; ++i) steps.push_back(llvm::ConstantInt::get(m_i64, i));
                    return m_b.CreateAdd(splat(m_laneBase), llvm::ConstantVector::get(steps), e.as<te::VarNode>()->name);
                }
                auto it = m_vars.find(e.get());
                TB_USER_CHECK(it != m_vars.end()) << "codegen: variable '" << e.as<te::VarNode>()->name
                                                  << "' is used outside the loop that defines it";
                return it->second;
            }
            case ExprKind::Not: return m_b.CreateNot(emit(e.as<te::NotNode>()->a));
            case ExprKind::Select: {
                auto* n = e.as<te::SelectNode>();
                llvm::Value *c = emit(n->cond), *t = emit(n->t), *f = emit(n->f);
                matchLanes(t, f);
                if (isVec(c)) {
                    t = splat(t);
                    f = splat(f);
                } else if (isVec(t)) {
                    // scalar condition over vectors: fine for select
                }
                return m_b.CreateSelect(c, t, f);
            }
            case ExprKind::Cast: return emitCast(e);
            case ExprKind::Call: return emitCall(e);
            case ExprKind::Load: return emitLoad(e);
            case ExprKind::Reduce:
                TB_USER_ERROR() << "codegen: a Reduce expression survived lowering: " << te::toString(e);
            default: return emitBinary(e);
        }
    }

    static bool constNonNegative(const llvm::Value* v) {
        const auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
        return c && !c->isNegative();
    }
    static bool positiveConst(const Expr& e) {
        int64_t v = 0;
        return te::isConstInt(e, &v) && v > 0;
    }
    /// Whether an integer expression cannot be negative: constants >= 0, loop variables of loops
    /// that start at a constant >= 0, and sums, products, quotients and remainders of those (by
    /// positive constants). Conservative: false when unsure.
    bool nonNegative(const Expr& e) const {
        switch (e.kind()) {
            case ExprKind::IntImm: return e.as<te::IntImmNode>()->value >= 0;
            case ExprKind::Var: return m_nonNegVars.count(e.get()) > 0;
            case ExprKind::Add:
            case ExprKind::Mul:
            case ExprKind::Min:
            case ExprKind::Max: return nonNegative(bin(e)->a) && nonNegative(bin(e)->b);
            case ExprKind::Div:
            case ExprKind::Mod:
            case ExprKind::FloorDiv:
            case ExprKind::FloorMod: return nonNegative(bin(e)->a) && positiveConst(bin(e)->b);
            default: return false;
        }
    }

    llvm::Value* emitBinary(const Expr& e) {
        const ExprKind k = e.kind();
        const te::BinaryNode* n = bin(e);
        const DType t = n->a.dtype();
        llvm::Value *a = emit(n->a), *b = emit(n->b);
        matchLanes(a, b);
        const bool fl = te::isFloat(t);
        switch (k) {
            // Integer arithmetic is signed and does not wrap (TVM's codegen emits nsw as well):
            // the flags let LLVM's loop analyses (SCEV, indvars) see index expressions as affine
            // at once instead of proving it.
            // Of two operands >= 0 the sum and product do not wrap as unsigned either (nuw). Left
            // to prove it, IndVarSimplify set the flag on every index add of a loop, invalidating
            // the scalar evolution of all its users each time: half of the LLVM pipeline's time in
            // a big register tile (issue 20: compile time).
            case ExprKind::Add:
                return fl ? m_b.CreateFAdd(a, b) : m_b.CreateAdd(a, b, "", nonNegative(n->a) && nonNegative(n->b), true);
            case ExprKind::Sub: return fl ? m_b.CreateFSub(a, b) : m_b.CreateNSWSub(a, b);
            case ExprKind::Mul:
                return fl ? m_b.CreateFMul(a, b) : m_b.CreateMul(a, b, "", nonNegative(n->a) && nonNegative(n->b), true);
            case ExprKind::Div:
                if (fl) return m_b.CreateFDiv(a, b);
                return positiveConst(n->b) && nonNegative(n->a) ? m_b.CreateUDiv(a, b) : m_b.CreateSDiv(a, b);
            case ExprKind::Mod:
                if (fl) return m_b.CreateFRem(a, b);
                return positiveConst(n->b) && nonNegative(n->a) ? m_b.CreateURem(a, b) : m_b.CreateSRem(a, b);
            case ExprKind::FloorDiv:
            case ExprKind::FloorMod: {
                if (fl) {
                    llvm::Value* q = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, m_b.CreateFDiv(a, b));
                    return k == ExprKind::FloorDiv ? q : m_b.CreateFSub(a, m_b.CreateFMul(q, b));
                }
                // Index arithmetic: a non-negative dividend over a positive constant is plain
                // unsigned division (a shift or mask for a power of two), and a positive constant
                // divisor alone needs one sign test. The general form below was most of the
                // instructions LLVM had to clean up in a tiled kernel (issue 20: compile time).
                if (positiveConst(n->b)) {
                    if (nonNegative(n->a)) return k == ExprKind::FloorDiv ? m_b.CreateUDiv(a, b) : m_b.CreateURem(a, b);
                    llvm::Value* q = m_b.CreateSDiv(a, b);
                    llvm::Value* r = m_b.CreateSRem(a, b);
                    llvm::Value* neg = m_b.CreateICmpSLT(r, llvm::Constant::getNullValue(r->getType()));
                    if (k == ExprKind::FloorDiv) return m_b.CreateSub(q, m_b.CreateZExt(neg, q->getType()));
                    return m_b.CreateSelect(neg, m_b.CreateAdd(r, b), r);
                }
                llvm::Value* q = m_b.CreateSDiv(a, b);
                llvm::Value* r = m_b.CreateSRem(a, b);
                llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
                // Adjust when the remainder is non-zero and its sign differs from the divisor's.
                llvm::Value* adj = m_b.CreateAnd(m_b.CreateICmpNE(r, zero),
                                                 m_b.CreateICmpNE(m_b.CreateICmpSLT(r, zero), m_b.CreateICmpSLT(b, zero)));
                if (k == ExprKind::FloorDiv) return m_b.CreateSub(q, m_b.CreateZExt(adj, q->getType()));
                return m_b.CreateSelect(adj, m_b.CreateAdd(r, b), r);
            }
            case ExprKind::Min:
            case ExprKind::Max: {
                // TVM emits select(a < b, a, b): relu-style max(x, 0) stays one instruction.
                llvm::Value* lt = fl ? m_b.CreateFCmpOLT(a, b) : m_b.CreateICmpSLT(a, b);
                return k == ExprKind::Min ? m_b.CreateSelect(lt, a, b) : m_b.CreateSelect(lt, b, a);
            }
            case ExprKind::EQ: return fl ? m_b.CreateFCmpOEQ(a, b) : m_b.CreateICmpEQ(a, b);
            case ExprKind::NE: return fl ? m_b.CreateFCmpUNE(a, b) : m_b.CreateICmpNE(a, b);
            case ExprKind::LT: return fl ? m_b.CreateFCmpOLT(a, b) : m_b.CreateICmpSLT(a, b);
            case ExprKind::LE: return fl ? m_b.CreateFCmpOLE(a, b) : m_b.CreateICmpSLE(a, b);
            case ExprKind::GT: return fl ? m_b.CreateFCmpOGT(a, b) : m_b.CreateICmpSGT(a, b);
            case ExprKind::GE: return fl ? m_b.CreateFCmpOGE(a, b) : m_b.CreateICmpSGE(a, b);
            case ExprKind::And: return m_b.CreateAnd(a, b);
            case ExprKind::Or: return m_b.CreateOr(a, b);
            default: break;
        }
        TB_CHECK(false) << "unhandled binary kind in " << te::toString(e);
        return nullptr;
    }

    llvm::Value* emitCast(const Expr& e) {
        const Expr& src = e.as<te::CastNode>()->value;
        llvm::Value* v = emit(src);
        const DType from = src.dtype(), to = e.dtype();
        llvm::Type* toTy = scalarType(to);
        if (isVec(v)) toTy = llvm::FixedVectorType::get(toTy, m_lanes);
        if (te::isFloat(to)) {
            if (from == DType::Bool) return m_b.CreateUIToFP(v, toTy);
            if (te::isInt(from)) return m_b.CreateSIToFP(v, toTy);
            return m_b.CreateFPCast(v, toTy);
        }
        if (to == DType::Bool) {
            if (te::isFloat(from)) return m_b.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
            return m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
        }
        // Integer target (i64 in registers).
        if (te::isFloat(from)) return m_b.CreateFPToSI(v, toTy);
        if (from == DType::Bool) return m_b.CreateZExt(v, toTy);
        if (to == DType::Int32) return m_b.CreateSExt(m_b.CreateTrunc(v, isVec(v) ? llvm::FixedVectorType::get(m_i32, m_lanes) : m_i32), toTy);
        return v;
    }

    // A libm call per lane (for functions without an LLVM intrinsic).
    llvm::Value* libmCall(const std::string& base, llvm::Value* x) {
        llvm::Type* st = x->getType()->getScalarType();
        const std::string name = st->isFloatTy() ? base + "f" : base;
        llvm::FunctionCallee fn = m_mod.getOrInsertFunction(name, llvm::FunctionType::get(st, {st}, false));
        if (!isVec(x)) return m_b.CreateCall(fn, {x});
        llvm::Value* r = llvm::UndefValue::get(x->getType());
        for (int i = 0; i < m_lanes; ++i)
            r = m_b.CreateInsertElement(r, m_b.CreateCall(fn, {m_b.CreateExtractElement(x, uint64_t(i))}), uint64_t(i));
        return r;
    }

    llvm::Value* emitCall(const Expr& e) {
        auto* n = e.as<te::CallNode>();
        const std::string& op = n->op;
        if (op == "tir.if_then_else") return emitIfThenElseExpr(n);
        static const std::map<std::string, llvm::Intrinsic::ID> unary = {
            {"tir.exp", llvm::Intrinsic::exp},     {"tir.log", llvm::Intrinsic::log},
            {"tir.sqrt", llvm::Intrinsic::sqrt},   {"tir.fabs", llvm::Intrinsic::fabs},
            {"tir.floor", llvm::Intrinsic::floor}, {"tir.ceil", llvm::Intrinsic::ceil},
            {"tir.round", llvm::Intrinsic::nearbyint}, {"tir.trunc", llvm::Intrinsic::trunc},
            {"tir.exp2", llvm::Intrinsic::exp2},   {"tir.log2", llvm::Intrinsic::log2}};
        if (auto it = unary.find(op); it != unary.end() && n->args.size() == 1)
            return m_b.CreateUnaryIntrinsic(it->second, emit(n->args[0]));
        if (op == "tir.pow" && n->args.size() == 2) {
            llvm::Value *a = emit(n->args[0]), *b = emit(n->args[1]);
            matchLanes(a, b);
            return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, b);
        }
        if (op == "tir.sigmoid" && n->args.size() == 1) {
            llvm::Value* x = emit(n->args[0]);
            llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
            llvm::Value* ex = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, m_b.CreateFNeg(x));
            return m_b.CreateFDiv(one, m_b.CreateFAdd(one, ex));
        }
        if ((op == "tir.tanh" || op == "tir.erf") && n->args.size() == 1) return libmCall(op.substr(4), emit(n->args[0]));
        TB_USER_ERROR() << "codegen: unsupported intrinsic " << te::toString(e);
        return nullptr;
    }

    // tir.if_then_else: only the taken side is evaluated (it guards out-of-bounds reads).
    llvm::Value* emitIfThenElseExpr(const te::CallNode* n) {
        llvm::Value* c = emit(n->args[0]);
        if (isVec(c)) {
            llvm::Value* saved = m_mask;
            m_mask = saved ? m_b.CreateAnd(saved, c) : c;
            llvm::Value* t = splat(emit(n->args[1]));
            llvm::Value* nc = m_b.CreateNot(c);
            m_mask = saved ? m_b.CreateAnd(saved, nc) : nc;
            llvm::Value* f = splat(emit(n->args[2]));
            m_mask = saved;
            return m_b.CreateSelect(c, t, f);
        }
        llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(m_ctx, "if_then", m_fn);
        llvm::BasicBlock* elseBB = llvm::BasicBlock::Create(m_ctx, "if_else", m_fn);
        llvm::BasicBlock* endBB = llvm::BasicBlock::Create(m_ctx, "if_end", m_fn);
        m_b.CreateCondBr(c, thenBB, elseBB);
        m_b.SetInsertPoint(thenBB);
        llvm::Value* t = emit(n->args[1]);
        const bool vec = m_lanes > 1;  // splat both sides when inside a vector context
        if (vec) t = splat(t);
        llvm::BasicBlock* thenEnd = m_b.GetInsertBlock();
        m_b.CreateBr(endBB);
        m_b.SetInsertPoint(elseBB);
        llvm::Value* f = emit(n->args[2]);
        if (vec) f = splat(f);
        llvm::BasicBlock* elseEnd = m_b.GetInsertBlock();
        m_b.CreateBr(endBB);
        m_b.SetInsertPoint(endBB);
        if (t->getType() != f->getType()) {
            // One side scalar, the other vector: only possible without vec; unify by splatting.
            TB_CHECK(false) << "if_then_else branches of different types";
        }
        llvm::PHINode* phi = m_b.CreatePHI(t->getType(), 2);
        phi->addIncoming(t, thenEnd);
        phi->addIncoming(f, elseEnd);
        return phi;
    }

    const BufBinding& bufferOf(const te::LoadNode* n) {
        auto it = m_bufs.find(n->op.get());
        TB_USER_CHECK(it != m_bufs.end()) << "codegen: load of '" << n->op->name
                                          << "', which is neither an argument nor an allocated buffer in scope";
        return it->second;
    }

    llvm::Value* elemPtr(const BufBinding& b, llvm::Value* index) { return m_b.CreateInBoundsGEP(memType(b.buf->dtype), b.ptr, index); }

    // Convert between the in-memory element type and the register type.
    llvm::Value* fromMem(llvm::Value* v, DType t) {
        if (t == DType::Int32) return m_b.CreateSExt(v, isVec(v) ? llvm::FixedVectorType::get(m_i64, m_lanes) : m_i64);
        if (t == DType::Bool) return m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
        return v;
    }
    llvm::Value* toMem(llvm::Value* v, DType t) {
        llvm::Type* mt = memType(t);
        if (isVec(v)) mt = llvm::FixedVectorType::get(mt, m_lanes);
        if (t == DType::Int32) return m_b.CreateTrunc(v, mt);
        if (t == DType::Bool) return m_b.CreateZExt(v, mt);
        return v;
    }

    llvm::Value* emitLoad(const Expr& e) {
        auto* n = e.as<te::LoadNode>();
        const BufBinding& b = bufferOf(n);
        const DType t = b.buf->dtype;
        llvm::Type* mt = memType(t);
        const llvm::Align align(mt->getPrimitiveSizeInBits() / 8);
        Expr flat = lower::simplify(lower::flatIndex(b.buf, n->indices));
        if (m_lanes <= 1 || !lower::usesVar(flat, *m_laneVar)) {
            llvm::Value* p = elemPtr(b, emit(flat));
            if (m_lanes > 1 && m_mask) {
                // A lane-invariant read under a lane mask: one element, read when any lane is active
                // (a masked-off lane's value is never stored). A gather from one address here cost a
                // 16-lane gather per multiply-add in the register tile of a conv whose channels the
                // lanes do not divide (42 channels: 5 GFLOP/s).
                auto* one = llvm::FixedVectorType::get(mt, 1);
                llvm::Value* any = m_b.CreateVectorSplat(1, m_b.CreateOrReduce(m_mask));
                llvm::Value* v = m_b.CreateMaskedLoad(one, p, align, any, llvm::Constant::getNullValue(one));
                return fromMem(m_b.CreateExtractElement(v, uint64_t(0)), t);
            }
            return fromMem(m_b.CreateLoad(mt, p), t);
        }
        auto* vt = llvm::FixedVectorType::get(mt, m_lanes);
        auto stride = laneStride(flat, *m_laneVar);
        if (stride && *stride == 1) {
            llvm::Value* base = emitLaneBaseIndex(flat, *stride);
            llvm::Value* p = elemPtr(b, base);
            if (m_mask && !b.stack)
                return fromMem(m_b.CreateMaskedLoad(vt, p, align, m_mask, llvm::Constant::getNullValue(vt)), t);
            return fromMem(m_b.CreateAlignedLoad(vt, p, align), t);
        }
        llvm::Value* ptrs = elemPtr(b, emit(flat));
        return fromMem(m_b.CreateMaskedGather(vt, ptrs, align, laneMask(), llvm::Constant::getNullValue(vt)), t);
    }

    // Scalar index of lane 0 for an index affine in the lane variable: flat(lane=0) + stride*base.
    llvm::Value* emitLaneBaseIndex(const Expr& flat, int64_t stride) {
        Expr at0 = lower::simplify(te::substitute(flat, {{*m_laneVar, te::intImm(0)}}));
        llvm::Value* v = emit(at0);
        return m_b.CreateAdd(v, m_b.CreateMul(m_laneBase, llvm::ConstantInt::get(m_i64, stride)));
    }

    // ---- statements -----------------------------------------------------------------------

    void emitStmt(const Stmt& s) {
        if (!s) return;
        switch (s->kind) {
            case lower::StmtKind::For: return emitFor(lower::as<lower::ForNode>(s));
            case lower::StmtKind::Allocate: return emitAllocate(lower::as<lower::AllocateNode>(s));
            case lower::StmtKind::BufferStore: return emitStore(lower::as<lower::BufferStoreNode>(s));
            case lower::StmtKind::IfThenElse: return emitIf(lower::as<lower::IfThenElseNode>(s));
            case lower::StmtKind::Seq:
                for (auto& c : lower::as<lower::SeqNode>(s)->seq) emitStmt(c);
                return;
            case lower::StmtKind::Attr: return emitStmt(lower::as<lower::AttrNode>(s)->body);
            case lower::StmtKind::Barrier:
                TB_USER_ERROR() << "codegen: a GPU barrier in a CPU kernel (use codegen_gpu_source.h for GPU code)";
            case lower::StmtKind::Prefetch: return emitPrefetch(lower::as<lower::PrefetchNode>(s));
        }
    }

    // llvm.prefetch(address, read, locality 2 = L2, data cache): prefetcht1 on x86, prfm pldl2keep
    // on AArch64. A hint: it never faults, so an address past the buffer is harmless.
    void emitPrefetch(const lower::PrefetchNode* pf) {
        if (m_lanes > 1) return;  // prefetch.h places prefetches outside vector loops
        auto it = m_bufs.find(pf->buffer->key.get());
        TB_USER_CHECK(it != m_bufs.end()) << "codegen: prefetch of '" << pf->buffer->name << "', which is not in scope";
        llvm::Value* off = emit(pf->offset);
        // Not inbounds: the next block of the last iteration lies past the buffer.
        llvm::Value* addr = m_b.CreateGEP(memType(it->second.buf->dtype), it->second.ptr, off);
        llvm::Function* fn = llvm::Intrinsic::getDeclaration(&m_mod, llvm::Intrinsic::prefetch, {m_ptr});
        m_b.CreateCall(fn, {addr, llvm::ConstantInt::get(m_i32, 0), llvm::ConstantInt::get(m_i32, 2),
                            llvm::ConstantInt::get(m_i32, 1)});
    }

    void emitStore(const lower::BufferStoreNode* st) {
        auto it = m_bufs.find(st->buffer->key.get());
        TB_USER_CHECK(it != m_bufs.end()) << "codegen: store to '" << st->buffer->name << "', which is not in scope";
        const BufBinding& b = it->second;
        const DType t = b.buf->dtype;
        llvm::Type* mt = memType(t);
        const llvm::Align align(mt->getPrimitiveSizeInBits() / 8);
        Expr flat = lower::simplify(lower::flatIndex(b.buf, st->indices));
        llvm::Value* value = emit(st->value);
        if (m_lanes <= 1 || !lower::usesVar(flat, *m_laneVar)) {
            TB_CHECK(!isVec(value) && !(m_lanes > 1 && m_mask)) << "lane-invariant store in a vector loop";
            m_b.CreateStore(toMem(value, t), elemPtr(b, emit(flat)));
            return;
        }
        value = toMem(splat(value), t);
        auto stride = laneStride(flat, *m_laneVar);
        if (stride && *stride == 1) {
            llvm::Value* p = elemPtr(b, emitLaneBaseIndex(flat, *stride));
            if (m_mask && !b.stack)
                m_b.CreateMaskedStore(value, p, align, m_mask);
            else
                m_b.CreateAlignedStore(value, p, align);
            return;
        }
        m_b.CreateMaskedScatter(value, elemPtr(b, emit(flat)), align, laneMask());
    }

    void emitIf(const lower::IfThenElseNode* i) {
        llvm::Value* c = emit(i->condition);
        if (isVec(c)) {
            llvm::Value* saved = m_mask;
            m_mask = saved ? m_b.CreateAnd(saved, c) : c;
            emitStmt(i->thenCase);
            if (i->elseCase) {
                llvm::Value* nc = m_b.CreateNot(c);
                m_mask = saved ? m_b.CreateAnd(saved, nc) : nc;
                emitStmt(i->elseCase);
            }
            m_mask = saved;
            return;
        }
        llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(m_ctx, "then", m_fn);
        llvm::BasicBlock* endBB = llvm::BasicBlock::Create(m_ctx, "endif", m_fn);
        llvm::BasicBlock* elseBB = i->elseCase ? llvm::BasicBlock::Create(m_ctx, "else", m_fn) : endBB;
        m_b.CreateCondBr(c, thenBB, elseBB);
        m_b.SetInsertPoint(thenBB);
        emitStmt(i->thenCase);
        m_b.CreateBr(endBB);
        if (i->elseCase) {
            m_b.SetInsertPoint(elseBB);
            emitStmt(i->elseCase);
            m_b.CreateBr(endBB);
        }
        m_b.SetInsertPoint(endBB);
    }

    void emitAllocate(const lower::AllocateNode* a) {
        const Buffer& buf = a->buffer;
        const int64_t bytes = buf->spanBytes();
        llvm::Value* p;
        bool heap = false, stack = false;
        if (buf->scope == lower::BufferScope::Local && bytes <= kMaxStackBytes) {
            stack = true;
            llvm::IRBuilder<> eb(m_entry, m_entry->begin());
            auto* al = eb.CreateAlloca(memType(buf->dtype), llvm::ConstantInt::get(m_i64, buf->spanElements()), buf->name);
            al->setAlignment(llvm::Align(64));
            p = al;
        } else {
            llvm::FunctionCallee alloc = m_mod.getOrInsertFunction(kernel_abi::kAlloc, llvm::FunctionType::get(m_ptr, {m_i64}, false));
            p = m_b.CreateCall(alloc, {llvm::ConstantInt::get(m_i64, bytes)}, buf->name);
            heap = true;
        }
        m_bufs[buf->key.get()] = {buf, p, stack};
        emitStmt(a->body);
        m_bufs.erase(buf->key.get());
        if (heap) {
            llvm::FunctionCallee fr = m_mod.getOrInsertFunction(kernel_abi::kFree, llvm::FunctionType::get(llvm::Type::getVoidTy(m_ctx), {m_ptr}, false));
            m_b.CreateCall(fr, {p});
        }
    }

    // for (v = begin; v < end; ++v) body, with begin/end i64 values.
    /// `nonNegBegin`: the loop starts at a value >= 0 even when `begin` is not a constant (a
    /// parallel loop's chunk of a range that starts at a constant >= 0).
    void emitSerialLoop(const te::Var& v, llvm::Value* begin, llvm::Value* end, const Stmt& body, bool nonNegBegin = false) {
        llvm::BasicBlock* pre = m_b.GetInsertBlock();
        llvm::BasicBlock* head = llvm::BasicBlock::Create(m_ctx, "for_head." + v.name(), m_fn);
        llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(m_ctx, "for_body." + v.name(), m_fn);
        llvm::BasicBlock* exit = llvm::BasicBlock::Create(m_ctx, "for_end." + v.name(), m_fn);
        m_b.CreateBr(head);
        m_b.SetInsertPoint(head);
        llvm::PHINode* iv = m_b.CreatePHI(m_i64, 2, v.name());
        iv->addIncoming(begin, pre);
        m_b.CreateCondBr(m_b.CreateICmpSLT(iv, end), bodyBB, exit);
        m_b.SetInsertPoint(bodyBB);
        m_vars[v.get()] = iv;
        const bool nonNeg = nonNegBegin || constNonNegative(begin);
        if (nonNeg) m_nonNegVars.insert(v.get());
        emitStmt(body);
        if (nonNeg) m_nonNegVars.erase(v.get());
        m_vars.erase(v.get());
        llvm::Value* next = m_b.CreateAdd(iv, llvm::ConstantInt::get(m_i64, 1), "", true, true);
        iv->addIncoming(next, m_b.GetInsertBlock());
        llvm::BranchInst* latch = m_b.CreateBr(head);
        if (countStores(body) > kMaxStoresForLoopVectorizer) {
            // A body of many (unrolled) statements: LLVM's loop vectorizer would spend seconds in
            // its dependence analysis for a loop we did not ask to vectorize (and rarely wins).
            llvm::Metadata* off[] = {llvm::MDString::get(m_ctx, "llvm.loop.vectorize.enable"),
                                     llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(m_ctx))};
            llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(m_ctx, off)};
            llvm::MDNode* loopId = llvm::MDNode::getDistinct(m_ctx, ops);
            loopId->replaceOperandWith(0, loopId);
            latch->setMetadata(llvm::LLVMContext::MD_loop, loopId);
        }
        m_b.SetInsertPoint(exit);
    }

    void emitFor(const lower::ForNode* f) {
        int64_t ext = -1;
        const bool constExt = te::isConstInt(f->extent, &ext);
        llvm::Value* mn = emit(f->min);
        TB_CHECK(!isVec(mn)) << "loop bound depends on a vector lane";
        switch (f->forKind) {
            case lower::ForKind::Unrolled:
                // Left over by lower::expandUnrolled because it would exceed kMaxUnrolledStores:
                // a serial loop (LLVM's own unroller may still unroll it partially).
                break;
            case lower::ForKind::Vectorized:
                if (constExt && ext >= 2 && ext <= kMaxLanes && m_lanes == 1 && canVectorize(f->body, f->var)) {
                    m_laneVar = f->var;
                    m_laneBase = mn;
                    m_lanes = static_cast<int>(ext);
                    const bool nonNeg = constNonNegative(mn);
                    if (nonNeg) m_nonNegVars.insert(f->var.get());
                    emitStmt(f->body);
                    if (nonNeg) m_nonNegVars.erase(f->var.get());
                    m_laneVar.reset();
                    m_laneBase = nullptr;
                    m_lanes = 1;
                    return;
                }
                break;
            case lower::ForKind::Parallel:
                if (m_lanes == 1) return emitParallel(f, mn);
                break;
            case lower::ForKind::Serial: break;
            case lower::ForKind::ThreadBinding:
                TB_USER_ERROR() << "codegen: loop " << f->var.name() << " is bound to " << f->threadTag
                                << ", a GPU axis; the LLVM CPU code generator runs no GPU kernels";
        }
        llvm::Value* end = m_b.CreateAdd(mn, emit(f->extent));
        emitSerialLoop(f->var, mn, end, f->body);
    }

    // Outline the loop body into name_par<N>(begin, end, closure) and launch it on the pool.
    void emitParallel(const lower::ForNode* f, llvm::Value* mn) {
        llvm::Value* ext = emit(f->extent);
        // Capture every live variable and buffer pointer.
        std::vector<std::pair<const te::ExprNode*, llvm::Value*>> vars(m_vars.begin(), m_vars.end());
        std::vector<std::pair<const te::OperationNode*, BufBinding>> bufs(m_bufs.begin(), m_bufs.end());
        const size_t slots = vars.size() + bufs.size() + 1;
        llvm::ArrayType* closTy = llvm::ArrayType::get(m_i64, slots);
        llvm::AllocaInst* clos;
        {
            llvm::IRBuilder<> eb(m_entry, m_entry->begin());
            clos = eb.CreateAlloca(closTy, nullptr, "closure");
        }
        size_t k = 0;
        auto slot = [&](llvm::IRBuilder<>& b, llvm::Value* base, size_t i) { return b.CreateConstInBoundsGEP2_64(closTy, base, 0, i); };
        m_b.CreateStore(mn, slot(m_b, clos, k++));
        for (auto& [node, v] : vars) m_b.CreateStore(v, slot(m_b, clos, k++));
        for (auto& [key, bb] : bufs) m_b.CreateStore(bb.ptr, slot(m_b, clos, k++));

        auto* bodyTy = llvm::FunctionType::get(llvm::Type::getVoidTy(m_ctx), {m_i64, m_i64, m_ptr}, false);
        const std::string fnName = m_fn->getName().str() + "_par" + std::to_string(m_parCounter++);
        auto* fn = llvm::Function::Create(bodyTy, llvm::Function::InternalLinkage, fnName, m_mod);
        setAttributes(fn);
        // The loop body goes into a second function that takes every buffer as a `noalias` pointer
        // (as the kernel's _compute function does) and is called by `fn`, which only unpacks the
        // closure (once per chunk). Without it, the pointers loaded from the closure may alias, so LLVM
        // keeps reduction accumulators in memory and reloads every input after each store
        // (TVM gets the same facts from per-buffer TBAA metadata).
        std::vector<llvm::Type*> implParams{m_i64, m_i64};
        implParams.insert(implParams.end(), vars.size(), m_i64);
        implParams.insert(implParams.end(), bufs.size(), m_ptr);
        auto* impl = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(m_ctx), implParams, false),
                                            llvm::Function::InternalLinkage, fnName + "_body", m_mod);
        setAttributes(impl);
        for (size_t i = 0; i < bufs.size(); ++i) impl->addParamAttr(unsigned(2 + vars.size() + i), llvm::Attribute::NoAlias);
        // Save the caller's state, emit the two functions, restore.
        llvm::Function* savedFn = m_fn;
        llvm::BasicBlock* savedEntry = m_entry;
        llvm::BasicBlock* savedBlock = m_b.GetInsertBlock();
        auto savedVars = m_vars;
        auto savedBufs = m_bufs;
        beginFunction(fn);
        {
            llvm::Value* cp = fn->getArg(2);
            k = 0;
            llvm::Value* mnIn = m_b.CreateLoad(m_i64, slot(m_b, cp, k++), "min");
            std::vector<llvm::Value*> args{m_b.CreateAdd(mnIn, fn->getArg(0)), m_b.CreateAdd(mnIn, fn->getArg(1))};
            for (size_t i = 0; i < vars.size(); ++i) args.push_back(m_b.CreateLoad(m_i64, slot(m_b, cp, k++)));
            for (auto& [key, bb] : bufs) args.push_back(m_b.CreateLoad(m_ptr, slot(m_b, cp, k++), bb.buf->name));
            m_b.CreateCall(impl, args);
            m_b.CreateRetVoid();
        }
        beginFunction(impl);
        m_vars.clear();
        k = 2;
        for (auto& [node, v] : vars) m_vars[node] = impl->getArg(unsigned(k++));
        m_bufs.clear();
        for (auto& [key, bb] : bufs) {
            impl->getArg(unsigned(k))->setName(bb.buf->name);
            m_bufs[key] = {bb.buf, impl->getArg(unsigned(k++))};
        }
        emitSerialLoop(f->var, impl->getArg(0), impl->getArg(1), f->body, constNonNegative(mn));
        m_b.CreateRetVoid();
        m_fn = savedFn;
        m_entry = savedEntry;
        m_vars = std::move(savedVars);
        m_bufs = std::move(savedBufs);
        m_b.SetInsertPoint(savedBlock);

        llvm::FunctionCallee launch = m_mod.getOrInsertFunction(
            kernel_abi::kParallelFor, llvm::FunctionType::get(m_i32, {m_i64, m_ptr, m_ptr}, false));
        m_b.CreateCall(launch, {ext, fn, clos});
    }

    llvm::LLVMContext& m_ctx;
    llvm::Module& m_mod;
    llvm::IRBuilder<> m_b;
    const Target& m_target;
    llvm::Type *m_f32, *m_f64, *m_i64, *m_i32, *m_i1;
    llvm::PointerType* m_ptr;

    llvm::Function* m_fn = nullptr;
    llvm::BasicBlock* m_entry = nullptr;
    std::unordered_map<const te::ExprNode*, llvm::Value*> m_vars;
    std::unordered_set<const te::ExprNode*> m_nonNegVars;  // loop variables known to be >= 0
    std::unordered_map<const te::OperationNode*, BufBinding> m_bufs;
    int m_parCounter = 0;

    // Vector context of the innermost Vectorized loop being emitted.
    int m_lanes = 1;
    std::optional<te::Var> m_laneVar;
    llvm::Value* m_laneBase = nullptr;
    llvm::Value* m_mask = nullptr;  // <lanes x i1> of active lanes, null = all
};

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const Target& target) {
    initializeLlvm();
    std::string err;
    const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(target.mtriple, err);
    TB_USER_CHECK(lt) << "target '" << target.str() << "': " << err;
    llvm::TargetOptions opt;
    opt.AllowFPOpFusion = llvm::FPOpFusion::Fast;
    auto level = target.optLevel >= 3 ? llvm::CodeGenOpt::Aggressive
                 : target.optLevel == 2 ? llvm::CodeGenOpt::Default
                 : target.optLevel == 1 ? llvm::CodeGenOpt::Less
                                        : llvm::CodeGenOpt::None;
    std::unique_ptr<llvm::TargetMachine> tm(lt->createTargetMachine(target.mtriple, target.mcpu, target.featureString(), opt,
                                                                    llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
    TB_USER_CHECK(tm) << "target '" << target.str() << "': LLVM could not create a target machine";
    return tm;
}

// TB_LLVM_PASS_TIMES=1: every pass's wall time, summed over the process and printed (the 40
// costliest) to stderr at exit. A diagnostic for the pipeline below; analyses nested in a pass are
// counted in the pass and again under their own name.
struct PassTimes {
    std::mutex mutex;
    std::map<std::string, std::pair<double, int>> total;  // pass -> (s, runs)
    ~PassTimes() {
        std::vector<std::pair<double, std::string>> v;
        double sum = 0;
        for (auto& [name, t] : total) v.emplace_back(t.first, name), sum += t.first;
        std::sort(v.rbegin(), v.rend());
        std::fprintf(stderr, "LLVM pass times (s), sum %.2f\n", sum);
        for (size_t i = 0; i < v.size() && i < 40; ++i)
            std::fprintf(stderr, "%8.3f %5.1f%% %7d %s\n", v[i].first, 100 * v[i].first / sum, total[v[i].second].second,
                         v[i].second.c_str());
    }
};
PassTimes* passTimes() {
    static std::unique_ptr<PassTimes> p(std::getenv("TB_LLVM_PASS_TIMES") ? new PassTimes : nullptr);
    return p.get();
}
void timePasses(llvm::PassInstrumentationCallbacks& pic, std::vector<std::chrono::steady_clock::time_point>& started) {
    PassTimes* pt = passTimes();
    if (!pt) return;
    auto before = [&started] { started.push_back(std::chrono::steady_clock::now()); };
    auto after = [&started, pt](const std::string& name) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started.back()).count();
        started.pop_back();
        // Pass managers and adaptors contain the passes that are timed on their own.
        for (const char* container : {"PassManager", "Adaptor", "ModuleToFunction", "DevirtSCC"})
            if (name.find(container) != std::string::npos) return;
        std::lock_guard lock(pt->mutex);
        auto& e = pt->total[name];
        e.first += s, e.second += 1;
    };
    pic.registerBeforeNonSkippedPassCallback([before](llvm::StringRef, llvm::Any) { before(); });
    pic.registerAfterPassCallback([after](llvm::StringRef n, llvm::Any, const llvm::PreservedAnalyses&) { after(n.str()); });
    pic.registerAfterPassInvalidatedCallback([after](llvm::StringRef n, const llvm::PreservedAnalyses&) { after(n.str()); });
    pic.registerBeforeAnalysisCallback([before](llvm::StringRef, llvm::Any) { before(); });
    pic.registerAfterAnalysisCallback([after](llvm::StringRef n, llvm::Any) { after("analysis:" + n.str()); });
}

void optimize(llvm::Module& mod, llvm::TargetMachine* tm, const std::string& pipeline) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassInstrumentationCallbacks pic;
    std::vector<std::chrono::steady_clock::time_point> started;
    timePasses(pic, started);
    llvm::PassBuilder pb(tm, llvm::PipelineTuningOptions(), std::nullopt, &pic);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm;
    if (auto err = pb.parsePassPipeline(mpm, pipeline))
        TB_USER_ERROR() << "LLVM pass pipeline '" << pipeline << "': " << llvm::toString(std::move(err));
    mpm.run(mod, mam);
}

std::string emitToString(llvm::Module& mod, llvm::TargetMachine* tm, llvm::CodeGenFileType type) {
    llvm::SmallVector<char, 0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    TB_CHECK(!tm->addPassesToEmitFile(pm, os, nullptr, type)) << "LLVM cannot emit this file type";
    pm.run(mod);
    return std::string(buf.begin(), buf.end());
}


// What the cache key adds to the printed IR: whether codegen inserts weight prefetches, and for which
// arguments (they are not in LoweredFunc::print()).
std::string prefetchKeySuffix(const lower::LoweredFunc& f) {
    if (!prefetchesWeights(f)) return {};
    std::string s = "// prefetch v1:";
    for (int i : f.weightArgs) s += " " + std::to_string(i);
    return s + "\n";
}

std::string cacheKey(const std::string& lowered, const Target& target, const CompileOptions& o) {
    return md5Hex(lowered + "\n" + target.str() + "\n" + (o.emitLlvmIr ? "ir" : "") + (o.emitAssembly ? "asm" : "") + "\n" +
                  (target.kind == "llvm" ? llvmPipeline(target, o) : std::string()));
}

}  // namespace

// The kernel pipeline (-opt-level=3): LLVM's default<O3> function passes that our kernels need, in
// O3's order, each group run once. Left out is what a kernel module does not use or O3 runs again:
// the inliner and its CGSCC iterations (codegen's inner functions stay calls, see emitFunction), the
// interprocedural passes, coroutines, and the repeated cleanups (O3 runs instcombine 8 times per
// function, LICM and indvars per loop in two loop pipelines). Measured (bench_opt_level --pipeline,
// README "Build time"): over the 352 candidates of a mobilenet run, LLVM's pipeline time -52% and
// compile time -30%; tuning mobilenet for 1242 trials (4 seeds), 110-113 s against 130-132 s with
// default<O3>, and the networks tuned either way as fast (ours/O3 0.97-1.05 per seed, geomean 1.00
// at 1 and at 2 threads). States that default<O3>'s search picked run 1.5% faster built by
// default<O3>; states this pipeline's search picked run as fast either way: the search adapts to
// what it is measured with, so the tuner and `compile` must use one pipeline.
constexpr const char* kKernelPipeline =
    "function("
    "simplifycfg,sroa<modify-cfg>,early-cse<memssa>,instcombine,"
    // Hoisting out of loops before and after rotation, as O3's first loop pipeline.
    "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,loop-rotate,licm<allowspeculation>),"
    "simplifycfg,"
    // Local arrays (cache_read/cache_write stages) become registers once their loops are unrolled.
    "loop(indvars,loop-deletion,loop-unroll-full),sroa<modify-cfg>,"
    "gvn<>,instcombine,dse,loop-mssa(licm<allowspeculation>),simplifycfg,"
    // Loops codegen did not vectorize itself (the serial fallbacks). No SLP vectorizer: codegen emits
    // the vectors; on mobilenet's states it changed nothing (each task's best 1.000), and on AArch64
    // AutoTVM spatial-pack kernels its tree building went quadratic (minutes for one kernel).
    "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,instcombine,"
    "loop-unroll<O3>,sroa<preserve-cfg>,instcombine,loop-mssa(licm<allowspeculation>),simplifycfg)";

const char* kernelPipeline() { return kKernelPipeline; }

std::string llvmPipeline(const Target& target, const CompileOptions& options) {
    if (!options.llvmPipeline.empty()) return options.llvmPipeline;
    if (const char* env = std::getenv("TB_LLVM_PIPELINE"); env && *env) return env;
    if (target.optLevel >= 3) return kKernelPipeline;
    return "default<O" + std::to_string(std::max(0, target.optLevel)) + ">";
}

CompiledKernel compile(const lower::LoweredFunc& f, const Target& target, const CompileOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    TB_CHECK(f.body) << "compiling a function without a body";
    CompiledKernel out;
    out.name = f.name;
    out.target = target.str();
    out.runsOnHost = target.runsOnHost();
    out.loweredIr = f.print();
    out.key = cacheKey(out.loweredIr + prefetchKeySuffix(f), target, options);
    for (auto& a : f.args) out.argElements.push_back(a->spanElements());

    auto tm = makeTargetMachine(target);
    llvm::LLVMContext ctx;
    auto mod = std::make_unique<llvm::Module>(f.name, ctx);
    mod->setTargetTriple(target.mtriple);
    mod->setDataLayout(tm->createDataLayout());
    CodeGen(ctx, *mod, target).emitFunction(f);
    {
        std::string msg;
        llvm::raw_string_ostream os(msg);
        TB_CHECK(!llvm::verifyModule(*mod, &os)) << "invalid LLVM module for " << f.name << ": " << os.str();
    }
    const auto tOpt = std::chrono::steady_clock::now();
    optimize(*mod, tm.get(), llvmPipeline(target, options));
    out.optimizeSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tOpt).count();
    if (options.emitLlvmIr) {
        llvm::raw_string_ostream os(out.llvmIr);
        mod->print(os, nullptr);
    }
    if (options.emitAssembly) {
        // Codegen passes mutate the IR, so the assembly comes from a copy.
        auto copy = llvm::CloneModule(*mod);
        out.assembly = emitToString(*copy, tm.get(), llvm::CGFT_AssemblyFile);
    }
    const auto tEmit = std::chrono::steady_clock::now();
    const std::string obj = emitToString(*mod, tm.get(), llvm::CGFT_ObjectFile);
    out.emitSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tEmit).count();
    out.object.assign(obj.begin(), obj.end());
    out.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

namespace {
struct KernelCache {
    std::mutex mutex;
    std::unordered_map<std::string, std::shared_ptr<const CompiledKernel>> map;
};
KernelCache& cache() {
    static KernelCache c;
    return c;
}
}  // namespace

std::shared_ptr<const CompiledKernel> compileCached(const lower::LoweredFunc& f, const Target& target,
                                                    const CompileOptions& options) {
    const std::string key = cacheKey(f.print() + prefetchKeySuffix(f), target, options);
    {
        std::lock_guard lock(cache().mutex);
        auto it = cache().map.find(key);
        if (it != cache().map.end()) return it->second;
    }
    auto k = std::make_shared<const CompiledKernel>(compile(f, target, options));
    std::lock_guard lock(cache().mutex);
    return cache().map.emplace(key, k).first->second;
}

size_t kernelCacheSize() {
    std::lock_guard lock(cache().mutex);
    return cache().map.size();
}

void clearKernelCache() {
    std::lock_guard lock(cache().mutex);
    cache().map.clear();
}

}  // namespace tb::codegen
