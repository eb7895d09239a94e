//===- RefIndexing.cpp - Reference gather, scatter, arg max, cumsum -------===//
//
// Every index is checked against its dimension before anything is read or
// written: an index outside [-dim, dim) is an error naming the index and
// where it was found (the backend prefixes the op), never an out-of-bounds
// access. Gathers copy contiguous blocks with memcpy, so an embedding lookup
// costs one row copy per index.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_set>

namespace gopt::runtime::ref {
namespace {

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

int64_t rawIndex(const Tensor &indices, int64_t i) {
  return indices.dtype() == DType::kI32 ? indices.data<int32_t>()[i]
                                        : indices.data<int64_t>()[i];
}

/// Element `i` of `indices` as a position in [0, dim); negative indices
/// count from the end.
StatusOr<int64_t> indexAt(const Tensor &indices, int64_t i, int64_t dim,
                          int64_t axis) {
  int64_t v = rawIndex(indices, i);
  if (v < -dim || v >= dim)
    return invalidArgument("index ", v, " (indices element ", i,
                           ") is out of range [", -dim, ", ", dim,
                           ") for dimension ", axis, " of size ", dim);
  return v < 0 ? v + dim : v;
}

/// Every element of `indices`, each checked against `dim`.
StatusOr<std::vector<int64_t>> checkedIndices(const Tensor &indices,
                                              int64_t dim, int64_t axis) {
  std::vector<int64_t> result(indices.numElements());
  for (int64_t i = 0; i < indices.numElements(); ++i) {
    GOPT_ASSIGN_OR_RETURN(result[i], indexAt(indices, i, dim, axis));
  }
  return result;
}

int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

Status gatherKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  const Tensor &x = in[0], &indices = in[1];
  const Shape &shape = x.shape();
  int64_t axis = normalizedAxis(ctx.attrs().getInt("axis"), shape.size());
  GOPT_ASSIGN_OR_RETURN(std::vector<int64_t> rows,
                        checkedIndices(indices, shape[axis], axis));
  int64_t outer = product(shape, 0, axis);
  size_t rowBytes =
      product(shape, axis + 1, shape.size()) * dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.data());
  char *dst = static_cast<char *>(out[0].data());
  int64_t count = rows.size();
  for (int64_t o = 0; o < outer; ++o) {
    const char *block = src + o * shape[axis] * rowBytes;
    for (int64_t j = 0; j < count; ++j, dst += rowBytes)
      std::memcpy(dst, block + rows[j] * rowBytes, rowBytes);
  }
  return Status::success();
}

// dx = 0, then each row of dy adds into the row of dx its index names.
Status gatherGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  const Tensor &x = in[0], &indices = in[1], &dy = in[2];
  const Shape &shape = x.shape();
  int64_t axis = normalizedAxis(ctx.attrs().getInt("axis"), shape.size());
  GOPT_ASSIGN_OR_RETURN(std::vector<int64_t> rows,
                        checkedIndices(indices, shape[axis], axis));
  int64_t outer = product(shape, 0, axis);
  int64_t row = product(shape, axis + 1, shape.size());
  float *dx = out[0].data<float>();
  std::fill(dx, dx + out[0].numElements(), 0.0f);
  const float *g = dy.data<float>();
  int64_t count = rows.size();
  for (int64_t o = 0; o < outer; ++o) {
    float *block = dx + o * shape[axis] * row;
    for (int64_t j = 0; j < count; ++j, g += row) {
      float *target = block + rows[j] * row;
      for (int64_t k = 0; k < row; ++k)
        target[k] += g[k];
    }
  }
  return Status::success();
}

/// Calls fn(position in indices, offset in x except along axis) for every
/// element of an indices tensor that addresses x element for element
/// (gather_elements, scatter_elements).
template <typename Fn>
Status forEachElementIndex(const Shape &x, const Shape &indexShape,
                           int64_t axis, Fn &&fn) {
  std::vector<int64_t> strides = rowMajorStrides(x);
  int64_t rank = x.size(), total = numElements(indexShape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        offset += idx[d] * strides[d];
    GOPT_RETURN_IF_ERROR(fn(i, offset, strides[axis]));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < indexShape[d])
        break;
      idx[d] = 0;
    }
  }
  return Status::success();
}

