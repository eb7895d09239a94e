//===- PlanSessionTest.cpp - Plan validation, sessions, memory planning ---===//
#include "TestUtil.h"
#include "gopt/runtime/MemoryPlanner.h"
#include "gopt/runtime/Npy.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <tuple>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

// x[?,4] -> matmul w[4,3] -> relu -> y[?,3] (with an intermediate).
PlanBuilder tinyMlp() {
  PlanBuilder b("mlp");
  int x = b.addInput("x", DType::kF32, {-1, 4});
  std::vector<float> wv(12);
  for (int i = 0; i < 12; ++i)
    wv[i] = 0.1f * (i - 6);
  int w = b.addConstant("w", makeF32({4, 3}, wv));
  int h = b.addIntermediate("h", DType::kF32, {-1, 3});
  int y = b.addOutput("y", DType::kF32, {-1, 3});
  b.addOp("matmul", "mm", {x, w}, {h});
  b.addOp("relu", "act", {h}, {y});
  return b;
}

TEST(PlanValidation, ValidPlanLoadsAndRoundTrips) {
  auto plan = tinyMlp().build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto again = Plan::loadFromBytes(plan->serialize(), "copy");
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(again->proto().ops_size(), 2);
  EXPECT_EQ(again->inputTensor("x"), 0);
}

TEST(PlanValidation, BadTensorIndex) {
  PlanBuilder b = tinyMlp();
  b.proto().mutable_ops(1)->set_inputs(0, 42);
  auto plan = b.build();
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("'act'"), std::string::npos);
  EXPECT_NE(plan.status().message().find("42"), std::string::npos);
}

TEST(PlanValidation, UnknownOpKind) {
  PlanBuilder b = tinyMlp();
  b.proto().mutable_ops(1)->set_kind("frobnicate");
  auto plan = b.build();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("frobnicate"), std::string::npos);
}

TEST(PlanValidation, NotTopological) {
  PlanBuilder b = tinyMlp();
  b.proto().mutable_ops()->SwapElements(0, 1);
  auto plan = b.build();
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("topological"), std::string::npos);
}

TEST(PlanValidation, NewerFormatVersion) {
  PlanBuilder b = tinyMlp();
  b.proto().set_format_version(kCurrentPlanFormatVersion + 1);
  auto plan = Plan::loadFromBytes(b.proto().SerializeAsString(), "new.gplan");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("new.gplan"), std::string::npos);
  EXPECT_NE(plan.status().message().find("newer"), std::string::npos);
}

TEST(PlanValidation, TruncatedBytes) {
  std::string bytes = tinyMlp().proto().SerializeAsString();
  auto plan =
      Plan::loadFromBytes(bytes.substr(0, bytes.size() / 2), "cut.gplan");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("cut.gplan"), std::string::npos);
  auto garbage = Plan::loadFromBytes("\xff\xff\xff garbage", "junk");
  EXPECT_FALSE(garbage.ok());
  auto empty = Plan::loadFromBytes("", "empty");
  EXPECT_FALSE(empty.ok());
}

TEST(PlanValidation, MissingFile) {
  auto plan = Plan::loadFromFile("/nonexistent/model.gplan");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("/nonexistent/model.gplan"),
            std::string::npos);
}

TEST(PlanValidation, AttributeTypesAndPresence) {
  PlanBuilder b("t");
  int x = b.addInput("x", DType::kF32, {2, 3});
  int y = b.addOutput("y", DType::kF32, {3, 2});
  b.addOp("transpose", "tr", {x}, {y});
  auto missing = b.build();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("perm"), std::string::npos);
  (*b.proto().mutable_ops(0)->mutable_attrs())["perm"] = intAttr(1);
  auto wrongType = b.build();
  ASSERT_FALSE(wrongType.ok());
  EXPECT_NE(wrongType.status().message().find("int list"), std::string::npos);
  (*b.proto().mutable_ops(0)->mutable_attrs())["perm"] = intsAttr({1, 0});
  EXPECT_TRUE(b.build().ok());
  (*b.proto().mutable_ops(0)->mutable_attrs())["perm"] = intsAttr({1, 0});
  PlanBuilder c("c");
  int cx = c.addInput("x", DType::kF32, {1, 1, 1, 1});
  int cw = c.addInput("w", DType::kF32, {1, 1, 1, 1});
  int cy = c.addOutput("y", DType::kF32, {1, 1, 1, 1});
  c.addOp("conv2d", "cv", {cx, cw}, {cy}, {{"padding", stringAttr("FULL")}});
  auto badEnum = c.build();
  ASSERT_FALSE(badEnum.ok());
  EXPECT_NE(badEnum.status().message().find("FULL"), std::string::npos);
}

