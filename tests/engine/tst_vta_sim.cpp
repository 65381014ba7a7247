// SPDX-License-Identifier: Apache-2.0
// The VTA hardware model: config JSON, ISA encoding, the functional simulator against plain
// int8/int32 loops on random data, dependence queues, counters, the cycle model's properties and
// the command builder.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <vector>

#include "engine/vta/command_builder.h"
#include "engine/vta/isa.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "test_util.h"

using namespace tb::vta;
using tb::test::userError;

namespace {

// TVM's config/vta_config.json (apache/tvm-vta), as shipped.
const char* kTvmDefaultJson = R"({
  "TARGET" : "sim",
  "HW_VER" : "0.0.2",
  "LOG_INP_WIDTH" : 3,
  "LOG_WGT_WIDTH" : 3,
  "LOG_ACC_WIDTH" : 5,
  "LOG_BATCH" : 0,
  "LOG_BLOCK" : 4,
  "LOG_UOP_BUFF_SIZE" : 15,
  "LOG_INP_BUFF_SIZE" : 15,
  "LOG_WGT_BUFF_SIZE" : 18,
  "LOG_ACC_BUFF_SIZE" : 17
})";

// A second shape of the core: BATCH 2, BLOCK 8 (with a 64 KiB weight buffer, so that the index
// fields still fit the 32-bit micro-op).
VtaConfig batch2Block8() {
    VtaConfig cfg;
    cfg.logBatch = 1;
    cfg.logBlock = 3;
    cfg.logWgtBuffSize = 16;
    return cfg;
}

// Narrow types: int4 inputs and weights, int16 accumulators (smaller buffers so that the index
// fields fit), for the simulator's general bit-packing path.
VtaConfig int4Acc16() {
    VtaConfig cfg;
    cfg.logInpWidth = 2;
    cfg.logWgtWidth = 2;
    cfg.logAccWidth = 4;
    cfg.logInpBuffSize = 14;
    cfg.logWgtBuffSize = 17;
    cfg.logAccBuffSize = 16;
    return cfg;
}

VtaConfig configNamed(const QString& name) {
    if (name == QLatin1String("2x8")) return batch2Block8();
    if (name == QLatin1String("i4a16")) return int4Acc16();
    return VtaConfig{};
}

// Two's complement wrap of v to `bits` bits, sign-extended.
int32_t wrapBits(int64_t v, int bits) {
    const uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    const uint64_t sign = uint64_t(1) << (bits - 1);
    return int32_t(int64_t(((uint64_t(v) & mask) ^ sign) - sign));
}

// Random signed values of `bits` bits, over the whole range.
std::vector<int32_t> randomBits(std::mt19937& rng, size_t n, int bits) {
    std::uniform_int_distribution<int64_t> d(-(int64_t(1) << (bits - 1)), (int64_t(1) << (bits - 1)) - 1);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = int32_t(d(rng));
    return v;
}

// Values packed LSB-first into bytes, `bits` each (VTA's DRAM and SRAM layout).
std::vector<uint8_t> packBits(const std::vector<int32_t>& values, int bits) {
    std::vector<uint8_t> bytes((values.size() * size_t(bits) + 7) / 8, 0);
    for (size_t i = 0; i < values.size(); ++i)
        for (int b = 0; b < bits; ++b)
            if ((uint32_t(values[i]) >> b) & 1u) bytes[(i * size_t(bits) + size_t(b)) / 8] |= uint8_t(1u << ((i * size_t(bits) + size_t(b)) % 8));
    return bytes;
}

std::vector<int32_t> unpackBits(const std::vector<uint8_t>& bytes, size_t n, int bits) {
    std::vector<int32_t> values(n);
    for (size_t i = 0; i < n; ++i) {
        uint64_t raw = 0;
        for (int b = 0; b < bits; ++b) raw |= uint64_t((bytes[(i * size_t(bits) + size_t(b)) / 8] >> ((i * size_t(bits) + size_t(b)) % 8)) & 1u) << b;
        values[i] = wrapBits(int64_t(raw), bits);
    }
    return values;
}

std::vector<int8_t> randomInt8(std::mt19937& rng, size_t n) {
    std::uniform_int_distribution<int> d(-128, 127);
    std::vector<int8_t> v(n);
    for (auto& x : v) x = int8_t(d(rng));
    return v;
}

std::vector<int32_t> randomInt32(std::mt19937& rng, size_t n, int32_t lo, int32_t hi) {
    std::uniform_int_distribution<int32_t> d(lo, hi);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

template <class T>
uint32_t upload(Simulator& sim, const std::vector<T>& values) {
    const uint32_t addr = sim.dram().alloc(values.size() * sizeof(T));
    sim.dram().writeArray(addr, values);
    return addr;
}

// A LOAD/STORE of `x` elements in one row from the DRAM buffer at byte address `addr`.
Instruction mem(Opcode op, MemId id, uint32_t sram, uint32_t addr, uint32_t x, const VtaConfig& cfg) {
    Instruction i;
    i.opcode = op;
    i.memoryType = id;
    i.sramBase = sram;
    i.dramBase = addr / dramElemBytes(id, cfg);
    i.ySize = 1;
    i.xSize = x;
    i.xStride = x;
    return i;
}

Instruction finish() { return Instruction{}; }

uint32_t uploadUops(Simulator& sim, const std::vector<Uop>& uops) {
    std::vector<uint32_t> words;
    for (const Uop& u : uops) words.push_back(encodeUop(u, sim.config()));
    return upload(sim, words);
}

// Random micro-ops whose indices stay below `limit[0..2]` (dst, src, wgt) after adding the loop
// offsets (iterOut-1)*factorOut + (iterIn-1)*factorIn; `srcLow` is the smallest source index.
std::vector<Uop> randomUops(std::mt19937& rng, int n, const Instruction& insn, uint32_t dstLimit, uint32_t srcLow,
                            uint32_t srcLimit, uint32_t wgtLimit) {
    const uint32_t dstSpan = (insn.iterOut - 1) * insn.dstFactorOut + (insn.iterIn - 1) * insn.dstFactorIn;
    const uint32_t srcSpan = (insn.iterOut - 1) * insn.srcFactorOut + (insn.iterIn - 1) * insn.srcFactorIn;
    const uint32_t wgtSpan = (insn.iterOut - 1) * insn.wgtFactorOut + (insn.iterIn - 1) * insn.wgtFactorIn;
    std::vector<Uop> uops;
    for (int u = 0; u < n; ++u) {
        Uop uop;
        uop.dstIdx = std::uniform_int_distribution<uint32_t>(0, dstLimit - 1 - dstSpan)(rng);
        uop.srcIdx = std::uniform_int_distribution<uint32_t>(srcLow, srcLimit - 1 - srcSpan)(rng);
        uop.wgtIdx = wgtLimit ? std::uniform_int_distribution<uint32_t>(0, wgtLimit - 1 - wgtSpan)(rng) : 0;
        uops.push_back(uop);
    }
    return uops;
}

}  // namespace