Status gatherElementsKernel(const RefContext &ctx,
                            const std::vector<Tensor> &in,
                            std::vector<Tensor> &out) {
  const Tensor &x = in[0], &indices = in[1];
  int64_t axis = normalizedAxis(ctx.attrs().getInt("axis"), x.rank());
  size_t elem = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.data());
  char *dst = static_cast<char *>(out[0].data());
  return forEachElementIndex(
      x.shape(), indices.shape(), axis,
      [&](int64_t i, int64_t offset, int64_t axisStride) -> Status {
        GOPT_ASSIGN_OR_RETURN(int64_t v,
                              indexAt(indices, i, x.dim(axis), axis));
        std::memcpy(dst + i * elem, src + (offset + v * axisStride) * elem,
                    elem);
        return Status::success();
      });
}

/// Index tuples of gather_nd/scatter_nd: `indices` [batch..., n..., k]
/// addresses x [batch..., k dims, slice...]. Calls fn(tuple number, element
/// offset of the addressed slice in x).
template <typename Fn>
Status forEachIndexTuple(const Shape &x, const Tensor &indices,
                         int64_t batchDims, Fn &&fn) {
  const Shape &is = indices.shape();
  int64_t k = is.back();
  int64_t batches = product(is, 0, batchDims);
  int64_t perBatch = product(is, batchDims, is.size() - 1);
  int64_t xBatch = product(x, batchDims, x.size());
  std::vector<int64_t> strides = rowMajorStrides(x);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t t = 0; t < perBatch; ++t) {
      int64_t tuple = b * perBatch + t, offset = b * xBatch;
      for (int64_t j = 0; j < k; ++j) {
        int64_t axis = batchDims + j;
        GOPT_ASSIGN_OR_RETURN(int64_t v,
                              indexAt(indices, tuple * k + j, x[axis], axis));
        offset += v * strides[axis];
      }
      GOPT_RETURN_IF_ERROR(fn(tuple, offset));
    }
  return Status::success();
}

Status gatherNDKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = in[0], &indices = in[1];
  int64_t batchDims = ctx.attrs().getInt("batch_dims");
  int64_t k = indices.shape().back();
  size_t sliceBytes =
      product(x.shape(), batchDims + k, x.rank()) * dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.data());
  char *dst = static_cast<char *>(out[0].data());
  size_t elem = dtypeSize(x.dtype());
  return forEachIndexTuple(
      x.shape(), indices, batchDims, [&](int64_t tuple, int64_t offset) {
        std::memcpy(dst + tuple * sliceBytes, src + offset * elem, sliceBytes);
        return Status::success();
      });
}

//===----------------------------------------------------------------------===//
// Scatters
//===----------------------------------------------------------------------===//

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parseReduction(const std::string &name) {
  return name == "add"   ? Reduction::kAdd
         : name == "mul" ? Reduction::kMul
         : name == "max" ? Reduction::kMax
         : name == "min" ? Reduction::kMin
                         : Reduction::kNone;
}

template <typename T> void combine(T &target, T update, Reduction r) {
  if (r == Reduction::kAdd) {
    target = static_cast<T>(target + update);
  } else if (r == Reduction::kMul) {
    target = static_cast<T>(target * update);
  } else if (r == Reduction::kMax || r == Reduction::kMin) {
    // numpy's maximum and minimum, which ONNX's reference uses: a NaN on
    // either side wins.
    if (!(target == target))
      return;
    if (r == Reduction::kMax ? !(target >= update) : !(target <= update))
      target = update;
  } else {
    target = update;
  }
}

Status scatterElementsKernel(const RefContext &ctx,
                             const std::vector<Tensor> &in,
                             std::vector<Tensor> &out) {
  const Tensor &x = in[0], &indices = in[1], &updates = in[2];
  OpAttrs attrs = ctx.attrs();
  int64_t axis = normalizedAxis(attrs.getInt("axis"), x.rank());
  Reduction reduction = parseReduction(attrs.getString("reduction"));
  return visitElementType(x.dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    T *y = out[0].data<T>();
    std::memcpy(y, x.data(), x.byteSize());
    const T *u = updates.data<T>();
    return forEachElementIndex(
        x.shape(), indices.shape(), axis,
        [&](int64_t i, int64_t offset, int64_t axisStride) -> Status {
          GOPT_ASSIGN_OR_RETURN(int64_t v,
                                indexAt(indices, i, x.dim(axis), axis));
          combine(y[offset + v * axisStride], u[i], reduction);
          return Status::success();
        });
  });
}

