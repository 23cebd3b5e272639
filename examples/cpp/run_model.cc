// A program outside Ferry's tree that links the installed runtime library (find_package(Ferry)): loads an ONNX
// model, feeds every float input a deterministic ramp (dynamic dims as 1), runs it and prints each output's shape
// and checksum.
//
//   run_model MODEL.onnx [BACKENDS]      e.g. run_model model.onnx cpu,ref
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ferry/session.h"
#include "ferry/tensor.h"

namespace {

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const size_t end = comma == std::string::npos ? list.size() : comma;
    if (end > start) parts.push_back(list.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

std::string ShapeText(const ferry::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [BACKENDS]\n", argv[0]);
    return 2;
  }
  try {
    ferry::SessionOptions options;
    if (argc == 3) options.backends = Split(argv[2]);
    std::unique_ptr<ferry::Session> session = ferry::Session::Create(argv[1], options);

    std::vector<std::pair<std::string, ferry::Tensor>> inputs;
    for (const ferry::IoInfo& in : session->inputs()) {
      if (in.kind != "tensor" || in.dtype != ferry::DataType::kFloat) {
        std::fprintf(stderr, "input '%s': this example feeds float32 tensors only\n", in.name.c_str());
        return 1;
      }
      ferry::Shape shape;
      for (int64_t d : in.dims) shape.push_back(d < 0 ? 1 : d);
      ferry::Tensor t(ferry::DataType::kFloat, shape);
      float* data = t.data<float>();
      for (int64_t i = 0; i < t.size(); ++i) data[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
      std::printf("input  %s %s\n", in.name.c_str(), ShapeText(shape).c_str());
      inputs.emplace_back(in.name, std::move(t));
    }

    for (const auto& [name, tensor] : session->Run(inputs)) {
      double sum = 0;
      if (tensor.dtype() == ferry::DataType::kFloat) {
        const float* data = tensor.data<float>();
        for (int64_t i = 0; i < tensor.size(); ++i) sum += data[i];
      }
      std::printf("output %s %s sum=%.6g\n", name.c_str(), ShapeText(tensor.shape()).c_str(), sum);
    }
  } catch (const ferry::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