TEST(PlanValidation, Bindings) {
  PlanBuilder dup = tinyMlp();
  dup.bindOutput("y", 2);
  auto d = dup.build();
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("duplicate output binding 'y'"),
            std::string::npos);
  PlanBuilder unbound = tinyMlp();
  unbound.proto().clear_inputs();
  auto u = unbound.build();
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("'x'"), std::string::npos);
  PlanBuilder undefined = tinyMlp();
  undefined.proto().mutable_ops()->RemoveLast();
  auto n = undefined.build();
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("'y'"), std::string::npos);
}

TEST(PlanValidation, WrongOperandCountAndConstantOp) {
  PlanBuilder b = tinyMlp();
  b.proto().mutable_ops(1)->add_inputs(0);
  auto extra = b.build();
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("operands"), std::string::npos);
  PlanBuilder c = tinyMlp();
  c.proto().mutable_ops(1)->set_kind("constant");
  EXPECT_FALSE(c.build().ok());
}

TEST(PlanValidation, ConstantOutsideBlob) {
  PlanBuilder b = tinyMlp();
  b.proto().mutable_tensors(1)->set_constant_offset(4096);
  EXPECT_FALSE(b.build().ok());
  b.proto().mutable_tensors(1)->set_constant_offset(4);
  EXPECT_FALSE(b.build().ok()); // misaligned
}

TEST(Session, RunsWithBatchAndRebinding) {
  auto plan = tinyMlp().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.batchSize = 2;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  EXPECT_EQ((*session)->outputs()[0].shape, (Shape{2, 3}));
  Tensor x = makeF32({2, 4}, {1, 0, 0, 0, 0, 0, 0, 1});
  ASSERT_TRUE((*session)->setInput("x", x).ok());
  ASSERT_TRUE((*session)->run().ok());
  auto y = (*session)->output("y");
  ASSERT_TRUE(y.ok());
  // Row 0 = w[0] = {-0.6,-0.5,-0.4} -> relu 0; row 1 = w[3] = {0.3,0.4,0.5}.
  expectNear(values<float>(*y), {0, 0, 0, 0.3f, 0.4f, 0.5f});

  // A new batch size re-resolves shapes.
  Tensor x3 = makeF32({3, 4}, std::vector<float>(12, 1.0f));
  ASSERT_TRUE((*session)->bindInput("x", x3).ok());
  ASSERT_TRUE((*session)->run().ok());
  auto y3 = (*session)->output("y");
  ASSERT_TRUE(y3.ok());
  EXPECT_EQ(y3->shape(), (Shape{3, 3}));
  // Column sums of w: {-0.6-0.3+0+0.3, ...} = {-0.6, -0.2, 0.2} -> relu.
  expectNear(values<float>(*y3), {0, 0, 0.2f, 0, 0, 0.2f, 0, 0, 0.2f});

  // Zero-copy: changing the bound memory changes the next result.
  // x[0][3] = 2 adds w[3][2] = 0.5 once more to y[0][2].
  x3.data<float>()[3] = 2.0f;
  ASSERT_TRUE((*session)->run().ok());
  auto y4 = (*session)->output("y");
  EXPECT_NEAR(values<float>(*y4)[2], 0.7f, 1e-5);
  EXPECT_NEAR(values<float>(*y4)[5], 0.2f, 1e-5);
}

