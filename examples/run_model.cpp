// The C++ API in a few lines: load a model, feed every input with ones, print each output's first values.
//   lockstep_example model.onnx [cpu|cuda]
#include <cstdio>
#include <string>

#include "lockstep/session.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [cpu|cuda]\n", argv[0]);
    return 2;
  }
  try {
    lockstep::SessionOptions options;
    if (argc > 2 && std::string(argv[2]) == "cuda") options.provider = lockstep::Device::CUDA;
    lockstep::Session session(argv[1], options);
    std::map<std::string, lockstep::Tensor> feeds;
    for (const auto& in : session.inputs()) {
      lockstep::Shape shape;
      for (int64_t d : in.dims) shape.push_back(d < 0 ? 1 : d);  // symbolic dims become 1
      lockstep::Tensor t = lockstep::Tensor::empty(lockstep::DType::Float, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 1.0f;
      feeds[in.name] = t;
    }
    std::vector<lockstep::Tensor> outputs = session.run(feeds);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto& out = outputs[i];
      std::printf("%s %s:", session.outputs()[i].name.c_str(), lockstep::shape_string(out.shape()).c_str());
      for (int64_t j = 0; j < out.numel() && j < 4 && out.dtype() == lockstep::DType::Float; ++j)
        std::printf(" %.9g", out.data<float>()[j]);
      std::printf("\n");
    }
  } catch (const lockstep::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
