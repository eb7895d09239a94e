// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of GoptDataDependentOps.td.

func.func @non_zero_scalar(%x: tensor<f32>) {
  // expected-error@+1 {{'gopt.non_zero' op expects x of rank >= 1, got a scalar}}
  %0 = gopt.non_zero %x : (tensor<f32>) -> tensor<0x?xi64>
  return
}

// -----

func.func @compress_condition_rank(%x: tensor<3x4xf32>, %c: tensor<2x2xi1>) {
  // expected-error@+1 {{'gopt.compress' op expects a condition of rank 1, got [2, 2]}}
  %0 = gopt.compress %x, %c {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x2xi1>) -> tensor<3x?xf32>
  return
}

// -----

func.func @compress_condition_too_long(%x: tensor<3x4xf32>, %c: tensor<5xi1>) {
  // expected-error@+1 {{'gopt.compress' op expects a condition of at most 4 entries (dimension 1 of x [3, 4]), got 5}}
  %0 = gopt.compress %x, %c {axis = 1 : i64} : (tensor<3x4xf32>, tensor<5xi1>) -> tensor<3x?xf32>
  return
}

// -----

func.func @compress_axis(%x: tensor<3x4xf32>, %c: tensor<2xi1>) {
  // expected-error@+1 {{'gopt.compress' op}}
  %0 = gopt.compress %x, %c {axis = 2 : i64} : (tensor<3x4xf32>, tensor<2xi1>) -> tensor<3x?xf32>
  return
}

// -----

func.func @unique_axis(%x: tensor<3x4xf32>) {
  // expected-error@+1 {{'gopt.unique' op}}
  %0:4 = gopt.unique %x {axis = -3 : i64} : (tensor<3x4xf32>) -> (tensor<3x?xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  return
}

// -----

func.func @nms_box_count(%b: tensor<1x6x4xf32>, %s: tensor<1x2x5xf32>, %m: tensor<1xi64>, %t: tensor<1xf32>) {
  // expected-error@+1 {{'gopt.non_max_suppression' op expects boxes [1, 6, 4] and scores [1, 2, 5] to agree in the box count}}
  %0 = gopt.non_max_suppression %b, %s, %m, %t, %t : (tensor<1x6x4xf32>, tensor<1x2x5xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_boxes_shape(%b: tensor<1x6x5xf32>, %s: tensor<1x2x6xf32>, %m: tensor<1xi64>, %t: tensor<1xf32>) {
  // expected-error@+1 {{'gopt.non_max_suppression' op expects boxes of shape [batches, boxes, 4], got [1, 6, 5]}}
  %0 = gopt.non_max_suppression %b, %s, %m, %t, %t : (tensor<1x6x5xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_limit_elements(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %m: tensor<2xi64>, %t: tensor<1xf32>) {
  // expected-error@+1 {{'gopt.non_max_suppression' op expects max_output_boxes_per_class of one element (shape [] or [1]), got [2]}}
  %0 = gopt.non_max_suppression %b, %s, %m, %t, %t : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<2xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_center_point_box(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %m: tensor<1xi64>, %t: tensor<1xf32>) {
  // expected-error@+1 {{'gopt.non_max_suppression' op expects center_point_box 0 or 1, got 2}}
  %0 = gopt.non_max_suppression %b, %s, %m, %t, %t {center_point_box = 2 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @image_decoder_rank(%s: tensor<2x8xui8>) {
  // expected-error@+1 {{'gopt.image_decoder' op expects encoded_stream of rank 1 (the file's bytes), got [2, 8]}}
  %0 = gopt.image_decoder %s : (tensor<2x8xui8>) -> tensor<?x?x3xui8>
  return
}

// -----

func.func @image_decoder_format(%s: tensor<8xui8>) {
  // expected-error@+1 {{'gopt.image_decoder' op pixel_format 'RGBA' is not one of RGB, BGR, Grayscale}}
  %0 = gopt.image_decoder %s {pixel_format = "RGBA"} : (tensor<8xui8>) -> tensor<?x?x3xui8>
  return
}

// -----

func.func @image_decoder_type(%s: tensor<8xi8>) {
  // expected-error@+1 {{'gopt.image_decoder' op operand #0 must be ranked tensor of 8-bit unsigned integer values}}
  %0 = gopt.image_decoder %s : (tensor<8xi8>) -> tensor<?x?x3xui8>
  return
}
