// TfIdfVectorizer with IDF weights and a seeded RandomUniformLike (ONNX
// seed 1.5: its float bits under the importer's 0x5EED stream tag) for
// export-onnx-breadth2.test.
func.func @main(%x: tensor<2x6xi64> {gopt.name = "x"}, %u: tensor<3x4xf32> {gopt.name = "u"}) -> (tensor<2x7xf32> {gopt.name = "y"}, tensor<3x4xf64> {gopt.name = "r"}) {
  %y = gopt.tf_idf_vectorizer %x {mode = "TFIDF", min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 0 : i64, ngram_counts = array<i64: 0, 4>, ngram_indexes = array<i64: 0, 1, 2, 3, 4, 5, 6>, pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7, 8, 6, 7>, weights = array<f32: 1.0, 0.5, 2.0, 1.0, 0.25, 1.0, 3.0>} : (tensor<2x6xi64>) -> tensor<2x7xf32>
  %r = gopt.random_uniform_like %u {low = -2.0 : f32, high = 3.0 : f32, seed = 26719233136132096 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf64>
  return %y, %r : tensor<2x7xf32>, tensor<3x4xf64>
}
