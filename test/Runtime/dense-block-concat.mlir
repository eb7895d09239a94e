// A DenseNet block (each layer: concat of the block's input and
// all earlier layers' features, batch norm, relu, 1x1 conv, 3x3 conv): the
// CPU schedule keeps the block's features in one nChw16c buffer, each
// concat's result its first channels; the 3x3 convs write their slices
// (conv2d+concat), the block's input is copied in once (concat-slice), and
// no concat copies the block; the batch norms run gopt's own nChw16c
// kernel (gopt-blocked). The values are the reference backend's.
// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: env GOPT_DENSE_CONCAT=copy gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s --check-prefix=COPY
// RUN: env GOPT_DENSE_CONCAT=0 gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s --check-prefix=OFF
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --warmup 0 --iterations 2 --threads 2 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --atol 1e-4 --rtol 1e-4 | FileCheck %s --check-prefix=SAME
// RUN: env GOPT_DENSE_CONCAT=copy GOPT_BLOCKED_BN=0 gopt-run %s --warmup 0 --iterations 2 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --atol 1e-4 --rtol 1e-4 | FileCheck %s --check-prefix=SAME
// Batch 2 keeps oneDNN's concats unless GOPT_DENSE_CONCAT=all: then a
// concat's images lie as far apart as the block buffer's, and the batch
// norms read that view (gopt's kernel, or oneDNN's through a reorder).
// RUN: gopt-run %s --batch 2 --warmup 0 --iterations 1 --profile | FileCheck %s --check-prefix=OFF
// RUN: env GOPT_DENSE_CONCAT=all gopt-run %s --batch 2 --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t.b2 && gopt-run %s --batch 2 --backend reference --warmup 0 --iterations 1 --output-dir %t.b2
// RUN: env GOPT_DENSE_CONCAT=all gopt-run %s --batch 2 --warmup 0 --iterations 2 --threads 2 --compare-npy output0=%t.b2/output0.npy --compare-npy output1=%t.b2/output1.npy --atol 1e-4 --rtol 1e-4 | FileCheck %s --check-prefix=SAME
// RUN: env GOPT_DENSE_CONCAT=all GOPT_BLOCKED_BN=0 gopt-run %s --batch 2 --warmup 0 --iterations 2 --compare-npy output0=%t.b2/output0.npy --compare-npy output1=%t.b2/output1.npy --atol 1e-4 --rtol 1e-4 | FileCheck %s --check-prefix=SAME
// CHECK-DAG: l1/cat:x0 concat-slice
// CHECK-DAG: l1/conv2+block/cat conv2d+concat cpu onednn-into-concat
// CHECK-DAG: l2/conv2+block/cat conv2d+concat cpu onednn-into-concat
// CHECK-DAG: l3/conv2+block/cat conv2d+concat cpu onednn-into-concat
// CHECK-DAG: l2/bn+l2/relu batch_norm+relu cpu gopt-blocked
// CHECK-NOT: {{ concat }}
// COPY-DAG: l2/cat:l1/conv2 concat-slice
// COPY-DAG: block/cat:l3/conv2 concat-slice
// OFF: l2/cat concat
// SAME-COUNT-2: compare output{{[01]}} with {{.*}}: ok
func.func @main(%x: tensor<?x16x8x8xf32>, %l1_s: tensor<32xf32>, %l1_o: tensor<32xf32>, %l2_s: tensor<48xf32>, %l2_o: tensor<48xf32>, %l3_s: tensor<64xf32>, %l3_o: tensor<64xf32>, %t_s: tensor<80xf32>, %t_o: tensor<80xf32>) -> (tensor<?x80x8x8xf32>, tensor<?x80x1x1xf32>) {
  %w0 = gopt.constant dense<0.05> : tensor<32x16x3x3xf32>
  %x0 = gopt.conv2d %x, %w0 {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>, activation = "relu"} : (tensor<?x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<?x32x8x8xf32> loc("x0")
  %l1_m = gopt.constant dense<0.25> : tensor<32xf32>
  %l1_v = gopt.constant dense<2.0> : tensor<32xf32>
  %l1_cat = gopt.concat %x0 {axis = 1 : i64} : (tensor<?x32x8x8xf32>) -> tensor<?x32x8x8xf32> loc("l1/cat")
  %l1_bn = gopt.batch_norm %l1_cat, %l1_s, %l1_o, %l1_m, %l1_v {data_format = "NCHW", epsilon = 1.0e-5 : f32} : (tensor<?x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32> loc("l1/bn")
  %l1_r = gopt.relu %l1_bn : (tensor<?x32x8x8xf32>) -> tensor<?x32x8x8xf32> loc("l1/relu")
  %l1_w1 = gopt.constant dense<0.02> : tensor<32x32x1x1xf32>
  %l1_b1 = gopt.constant dense<0.1> : tensor<32xf32>
  %l1_c1 = gopt.conv2d %l1_r, %l1_w1, %l1_b1 {data_format = "NCHW", filter_format = "OIHW", activation = "relu"} : (tensor<?x32x8x8xf32>, tensor<32x32x1x1xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32> loc("l1/conv1")
  %l1_w2 = gopt.constant dense<-0.03> : tensor<16x32x3x3xf32>
  %l1_f = gopt.conv2d %l1_c1, %l1_w2 {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<?x32x8x8xf32>, tensor<16x32x3x3xf32>) -> tensor<?x16x8x8xf32> loc("l1/conv2")
  %l2_m = gopt.constant dense<0.25> : tensor<48xf32>
  %l2_v = gopt.constant dense<2.0> : tensor<48xf32>
  %l2_cat = gopt.concat %x0, %l1_f {axis = 1 : i64} : (tensor<?x32x8x8xf32>, tensor<?x16x8x8xf32>) -> tensor<?x48x8x8xf32> loc("l2/cat")
  %l2_bn = gopt.batch_norm %l2_cat, %l2_s, %l2_o, %l2_m, %l2_v {data_format = "NCHW", epsilon = 1.0e-5 : f32} : (tensor<?x48x8x8xf32>, tensor<48xf32>, tensor<48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<?x48x8x8xf32> loc("l2/bn")
  %l2_r = gopt.relu %l2_bn : (tensor<?x48x8x8xf32>) -> tensor<?x48x8x8xf32> loc("l2/relu")
  %l2_w1 = gopt.constant dense<0.04> : tensor<32x48x1x1xf32>
  %l2_b1 = gopt.constant dense<0.1> : tensor<32xf32>
  %l2_c1 = gopt.conv2d %l2_r, %l2_w1, %l2_b1 {data_format = "NCHW", filter_format = "OIHW", activation = "relu"} : (tensor<?x48x8x8xf32>, tensor<32x48x1x1xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32> loc("l2/conv1")
  %l2_w2 = gopt.constant dense<-0.06> : tensor<16x32x3x3xf32>
  %l2_f = gopt.conv2d %l2_c1, %l2_w2 {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<?x32x8x8xf32>, tensor<16x32x3x3xf32>) -> tensor<?x16x8x8xf32> loc("l2/conv2")
  %l3_m = gopt.constant dense<0.25> : tensor<64xf32>
  %l3_v = gopt.constant dense<2.0> : tensor<64xf32>
  %l3_cat = gopt.concat %x0, %l1_f, %l2_f {axis = 1 : i64} : (tensor<?x32x8x8xf32>, tensor<?x16x8x8xf32>, tensor<?x16x8x8xf32>) -> tensor<?x64x8x8xf32> loc("l3/cat")
  %l3_bn = gopt.batch_norm %l3_cat, %l3_s, %l3_o, %l3_m, %l3_v {data_format = "NCHW", epsilon = 1.0e-5 : f32} : (tensor<?x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x8x8xf32> loc("l3/bn")
  %l3_r = gopt.relu %l3_bn : (tensor<?x64x8x8xf32>) -> tensor<?x64x8x8xf32> loc("l3/relu")
  %l3_w1 = gopt.constant dense<0.06> : tensor<32x64x1x1xf32>
  %l3_b1 = gopt.constant dense<0.1> : tensor<32xf32>
  %l3_c1 = gopt.conv2d %l3_r, %l3_w1, %l3_b1 {data_format = "NCHW", filter_format = "OIHW", activation = "relu"} : (tensor<?x64x8x8xf32>, tensor<32x64x1x1xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32> loc("l3/conv1")
  %l3_w2 = gopt.constant dense<-0.09> : tensor<16x32x3x3xf32>
  %l3_f = gopt.conv2d %l3_c1, %l3_w2 {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<?x32x8x8xf32>, tensor<16x32x3x3xf32>) -> tensor<?x16x8x8xf32> loc("l3/conv2")
  %all = gopt.concat %x0, %l1_f, %l2_f, %l3_f {axis = 1 : i64} : (tensor<?x32x8x8xf32>, tensor<?x16x8x8xf32>, tensor<?x16x8x8xf32>, tensor<?x16x8x8xf32>) -> tensor<?x80x8x8xf32> loc("block/cat")
  %t_m = gopt.constant dense<0.5> : tensor<80xf32>
  %t_v = gopt.constant dense<1.5> : tensor<80xf32>
  %t_bn = gopt.batch_norm %all, %t_s, %t_o, %t_m, %t_v {data_format = "NCHW", epsilon = 1.0e-5 : f32} : (tensor<?x80x8x8xf32>, tensor<80xf32>, tensor<80xf32>, tensor<80xf32>, tensor<80xf32>) -> tensor<?x80x8x8xf32> loc("t/bn")
  %t_r = gopt.relu %t_bn : (tensor<?x80x8x8xf32>) -> tensor<?x80x8x8xf32> loc("t/relu")
  %pool = gopt.global_avg_pool %t_r {data_format = "NCHW"} : (tensor<?x80x8x8xf32>) -> tensor<?x80x1x1xf32>
  return %t_r, %pool : tensor<?x80x8x8xf32>, tensor<?x80x1x1xf32>
}