TEST(Session, MissingInputWrongShapeWrongDtype) {
  auto plan = tinyMlp().build();
  ASSERT_TRUE(plan.ok());
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok());
  Status missing = (*session)->run();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("'x'"), std::string::npos);
  Status shape =
      (*session)->setInput("x", makeF32({2, 5}, std::vector<float>(10)));
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.message().find("'x'"), std::string::npos);
  EXPECT_NE(shape.message().find("[?,4]"), std::string::npos);
  Status dtype = (*session)->setInput(
      "x", makeTensor<int32_t>(DType::kI32, {1, 4}, {1, 2, 3, 4}));
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.message().find("i32"), std::string::npos);
  Status unknown = (*session)->setInput("nope", makeF32({1}, {1}));
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_FALSE((*session)->output("nope").ok());
}

TEST(Session, StaticShapeMismatchNamesTheResult) {
  PlanBuilder b = tinyMlp();
  b.proto().mutable_tensors(3)->set_shape(1, 7); // y declared [?,7]
  auto plan = b.build();
  ASSERT_TRUE(plan.ok());
  auto session = Session::create(*plan);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("'y'"), std::string::npos);
}

TEST(Session, BackendErrors) {
  auto plan = tinyMlp().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions cuda;
  cuda.backend = "cuda";
  auto s = Session::create(*plan, cuda);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("CUDA"), std::string::npos);
  SessionOptions bogus;
  bogus.backend = "tpu";
  EXPECT_FALSE(Session::create(*plan, bogus).ok());
  // A CPU session runs ops placed on "cuda" on the host (a mixed plan stays
  // runnable without a GPU); a device it has never heard of is an error that
  // names the op.
  PlanBuilder onCuda = tinyMlp();
  onCuda.proto().mutable_ops(0)->set_device("cuda");
  auto placed = onCuda.build();
  ASSERT_TRUE(placed.ok());
  EXPECT_TRUE(Session::create(*placed).ok());
  PlanBuilder onTpu = tinyMlp();
  onTpu.proto().mutable_ops(0)->set_device("tpu");
  auto unknown = onTpu.build();
  ASSERT_TRUE(unknown.ok());
  auto mismatch = Session::create(*unknown);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("'mm'"), std::string::npos);
  EXPECT_NE(mismatch.status().message().find("'tpu'"), std::string::npos);
}

/// x[?, 8] padded by `after` on the last dim.
PlanBuilder hugePad(int64_t after) {
  PlanBuilder b("pad");
  int x = b.addInput("x", DType::kF32, {-1, 8});
  int y = b.addOutput("y", DType::kF32, {-1, -1});
  b.addOp("pad", "pad_0", {x}, {y}, {{"pads", intsAttr({0, 0, 0, after})}});
  return b;
}

TEST(Session, MemoryLimit) {
  // 4 GiB of output: over a 1 GiB limit, an error naming the op and tensor
  // before anything is allocated.
  auto big = hugePad(int64_t(1) << 30).build();
  ASSERT_TRUE(big.ok()) << big.status().toString();
  SessionOptions limited;
  limited.memoryLimitBytes = size_t(1) << 30;
  auto s = Session::create(*big, limited);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("'pad_0'"), std::string::npos);
  EXPECT_NE(s.status().message().find("'y'"), std::string::npos);
  EXPECT_NE(s.status().message().find("memory limit"), std::string::npos);
  // A shape whose byte size overflows int64 is invalid whatever the limit.
  auto overflow = hugePad(int64_t(1) << 62).build();
  ASSERT_TRUE(overflow.ok());
  auto o = Session::create(*overflow);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(o.status().message().find("does not fit in 64 bits"),
            std::string::npos);
  // Pads that overflow the dim itself.
  auto wrap = hugePad(INT64_MAX).build();
  ASSERT_TRUE(wrap.ok());
  EXPECT_FALSE(Session::create(*wrap).ok());
  // The arena counts too: a small pad under a tiny limit.
  SessionOptions tiny;
  tiny.memoryLimitBytes = 64;
  auto small = hugePad(100).build();
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(Session::create(*small, tiny).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(Session::create(*small).ok());
}

