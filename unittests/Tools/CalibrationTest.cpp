//===- CalibrationTest.cpp - gopt-run --calibrate's statistics ------------===//
#include "gopt/Tooling/Calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace gopt::tooling;

namespace {

TEST(CalibrationTest, MethodNames) {
  EXPECT_EQ(parseCalibrationMethod("minmax"), CalibrationMethod::kMinMax);
  EXPECT_EQ(parseCalibrationMethod("percentile"),
            CalibrationMethod::kPercentile);
  EXPECT_EQ(parseCalibrationMethod("entropy"), CalibrationMethod::kEntropy);
  EXPECT_FALSE(parseCalibrationMethod("kl"));
}

TEST(CalibrationTest, HistogramBinsAbsoluteValues) {
  AbsHistogram h(4.0, 4);
  std::vector<float> x = {0.0f, 0.5f, -1.0f, 3.99f, 4.0f, -4.0f, 10.0f};
  h.add(x.data(), static_cast<int64_t>(x.size()));
  // [0,1): 0, 0.5; [1,2): 1; [3,4]: 3.99 and everything >= 4.
  EXPECT_EQ(h.counts(), (std::vector<int64_t>{2, 1, 0, 4}));
  EXPECT_EQ(h.total(), 7);
  EXPECT_DOUBLE_EQ(h.binWidth(), 1.0);
}

TEST(CalibrationTest, ZeroRangeHistogram) {
  AbsHistogram h(0.0);
  std::vector<float> x(10, 0.0f);
  h.add(x.data(), 10);
  EXPECT_EQ(h.total(), 10);
  EXPECT_EQ(percentileThreshold(h, 99.0), 0.0);
  EXPECT_EQ(entropyThreshold(h), 0.0);
}

TEST(CalibrationTest, PercentileIgnoresAnOutlier) {
  std::vector<float> x;
  for (int i = 0; i < 999; ++i)
    x.push_back(-static_cast<float>(i) / 999.0f); // |x| in [0, 1)
  x.push_back(100.0f);
  AbsHistogram h(100.0);
  h.add(x.data(), static_cast<int64_t>(x.size()));
  double width = h.binWidth();
  // 99.9% of the values are below 1: the threshold is the first bin edge
  // above 1 - 1/999, far below the outlier.
  double t = percentileThreshold(h, 99.9);
  EXPECT_GE(t, 998.0 / 999.0);
  EXPECT_LE(t, 1.0 + width);
  // Half the values are below 0.5.
  EXPECT_NEAR(percentileThreshold(h, 50.0), 0.5, width);
  // Every value: the range itself.
  EXPECT_DOUBLE_EQ(percentileThreshold(h, 100.0), 100.0);
}

TEST(CalibrationTest, EntropyOfAUniformDistributionKeepsTheRange) {
  // One value per bin: merging into 128 levels and spreading back loses
  // nothing at the full range (KL = 0), while any clip adds a spike.
  AbsHistogram h(2048.0);
  std::vector<float> x;
  for (int i = 0; i < kHistogramBins; ++i)
    x.push_back(i + 0.5f);
  h.add(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_DOUBLE_EQ(entropyThreshold(h), 2048.0);
}

TEST(CalibrationTest, EntropyOfNarrowDataIsTheSmallestCandidate) {
  // All mass within the first 128 bins: at i = 128 each level is one bin,
  // so Q equals P and the divergence is 0, the first minimum.
  AbsHistogram h(2048.0);
  std::vector<float> x;
  for (int i = 0; i < 128; ++i)
    for (int k = 0; k <= i % 7; ++k)
      x.push_back(-(i + 0.25f));
  h.add(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_DOUBLE_EQ(entropyThreshold(h), 128.0);
}

TEST(CalibrationTest, EntropyClipsALongTail) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(200000);
  for (float &v : x)
    v = normal(rng);
  x.push_back(40.0f); // a single outlier sets the histogram's range
  float maxAbs = 0;
  for (float v : x)
    maxAbs = std::max(maxAbs, std::fabs(v));
  AbsHistogram h(maxAbs);
  h.add(x.data(), static_cast<int64_t>(x.size()));
  double t = entropyThreshold(h);
  // Clipped well inside the range, but not into the bulk of the normal.
  EXPECT_GT(t, 2.5);
  EXPECT_LT(t, 10.0);
  // The percentile method at 99.99% lies in the same region.
  EXPECT_LT(percentileThreshold(h, 99.99), 10.0);
}

TEST(CalibrationTest, Json) {
  CalibrationResult r;
  r.method = CalibrationMethod::kPercentile;
  r.percentile = 99.5;
  r.model = "m\"odel.onnx";
  r.batches = 3;
  r.tensors.push_back({"conv/out", -1.5f, 2.25f, 2.0});
  r.tensors.push_back({"relu", 0.0f, 6.0f, 0.1});
  EXPECT_EQ(calibrationToJson(r),
            "{\n"
            "  \"format\": \"gopt-calibration\",\n"
            "  \"version\": 1,\n"
            "  \"method\": \"percentile\",\n"
            "  \"percentile\": 99.5,\n"
            "  \"model\": \"m\\\"odel.onnx\",\n"
            "  \"batches\": 3,\n"
            "  \"tensors\": {\n"
            "    \"conv/out\": {\"min\": -1.5, \"max\": 2.25, \"threshold\": "
            "2},\n"
            "    \"relu\": {\"min\": 0, \"max\": 6, \"threshold\": 0.1}\n"
            "  }\n"
            "}\n");
}

TEST(CalibrationTest, AtomicWrite) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/calibration-test-" + std::to_string(getpid());
  ASSERT_TRUE(writeFileAtomically(path, "first").ok());
  ASSERT_TRUE(writeFileAtomically(path, "second").ok());
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "second");
  std::string temp = path + ".tmp." + std::to_string(getpid());
  EXPECT_NE(access(temp.c_str(), F_OK), 0);
  std::remove(path.c_str());
  // A directory that does not exist: an error, and nothing is written.
  std::string bad = dir + "/no-such-dir-" + std::to_string(getpid()) + "/x";
  EXPECT_FALSE(writeFileAtomically(bad, "x").ok());
  EXPECT_NE(access(bad.c_str(), F_OK), 0);
}

} // namespace
