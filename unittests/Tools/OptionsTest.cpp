//===- OptionsTest.cpp - gopt-run's command line as a library -------------===//
#include "gopt/Tooling/Options.h"

#include <gtest/gtest.h>

using namespace gopt::tooling;

namespace {

gopt::runtime::StatusOr<ToolOptions>
parse(std::initializer_list<const char *> args) {
  return parseToolArgs(std::vector<std::string>(args.begin(), args.end()));
}

/// The usage error `args` gives (empty when they parse).
std::string usageError(std::initializer_list<const char *> args) {
  gopt::runtime::StatusOr<ToolOptions> options = parse(args);
  return options.ok() ? std::string() : options.status().message();
}

TEST(OptionsTest, RunIsTheDefaultMode) {
  auto options = parse({"m.gplan", "--batch", "8", "--iterations=3", "--input",
                        "x=a.npy", "--input=y=b.npy"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->mode, ToolMode::kRun);
  EXPECT_EQ(options->run.model, "m.gplan");
  EXPECT_EQ(options->run.batch, 8);
  EXPECT_EQ(options->run.iterations, 3);
  EXPECT_EQ(options->run.warmup, 50);
  ASSERT_EQ(options->run.inputs.size(), 2u);
  EXPECT_EQ(options->run.inputs[0].first, "x");
  EXPECT_EQ(options->run.inputs[1].second, "b.npy");
}

TEST(OptionsTest, ModesAndTheirDefaults) {
  auto compare = parse({"a.mlir", "--compare", "b.mlir", "--atol", "0.1"});
  ASSERT_TRUE(compare.ok());
  EXPECT_EQ(compare->mode, ToolMode::kCompare);
  EXPECT_EQ(compare->run.compareModel, "b.mlir");
  EXPECT_EQ(compare->run.atol, 0.1);

  // --train's batch defaults to 64, not inference's 1.
  auto train = parse({"a.mlir", "--train", "--data", "fake", "--steps", "5"});
  ASSERT_TRUE(train.ok());
  EXPECT_EQ(train->mode, ToolMode::kTrain);
  EXPECT_EQ(train->train.batch, 64);
  EXPECT_EQ(train->train.steps, 5);
  EXPECT_EQ(train->train.model, "a.mlir");

  // --grad-check keeps its own backend and tolerances unless given.
  auto grad = parse({"a.mlir", "--grad-check"});
  ASSERT_TRUE(grad.ok());
  EXPECT_EQ(grad->mode, ToolMode::kGradCheck);
  EXPECT_EQ(grad->gradCheck.backend, "reference");
  EXPECT_EQ(grad->gradCheck.atol, 1e-3);

  auto calibrate = parse({"a.mlir", "--calibrate", "--calibration-out",
                          "r.json", "--calibration-method", "entropy"});
  ASSERT_TRUE(calibrate.ok());
  EXPECT_EQ(calibrate->mode, ToolMode::kCalibrate);
  EXPECT_EQ(calibrate->calibrate.method, CalibrationMethod::kEntropy);
  EXPECT_EQ(calibrate->calibrate.out, "r.json");

  // --data-only needs no model.
  auto dataOnly = parse({"--data-only", "--data", "fake"});
  ASSERT_TRUE(dataOnly.ok());
  EXPECT_EQ(dataOnly->mode, ToolMode::kTrain);
  EXPECT_TRUE(dataOnly->train.dataOnly);
}

TEST(OptionsTest, OptimizeBecomesAPipeline) {
  auto options = parse({"a.onnx", "--optimize", "--precision", "bf16"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->run.pipeline,
            "builtin.module(gopt-optimize{target=cpu precision=bf16})");
}

TEST(OptionsTest, HelpStopsParsing) {
  auto options = parse({"--help", "--no-such-flag"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->mode, ToolMode::kHelp);
  EXPECT_NE(std::string(toolUsage()).find("usage: gopt-run MODEL"),
            std::string::npos);
}

TEST(OptionsTest, UsageErrors) {
  EXPECT_EQ(usageError({}), "no MODEL given");
  EXPECT_EQ(usageError({"m.gplan", "--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(usageError({"a.gplan", "b.gplan"}),
            "unexpected argument 'b.gplan' (one MODEL only; use --compare "
            "OTHER)");
  EXPECT_EQ(usageError({"m.gplan", "--batch"}), "--batch expects a value");
  EXPECT_EQ(usageError({"m.gplan", "--batch", "0"}),
            "--batch expects an integer >= 1, got '0'");
  EXPECT_EQ(usageError({"m.gplan", "--memory-limit", "12X"}),
            "--memory-limit expects a size in bytes > 0, optionally with K, "
            "M or G, got '12X'");
  EXPECT_EQ(usageError({"m.gplan", "--input", "x.npy"}),
            "--input expects NAME=FILE.npy, got 'x.npy'");
  EXPECT_EQ(usageError({"m.gplan", "--backend", "tpu"}),
            "unknown backend 'tpu' (expected cpu, reference or cuda)");
  EXPECT_EQ(usageError({"m.gplan", "--optimize", "--pipeline", "p"}),
            "--optimize and --pipeline are exclusive");
  EXPECT_EQ(usageError({"m.gplan", "--precision", "bf16"}),
            "--precision needs --optimize or --train");
  EXPECT_EQ(usageError({"m.gplan", "--labels", "l.npy"}),
            "--labels needs --compare (the accuracy of both models on the "
            "same inputs)");
  EXPECT_EQ(usageError({"m.gplan", "--percentile", "99"}),
            "--percentile needs --calibrate");
  EXPECT_EQ(usageError({"m.gplan", "--calibrate"}),
            "--calibrate needs --calibration-out FILE.json");
  EXPECT_EQ(usageError({"m.gplan", "--train", "--grad-check"}),
            "--grad-check cannot be combined with --train, --compare, "
            "--optimize or --pipeline");
}

} // namespace