TEST(Session, ProfilesAndMemoryStats) {
  auto plan = tinyMlp().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.batchSize = 8;
  // One profile per plan op: the reference backend runs them one by one
  // (the CPU schedule fuses the relu into the matmul).
  options.backend = "reference";
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->setInput("x", randomF32({8, 4}, 1)).ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE((*session)->run().ok());
  const auto &profiles = (*session)->opProfiles();
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].name, "mm");
  EXPECT_EQ(profiles[0].calls, 3);
  EXPECT_GE(profiles[1].lastStartMs, profiles[0].lastStartMs);
  MemoryStats m = (*session)->memoryStats();
  EXPECT_EQ(m.intermediateBytes, 8u * 3 * 4);
  EXPECT_GE(m.arenaBytes, m.intermediateBytes);
  EXPECT_EQ(m.constantBytes, 12u * 4);
  EXPECT_EQ(m.outputBytes, 8u * 3 * 4);
}

TEST(Session, StateIsUpdatedInPlace) {
  // counter <- counter + 1 every run; the output is the new value.
  PlanBuilder b("counter");
  int c = b.addState("counter", makeF32({1}, {5}));
  int one = b.addConstant("one", makeF32({1}, {1}));
  int next = b.addOutput("next", DType::kF32, {1});
  b.addOp("add", "inc", {c, one}, {next});
  b.setStateUpdate(c, next);
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->run().ok());
  ASSERT_TRUE((*session)->run().ok());
  EXPECT_EQ(values<float>(*(*session)->state("counter")),
            (std::vector<float>{7}));
}

TEST(Session, IntermediatesShareTheArena) {
  // A chain of 6 relus over [256]: at most two buffers are live at a time.
  PlanBuilder b("chain");
  int prev = b.addInput("x", DType::kF32, {256});
  for (int i = 0; i < 5; ++i) {
    int next = b.addIntermediate("t" + std::to_string(i), DType::kF32, {256});
    b.addOp("relu", "r" + std::to_string(i), {prev}, {next});
    prev = next;
  }
  int y = b.addOutput("y", DType::kF32, {256});
  b.addOp("neg", "n", {prev}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok());
  auto session = Session::create(*plan, {"reference"});
  ASSERT_TRUE(session.ok());
  MemoryStats m = (*session)->memoryStats();
  EXPECT_EQ(m.intermediateBytes, 5u * 1024);
  EXPECT_EQ(m.arenaBytes, 2u * 1024);
  ASSERT_TRUE((*session)->setInput("x", randomF32({256}, 9)).ok());
  ASSERT_TRUE((*session)->run().ok());
  Tensor expectedIn = randomF32({256}, 9);
  auto out = (*session)->output("y");
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(out->data<float>()[i],
              -std::max(expectedIn.data<float>()[i], 0.0f));
}

TEST(MemoryPlanner, NoOverlapOfLiveTensorsAndBoundedBySum) {
  std::mt19937 rng(123);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + rng() % 40;
    std::vector<size_t> sizes(n);
    std::vector<Lifetime> lifetimes(n);
    size_t sum = 0;
    for (int i = 0; i < n; ++i) {
      sizes[i] = rng() % 5000;
      int first = rng() % 30;
      lifetimes[i] = {first, first + static_cast<int>(rng() % 10)};
      sum += alignUp(sizes[i], 64);
    }
    ArenaPlan plan = planArena(sizes, lifetimes, 64);
    EXPECT_LE(plan.arenaBytes, sum);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(plan.offsets[i] % 64, 0u);
      EXPECT_LE(plan.offsets[i] + sizes[i], plan.arenaBytes);
      for (int j = i + 1; j < n; ++j) {
        bool liveTogether = lifetimes[i].firstUse <= lifetimes[j].lastUse &&
                            lifetimes[j].firstUse <= lifetimes[i].lastUse;
        bool disjoint = plan.offsets[i] + sizes[i] <= plan.offsets[j] ||
                        plan.offsets[j] + sizes[j] <= plan.offsets[i];
        if (liveTogether && sizes[i] && sizes[j]) {
          EXPECT_TRUE(disjoint)
              << "trial " << trial << " tensors " << i << ", " << j;
        }
      }
    }
  }
}

