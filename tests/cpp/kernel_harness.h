// Shared harness of the C++ kernel tests: runs one node's CPU kernel on host tensors, compares floats byte for
// byte (NaN equals NaN) and walks every CPU ISA this host supports.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "arith/dot.h"
#include "cpu/isa.h"
#include "ops/conv.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::test {

/// Hands out memory filled with all-ones bytes (as floats, a NaN): a kernel that reads scratch or output memory it has
/// not written gets NaNs in its results, where fresh pages (zeros) would pass for +0 padding.
class HostAllocator : public Allocator {
 public:
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    auto b = std::make_shared<Buffer>();
    auto mem = std::shared_ptr<void>(::operator new(bytes ? bytes : 1), [](void* p) { ::operator delete(p); });
    std::memset(mem.get(), 0xff, bytes);
    b->data = mem.get();
    b->bytes = bytes;
    b->owner = mem;
    return b;
  }
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

inline Tensor tensor_of(const std::vector<float>& v, Shape s) { return Tensor::from_bytes(DType::Float, std::move(s), v.data()); }

inline onnx::Attribute attribute(const char* name, onnx::Attribute::Type type) {
  onnx::Attribute a;
  a.name = name;
  a.type = type;
  return a;
}
inline onnx::Attribute int_attr(const char* name, int64_t v) {
  onnx::Attribute a = attribute(name, onnx::Attribute::Int);
  a.i = v;
  return a;
}
inline onnx::Attribute ints_attr(const char* name, std::vector<int64_t> v) {
  onnx::Attribute a = attribute(name, onnx::Attribute::Ints);
  a.ints = std::move(v);
  return a;
}
inline onnx::Attribute string_attr(const char* name, const char* v) {
  onnx::Attribute a = attribute(name, onnx::Attribute::String);
  a.s = v;
  return a;
}
inline onnx::Attribute float_attr(const char* name, float v) {
  onnx::Attribute a = attribute(name, onnx::Attribute::Float);
  a.f = v;
  return a;
}

/// Runs one node's CPU kernel on host tensors and returns output 0.
/// With a state, inputs 1 and up count as constants (initializers), so the kernel may keep what it derives from them.
inline Tensor run_cpu(const char* op, std::vector<onnx::Attribute> attrs, std::vector<const Tensor*> inputs, int threads,
                      int64_t opset = 17, NodeState* state = nullptr) {
  onnx::Node node;
  node.op_type = op;
  node.name = std::string("test_") + op;
  for (auto& a : attrs) node.attributes[a.name] = a;
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i] ? "in" + std::to_string(i) : "");
  node.outputs = {"out"};
  const OpEntry* entry = find_op(op, opset);
  EXPECT_NE(entry, nullptr);
  static HostAllocator alloc;
  ThreadPool pool(threads);
  KernelContext ctx{node, *entry};
  ctx.opset = opset;
  ctx.inputs = inputs;
  ctx.outputs.resize(1);
  ctx.allocator = &alloc;
  ctx.pool = &pool;
  ctx.to_host = [](const Tensor& t) { return t; };
  std::vector<bool> constant(inputs.size(), true);
  constant[0] = false;
  if (state) {
    ctx.state = state;
    ctx.constant_inputs = &constant;
  }
  entry->cpu(ctx);
  return ctx.outputs[0];
}

inline bool same_bits(const float* a, const float* b, int64_t n, int64_t* first_bad = nullptr) {
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      if (first_bad) *first_bad = i;
      return false;
    }
  }
  return true;
}

inline std::vector<cpu::CpuIsa> isas() {
  std::vector<cpu::CpuIsa> v;
  for (int i = 0; i <= static_cast<int>(cpu::cpu_best_isa()); ++i) v.push_back(static_cast<cpu::CpuIsa>(i));
  return v;
}

struct ForceIsa {
  explicit ForceIsa(cpu::CpuIsa isa) { cpu::force_cpu_isa(isa); }
  ~ForceIsa() { cpu::reset_cpu_isa(); }
};

// Direct scalar Conv: dot_chunked_f32 over k = (c, kd, kh, kw), padding taps as +0 terms.
inline std::vector<float> conv_reference(const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w,
                                  const float* bias) {
  std::vector<float> y(g.batch * g.c_out * g.out_pixels());
  const int64_t K = g.K();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.c_out; ++oc)
      for (int64_t p = 0; p < g.out_pixels(); ++p) {
        int64_t o2 = p % g.out[2], o1 = (p / g.out[2]) % g.out[1], o0 = p / (g.out[2] * g.out[1]);
        int64_t grp = oc / g.cout_g;
        auto xv = [&](int64_t k) -> float {
          int64_t kw = k % g.kernel[2], kh = (k / g.kernel[2]) % g.kernel[1],
                  kd = (k / (g.kernel[2] * g.kernel[1])) % g.kernel[0], c = k / g.taps();
          int64_t i0 = o0 * g.stride[0] - g.pad[0] + kd * g.dilation[0];
          int64_t i1 = o1 * g.stride[1] - g.pad[1] + kh * g.dilation[1];
          int64_t i2 = o2 * g.stride[2] - g.pad[2] + kw * g.dilation[2];
          if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2]) return 0.0f;
          return x[((n * g.c_in + grp * g.cin_g + c) * g.in[0] + i0) * g.in[1] * g.in[2] + i1 * g.in[2] + i2];
        };
        auto wv = [&](int64_t k) { return w[oc * K + k]; };
        y[(n * g.c_out + oc) * g.out_pixels() + p] = arith::dot_chunked_f32(K, bias ? bias[oc] : 0.0f, xv, wv);
      }
  return y;
}

}  // namespace lockstep::test
