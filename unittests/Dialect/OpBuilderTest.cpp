//===- OpBuilderTest.cpp - Building gopt ops with inferred types ----------===//
//
// Passes and importers build ops without spelling result types; these tests
// check that inference gives the types a user would expect and that the
// built IR verifies.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/InitGopt.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace gopt;

namespace {

class OpBuilderTest : public ::testing::Test {
protected:
  OpBuilderTest() {
    DialectRegistry registry;
    registerGoptDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// A function taking `argTypes`, with the builder inside its body.
  func::FuncOp makeFunction(ArrayRef<Type> argTypes) {
    OpBuilder builder(&context);
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
    auto func =
        builder.create<func::FuncOp>(builder.getUnknownLoc(), "graph",
                                     builder.getFunctionType(argTypes, {}));
    func.addEntryBlock();
    return func;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(OpBuilderTest, ResNetStemInfersTypes) {
  Type f32 = Float32Type::get(&context);
  auto input = RankedTensorType::get({ShapedType::kDynamic, 224, 224, 3}, f32);
  func::FuncOp func = makeFunction({input});
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  Location loc = b.getUnknownLoc();

  auto filter = b.create<ConstantOp>(
      loc,
      DenseElementsAttr::get(RankedTensorType::get({7, 7, 3, 64}, f32), 0.5f));
  auto conv = b.create<Conv2DOp>(
      loc, func.getArgument(0), filter, /*bias=*/Value(),
      b.getDenseI64ArrayAttr({2, 2}), /*dilations=*/nullptr, "SAME",
      /*pads=*/nullptr, 1, "NHWC", "HWIO", "none");
  auto channel = DenseElementsAttr::get(RankedTensorType::get({64}, f32), 1.0f);
  auto scale = b.create<ConstantOp>(loc, channel);
  auto bn = b.create<BatchNormOp>(loc, conv, scale, scale, scale, scale,
                                  llvm::APFloat(1e-5f), "NHWC",
                                  /*training=*/false, llvm::APFloat(0.9f));
  auto relu = b.create<ReluOp>(loc, bn.getY());
  auto pool = b.create<MaxPoolOp>(loc, relu, b.getDenseI64ArrayAttr({3, 3}),
                                  b.getDenseI64ArrayAttr({2, 2}), "SAME",
                                  nullptr, "NHWC", false);
  b.create<func::ReturnOp>(loc, pool.getResult());
  func.setType(b.getFunctionType({input}, {pool.getType()}));

  EXPECT_EQ(conv.getType(),
            RankedTensorType::get({ShapedType::kDynamic, 112, 112, 64}, f32));
  EXPECT_EQ(bn.getStatistics().size(), 0u);
  EXPECT_EQ(pool.getType(),
            RankedTensorType::get({ShapedType::kDynamic, 56, 56, 64}, f32));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(OpBuilderTest, TrainingBatchNormHasFiveResults) {
  Type f32 = Float32Type::get(&context);
  auto input = RankedTensorType::get({8, 16, 4, 4}, f32);
  auto channel = RankedTensorType::get({16}, f32);
  func::FuncOp func = makeFunction({input, channel});
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  Value x = func.getArgument(0), c = func.getArgument(1);
  auto bn = b.create<BatchNormOp>(b.getUnknownLoc(), x, c, c, c, c,
                                  llvm::APFloat(1e-5f), "NCHW",
                                  /*training=*/true, llvm::APFloat(0.9f));
  b.create<func::ReturnOp>(b.getUnknownLoc(), ValueRange{});
  ASSERT_EQ(bn.getStatistics().size(), 4u);
  for (Value stat : bn.getStatistics())
    EXPECT_EQ(stat.getType(), channel);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(OpBuilderTest, TransposeOfTransposeFoldsThroughCanonicalForm) {
  Type f32 = Float32Type::get(&context);
  auto input = RankedTensorType::get({1, 8, 8, 3}, f32);
  func::FuncOp func = makeFunction({input});
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  Location loc = b.getUnknownLoc();
  auto toNCHW = b.create<TransposeOp>(loc, func.getArgument(0),
                                      ArrayRef<int64_t>{0, 3, 1, 2});
  EXPECT_EQ(toNCHW.getType(), RankedTensorType::get({1, 3, 8, 8}, f32));
  auto identity = b.create<TransposeOp>(loc, func.getArgument(0),
                                        ArrayRef<int64_t>{0, 1, 2, 3});
  // An identity permutation folds to its operand.
  SmallVector<OpFoldResult> folded;
  ASSERT_TRUE(succeeded(identity->fold(folded)));
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(dyn_cast<Value>(folded[0]), func.getArgument(0));
}

} // namespace
