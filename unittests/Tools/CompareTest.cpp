//===- CompareTest.cpp - gopt-run's tensor comparisons and report ---------===//
#include "gopt/Tooling/Compare.h"
#include "gopt/Tooling/Report.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gopt::tooling;
using gopt::runtime::DType;
using gopt::runtime::Tensor;

namespace {

Tensor floats(gopt::runtime::Shape shape, std::vector<float> values) {
  Tensor t = Tensor::allocate(DType::kF32, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

TEST(CompareTest, AllCloseCriterion) {
  Tensor expected = floats({3}, {1.0f, 100.0f, NAN});
  Tensor actual = floats({3}, {1.05f, 100.5f, NAN});
  // |1.05 - 1| = 0.05 > 0.01 + 0.01 * 1; |100.5 - 100| = 0.5 <= 0.01 +
  // 0.01 * 100.
  auto c = compareTensors("x", actual, expected, 0.01, 0.01);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->violations, 1);
  EXPECT_NEAR(c->maxAbs, 0.5, 1e-5);
  EXPECT_NEAR(c->maxRel, 0.05, 1e-5);

  auto mismatch = compareTensors("output 'y'", floats({2}, {0, 0}),
                                 floats({1, 2}, {0, 0}), 0, 0);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().message(),
            "output 'y': shape [2] differs from expected [1,2]");
}

TEST(CompareTest, ClassAgreement) {
  // Two rows of three classes: the models agree on row 0 only.
  Tensor a = floats({2, 3}, {0.9f, 0.05f, 0.05f, 0.1f, 0.8f, 0.1f});
  Tensor b = floats({2, 3}, {0.8f, 0.1f, 0.1f, 0.1f, 0.1f, 0.8f});
  std::optional<ClassAgreement> r = compareClasses(a, b);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rows, 2);
  EXPECT_EQ(r->top1Same, 1);
  EXPECT_EQ(r->k, 3);
  EXPECT_EQ(r->referenceClasses, 2);
  EXPECT_EQ(r->top1, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r->referenceTop1, (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(compareClasses(floats({3}, {1, 2, 3}), floats({3}, {1, 2, 3})));
}

TEST(ReportTest, Formatting) {
  EXPECT_EQ(jsonEscape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(2 << 20), "2.00 MiB");
  Timing t = summarizeTimes({4, 1, 3, 2});
  EXPECT_EQ(t.medianMs, 2);
  EXPECT_EQ(t.p90Ms, 4);
  EXPECT_EQ(t.minMs, 1);
  EXPECT_EQ(t.meanMs, 2.5);
}

} // namespace