Status scatterNDKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  const Tensor &x = in[0], &indices = in[1], &updates = in[2];
  Reduction reduction = parseReduction(ctx.attrs().getString("reduction"));
  int64_t slice = product(x.shape(), indices.shape().back(), x.rank());
  return visitElementType(x.dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    T *y = out[0].data<T>();
    std::memcpy(y, x.data(), x.byteSize());
    const T *u = updates.data<T>();
    return forEachIndexTuple(x.shape(), indices, /*batchDims=*/0,
                             [&](int64_t tuple, int64_t offset) {
                               for (int64_t e = 0; e < slice; ++e)
                                 combine(y[offset + e], u[tuple * slice + e],
                                         reduction);
                               return Status::success();
                             });
  });
}

//===----------------------------------------------------------------------===//
// Index reductions and cumsum
//===----------------------------------------------------------------------===//

template <bool kMax>
Status argReduceKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  OpAttrs attrs = ctx.attrs();
  int64_t axis = normalizedAxis(attrs.getInt("axis"), x.rank());
  bool last = attrs.getBool("select_last_index");
  int64_t outer = product(x.shape(), 0, axis), n = x.dim(axis);
  int64_t inner = product(x.shape(), axis + 1, x.rank());
  int64_t *result = out[0].data<int64_t>();
  return visitElementType(x.dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    const T *src = x.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) {
        const T *line = src + o * n * inner + k;
        int64_t best = 0;
        for (int64_t i = 1; i < n; ++i) {
          T v = line[i * inner], b = line[best * inner];
          bool better = kMax ? v > b : v < b;
          if (better || (last && v == b))
            best = i;
        }
        result[o * inner + k] = best;
      }
    return Status::success();
  });
}

/// TfIdfVectorizer: each row's n-grams (every start, every skip) looked up
/// in the pool's n-grams of that length; counts per n-gram, then per
/// column. The shape function has checked the tables.
Status tfIdfVectorizerKernel(const RefContext &ctx,
                             const std::vector<Tensor> &in,
                             std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  std::string mode = attrs.getString("mode");
  int64_t minN = attrs.getInt("min_gram_length");
  int64_t maxN = attrs.getInt("max_gram_length");
  int64_t maxSkip = attrs.getInt("max_skip_count");
  std::vector<int64_t> counts = attrs.getInts("ngram_counts");
  std::vector<int64_t> indexes = attrs.getInts("ngram_indexes");
  std::vector<int64_t> pool = attrs.getInts("pool_int64s");
  std::vector<double> weights;
  if (attrs.has("weights"))
    weights = attrs.getFloats("weights");
  // n-gram (its values) -> its number k in the pool, per length n.
  std::vector<std::map<std::vector<int64_t>, int64_t>> lookup(maxN + 1);
  // The first values of the pool's n-grams, per length n: only the
  // positions holding one (`starts`, found once per row) can begin a match.
  std::vector<std::unordered_set<int64_t>> firsts(maxN + 1);
  int64_t k = 0;
  for (size_t g = 0; g < counts.size(); ++g) {
    int64_t n = static_cast<int64_t>(g) + 1;
    int64_t end = g + 1 < counts.size() ? counts[g + 1]
                                        : static_cast<int64_t>(pool.size());
    for (int64_t p = counts[g]; p < end; p += n, ++k)
      if (n <= maxN) {
        lookup[n].emplace(
            std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n), k);
        firsts[n].insert(pool[p]);
      }
  }
  const Tensor &x = in[0];
  int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  int64_t length = x.dim(x.rank() - 1);
  int64_t columns = out[0].dim(out[0].rank() - 1);
  auto value = [&](int64_t i) {
    return x.dtype() == DType::kI64 ? x.data<int64_t>()[i]
                                    : int64_t(x.data<int32_t>()[i]);
  };
  float *y = out[0].data<float>();
  std::fill(y, y + rows * columns, 0.0f);
  std::vector<int64_t> found(indexes.size());
  std::vector<int64_t> gram, starts;
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(found.begin(), found.end(), 0);
    const int64_t base = r * length;
    for (int64_t n = minN; n <= maxN; ++n) {
      if (lookup[n].empty())
        continue;
      // A skip of `length` or more leaves no room for a second element:
      // max_skip_count beyond it changes nothing (and may be huge).
      int64_t skips = n == 1 ? 0 : std::min(maxSkip, length);
      starts.clear();
      for (int64_t i = 0; i < length; ++i)
        if (firsts[n].count(value(base + i)))
          starts.push_back(i);
      for (int64_t skip = 0; skip <= skips; ++skip) {
        int64_t step = skip + 1;
        for (int64_t i : starts) {
          if (i + (n - 1) * step >= length)
            break;
          gram.clear();
          for (int64_t j = 0; j < n; ++j)
            gram.push_back(value(base + i + j * step));
          auto it = lookup[n].find(gram);
          if (it != lookup[n].end())
            ++found[it->second];
        }
      }
    }
    for (size_t g = 0; g < indexes.size(); ++g) {
      if (!found[g])
        continue;
      double weight = weights.empty() ? 1.0 : weights[g];
      double v = mode == "TF"    ? double(found[g])
                 : mode == "IDF" ? weight
                                 : found[g] * weight;
      y[r * columns + indexes[g]] += static_cast<float>(v);
    }
  }
  return Status::success();
}