TEST(MemoryPlanner, ReusesFreedSpaceWithBestFit) {
  // t0 [0,1] 1000B, t1 [1,2] 100B, t2 [2,3] 100B: t2 reuses t0's space.
  ArenaPlan plan = planArena({1000, 100, 100}, {{0, 1}, {1, 2}, {2, 3}}, 64);
  EXPECT_EQ(plan.arenaBytes, 1024u + 128u);
  EXPECT_EQ(plan.offsets[2], 0u);
  // A gap of exactly the right size is preferred over a larger one.
  ArenaPlan fit = planArena({640, 64, 128, 64, 64},
                            {{0, 9}, {0, 0}, {0, 9}, {0, 0}, {5, 6}}, 64);
  EXPECT_LE(fit.arenaBytes, 640u + 64 + 128 + 64);
}

TEST(DType, NamesSizesAndParsingOfEveryType) {
  const std::tuple<DType, const char *, size_t, bool, bool> expected[] = {
      {DType::kF32, "f32", 4, true, false},
      {DType::kF16, "f16", 2, true, false},
      {DType::kBF16, "bf16", 2, true, false},
      {DType::kI8, "i8", 1, false, false},
      {DType::kI32, "i32", 4, false, false},
      {DType::kI64, "i64", 8, false, false},
      {DType::kBool, "bool", 1, false, false},
      {DType::kU8, "u8", 1, false, true},
      {DType::kF64, "f64", 8, true, false},
      {DType::kI16, "i16", 2, false, false},
      {DType::kU16, "u16", 2, false, true},
      {DType::kU32, "u32", 4, false, true},
      {DType::kU64, "u64", 8, false, true},
      {DType::kF8E4M3FN, "f8e4m3fn", 1, false, false},
      {DType::kF8E4M3FNUZ, "f8e4m3fnuz", 1, false, false},
      {DType::kF8E5M2, "f8e5m2", 1, false, false},
      {DType::kF8E5M2FNUZ, "f8e5m2fnuz", 1, false, false},
      {DType::kI4, "i4", 1, false, false},
      {DType::kU4, "u4", 1, false, false}};
  ASSERT_EQ(allDTypes().size(), std::size(expected));
  for (const auto &[dtype, name, size, isFloat, isUnsigned] : expected) {
    EXPECT_STREQ(dtypeName(dtype), name);
    EXPECT_EQ(dtypeSize(dtype), size) << name;
    EXPECT_EQ(isFloatDType(dtype), isFloat) << name;
    EXPECT_EQ(isUnsignedDType(dtype), isUnsigned) << name;
    auto parsed = parseDType(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, dtype);
    // The plan proto's numbers are the enum's.
    EXPECT_EQ(fromProtoDType(toProtoDType(dtype)), dtype) << name;
  }
  EXPECT_FALSE(parseDType("u128").ok());
  EXPECT_EQ(fromProtoDType(static_cast<gopt::plan::DType>(99)),
            DType::kInvalid);
}

TEST(Npy, RoundTripAllTypes) {
  std::string dir = ::testing::TempDir();
  Tensor f = randomF32({2, 3}, 5);
  Tensor i64 = makeTensor<int64_t>(DType::kI64, {3}, {-1, 0, 1LL << 40});
  Tensor i32 = makeTensor<int32_t>(DType::kI32, {1, 1, 2}, {7, -7});
  Tensor i8 = makeTensor<int8_t>(DType::kI8, {2}, {-128, 127});
  Tensor u8 = makeTensor<uint8_t>(DType::kU8, {2}, {0, 255});
  Tensor bl = makeTensor<bool>(DType::kBool, {2}, {true, false});
  Tensor h = Tensor::allocate(DType::kF16, {2});
  h.data<uint16_t>()[1] = floatToHalf(-3.5f);
  Tensor scalar = makeF32({}, {42});
  Tensor f64 = makeTensor<double>(DType::kF64, {2}, {0.1, -1e300});
  Tensor i16 = makeTensor<int16_t>(DType::kI16, {2}, {-32768, 32767});
  Tensor u16 = makeTensor<uint16_t>(DType::kU16, {2}, {0, 65535});
  Tensor u32 = makeTensor<uint32_t>(DType::kU32, {2}, {1, 4294967295u});
  Tensor u64 =
      makeTensor<uint64_t>(DType::kU64, {2}, {1, 18446744073709551615ull});
  int k = 0;
  for (const Tensor &t :
       {f, i64, i32, i8, u8, bl, h, scalar, f64, i16, u16, u32, u64}) {
    std::string path = dir + "/rt" + std::to_string(k++) + ".npy";
    ASSERT_TRUE(writeNpy(path, t).ok());
    auto back = readNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().toString();
    EXPECT_EQ(back->dtype(), t.dtype());
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(0, std::memcmp(back->data(), t.data(), t.byteSize()));
  }
}