class TestVtaSim : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // --- config ------------------------------------------------------------------------------

    void testConfigDefaults() {
        const VtaConfig cfg = VtaConfig::fromJson(kTvmDefaultJson);
        QCOMPARE(cfg, VtaConfig{});
        QCOMPARE(cfg.target, std::string("sim"));
        // TVM's int8 x int8 -> int32 core of 1 x 16 x 16.
        QCOMPARE(cfg.inpWidth(), 8);
        QCOMPARE(cfg.wgtWidth(), 8);
        QCOMPARE(cfg.accWidth(), 32);
        QCOMPARE(cfg.outWidth(), cfg.inpWidth());
        QCOMPARE(cfg.batch(), 1);
        QCOMPARE(cfg.blockIn(), 16);
        QCOMPARE(cfg.blockOut(), 16);
        // Element sizes follow from the shape and widths, depths from the buffer sizes.
        QCOMPARE(cfg.inpElemBytes(), cfg.batch() * cfg.blockIn() * cfg.inpWidth() / 8);
        QCOMPARE(cfg.wgtElemBytes(), cfg.blockOut() * cfg.blockIn() * cfg.wgtWidth() / 8);
        QCOMPARE(cfg.accElemBytes(), cfg.batch() * cfg.blockOut() * cfg.accWidth() / 8);
        QCOMPARE(int64_t(cfg.inpBuffDepth()) * cfg.inpElemBytes(), cfg.inpBuffBytes());
        QCOMPARE(int64_t(cfg.wgtBuffDepth()) * cfg.wgtElemBytes(), cfg.wgtBuffBytes());
        QCOMPARE(int64_t(cfg.accBuffDepth()) * cfg.accElemBytes(), cfg.accBuffBytes());
        QCOMPARE(int64_t(cfg.uopBuffDepth()) * VtaConfig::kUopElemBytes, cfg.uopBuffBytes());
        QCOMPARE(cfg.outBuffBytes() * cfg.accWidth(), cfg.accBuffBytes() * cfg.outWidth());
        QCOMPARE(cfg.bitstream(), std::string("1x16_i8w8a32_15_15_18_17"));
        QCOMPARE(cfg.model(), std::string("sim_1x16_i8w8a32_15_15_18_17"));
        QCOMPARE(cfg.peakMacsPerCycle(), int64_t(256));
        QCOMPARE(cfg.targetHost(), std::string("llvm"));
    }

    void testConfigTargets() {
        // pynq and intelfocl take the Pynq-Z1 clock and bus, ultra96 its own (pkg_config.py).
        const VtaConfig pynq = VtaConfig::fromJson(QByteArray(kTvmDefaultJson).replace("\"sim\"", "\"pynq\"").toStdString());
        QCOMPARE(pynq.fpgaFreqMhz(), 100);
        QCOMPARE(pynq.busBytes(), 8);
        QCOMPARE(pynq.targetHost(), std::string("llvm -mtriple=armv7-none-linux-gnueabihf"));
        const VtaConfig focl = VtaConfig::forTarget("intelfocl");
        QCOMPARE(focl.fpgaFreqMhz(), 100);
        QCOMPARE(focl.targetHost(), std::string("llvm"));
        QCOMPARE(focl.model(), std::string("intelfocl_1x16_i8w8a32_15_15_18_17"));
        const VtaConfig u96 = VtaConfig::forTarget("ultra96");
        QCOMPARE(u96.fpgaFreqMhz(), 333);
        QCOMPARE(u96.busBytes(), 16);
        QCOMPARE(u96.targetHost(), std::string("llvm -mtriple=aarch64-linux-gnu"));
        QVERIFY(userError([] { (void)VtaConfig::forTarget("zcu104").targetHost(); }).contains(QLatin1String("no host target")));
        // JSON and file round trips.
        const VtaConfig other = batch2Block8();
        QCOMPARE(VtaConfig::fromJson(other.toJson()), other);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("vta_config.json")).toStdString();
        std::ofstream(path) << u96.toJson();
        QCOMPARE(VtaConfig::fromFile(path), u96);
    }

    void testConfigErrors_data() {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<QString>("message");
        QTest::addRow("not json") << QByteArray("{\n  \"TARGET\"") << QByteArray("{\n  ,\"TARGET\"") << QStringLiteral("not valid JSON");
        QTest::addRow("missing key") << QByteArray("\"LOG_BLOCK\" : 4,") << QByteArray() << QStringLiteral("missing key 'LOG_BLOCK'");
        QTest::addRow("string for int") << QByteArray("\"LOG_BLOCK\" : 4") << QByteArray("\"LOG_BLOCK\" : \"4\"")
                                        << QStringLiteral("'LOG_BLOCK' must be an integer");
        QTest::addRow("misspelt key") << QByteArray("\"LOG_BLOCK\"") << QByteArray("\"LOG_BLOK\"") << QStringLiteral("unknown key 'LOG_BLOK'");
        QTest::addRow("unknown target") << QByteArray("\"sim\"") << QByteArray("\"fpga\"") << QStringLiteral("unknown VTA TARGET 'fpga'");
        QTest::addRow("acc width") << QByteArray("\"LOG_ACC_WIDTH\" : 5") << QByteArray("\"LOG_ACC_WIDTH\" : 6")
                                   << QStringLiteral("LOG_ACC_WIDTH = 6 is out of range");
        // One more weight index bit and one less input bit: the GEMM instruction still fits 128
        // bits, the micro-op's three indices (11 + 11 + 11) do not fit 32.
        QTest::addRow("uop too wide") << QByteArray("\"LOG_WGT_BUFF_SIZE\" : 18|\"LOG_INP_BUFF_SIZE\" : 15")
                                      << QByteArray("\"LOG_WGT_BUFF_SIZE\" : 19|\"LOG_INP_BUFF_SIZE\" : 14")
                                      << QStringLiteral("does not fit the 32-bit micro-op");
        QTest::addRow("instruction too wide") << QByteArray("\"LOG_ACC_BUFF_SIZE\" : 17") << QByteArray("\"LOG_ACC_BUFF_SIZE\" : 20")
                                              << QStringLiteral("does not fit the 128-bit instruction");
        QTest::addRow("buffer too deep") << QByteArray("\"LOG_INP_BUFF_SIZE\" : 15") << QByteArray("\"LOG_INP_BUFF_SIZE\" : 25")
                                         << QStringLiteral("LOG_INP_BUFF_SIZE gives a buffer of 2^");
    }
    void testConfigErrors() {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(QString, message);
        QByteArray json(kTvmDefaultJson);
        const QList<QByteArray> froms = from.split('|'), tos = to.split('|');  // '|' separates replacements
        for (qsizetype i = 0; i < froms.size(); ++i) {
            QVERIFY(json.contains(froms[i]));
            json.replace(froms[i], tos.value(i));
        }
        const QString err = userError([&] { VtaConfig::fromJson(json.toStdString(), "my_config.json"); });
        QVERIFY2(err.contains(message) && err.startsWith(QLatin1String("my_config.json: ")), qPrintable(err));
    }

    void testConfigMissingFile() {
        const QString err = userError([] { VtaConfig::fromFile("/nonexistent/vta_config.json"); });
        QVERIFY2(err.contains(QLatin1String("cannot read VTA config file '/nonexistent/vta_config.json'")), qPrintable(err));
    }

    // --- ISA ---------------------------------------------------------------------------------

    void testLayout() {
        // Facts of TVM's bit-fields under the default config (GCC's layout of hw_spec.h): the
        // 16-bit y_size would straddle bit 64 and starts there, so do the GEMM/ALU factors.
        const VtaConfig cfg;
        auto offsetOf = [](const std::vector<FieldLayout>& l, const char* name) {
            for (const auto& f : l)
                if (f.name == name) return f.offset;
            return -1;
        };
        QCOMPARE(offsetOf(instructionLayout(Opcode::Load, cfg), "dram_base"), 26);
        QCOMPARE(offsetOf(instructionLayout(Opcode::Load, cfg), "y_size"), 64);
        QCOMPARE(offsetOf(instructionLayout(Opcode::Gemm, cfg), "iter_in"), 49);
        QCOMPARE(offsetOf(instructionLayout(Opcode::Gemm, cfg), "dst_factor_out"), 64);
        QCOMPARE(offsetOf(instructionLayout(Opcode::Alu, cfg), "imm"), 112);
        QCOMPARE(offsetOf(uopLayout(cfg), "wgt_idx"), 22);
        // Every format: fields in order, disjoint, none crossing a 64-bit (uop: 32-bit) unit.
        for (const VtaConfig& c : {VtaConfig{}, batch2Block8()}) {
            for (Opcode op : {Opcode::Load, Opcode::Store, Opcode::Gemm, Opcode::Alu, Opcode::Finish}) {
                int end = 0;
                for (const auto& f : instructionLayout(op, c)) {
                    QVERIFY(f.offset >= end);
                    QVERIFY(f.offset / 64 == (f.offset + f.width - 1) / 64);
                    end = f.offset + f.width;
                }
                QVERIFY(end <= 128);
            }
            int end = 0;
            for (const auto& f : uopLayout(c)) {
                QVERIFY(f.offset >= end && f.offset / 32 == (f.offset + f.width - 1) / 32);
                end = f.offset + f.width;
            }
            QVERIFY(end <= 32);
        }
    }

    void testEncodeRoundTrip() {
        std::mt19937 rng(14);
        for (const VtaConfig& cfg : {VtaConfig{}, batch2Block8()}) {
            for (int n = 0; n < 400; ++n) {
                const Opcode op = Opcode(n % 5);
                // Random values for every field of the format, within its width.
                InsnWord word{0, 0};
                for (const auto& f : instructionLayout(op, cfg)) {
                    uint64_t v = std::uniform_int_distribution<uint64_t>(0, (uint64_t(1) << f.width) - 1)(rng);
                    if (f.name == "opcode") v = uint64_t(op);
                    if (f.name == "memory_type") v %= 6;
                    if (f.name == "alu_opcode") v %= 5;
                    word[size_t(f.offset / 64)] |= v << (f.offset % 64);
                }
                const Instruction insn = decode(word, cfg);
                QCOMPARE(insn.opcode, op);
                QCOMPARE(encode(insn, cfg), word);
                QCOMPARE(decode(encode(insn, cfg), cfg), insn);
            }
            for (int n = 0; n < 200; ++n) {
                Uop u;
                u.dstIdx = std::uniform_int_distribution<uint32_t>(0, uint32_t(cfg.accBuffDepth() - 1))(rng);
                u.srcIdx = std::uniform_int_distribution<uint32_t>(0, uint32_t(cfg.inpBuffDepth() - 1))(rng);
                u.wgtIdx = std::uniform_int_distribution<uint32_t>(0, uint32_t(cfg.wgtBuffDepth() - 1))(rng);
                QCOMPARE(decodeUop(encodeUop(u, cfg), cfg), u);
            }
        }
        // A negative immediate survives the 16-bit signed field.
        Instruction alu;
        alu.opcode = Opcode::Alu;
        alu.aluOpcode = AluOpcode::Shr;
        alu.useImm = true;
        alu.imm = -7;
        QCOMPARE(decode(encode(alu, VtaConfig{}), VtaConfig{}).imm, -7);
    }

    void testEncodeErrors() {
        const VtaConfig cfg;
        Instruction gemm;
        gemm.opcode = Opcode::Gemm;
        gemm.uopEnd = uint32_t(cfg.uopBuffDepth()) * 2;  // one bit more than the field holds
        QVERIFY(userError([&] { encode(gemm, cfg); }).contains(QLatin1String("field uop_end")));
        Instruction alu;
        alu.opcode = Opcode::Alu;
        alu.imm = 40000;
        QVERIFY(userError([&] { encode(alu, cfg); }).contains(QLatin1String("field imm = 40000 does not fit its 16 signed bits")));
        QVERIFY(userError([&] { decode(InsnWord{7, 0}, cfg); }).contains(QLatin1String("unknown opcode 7")));
        Uop u;
        u.wgtIdx = uint32_t(cfg.wgtBuffDepth());
        QVERIFY(userError([&] { encodeUop(u, cfg); }).contains(QLatin1String("wgt_idx")));
    }

    void testDisassembly() {
        Instruction load = mem(Opcode::Load, MemId::Inp, 3, 4096 * 2, 4, VtaConfig{});
        load.yPad0 = 1;
        load.pushNext = true;
        QCOMPARE(disassemble(load), std::string("LOAD INP sram=3 dram=512 y=1 pad(1,0) x=4 stride=4 | push_next"));
        Instruction alu;
        alu.opcode = Opcode::Alu;
        alu.aluOpcode = AluOpcode::Shr;
        alu.useImm = true;
        alu.imm = 8;
        alu.uopEnd = 1;
        alu.iterOut = 1;
        alu.iterIn = 16;
        alu.dstFactorIn = alu.srcFactorIn = 1;
        QCOMPARE(disassemble(alu), std::string("ALU SHR imm=8 uop=[0,1) out=1(dst+0 src+0) in=16(dst+1 src+1)"));
        Instruction nop;
        nop.opcode = Opcode::Store;
        nop.popPrev = true;
        QCOMPARE(disassemble(nop), std::string("NOP store | pop_prev"));
        const std::string listing = disassemble(std::vector<Instruction>{load, nop, finish()});
        QVERIFY(listing.find("  2: FINISH\n") != std::string::npos);
    }

    // --- functional simulator ----------------------------------------------------------------

    void testGemm_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("uops");
        QTest::addColumn<int>("iterOut");
        QTest::addColumn<int>("iterIn");
        QTest::addColumn<QList<int>>("factors");  // dst out/in, src out/in, wgt out/in
        QTest::addColumn<bool>("reset");
        QTest::addRow("one uop") << QStringLiteral("1x16") << 1 << 1 << 1 << QList<int>{0, 0, 0, 0, 0, 0} << false;
        QTest::addRow("uops, no loop") << QStringLiteral("1x16") << 7 << 1 << 1 << QList<int>{0, 0, 0, 0, 0, 0} << false;
        QTest::addRow("outer loop") << QStringLiteral("1x16") << 4 << 5 << 1 << QList<int>{3, 0, 2, 0, 1, 0} << false;
        QTest::addRow("two loops") << QStringLiteral("1x16") << 3 << 4 << 6 << QList<int>{8, 1, 5, 2, 0, 3} << false;
        QTest::addRow("reduction in place") << QStringLiteral("1x16") << 2 << 3 << 4 << QList<int>{0, 0, 4, 1, 4, 1} << false;
        QTest::addRow("batch 2 block 8") << QStringLiteral("2x8") << 5 << 3 << 2 << QList<int>{6, 2, 1, 3, 2, 1} << false;
        QTest::addRow("reset") << QStringLiteral("1x16") << 3 << 2 << 2 << QList<int>{5, 1, 0, 0, 0, 0} << true;
        QTest::addRow("int4 x int4 -> int16") << QStringLiteral("i4a16") << 4 << 3 << 3 << QList<int>{7, 2, 3, 1, 2, 3} << false;
    }
    void testGemm() {
        QFETCH(QString, config);
        QFETCH(int, uops);
        QFETCH(int, iterOut);
        QFETCH(int, iterIn);
        QFETCH(QList<int>, factors);
        QFETCH(bool, reset);
        const VtaConfig cfg = configNamed(config);
        Simulator sim(cfg);
        std::mt19937 rng(uint32_t(uops * 131 + iterOut * 17 + iterIn));
        const uint32_t nInp = 40, nWgt = 24, nAcc = 48;
        const int bat = cfg.batch(), bin = cfg.blockIn(), bout = cfg.blockOut();
        const auto inp = randomBits(rng, size_t(nInp) * bat * bin, cfg.inpWidth());
        const auto wgt = randomBits(rng, size_t(nWgt) * bout * bin, cfg.wgtWidth());
        // Full-range accumulators: the sums must wrap at ACC_WIDTH bits as TVM's BitPacker does.
        const auto acc0 = randomBits(rng, size_t(nAcc) * bat * bout, cfg.accWidth());
        Instruction gemm;
        gemm.opcode = Opcode::Gemm;
        gemm.popPrev = true;
        gemm.resetReg = reset;
        gemm.iterOut = uint32_t(iterOut);
        gemm.iterIn = uint32_t(iterIn);
        gemm.dstFactorOut = uint32_t(factors[0]), gemm.dstFactorIn = uint32_t(factors[1]);
        gemm.srcFactorOut = uint32_t(factors[2]), gemm.srcFactorIn = uint32_t(factors[3]);
        gemm.wgtFactorOut = uint32_t(factors[4]), gemm.wgtFactorIn = uint32_t(factors[5]);
        gemm.uopBgn = 2;  // not at 0: the range must be honoured
        gemm.uopEnd = gemm.uopBgn + uint32_t(uops);
        std::vector<Uop> uopList(2);  // two unused micro-ops before the range
        for (const Uop& u : randomUops(rng, uops, gemm, nAcc, 0, nInp, nWgt)) uopList.push_back(u);

        Instruction loadWgt = mem(Opcode::Load, MemId::Wgt, 0, upload(sim, packBits(wgt, cfg.wgtWidth())), nWgt, cfg);
        loadWgt.pushNext = true;
        const std::vector<Instruction> program = {
            mem(Opcode::Load, MemId::Inp, 0, upload(sim, packBits(inp, cfg.inpWidth())), nInp, cfg),
            loadWgt,
            mem(Opcode::Load, MemId::Uop, 0, uploadUops(sim, uopList), uint32_t(uopList.size()), cfg),
            mem(Opcode::Load, MemId::Acc, 0, upload(sim, packBits(acc0, cfg.accWidth())), nAcc, cfg),
            gemm,
            finish(),
        };
        sim.run(program);

        // Plain loops over the host arrays.
        std::vector<int32_t> ref = acc0;
        for (int i = 0; i < iterOut; ++i)
            for (int j = 0; j < iterIn; ++j)
                for (uint32_t u = gemm.uopBgn; u < gemm.uopEnd; ++u) {
                    const Uop& uop = uopList[u];
                    const size_t a = uop.dstIdx + size_t(i) * gemm.dstFactorOut + size_t(j) * gemm.dstFactorIn;
                    const size_t x = uop.srcIdx + size_t(i) * gemm.srcFactorOut + size_t(j) * gemm.srcFactorIn;
                    const size_t w = uop.wgtIdx + size_t(i) * gemm.wgtFactorOut + size_t(j) * gemm.wgtFactorIn;
                    for (int b = 0; b < bat; ++b)
                        for (int o = 0; o < bout; ++o) {
                            int32_t& r = ref[a * size_t(bat * bout) + size_t(b * bout + o)];
                            if (reset) {
                                r = 0;
                                continue;
                            }
                            int64_t dot = 0;
                            for (int k = 0; k < bin; ++k)
                                dot += int64_t(inp[x * size_t(bat * bin) + size_t(b * bin + k)]) *
                                       wgt[w * size_t(bout * bin) + size_t(o * bin + k)];
                            r = wrapBits(int64_t(r) + dot, cfg.accWidth());
                        }
                }
        for (uint32_t e = 0; e < nAcc; ++e) {
            const auto got = sim.sramElement(MemId::Acc, e);
            const std::vector<int32_t> want(ref.begin() + ptrdiff_t(e) * bat * bout, ref.begin() + ptrdiff_t(e + 1) * bat * bout);
            QVERIFY2(got == want, qPrintable(QStringLiteral("acc element %1").arg(e)));
        }
        QCOMPARE(sim.stats().gemm_counter, reset ? uint64_t(0) : uint64_t(iterOut * iterIn * uops));
        QCOMPARE(sim.stats().inp_load_nbytes, uint64_t(nInp) * uint64_t(cfg.inpElemBytes()));
        QCOMPARE(sim.stats().wgt_load_nbytes, uint64_t(nWgt) * uint64_t(cfg.wgtElemBytes()));
        QCOMPARE(sim.stats().acc_load_nbytes, uint64_t(nAcc) * uint64_t(cfg.accElemBytes()));
        QCOMPARE(sim.stats().uop_load_nbytes, uint64_t(uopList.size()) * 4);
        QCOMPARE(sim.pendingTokens(DepQueue::L2C), size_t(0));
    }

    void testAlu_data() {
        QTest::addColumn<int>("op");
        QTest::addColumn<bool>("useImm");
        QTest::addColumn<int>("imm");
        const std::pair<AluOpcode, const char*> ops[] = {{AluOpcode::Min, "min"},
                                                         {AluOpcode::Max, "max"},
                                                         {AluOpcode::Add, "add"},
                                                         {AluOpcode::Mul, "mul"},
                                                         {AluOpcode::Shr, "shr"}};
        for (const auto& [op, name] : ops) {
            QTest::addRow("%s tensor", name) << int(op) << false << 0;
            const int imm = op == AluOpcode::Shr ? 5 : op == AluOpcode::Mul ? -3 : -1234;
            QTest::addRow("%s imm", name) << int(op) << true << imm;
        }
        QTest::addRow("shr imm negative = left shift") << int(AluOpcode::Shr) << true << -4;
        QTest::addRow("max imm 0 (relu)") << int(AluOpcode::Max) << true << 0;
        QTest::addRow("add imm int16 max") << int(AluOpcode::Add) << true << 32767;
    }
    void testAlu() {
        QFETCH(int, op);
        QFETCH(bool, useImm);
        QFETCH(int, imm);
        const auto aluOp = AluOpcode(op);
        for (const VtaConfig& cfg : {VtaConfig{}, batch2Block8(), int4Acc16()}) {
            Simulator sim(cfg);
            std::mt19937 rng(uint32_t(op * 7 + (useImm ? 1 : 0)));
            const uint32_t nDst = 32, nAcc = 64;  // destinations in [0, 32), sources in [32, 64)
            const size_t lanes = size_t(cfg.batch() * cfg.blockOut());
            const int bits = cfg.accWidth();
            auto acc0 = randomBits(rng, nAcc * lanes, bits);
            if (aluOp == AluOpcode::Shr) {
                // Shift amounts are the source operand: keep them in [-31, 31].
                for (size_t i = nDst * lanes; i < acc0.size(); ++i) acc0[i] = int32_t(i % 63) - 31;
            }
            Instruction alu;
            alu.opcode = Opcode::Alu;
            alu.aluOpcode = aluOp;
            alu.useImm = useImm;
            alu.imm = imm;
            alu.iterOut = 3, alu.iterIn = 4;
            alu.dstFactorOut = 4, alu.dstFactorIn = 1;
            alu.srcFactorOut = 1, alu.srcFactorIn = 3;
            alu.uopBgn = 0;
            alu.uopEnd = 3;
            const std::vector<Uop> uops = randomUops(rng, 3, alu, nDst, nDst, nAcc, 0);
            const std::vector<Instruction> program = {
                mem(Opcode::Load, MemId::Uop, 0, uploadUops(sim, uops), 3, cfg),
                mem(Opcode::Load, MemId::Acc, 0, upload(sim, packBits(acc0, bits)), nAcc, cfg),
                alu,
                finish(),
            };
            sim.run(program);
            std::vector<int32_t> ref = acc0;
            for (uint32_t i = 0; i < alu.iterOut; ++i)
                for (uint32_t j = 0; j < alu.iterIn; ++j)
                    for (const Uop& u : uops) {
                        const size_t d = u.dstIdx + i * alu.dstFactorOut + j * alu.dstFactorIn;
                        const size_t s = u.srcIdx + i * alu.srcFactorOut + j * alu.srcFactorIn;
                        for (size_t l = 0; l < lanes; ++l) {
                            int32_t& x = ref[d * lanes + l];
                            const int32_t y = useImm ? imm : ref[s * lanes + l];
                            // Results wrap to ACC_WIDTH bits (the accumulator keeps the low bits).
                            switch (aluOp) {
                            case AluOpcode::Min: x = std::min(x, y); break;
                            case AluOpcode::Max: x = std::max(x, y); break;
                            case AluOpcode::Add: x = wrapBits(int64_t(x) + y, bits); break;
                            case AluOpcode::Mul: x = wrapBits(int64_t(x) * y, bits); break;
                            case AluOpcode::Shr: x = wrapBits(y >= 0 ? x >> y : int64_t(x) * (int64_t(1) << -y), bits); break;
                            }
                        }
                    }
            for (uint32_t e = 0; e < nAcc; ++e) {
                const auto got = sim.sramElement(MemId::Acc, e);
                QVERIFY2(std::equal(got.begin(), got.end(), ref.begin() + ptrdiff_t(e * lanes)),
                         qPrintable(QStringLiteral("acc element %1").arg(e)));
            }
            QCOMPARE(sim.stats().alu_counter, uint64_t(alu.iterOut * alu.iterIn * 3));
        }
    }

    void testLoadPadding_data() {
        QTest::addColumn<QList<int>>("pads");  // y_pad_0, y_pad_1, x_pad_0, x_pad_1
        QTest::addColumn<int>("memType");
        QTest::addRow("inp no pad") << QList<int>{0, 0, 0, 0} << int(MemId::Inp);
        QTest::addRow("inp conv pad 1") << QList<int>{1, 1, 1, 1} << int(MemId::Inp);
        QTest::addRow("inp uneven") << QList<int>{2, 0, 0, 3} << int(MemId::Inp);
        QTest::addRow("inp max pad 15") << QList<int>{15, 15, 15, 15} << int(MemId::Inp);
        QTest::addRow("acc pad") << QList<int>{1, 2, 2, 1} << int(MemId::Acc);
        QTest::addRow("acc_8bit widening") << QList<int>{1, 0, 1, 2} << int(MemId::Acc8Bit);
        QTest::addRow("wgt") << QList<int>{0, 1, 1, 0} << int(MemId::Wgt);
    }
    void testLoadPadding() {
        QFETCH(QList<int>, pads);
        QFETCH(int, memType);
        const auto id = MemId(memType);
        const VtaConfig cfg;
        Simulator sim(cfg);
        std::mt19937 rng(uint32_t(memType * 100 + pads[0] * 7 + pads[3]));
        const MemId buffer = id == MemId::Acc8Bit ? MemId::Acc : id;
        const size_t lanes = sim.sramElement(buffer, 0).size();
        const size_t bytesPerValue = id == MemId::Acc ? 4 : 1;
        // A 2-D DRAM matrix of H x W elements; the load takes a tile at (r0, c0).
        const uint32_t H = 9, W = 11, r0 = 2, c0 = 3, ySize = 5, xSize = 6;
        std::vector<int32_t> dram32 = randomInt32(rng, H * W * lanes, INT32_MIN, INT32_MAX);
        std::vector<int8_t> dram8 = randomInt8(rng, H * W * lanes);
        const uint32_t addr = bytesPerValue == 4 ? upload(sim, dram32) : upload(sim, dram8);
        auto dramValue = [&](uint32_t r, uint32_t c, size_t l) {
            const size_t i = (size_t(r) * W + c) * lanes + l;
            return bytesPerValue == 4 ? dram32[i] : int32_t(dram8[i]);
        };
        const uint32_t sramBase = 5;
        const uint32_t yTotal = ySize + uint32_t(pads[0] + pads[1]), xTotal = xSize + uint32_t(pads[2] + pads[3]);
        const uint32_t region = yTotal * xTotal;
        // First fill the region (and one element around it) with non-zero data, so the padding
        // must be written as zeros rather than left alone.
        const MemId fillType = buffer;
        std::vector<int8_t> garbage8(size_t(region + 2) * lanes * (fillType == MemId::Acc ? 4 : 1), int8_t(0x5A));
        Instruction fill = mem(Opcode::Load, fillType, sramBase - 1, upload(sim, garbage8), region + 2, cfg);
        Instruction load = mem(Opcode::Load, id, sramBase, addr, xSize, cfg);
        load.dramBase += r0 * W + c0;
        load.ySize = ySize;
        load.xStride = W;
        load.yPad0 = uint32_t(pads[0]), load.yPad1 = uint32_t(pads[1]);
        load.xPad0 = uint32_t(pads[2]), load.xPad1 = uint32_t(pads[3]);
        // LOAD WGT/INP run on the load module; a lone FINISH on compute needs no token from them
        // for this test, the simulator runs every module to its end.
        sim.run(std::vector<Instruction>{fill, load, finish()});
        const int32_t garbage = sim.sramElement(buffer, sramBase - 1)[0];
        QVERIFY(garbage != 0);
        QCOMPARE(sim.sramElement(buffer, sramBase + region)[0], garbage);  // past the region: untouched
        for (uint32_t y = 0; y < yTotal; ++y)
            for (uint32_t x = 0; x < xTotal; ++x) {
                const auto got = sim.sramElement(buffer, sramBase + y * xTotal + x);
                const bool pad = y < uint32_t(pads[0]) || y >= uint32_t(pads[0]) + ySize || x < uint32_t(pads[2]) ||
                                 x >= uint32_t(pads[2]) + xSize;
                for (size_t l = 0; l < lanes; ++l) {
                    const int32_t want = pad ? 0 : dramValue(r0 + y - uint32_t(pads[0]), c0 + x - uint32_t(pads[2]), l);
                    QVERIFY2(got[l] == want, qPrintable(QStringLiteral("sram (%1, %2) lane %3: %4 != %5")
                                                            .arg(y).arg(x).arg(l).arg(got[l]).arg(want)));
                }
            }
        // Counters count the moved elements without padding (ACC_8BIT at accumulator size, as TVM).
        const uint64_t moved = uint64_t(ySize) * xSize;
        const SimStats& st = sim.stats();
        const uint64_t fillBytes = uint64_t(region + 2) * dramElemBytes(fillType, cfg);
        switch (id) {
        case MemId::Inp: QCOMPARE(st.inp_load_nbytes, fillBytes + moved * uint64_t(cfg.inpElemBytes())); break;
        case MemId::Wgt: QCOMPARE(st.wgt_load_nbytes, fillBytes + moved * uint64_t(cfg.wgtElemBytes())); break;
        default: QCOMPARE(st.acc_load_nbytes, fillBytes + moved * uint64_t(cfg.accElemBytes())); break;
        }
    }

    void testStoreNarrowing() {
        for (const VtaConfig& cfg : {VtaConfig{}, batch2Block8(), int4Acc16()}) {
            Simulator sim(cfg);
            std::mt19937 rng(7);
            const uint32_t ySize = 3, xSize = 4, stride = 6, nAcc = ySize * xSize;
            const size_t lanes = size_t(cfg.batch() * cfg.blockOut());
            const int accBits = cfg.accWidth(), outBits = cfg.outWidth();
            const auto acc = randomBits(rng, nAcc * lanes, accBits);
            // The output buffer starts as a 0x5A sentinel, so rows must land x_stride apart and
            // the elements between them stay untouched.
            const std::vector<uint8_t> sentinel(size_t(ySize) * stride * lanes * size_t(outBits) / 8, uint8_t(0x5A));
            const uint32_t outAddr = upload(sim, sentinel);
            Instruction loadAcc = mem(Opcode::Load, MemId::Acc, 10, upload(sim, packBits(acc, accBits)), nAcc, cfg);
            loadAcc.pushNext = true;
            Instruction store = mem(Opcode::Store, MemId::Out, 10, outAddr, xSize, cfg);
            store.ySize = ySize;
            store.xStride = stride;
            store.popPrev = true;
            sim.run(std::vector<Instruction>{loadAcc, store, finish()});
            const auto got = unpackBits(sim.dram().readArray<uint8_t>(outAddr, sentinel.size()), size_t(ySize) * stride * lanes, outBits);
            std::vector<int32_t> want = unpackBits(sentinel, got.size(), outBits);
            for (uint32_t y = 0; y < ySize; ++y)
                for (uint32_t x = 0; x < xSize; ++x)
                    for (size_t l = 0; l < lanes; ++l)  // truncation to OUT_WIDTH bits, not saturation
                        want[(size_t(y) * stride + x) * lanes + l] = wrapBits(acc[(size_t(y) * xSize + x) * lanes + l], outBits);
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY2(got[i] == want[i], qPrintable(QStringLiteral("out value %1: %2 != %3").arg(i).arg(got[i]).arg(want[i])));
            QCOMPARE(sim.stats().out_store_nbytes, uint64_t(ySize) * xSize * lanes * uint64_t(outBits) / 8);
        }
    }

    void testErrors_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QStringList>("message");
        QTest::addRow("compute waits on l2c")
            << QStringLiteral("gemm-pop") << QStringList{QStringLiteral("VTA deadlock"), QStringLiteral("compute module waits at instruction #0 (GEMM)"), QStringLiteral("l2c (load->compute)")};
        QTest::addRow("store waits on c2s")
            << QStringLiteral("store-pop") << QStringList{QStringLiteral("VTA deadlock"), QStringLiteral("store module waits at instruction #0 (STORE OUT)"), QStringLiteral("c2s (compute->store)")};
        QTest::addRow("load and compute wait on each other")
            << QStringLiteral("cycle") << QStringList{QStringLiteral("load module waits at instruction #0 (LOAD INP)"), QStringLiteral("c2l (compute->load)"),
                                      QStringLiteral("compute module waits at instruction #1 (GEMM)"), QStringLiteral("l2c (load->compute)")};
        QTest::addRow("no finish") << QStringLiteral("no-finish") << QStringList{QStringLiteral("has no FINISH")};
        QTest::addRow("load pops prev") << QStringLiteral("load-pop-prev") << QStringList{QStringLiteral("instruction #0 (LOAD INP) sets pop_prev"), QStringLiteral("no previous module")};
        QTest::addRow("store pads") << QStringLiteral("store-pad") << QStringList{QStringLiteral("instruction #0 (STORE OUT): a STORE cannot pad")};
        QTest::addRow("store acc") << QStringLiteral("store-acc") << QStringList{QStringLiteral("STORE of memory type 3 is not supported")};
        QTest::addRow("sram overflow") << QStringLiteral("sram-overflow") << QStringList{QStringLiteral("past the INP buffer of 2048 elements")};
        QTest::addRow("shift imm") << QStringLiteral("shift-imm") << QStringList{QStringLiteral("shift amount 40 is outside [-31, 31]")};
        QTest::addRow("uop index outside") << QStringLiteral("uop-index") << QStringList{QStringLiteral("instruction #1 (GEMM): ACC index"), QStringLiteral("outside the buffer")};
        QTest::addRow("dram outside") << QStringLiteral("dram") << QStringList{QStringLiteral("instruction #0 (LOAD INP) accesses DRAM bytes")};
    }
    void testErrors() {
        QFETCH(QString, kind);
        QFETCH(QStringList, message);
        const VtaConfig cfg;
        Simulator sim(cfg);
        const uint32_t buf = sim.dram().alloc(4096);
        Instruction gemm;
        gemm.opcode = Opcode::Gemm;
        gemm.uopEnd = 1, gemm.iterOut = 1, gemm.iterIn = 1;
        Instruction loadInp = mem(Opcode::Load, MemId::Inp, 0, buf, 1, cfg);
        Instruction store = mem(Opcode::Store, MemId::Out, 0, buf, 1, cfg);
        std::vector<Instruction> program;
        if (kind == QLatin1String("gemm-pop")) {
            gemm.popPrev = true;
            program = {gemm, finish()};
        } else if (kind == QLatin1String("store-pop")) {
            store.popPrev = true;
            program = {store, finish()};
        } else if (kind == QLatin1String("cycle")) {
            loadInp.popNext = loadInp.pushNext = true;
            gemm.popPrev = gemm.pushPrev = true;
            program = {loadInp, gemm, finish()};
        } else if (kind == QLatin1String("no-finish")) {
            program = {loadInp};
        } else if (kind == QLatin1String("load-pop-prev")) {
            loadInp.popPrev = true;
            program = {loadInp, finish()};
        } else if (kind == QLatin1String("store-pad")) {
            store.xPad0 = 1;
            program = {store, finish()};
        } else if (kind == QLatin1String("store-acc")) {
            store.memoryType = MemId::Acc;
            program = {store, finish()};
        } else if (kind == QLatin1String("sram-overflow")) {
            loadInp.sramBase = uint32_t(cfg.inpBuffDepth()) - 2;
            loadInp.yPad1 = 2;  // 3 elements from depth - 2
            program = {loadInp, finish()};
        } else if (kind == QLatin1String("shift-imm")) {
            Instruction alu = gemm;
            alu.opcode = Opcode::Alu;
            alu.aluOpcode = AluOpcode::Shr;
            alu.useImm = true;
            alu.imm = 40;
            program = {alu, finish()};
        } else if (kind == QLatin1String("uop-index")) {
            const std::vector<Uop> uops{{uint32_t(cfg.accBuffDepth()) - 1, 0, 0}};
            gemm.iterOut = 2, gemm.dstFactorOut = 1;  // the second iteration leaves the buffer
            program = {mem(Opcode::Load, MemId::Uop, 0, uploadUops(sim, uops), 1, cfg), gemm, finish()};
        } else if (kind == QLatin1String("dram")) {
            loadInp.xSize = 1000;  // 16 KB from a 4 KB buffer at the end of DRAM
            loadInp.xStride = 1000;
            program = {loadInp, finish()};
        }
        const QString err = userError([&] { sim.run(program); });
        for (const QString& m : message) QVERIFY2(err.contains(m), qPrintable(err));
    }

    // --- command builder and the pipeline ------------------------------------------------------

    void testBuilderDependences() {
        Simulator sim{VtaConfig{}};
        CommandBuilder b(sim);
        const uint32_t buf = sim.dram().alloc(1 << 16);
        b.loadBuffer2D(buf, 0, 2, 1, 2, 0, 0, 0, 0, 0, MemId::Inp);
        b.depPush(kLoadStage, kComputeStage);  // folds into the LOAD INP
        QCOMPARE(b.instructions().size(), size_t(1));
        QVERIFY(b.instructions()[0].pushNext);
        b.depPush(kLoadStage, kComputeStage);  // already pushing: a no-op load carries it
        QCOMPARE(b.instructions().size(), size_t(2));
        QVERIFY(b.instructions()[1].isNop() && b.instructions()[1].pushNext && b.instructions()[1].module() == Module::Load);
        b.depPop(kLoadStage, kComputeStage);
        b.depPop(kLoadStage, kComputeStage);  // second pending pop: the first becomes a no-op
        UopKernel k;
        k.pushGemm(0, 0, 0);
        b.pushGemmOp(k);
        b.pushGemmOp(k);  // resident: no second LOAD UOP
        std::vector<Instruction> insns = b.instructions();
        const auto uopLoads = std::count_if(insns.begin(), insns.end(), [](const Instruction& i) {
            return i.opcode == Opcode::Load && i.memoryType == MemId::Uop && !i.isNop();
        });
        QCOMPARE(uopLoads, ptrdiff_t(1));
        QVERIFY(insns[2].isNop() && insns[2].popPrev && insns[2].module() == Module::Compute);
        QVERIFY(insns[3].opcode == Opcode::Load && insns[3].memoryType == MemId::Uop && insns[3].popPrev);
        const std::vector<Instruction> closed = b.closedStream();
        QCOMPARE(closed.back().opcode, Opcode::Finish);
        QVERIFY(!closed.back().popPrev && !closed.back().popNext);
        const RunReport r = b.synchronize();
        QCOMPARE(r.stats.gemm_counter, uint64_t(2));
        // Balanced tokens: nothing left in any queue.
        for (auto q : {DepQueue::L2C, DepQueue::C2L, DepQueue::C2S, DepQueue::S2C}) QCOMPARE(sim.pendingTokens(q), size_t(0));
        QVERIFY(userError([&] { b.depPush(kLoadStage, kStoreStage); }).contains(QLatin1String("load and store share no queue")));
        UopKernel bad;
        bad.pushGemm(5, 0, 0);
        QVERIFY(userError([&] { bad.pushGemm(5, 1, 1); }).contains(QLatin1String("writes accumulator 5")));
        QVERIFY(userError([&] { bad.loopBegin(2, 1, 1, 1); }).contains(QLatin1String("before the first micro-op")));
        QVERIFY(userError([&] { b.pushAluOp(k); }).contains(QLatin1String("the kernel holds GEMM micro-ops")));
    }

    void testBuilderUopCache() {
        // An 8-entry uop buffer: three 3-uop kernels wrap around it; a kernel is loaded again only
        // after a later one overwrote it (TVM's UopQueue ring), and every GEMM still reads its own
        // micro-ops: each kernel runs twice, so acc = 2 * inp x wgt^T at its indices.
        VtaConfig cfg;
        cfg.logUopBuffSize = 5;
        QCOMPARE(cfg.uopBuffDepth(), 8);
        Simulator sim(cfg);
        CommandBuilder cb(sim);
        std::mt19937 rng(5);
        const auto inp = randomInt8(rng, 4 * size_t(cfg.inpElemBytes()));
        const auto wgt = randomInt8(rng, 4 * size_t(cfg.wgtElemBytes()));
        cb.loadBuffer2D(upload(sim, inp), 0, 4, 1, 4, 0, 0, 0, 0, 0, MemId::Inp);
        cb.loadBuffer2D(upload(sim, wgt), 0, 4, 1, 4, 0, 0, 0, 0, 0, MemId::Wgt);
        cb.depPush(kLoadStage, kComputeStage);
        cb.depPop(kLoadStage, kComputeStage);
        const std::vector<std::vector<Uop>> kernels = {
            {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}}, {{3, 0, 1}, {4, 1, 2}, {5, 2, 3}}, {{6, 3, 0}, {7, 0, 3}, {8, 1, 1}}};
        UopKernel reset;
        for (uint32_t d = 0; d < 9; ++d) reset.pushGemm(d, 0, 0, true);
        QVERIFY(userError([&] { cb.pushGemmOp(reset); }).contains(QLatin1String("does not fit the uop buffer of 8")));
        reset = UopKernel{};
        for (uint32_t d = 0; d < 8; ++d) reset.pushGemm(d + 1, 0, 0, true);
        cb.pushGemmOp(reset);  // fills the ring: zero acc 1..8
        UopKernel reset0;
        reset0.pushGemm(0, 0, 0, true);
        cb.pushGemmOp(reset0);
        std::vector<UopKernel> k(3);
        for (size_t i = 0; i < 3; ++i)
            for (const Uop& u : kernels[i]) k[i].pushGemm(u.dstIdx, u.srcIdx, u.wgtIdx);
        const size_t before = cb.instructions().size();
        for (size_t i : {0, 1, 2, 1, 0, 2}) cb.pushGemmOp(k[i]);
        std::vector<size_t> loadedAt;  // uop SRAM positions of the LOAD UOPs the six pushes caused
        for (size_t i = before; i < cb.instructions().size(); ++i)
            if (cb.instructions()[i].opcode == Opcode::Load && cb.instructions()[i].memoryType == MemId::Uop)
                loadedAt.push_back(cb.instructions()[i].sramBase);
        // k0 at 1 (after reset0 at 0), k1 at 4, k2 wraps to 0 (overwrites reset0, k0), k1 cached,
        // k0 reloaded at 3 (overwrites k1), k2 cached.
        QCOMPARE(loadedAt, (std::vector<size_t>{1, 4, 0, 3}));
        cb.synchronize();
        const int bin = cfg.blockIn(), bout = cfg.blockOut();
        for (const auto& kernel : kernels)
            for (const Uop& u : kernel) {
                const auto got = sim.sramElement(MemId::Acc, u.dstIdx);
                for (int o = 0; o < bout; ++o) {
                    int32_t dot = 0;
                    for (int kk = 0; kk < bin; ++kk)
                        dot += int32_t(inp[u.srcIdx * size_t(bin) + size_t(kk)]) * wgt[u.wgtIdx * size_t(bin * bout) + size_t(o * bin + kk)];
                    QCOMPARE(got[size_t(o)], 2 * dot);
                }
            }
    }

    void testPipeline_data() {
        QTest::addColumn<QString>("config");
        QTest::addRow("1x16") << QStringLiteral("1x16");
        QTest::addRow("2x8") << QStringLiteral("2x8");
    }
    void testPipeline() {
        // out = int8(min(max(A x B^T + bias, 0) >> shift, 127)), blocked over row tiles, built
        // with the command builder: once with two SRAM slots so that loading tile t+1, computing
        // tile t and storing tile t-1 overlap, once with one slot (each tile waits for the last).
        QFETCH(QString, config);
        const VtaConfig cfg = configNamed(config);
        const int bat = cfg.batch(), blk = cfg.blockIn();
        const int tiles = 6, rowsPerTile = 2;           // row blocks (of BATCH rows) per tile
        const int MB = tiles * rowsPerTile, KB = 4, NB = 3;  // matrix sizes in blocks
        const int M = MB * bat, K = KB * blk, N = NB * blk;
        const int shift = 9;
        std::mt19937 rng(2024);
        const auto A = randomInt8(rng, size_t(M) * K);
        const auto B = randomInt8(rng, size_t(N) * K);
        const auto bias = randomInt32(rng, size_t(M) * N, -40000, 40000);
        // Reference with plain loops.
        std::vector<int8_t> want(size_t(M) * N);
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                int32_t c = bias[size_t(m) * N + n];
                for (int k = 0; k < K; ++k) c += int32_t(A[size_t(m) * K + k]) * B[size_t(n) * K + k];
                want[size_t(m) * N + n] = int8_t(std::min(std::max(c, 0) >> shift, 127));
            }
        // VTA layouts: A as [MB][KB] input elements (BATCH x BLOCK), B as [NB][KB] weight
        // elements (BLOCK_OUT x BLOCK_IN), bias and out as [MB][NB] vectors (BATCH x BLOCK_OUT).
        std::vector<int8_t> aPacked, bPacked;
        std::vector<int32_t> biasPacked;
        for (int mb = 0; mb < MB; ++mb)
            for (int kb = 0; kb < KB; ++kb)
                for (int b = 0; b < bat; ++b)
                    for (int k = 0; k < blk; ++k) aPacked.push_back(A[size_t(mb * bat + b) * K + size_t(kb * blk + k)]);
        for (int nb = 0; nb < NB; ++nb)
            for (int kb = 0; kb < KB; ++kb)
                for (int o = 0; o < blk; ++o)
                    for (int k = 0; k < blk; ++k) bPacked.push_back(B[size_t(nb * blk + o) * K + size_t(kb * blk + k)]);
        for (int mb = 0; mb < MB; ++mb)
            for (int nb = 0; nb < NB; ++nb)
                for (int b = 0; b < bat; ++b)
                    for (int o = 0; o < blk; ++o) biasPacked.push_back(bias[size_t(mb * bat + b) * N + size_t(nb * blk + o)]);

        auto runOnce = [&](int slots, std::vector<int8_t>& out, RunReport& report) {
            Simulator sim(cfg);
            CommandBuilder cb(sim);
            const uint32_t aAddr = upload(sim, aPacked), bAddr = upload(sim, bPacked), biasAddr = upload(sim, biasPacked);
            const uint32_t outAddr = sim.dram().alloc(size_t(M) * N);
            const uint32_t inpPerTile = uint32_t(rowsPerTile * KB), accPerTile = uint32_t(rowsPerTile * NB);
            for (int t = 0; t < tiles; ++t) {
                const uint32_t slot = uint32_t(t % slots);
                const uint32_t inpBase = slot * inpPerTile, accBase = slot * accPerTile;
                // Load stage.
                if (t >= slots) cb.depPop(kComputeStage, kLoadStage);  // the slot's input is free again
                if (t == 0) cb.loadBuffer2D(bAddr, 0, uint32_t(NB * KB), 1, uint32_t(NB * KB), 0, 0, 0, 0, 0, MemId::Wgt);
                cb.loadBuffer2D(aAddr, uint32_t(t) * inpPerTile, inpPerTile, 1, inpPerTile, 0, 0, 0, 0, inpBase, MemId::Inp);
                cb.depPush(kLoadStage, kComputeStage);
                // Compute stage.
                cb.depPop(kLoadStage, kComputeStage);
                if (t >= slots) cb.depPop(kStoreStage, kComputeStage);  // the slot's output was stored
                cb.loadBuffer2D(biasAddr, uint32_t(t) * accPerTile, accPerTile, 1, accPerTile, 0, 0, 0, 0, accBase, MemId::Acc);
                UopKernel mm;
                mm.loopBegin(uint32_t(KB), 0, 1, 1);  // reduction over K blocks
                for (int r = 0; r < rowsPerTile; ++r)
                    for (int nb = 0; nb < NB; ++nb)
                        mm.pushGemm(accBase + uint32_t(r * NB + nb), inpBase + uint32_t(r * KB), uint32_t(nb * KB));
                mm.loopEnd();
                cb.pushGemmOp(mm);
                for (auto [op, imm] : {std::pair{AluOpcode::Max, 0}, std::pair{AluOpcode::Shr, shift}, std::pair{AluOpcode::Min, 127}}) {
                    UopKernel k;
                    k.loopBegin(accPerTile, 1, 1, 0);
                    k.pushAlu(op, accBase, accBase, true, imm);
                    k.loopEnd();
                    cb.pushAluOp(k);
                }
                cb.depPush(kComputeStage, kLoadStage);
                cb.depPush(kComputeStage, kStoreStage);
                // Store stage.
                cb.depPop(kComputeStage, kStoreStage);
                cb.storeBuffer2D(accBase, MemId::Out, outAddr, uint32_t(t) * accPerTile, accPerTile, 1, accPerTile);
                cb.depPush(kStoreStage, kComputeStage);
            }
            // Drain the tokens no later tile consumed.
            for (int s = 0; s < std::min(slots, tiles); ++s) {
                cb.depPop(kComputeStage, kLoadStage);
                cb.depPop(kStoreStage, kComputeStage);
            }
            const RunReport rep = cb.synchronize();
            for (auto q : {DepQueue::L2C, DepQueue::C2L, DepQueue::C2S, DepQueue::S2C}) QCOMPARE(sim.pendingTokens(q), size_t(0));
            // Counters follow from the workload.
            QCOMPARE(rep.stats.inp_load_nbytes, uint64_t(M) * K * uint64_t(cfg.inpWidth()) / 8);
            QCOMPARE(rep.stats.wgt_load_nbytes, uint64_t(N) * K * uint64_t(cfg.wgtWidth()) / 8);
            QCOMPARE(rep.stats.acc_load_nbytes, uint64_t(M) * N * uint64_t(cfg.accWidth()) / 8);
            QCOMPARE(rep.stats.out_store_nbytes, uint64_t(M) * N * uint64_t(cfg.outWidth()) / 8);
            QCOMPARE(rep.stats.gemm_counter, uint64_t(MB) * NB * KB);
            QCOMPARE(rep.stats.alu_counter, uint64_t(3) * MB * NB);
            QVERIFY(rep.stats.uop_load_nbytes > 0);
            QCOMPARE(rep.stats, sim.stats());
            QCOMPARE(rep.macs, uint64_t(M) * N * K);
            // Unpack [MB][NB][BATCH][BLOCK] to row-major M x N.
            const auto packed = sim.dram().readArray<int8_t>(outAddr, size_t(M) * N);
            out.assign(size_t(M) * N, 0);
            size_t i = 0;
            for (int mb = 0; mb < MB; ++mb)
                for (int nb = 0; nb < NB; ++nb)
                    for (int b = 0; b < bat; ++b)
                        for (int o = 0; o < blk; ++o) out[size_t(mb * bat + b) * N + size_t(nb * blk + o)] = packed[i++];
            report = rep;
        };
        std::vector<int8_t> outPipelined, outSerial;
        RunReport pipelined, serial;
        runOnce(2, outPipelined, pipelined);
        if (QTest::currentTestFailed()) return;
        runOnce(1, outSerial, serial);
        if (QTest::currentTestFailed()) return;
        qInfo("%s: two slots %llu cycles, one slot %llu cycles, busy sum (no overlap) %llu cycles", qPrintable(config),
              static_cast<unsigned long long>(pipelined.cycles), static_cast<unsigned long long>(serial.cycles),
              static_cast<unsigned long long>(pipelined.serialCycles()));
        QVERIFY(outPipelined == want);
        QVERIFY(outSerial == want);
        // The cycle model: overlapping modules beat the sum of their busy times, and two slots
        // overlap more than one.
        QVERIFY(pipelined.cycles < pipelined.serialCycles());
        QVERIFY(pipelined.cycles < serial.cycles);
        // (The one-slot stream reuses its micro-op kernels across tiles, so it even does less work.)
        QVERIFY(pipelined.serialCycles() >= serial.serialCycles());
        QVERIFY(pipelined.cycles >= *std::max_element(pipelined.busyCycles.begin(), pipelined.busyCycles.end()));
        QCOMPARE(pipelined.timeMs(), double(pipelined.cycles) / (cfg.fpgaFreqMhz() * 1e3));
    }

    void testCycleModelGemmBound() {
        // A stream dominated by one long GEMM reaches close to the core's peak of
        // BATCH*BLOCK_IN*BLOCK_OUT MACs per cycle, and never exceeds it.
        for (const VtaConfig& cfg : {VtaConfig{}, batch2Block8(), VtaConfig::forTarget("ultra96")}) {
            Simulator sim(cfg);
            CommandBuilder cb(sim);
            std::mt19937 rng(3);
            const uint32_t inpAddr = upload(sim, randomInt8(rng, 16 * size_t(cfg.inpElemBytes())));
            const uint32_t wgtAddr = upload(sim, randomInt8(rng, 16 * size_t(cfg.wgtElemBytes())));
            cb.loadBuffer2D(inpAddr, 0, 16, 1, 16, 0, 0, 0, 0, 0, MemId::Inp);
            cb.loadBuffer2D(wgtAddr, 0, 16, 1, 16, 0, 0, 0, 0, 0, MemId::Wgt);
            cb.depPush(kLoadStage, kComputeStage);
            cb.depPop(kLoadStage, kComputeStage);
            UopKernel k;
            k.loopBegin(64, 0, 0, 0);
            k.loopBegin(16, 0, 0, 0);
            for (uint32_t u = 0; u < 16; ++u) k.pushGemm(u, u, u);
            k.loopEnd();
            k.loopEnd();
            cb.pushGemmOp(k);
            const RunReport r = cb.synchronize();
            const double macsPerCycle = double(r.macs) / double(r.cycles);
            QCOMPARE(r.macs, uint64_t(64 * 16 * 16) * uint64_t(cfg.peakMacsPerCycle()));
            QVERIFY2(macsPerCycle > 0.9 * double(cfg.peakMacsPerCycle()), qPrintable(QString::number(macsPerCycle)));
            QVERIFY(macsPerCycle <= double(cfg.peakMacsPerCycle()));
            // Time at the target's clock.
            QCOMPARE(r.timeSeconds(), double(r.cycles) / (cfg.fpgaFreqMhz() * 1e6));
        }
    }

    void testCycleModelCosts() {
        // DMA cost grows with bytes and padding; a faster bus moves the same bytes in fewer cycles.
        const VtaConfig cfg;
        const CycleModel pynq = CycleModel::forConfig(cfg);
        const CycleModel wide = CycleModel::forConfig(VtaConfig::forTarget("ultra96"));
        QVERIFY(wide.busBytes > pynq.busBytes);
        Instruction load = mem(Opcode::Load, MemId::Inp, 0, 4096, 8, cfg);
        load.ySize = 4;
        const uint64_t base = pynq.cost(load, cfg);
        Instruction longer = load;
        longer.xSize = 16;
        QVERIFY(pynq.cost(longer, cfg) > base);
        Instruction padded = load;
        padded.xPad0 = 1;
        QVERIFY(pynq.cost(padded, cfg) > base);
        QVERIFY(wide.cost(load, cfg) < base);
        Instruction gemm;
        gemm.opcode = Opcode::Gemm;
        gemm.uopEnd = 4, gemm.iterOut = 2, gemm.iterIn = 3;
        Instruction alu = gemm;
        alu.opcode = Opcode::Alu;
        // Per micro-op iteration the ALU is slower than the GEMM core (II 2 vs 1).
        QCOMPARE(pynq.cost(alu, cfg) - uint64_t(pynq.aluPipelineDepth), 2 * (pynq.cost(gemm, cfg) - uint64_t(pynq.gemmPipelineDepth)));
        // Modules synchronised by a token serialise; without it they overlap.
        Simulator sim(cfg);
        const uint32_t buf = sim.dram().alloc(1 << 16);
        Instruction ld = mem(Opcode::Load, MemId::Inp, 0, buf, 64, cfg);
        Instruction st = mem(Opcode::Store, MemId::Out, 0, buf, 64, cfg);
        const RunReport free = sim.run(std::vector<Instruction>{ld, st, finish()});
        ld.pushNext = true;
        Instruction nop = mem(Opcode::Load, MemId::Uop, 0, buf, 0, cfg);  // compute relays the token
        nop.popPrev = nop.pushNext = true;
        st.popPrev = true;
        const RunReport chained = sim.run(std::vector<Instruction>{ld, nop, st, finish()});
        QCOMPARE(free.cycles, std::max(pynq.cost(ld, cfg), pynq.cost(st, cfg)));
        QCOMPARE(chained.cycles, pynq.cost(ld, cfg) + pynq.cost(nop, cfg) + pynq.cost(st, cfg));
        QCOMPARE(chained.timeline[2].start, chained.timeline[1].end);
    }

    void testStatsAccumulate() {
        Simulator sim{VtaConfig{}};
        const uint32_t buf = sim.dram().alloc(4096);
        const std::vector<Instruction> p = {mem(Opcode::Load, MemId::Inp, 0, buf, 4, sim.config()), finish()};
        const RunReport r1 = sim.run(p);
        const RunReport r2 = sim.run(p);
        QCOMPARE(r1.stats, r2.stats);
        QCOMPARE(sim.stats().inp_load_nbytes, 2 * r1.stats.inp_load_nbytes);
        const std::string json = sim.stats().toJson();
        for (const char* key : {"inp_load_nbytes", "wgt_load_nbytes", "acc_load_nbytes", "uop_load_nbytes", "out_store_nbytes",
                                "gemm_counter", "alu_counter"})
            QVERIFY(json.find(std::string("\"") + key + "\":") != std::string::npos);
        sim.clearStats();
        QCOMPARE(sim.stats(), SimStats{});
        // A NOP moves nothing and counts nothing (TVM returns early on x_size == 0).
        Instruction nop = p[0];
        nop.xSize = 0;
        sim.run(std::vector<Instruction>{nop, finish()});
        QCOMPARE(sim.stats(), SimStats{});
    }
};

QTEST_APPLESS_MAIN(TestVtaSim)
#include "tst_vta_sim.moc"
