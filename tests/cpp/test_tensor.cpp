// The tensor family's data movement on the CPU: every ISA and thread count must move each element's exact bits
// (NaN payloads included) to where the reference index arithmetic puts it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernel_harness.h"

namespace lockstep::test {
namespace {

// Transpose's reference: output element o (row-major over the permuted dims) is input element sum(i_k * stride_k).
std::vector<uint32_t> transpose_reference(const std::vector<uint32_t>& x, const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1), out_dims(rank);
  for (size_t k = rank - 1; k > 0; --k) strides[k - 1] = strides[k] * dims[k];
  for (size_t k = 0; k < rank; ++k) out_dims[k] = dims[perm[k]];
  std::vector<uint32_t> y(x.size());
  for (size_t o = 0; o < y.size(); ++o) {
    int64_t rest = static_cast<int64_t>(o), at = 0;
    for (size_t k = rank; k-- > 0;) {
      at += rest % out_dims[k] * strides[perm[k]];
      rest /= out_dims[k];
    }
    y[o] = x[at];
  }
  return y;
}

TEST(TensorCpu, TransposeMovesEveryBitOnEveryIsa) {
  // Shapes whose transposed dims are and are not multiples of the 8x8 blocks and 16x16 tiles, incl. BERT's key.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1, 128, 12, 64}, {0, 2, 3, 1}}, {{1, 13, 5, 19}, {0, 2, 3, 1}}, {{2, 17, 9}, {2, 0, 1}},
      {{33, 40}, {1, 0}},               {{3, 24, 7, 8}, {0, 3, 1, 2}},  {{5, 1, 31}, {2, 1, 0}}};
  std::mt19937 rng(11);
  for (const auto& [dims, perm] : cases) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<uint32_t> bits(static_cast<size_t>(n));
    for (auto& b : bits) b = static_cast<uint32_t>(rng());  // NaNs with payloads, denormals, any pattern
    std::vector<float> values(bits.size());
    std::memcpy(values.data(), bits.data(), bits.size() * 4);
    const Tensor x = tensor_of(values, Shape(dims));
    const std::vector<uint32_t> expected = transpose_reference(bits, dims, perm);
    for (cpu::CpuIsa isa : isas())
      for (int threads : {1, 3}) {
        ForceIsa force(isa);
        const Tensor y = run_cpu("Transpose", {ints_attr("perm", perm)}, {&x}, threads);
        ASSERT_EQ(y.numel(), n);
        EXPECT_EQ(std::memcmp(y.data<float>(), expected.data(), expected.size() * 4), 0)
            << "isa " << static_cast<int>(isa) << ", threads " << threads << ", shape of rank " << dims.size();
      }
  }
}

}  // namespace
}  // namespace lockstep::test
