// CUDA kernels of the strings family: TfIdfVectorizer on int32/int64 rows, mirroring src/cpu/strings.cpp (string
// rows live on the host and run the CPU kernel inside a CUDA session). One thread per row counts with
// arith::ngram_count_row into Y's memory (as 32-bit counts), then one thread per element applies
// arith::tfidf_value_f32. The node's tables are uploaded by its first run and kept in its NodeState.
// Contract: docs/arithmetic.md#tfidfvectorizer.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "arith/ngram.h"
#include "cuda/common.cuh"
#include "ops/registry.h"
#include "ops/strings.h"

namespace lockstep::cuda {

namespace {

// Contract: the counts of row r (arith::ngram_count_row) into counts[r * cols ..], zeroed before.
template <typename T>
__global__ void tfidf_count_rows(arith::NgramTable table, const T* x, int64_t rows, int64_t len, int64_t cols,
                                 uint32_t* counts) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  arith::ngram_count_row(table, x + r * len, len, counts + r * cols);
}

// Contract: each count becomes its output element in place (arith::tfidf_value_f32); every access goes through
// the 32-bit unsigned view of Y's memory.
__global__ void tfidf_values(uint32_t* y, const float* weights, arith::TfIdfMode mode, int64_t cols, int64_t n) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  y[e] = __float_as_uint(arith::tfidf_value_f32(mode, y[e], weights[e % cols]));
}

}  // namespace

// Contract: TfIdfVectorizer, docs/arithmetic.md#tfidfvectorizer (the same counts and values as the CPU kernel).
void tfidf_vectorizer(KernelContext& ctx) {
  auto make = [&ctx] {
    TfIdfKept k{make_tfidf_model(ctx), nullptr};
    const TfIdfModel& m = *k.model;
    // One buffer: the int64 tables, then the float weights (8-byte aligned after the int64 entries).
    const size_t table_bytes = m.tables.size() * sizeof(int64_t), weight_bytes = m.weights.size() * sizeof(float);
    std::vector<unsigned char> host(table_bytes + weight_bytes);
    std::memcpy(host.data(), m.tables.data(), table_bytes);
    std::memcpy(host.data() + table_bytes, m.weights.data(), weight_bytes);
    k.device_tables = upload(ctx, host.data(), host.size());
    return k;
  };
  const std::shared_ptr<const TfIdfKept> kept =
      ctx.state ? ctx.state->get_or_make<TfIdfKept>([](const TfIdfKept& k) { return k.device_tables != nullptr; }, make)
                : std::make_shared<const TfIdfKept>(make());
  const TfIdfModel& m = *kept->model;
  const TfIdfRows r = tfidf_rows(ctx, m);
  Tensor& y = ctx.output(0, DType::Float, r.y_shape);
  const int64_t n = r.rows * m.columns;
  if (n == 0) return;
  check(ctx, cudaMemsetAsync(y.data<float>(), 0, sizeof(float) * static_cast<size_t>(n), stream_of(ctx)), "clear Y");
  if (r.len == 0 || !tfidf_input_matches_pool(ctx, m)) return;  // +0 everywhere
  const auto* base = static_cast<const int64_t*>(kept->device_tables->data);
  const arith::NgramTable table = m.table(base);
  const auto* weights = reinterpret_cast<const float*>(base + m.tables.size());
  auto* counts = reinterpret_cast<uint32_t*>(y.data<float>());
  const Tensor& x = ctx.input(0);
  if (x.dtype() == DType::Int32)
    tfidf_count_rows<<<blocks_for(r.rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(table, x.data<int32_t>(), r.rows,
                                                                                  r.len, m.columns, counts);
  else
    tfidf_count_rows<<<blocks_for(r.rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(table, x.data<int64_t>(), r.rows,
                                                                                  r.len, m.columns, counts);
  check_launch(ctx);
  tfidf_values<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(counts, weights, m.mode, m.columns, n);
  check_launch(ctx);
}

}  // namespace lockstep::cuda
