// SPDX-License-Identifier: Apache-2.0
// HugePageArena: the block is 2 MiB aligned, whole 2 MiB pages, zeroed and writable; the kernel
// backs it with transparent huge pages when asked (THP "madvise" or "always") and not when not
// asked (THP "madvise"), as /proc/self/smaps reports; and a compiled network's tensors live in one
// such block (GraphRuntime, BuildReport::hugePageBytes).
#include <QtTest>

#include <cstdint>
#include <fstream>
#include <string>

#include "engine/graph/zoo.h"
#include "engine/runtime/build_module.h"
#include "engine/support/huge_page_arena.h"

namespace {

// The selected mode of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise", "never"),
// or "" where the file does not exist (no THP: not Linux, or a kernel without it).
std::string thpMode() {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string text;
    std::getline(f, text);
    const size_t a = text.find('['), b = text.find(']');
    return a == std::string::npos || b == std::string::npos ? std::string() : text.substr(a + 1, b - a - 1);
}

constexpr size_t kHuge = size_t(2) << 20;

}  // namespace

class TestHugePageArena : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testBlockShape() {
        tb::support::HugePageArena a(5 * 1000 * 1000 + 3);
        QCOMPARE(a.size(), 3 * kHuge);
        QVERIFY(a.data() != nullptr);
        QCOMPARE(reinterpret_cast<uintptr_t>(a.data()) % kHuge, uintptr_t(0));
        auto* p = static_cast<unsigned char*>(a.data());
        size_t nonzero = 0;
        for (size_t i = 0; i < a.size(); ++i) nonzero += p[i] != 0;
        QCOMPARE(nonzero, size_t(0));
        p[0] = 1;
        p[a.size() - 1] = 2;  // writable to its last byte
        QCOMPARE(int(p[a.size() - 1]), 2);

        tb::support::HugePageArena empty(0);
        QVERIFY(empty.data() == nullptr);
        QCOMPARE(empty.size(), size_t(0));
        QCOMPARE(empty.hugePageBytes(), int64_t(0));
    }

    void testKernelBacksItWithHugePages() {
        const std::string mode = thpMode();
        tb::support::HugePageArena advised(16 * kHuge);
        if (mode.empty() || mode == "never") {  // 4 KiB pages only: the block still works (testBlockShape)
            QVERIFY(advised.hugePageBytes() <= 0);
            return;
        }
        // The kernel may fall short of huge pages when memory is fragmented; most of 32 MiB it gives.
        QVERIFY2(advised.hugePageBytes() >= int64_t(8 * kHuge),
                 qPrintable(QStringLiteral("%1 bytes on huge pages").arg(advised.hugePageBytes())));
        if (mode == "madvise") {
            tb::support::HugePageArena plain(16 * kHuge, /*hugePages=*/false);
            QCOMPARE(plain.hugePageBytes(), int64_t(0));
        }
    }

    void testNetworkTensorsOnHugePages() {
        using namespace tb;
        const runtime::CompiledModule m = runtime::build(graph::makeNetwork("resnet-18"));
        const runtime::BuildReport& r = m.report();
        const std::string mode = thpMode();
        if (mode.empty() || mode == "never") {
            QVERIFY(r.hugePageBytes <= 0);
            return;
        }
        // resnet-18: 46.8 MB of weights plus its intermediates, in one block; nearly all of it on
        // 2 MiB pages (the block's last page may be partly used, and the kernel may fall short).
        const int64_t tensors = r.paramBytes + r.plannedBytes;
        QVERIFY2(r.hugePageBytes >= tensors / 2,
                 qPrintable(QStringLiteral("%1 of %2 bytes on huge pages").arg(r.hugePageBytes).arg(tensors)));
        QVERIFY(QString::fromStdString(r.text()).contains(QStringLiteral("of them on 2 MiB pages")));
    }
};

QTEST_APPLESS_MAIN(TestHugePageArena)
#include "tst_huge_page_arena.moc"
