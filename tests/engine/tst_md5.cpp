// SPDX-License-Identifier: Apache-2.0
#include <QtTest>

#include "engine/support/md5.h"

class TestMd5 : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testVectors_data() {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("digest");
        // RFC 1321 appendix A.5 test suite.
        QTest::addRow("empty") << QByteArray("") << QByteArray("d41d8cd98f00b204e9800998ecf8427e");
        QTest::addRow("a") << QByteArray("a") << QByteArray("0cc175b9c0f1b6a831c399e269772661");
        QTest::addRow("abc") << QByteArray("abc") << QByteArray("900150983cd24fb0d6963f7d28e17f72");
        QTest::addRow("message digest") << QByteArray("message digest") << QByteArray("f96b697d7cb7938d525a2f31aaf161d0");
        QTest::addRow("alphabet") << QByteArray("abcdefghijklmnopqrstuvwxyz") << QByteArray("c3fcd3d76192e4007dfb496cca67e13b");
        QTest::addRow("alnum") << QByteArray("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                               << QByteArray("d174ab98d277d9f5a5611c2c9f419d9f");
        QTest::addRow("digits80") << QByteArray("12345678901234567890123456789012345678901234567890123456789012345678901234567890")
                                  << QByteArray("57edf4a22be3c955ac49da2e2107b67a");
    }
    void testVectors() {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, digest);
        QCOMPARE(QByteArray::fromStdString(tb::md5Hex(std::string_view(input.constData(), size_t(input.size())))), digest);
    }
    void testBlockBoundaries() {
        // 55, 56, 63, 64, 65 bytes straddle the padding boundary; compare against known digests
        // computed by coreutils md5sum.
        const std::pair<int, const char*> cases[] = {{55, "04364420e25c512fd958a70738aa8f72"},
                                                     {56, "668a72d5ba17f08e62dabcafad6db14b"},
                                                     {63, "7dc2ca208106a2f703567bdff99d8981"},
                                                     {64, "c1bb4f81d892b2d57947682aeb252456"},
                                                     {65, "1bc932052302d074bdec39795fe00cf6"}};
        for (auto [n, digest] : cases)
            QCOMPARE(QByteArray::fromStdString(tb::md5Hex(std::string(size_t(n), 'x'))), QByteArray(digest));
    }
};

QTEST_APPLESS_MAIN(TestMd5)
#include "tst_md5.moc"
