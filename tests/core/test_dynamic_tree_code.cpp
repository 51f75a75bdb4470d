// The 8-bit moment store's code search: the bucketed lookup the CPU loop
// uses (kernels::dynamicTreeLookup) returns what torchao's 8-step binary
// search returns (kernels::dynamicTreeSearch) for every value class a
// scaled moment can take and for values torchao never sees (|q| > 1,
// infinities, NaN, subnormals, -0), on both tables. The search itself is
// held to torchao by reference_optimizer_states.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "precision/dynamic_tree_code.h"
#include "support/test_registry.h"
#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"

namespace test_dynamic_tree_code {

using namespace plab;

class DynamicTreeCodeTest : public QObject {
  Q_OBJECT
 private slots:
  void tablesAreSortedAndSpanTheirRange() {
    for (const bool isSigned : {true, false}) {
      const torch::Tensor code = dynamicTreeCode(isSigned);
      QCOMPARE(code.numel(), int64_t(256));
      const float* t = code.data_ptr<float>();
      for (int i = 1; i < 256; ++i) QVERIFY2(t[i - 1] < t[i], "strictly increasing");
      QCOMPARE(t[255], 1.0f);
      QCOMPARE(t[0], isSigned ? -t[254] : 0.0f);  // signed: symmetric but for 1
    }
  }

  // Every 4099th bit pattern (all exponents, both signs, NaNs included),
  // each table value and its fp32 neighbours, and the special values.
  void lookupEqualsBinarySearch() {
    for (const bool isSigned : {true, false}) {
      const float* table = dynamicTreeCode(isSigned).data_ptr<float>();
      const uint8_t* starts = dynamicTreeStarts(isSigned).data_ptr<uint8_t>();
      std::vector<float> qs;
      for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) qs.push_back(kernels::floatOf(static_cast<uint32_t>(b)));
      for (int i = 0; i < 256; ++i) {
        const uint32_t u = kernels::bitsOf(table[i]);
        for (const uint32_t d : {0u, 1u, 2u}) {
          qs.push_back(kernels::floatOf(u + d));
          qs.push_back(kernels::floatOf(u - d));
        }
        if (i < 255) qs.push_back((table[i] + table[i + 1]) * 0.5f);  // the rounding's midpoints
      }
      for (const float f : {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()})
        qs.push_back(f);
      std::mt19937 gen(7);
      std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
      for (int i = 0; i < 200000; ++i) qs.push_back(unit(gen) * std::pow(10.0f, -8.0f * (i % 9) / 8.0f));
      int64_t differ = 0;
      float first = 0;
      for (const float q : qs) {
        if (kernels::dynamicTreeLookup(q, table, starts) != kernels::dynamicTreeSearch(q, table)) {
          if (differ++ == 0) first = q;
        }
      }
      QVERIFY2(differ == 0, qPrintable(QString("%1 of %2 values differ (signed %3), first %4")
                                           .arg(differ)
                                           .arg(qs.size())
                                           .arg(isSigned)
                                           .arg(double(first), 0, 'g', 9)));
    }
  }

  // The 4-bit tables (torchao's OptimState4bit): 16 sorted values ending at
  // 1; m's signed map holds 0 and is symmetric but for 1; v's linear map is
  // k/16 exactly and has no zero. Their values bit for bit are held to
  // torchao's by reference_optimizer_states (codes and dequantized moments).
  void fourBitTables() {
    const torch::Tensor m = dynamicTree4Code(true), v = dynamicTree4Code(false);
    QCOMPARE(m.numel(), int64_t(16));
    QCOMPARE(v.numel(), int64_t(16));
    const float* tm = m.data_ptr<float>();
    const float* tv = v.data_ptr<float>();
    for (int i = 1; i < 16; ++i) QVERIFY(tm[i - 1] < tm[i]);
    QCOMPARE(tm[15], 1.0f);
    QCOMPARE(tm[7], 0.0f);  // 7 negative values, 0, 7 positive ones and 1
    for (int i = 0; i < 7; ++i) QCOMPARE(tm[i], -tm[14 - i]);
    for (int i = 0; i < 16; ++i) QCOMPARE(tv[i], float(i + 1) / 16.0f);
  }

  // The 4-step search + rounding against a linear scan: the last entry <= q,
  // then up when q is at least half-way (ties up); below every entry, NaN: 0.
  void fourBitCodeIsNearestWithTiesUp() {
    for (const bool isSigned : {true, false}) {
      const float* table = dynamicTree4Code(isSigned).data_ptr<float>();
      std::vector<float> qs = {std::numeric_limits<float>::quiet_NaN(), -2.0f, 2.0f, 0.0f, -0.0f};
      for (int i = 0; i < 16; ++i) {
        qs.push_back(table[i]);
        if (i < 15) qs.push_back((table[i] + table[i + 1]) * 0.5f);
      }
      std::mt19937 gen(3);
      std::uniform_real_distribution<float> unit(-1.1f, 1.1f);
      for (int i = 0; i < 100000; ++i) qs.push_back(unit(gen) * std::pow(10.0f, -3.0f * (i % 4) / 3.0f));
      int64_t differ = 0;
      for (const float q : qs) {
        int down = 0;
        for (int i = 0; i < 16; ++i)
          if (q >= table[i]) down = i;
        const int up = down < 15 ? down + 1 : 15;
        const int expected = q - table[down] >= (table[up] - table[down]) * 0.5f ? up : down;
        if (kernels::dynamicTree4Code(q, table) != expected) ++differ;
      }
      QVERIFY2(differ == 0, qPrintable(QString("%1 of %2 values differ (signed %3)").arg(differ).arg(qs.size()).arg(isSigned)));
    }
  }
};

PLAB_TEST_APPLESS_MAIN(DynamicTreeCodeTest)
}  // namespace test_dynamic_tree_code
#include "test_dynamic_tree_code.moc"