Status cumSumKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  OpAttrs attrs = ctx.attrs();
  int64_t axis = normalizedAxis(attrs.getInt("axis"), x.rank());
  bool exclusive = attrs.getBool("exclusive");
  bool reverse = attrs.getBool("reverse");
  int64_t outer = product(x.shape(), 0, axis), n = x.dim(axis);
  int64_t inner = product(x.shape(), axis + 1, x.rank());
  return visitElementType(x.dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    const T *src = x.data<T>();
    T *dst = out[0].data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t base = o * n * inner + k;
        T sum = 0;
        for (int64_t step = 0; step < n; ++step) {
          int64_t i = reverse ? n - 1 - step : step;
          T v = src[base + i * inner];
          if (!exclusive)
            sum = static_cast<T>(sum + v);
          dst[base + i * inner] = sum;
          if (exclusive)
            sum = static_cast<T>(sum + v);
        }
      }
    return Status::success();
  });
}

// Each line's k best elements, best first; equal elements by index.
Status topKKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  OpAttrs attrs = ctx.attrs();
  int64_t axis = normalizedAxis(attrs.getInt("axis"), x.rank());
  int64_t k = attrs.getInt("k");
  bool largest = attrs.getBool("largest");
  int64_t outer = product(x.shape(), 0, axis), n = x.dim(axis);
  int64_t inner = product(x.shape(), axis + 1, x.rank());
  if (k > n)
    return invalidArgument("k = ", k, " exceeds dimension ", axis, " of size ",
                           n);
  int64_t *indices = out[1].data<int64_t>();
  return visitElementType(x.dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    const T *src = x.data<T>();
    T *values = out[0].data<T>();
    std::vector<int64_t> order(n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < inner; ++c) {
        const T *line = src + o * n * inner + c;
        for (int64_t i = 0; i < n; ++i)
          order[i] = i;
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int64_t a, int64_t b) {
                            T va = line[a * inner], vb = line[b * inner];
                            if (va != vb)
                              return largest ? va > vb : va < vb;
                            return a < b;
                          });
        int64_t base = o * k * inner + c;
        for (int64_t j = 0; j < k; ++j) {
          values[base + j * inner] = line[order[j] * inner];
          indices[base + j * inner] = order[j];
        }
      }
    return Status::success();
  });
}

} // namespace

void registerIndexingKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "gather", gatherKernel, D::kAny);
  registerKernel(r, "gather_grad", gatherGradKernel, D::kNumeric);
  registerKernel(r, "gather_elements", gatherElementsKernel, D::kAny);
  registerKernel(r, "gather_nd", gatherNDKernel, D::kAny);
  registerKernel(r, "scatter_elements", scatterElementsKernel, D::kNumericF64);
  registerKernel(r, "scatter_nd", scatterNDKernel, D::kNumericF64);
  registerKernel(r, "arg_max", argReduceKernel<true>, D::kNumericF64);
  registerKernel(r, "arg_min", argReduceKernel<false>, D::kNumericF64);
  registerKernel(r, "cumsum", cumSumKernel, D::kNumericF64);
  registerKernel(r, "tf_idf_vectorizer", tfIdfVectorizerKernel, D::kAny);
  registerKernel(r, "top_k", topKKernel, D::kNumericF64);
}

} // namespace gopt::runtime::ref
