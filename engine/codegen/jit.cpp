// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/jit.h"

#include "engine/codegen/llvm_headers.h"
#include "engine/codegen/llvm_init.h"
#include "engine/support/error.h"

namespace tb::codegen {

struct LoadedKernel::Impl {
    std::unique_ptr<llvm::orc::LLJIT> jit;
};

LoadedKernel::~LoadedKernel() = default;

std::unique_ptr<LoadedKernel> LoadedKernel::load(const std::vector<uint8_t>& object, const std::string& symbol) {
    initializeLlvm();
    llvm::StringRef bytes(reinterpret_cast<const char*>(object.data()), object.size());
    {
        auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "kernel.o"));
        TB_USER_CHECK(bool(obj)) << "kernel object for '" << symbol << "' is not a valid object file: "
                                 << llvm::toString(obj.takeError());
        const llvm::Triple host(llvm::sys::getProcessTriple());
        TB_USER_CHECK((*obj)->getArch() == host.getArch())
            << "kernel object for '" << symbol << "' is for " << llvm::Triple::getArchTypeName((*obj)->getArch()).str()
            << " and cannot run on this " << host.getArchName().str() << " machine";
    }
    auto jit = llvm::orc::LLJITBuilder().create();
    TB_USER_CHECK(bool(jit)) << "cannot create the JIT: " << llvm::toString(jit.takeError());
    auto& jd = (*jit)->getMainJITDylib();
    llvm::orc::SymbolMap syms;
    for (auto& [name, addr] : runtimeSymbols())
        syms[(*jit)->mangleAndIntern(name)] =
            llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(addr), llvm::JITSymbolFlags::Exported);
    llvm::cantFail(jd.define(llvm::orc::absoluteSymbols(std::move(syms))));
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
    TB_USER_CHECK(bool(gen)) << "cannot search this process's symbols: " << llvm::toString(gen.takeError());
    jd.addGenerator(std::move(*gen));
    if (auto err = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(bytes, "kernel.o")))
        TB_USER_ERROR() << "cannot load the kernel object for '" << symbol << "': " << llvm::toString(std::move(err));
    auto addr = (*jit)->lookup(symbol);
    TB_USER_CHECK(bool(addr)) << "cannot link kernel '" << symbol << "': " << llvm::toString(addr.takeError());
    std::unique_ptr<LoadedKernel> k(new LoadedKernel());
    k->m_fn = addr->toPtr<KernelFunction>();
    k->m_impl = std::make_unique<Impl>();
    k->m_impl->jit = std::move(*jit);
    return k;
}

int32_t LoadedKernel::run(const std::vector<float*>& args) const {
    std::vector<void*> ptrs(args.begin(), args.end());
    return m_fn(ptrs.data());
}

}  // namespace tb::codegen