TEST(Npy, ParsesNumpyWrittenHeader) {
  // Exactly what numpy 1.x writes for np.arange(3, dtype='<i4').
  std::string header =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size());
  bytes += '\0';
  bytes += header;
  int32_t data[3] = {0, 1, 2};
  bytes.append(reinterpret_cast<const char *>(data), sizeof(data));
  auto t = parseNpy(bytes, "arange.npy");
  ASSERT_TRUE(t.ok()) << t.status().toString();
  EXPECT_EQ(values<int32_t>(*t), (std::vector<int32_t>{0, 1, 2}));
}

TEST(Npy, ReadsEveryNumpyDescrGoptHas) {
  // The dtype strings numpy writes (np.dtype(...).str) for each type.
  const std::pair<const char *, DType> descrs[] = {
      {"<f8", DType::kF64}, {"<f4", DType::kF32}, {"<f2", DType::kF16},
      {"<i8", DType::kI64}, {"<i4", DType::kI32}, {"<i2", DType::kI16},
      {"|i1", DType::kI8},  {"<u8", DType::kU64}, {"<u4", DType::kU32},
      {"<u2", DType::kU16}, {"|u1", DType::kU8},  {"|b1", DType::kBool}};
  for (const auto &[descr, dtype] : descrs) {
    std::string header = std::string("{'descr': '") + descr +
                         "', 'fortran_order': False, 'shape': (2,), }";
    header.append(128 - 10 - header.size() - 1, ' ');
    header += '\n';
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size());
    bytes += '\0';
    bytes += header;
    bytes.append(2 * dtypeSize(dtype), '\x01');
    auto t = parseNpy(bytes, "t.npy");
    ASSERT_TRUE(t.ok()) << descr << ": " << t.status().toString();
    EXPECT_EQ(t->dtype(), dtype) << descr;
    EXPECT_EQ(t->shape(), (Shape{2})) << descr;
  }
  // 0x0101 as little-endian u16 and 0x01...01 as u64.
  auto u2 = parseNpy(
      serializeNpy(makeTensor<uint16_t>(DType::kU16, {1}, {257})), "u2.npy");
  ASSERT_TRUE(u2.ok());
  EXPECT_EQ(values<uint16_t>(*u2), (std::vector<uint16_t>{257}));
}

TEST(Npy, BadFilesNameTheFile) {
  auto magic = parseNpy("NOTNUMPY0000", "bad.npy");
  ASSERT_FALSE(magic.ok());
  EXPECT_NE(magic.status().message().find("bad.npy"), std::string::npos);
  std::string good = serializeNpy(makeF32({4}, {1, 2, 3, 4}));
  EXPECT_FALSE(parseNpy(good.substr(0, good.size() - 3), "cut.npy").ok());
  std::string c8 = good;
  c8.replace(c8.find("<f4"), 3, "<c8");
  auto unsupported = parseNpy(c8, "c8.npy");
  ASSERT_FALSE(unsupported.ok());
  EXPECT_NE(unsupported.status().message().find("c8"), std::string::npos);
  // An f8 header over f4 data: the size check catches it.
  std::string f8 = good;
  f8.replace(f8.find("<f4"), 3, "<f8");
  EXPECT_FALSE(parseNpy(f8, "f8.npy").ok());
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_FALSE(parseNpy(fortran, "f.npy").ok());
  EXPECT_FALSE(readNpy("/nonexistent.npy").ok());
}

} // namespace
