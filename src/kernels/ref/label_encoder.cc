// LabelEncoder (ai.onnx.ml opsets 1, 2, 4): maps each input element through a key -> value table.
//   opset 1: classes_strings; string input -> int64 index (default_int64, -1), int64 input -> string
//            (default_string, "_Unused").
//   opsets 2/4: keys from keys_strings / keys_int64s / keys_floats / keys_tensor (opset 4), values from
//            values_strings / values_int64s / values_floats / values_tensor (opset 4); unmatched elements get
//            default_tensor (opset 4) or default_string / default_int64 / default_float ("_Unused", -1, -0.0).
// Float keys are compared as doubles; a NaN key matches NaN inputs.
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class KeyKind { kString, kInt, kFloat };

bool KindAccepts(KeyKind k, DataType t) {
  switch (k) {
    case KeyKind::kString: return t == DataType::kString;
    case KeyKind::kInt: return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16;
    case KeyKind::kFloat: return t == DataType::kFloat || t == DataType::kDouble;
  }
  return false;
}

KeyKind KindOf(DataType t) {
  if (t == DataType::kString) return KeyKind::kString;
  if (t == DataType::kFloat || t == DataType::kDouble) return KeyKind::kFloat;
  return KeyKind::kInt;
}

// Copies element `j` of `src` to element `i` of `dst` (same dtype).
void CopyElement(Tensor& dst, int64_t i, const Tensor& src, int64_t j) {
  if (dst.dtype() == DataType::kString) {
    dst.strings()[i] = src.strings()[j];
    return;
  }
  const size_t es = static_cast<size_t>(DataTypeBits(dst.dtype()) / 8);
  std::memcpy(static_cast<unsigned char*>(dst.raw_data()) + static_cast<size_t>(i) * es,
              static_cast<const unsigned char*>(src.raw_data()) + static_cast<size_t>(j) * es, es);
}

// Reads element i of a numeric tensor as int64 / double.
int64_t IntAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt64: return t.data<int64_t>()[i];
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kInt16: return t.data<int16_t>()[i];
    default: return 0;
  }
}
double FloatAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kDouble ? t.data<double>()[i] : static_cast<double>(t.data<float>()[i]);
}

class KeyTable {
 public:
  void Build(const Tensor& keys) {
    kind_ = KindOf(keys.dtype());
    for (int64_t i = 0; i < keys.size(); ++i) {
      switch (kind_) {
        case KeyKind::kString: strings_.emplace(keys.strings()[i], i); break;
        case KeyKind::kInt: ints_.emplace(IntAt(keys, i), i); break;
        case KeyKind::kFloat: {
          double v = FloatAt(keys, i);
          if (std::isnan(v)) {
            if (nan_index_ < 0) nan_index_ = i;
          } else {
            floats_.emplace(v, i);
          }
          break;
        }
      }
    }
  }
  KeyKind kind() const { return kind_; }
  // Index of the key equal to element i of x, or -1.
  int64_t Find(const Tensor& x, int64_t i) const {
    switch (kind_) {
      case KeyKind::kString: {
        auto it = strings_.find(x.strings()[i]);
        return it == strings_.end() ? -1 : it->second;
      }
      case KeyKind::kInt: {
        auto it = ints_.find(IntAt(x, i));
        return it == ints_.end() ? -1 : it->second;
      }
      case KeyKind::kFloat: {
        double v = FloatAt(x, i);
        if (std::isnan(v)) return nan_index_;
        auto it = floats_.find(v);
        return it == floats_.end() ? -1 : it->second;
      }
    }
    return -1;
  }

 private:
  KeyKind kind_ = KeyKind::kString;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;
  std::map<double, int64_t> floats_;
  int64_t nan_index_ = -1;
};

template <typename T>
Tensor Vec(DataType dt, const std::vector<T>& v) {
  return Tensor::FromVector<T>(dt, {static_cast<int64_t>(v.size())}, v);
}

class LabelEncoder : public OpKernel {
 public:
  explicit LabelEncoder(const ir::Node& node) {
    const std::string what = node.Describe();
    Tensor keys, values;
    int nk = 0, nv = 0;
    if (node.has_attr("keys_strings")) keys = Vec(DataType::kString, node.GetStrings("keys_strings")), ++nk;
    if (node.has_attr("keys_int64s")) keys = Vec(DataType::kInt64, node.GetInts("keys_int64s")), ++nk;
    if (node.has_attr("keys_floats")) keys = Vec(DataType::kFloat, node.GetFloats("keys_floats")), ++nk;
    if (const Tensor* t = node.GetTensor("keys_tensor")) keys = *t, ++nk;
    if (node.has_attr("values_strings")) values = Vec(DataType::kString, node.GetStrings("values_strings")), ++nv;
    if (node.has_attr("values_int64s")) values = Vec(DataType::kInt64, node.GetInts("values_int64s")), ++nv;
    if (node.has_attr("values_floats")) values = Vec(DataType::kFloat, node.GetFloats("values_floats")), ++nv;
    const Tensor* vt = node.GetTensor("values_tensor");
    if (vt) values = *vt, ++nv;
    if (nk != 1 || nv != 1)
      throw InvalidModelError(what + ": exactly one keys_* and one values_* attribute must be given");
    if (keys.size() != values.size())
      throw InvalidModelError(what + ": " + std::to_string(keys.size()) + " keys but " +
                              std::to_string(values.size()) + " values");
    if (!(KindAccepts(KindOf(keys.dtype()), keys.dtype())) || !KindAccepts(KindOf(values.dtype()), values.dtype()))
      throw InvalidModelError(what + ": unsupported key or value tensor type");
    table_.Build(keys);
    values_ = values;
    default_ = Tensor(values.dtype(), {1});
    if (const Tensor* d = node.GetTensor("default_tensor")) {
      if (d->dtype() != values.dtype() || d->size() < 1)
        throw InvalidModelError(what + ": default_tensor must hold one value of the values' type");
      CopyElement(default_, 0, *d, 0);
    } else {
      switch (values.dtype()) {
        case DataType::kString: default_.strings()[0] = node.GetString("default_string", "_Unused"); break;
        case DataType::kInt64: default_.data<int64_t>()[0] = node.GetInt("default_int64", -1); break;
        case DataType::kInt32: default_.data<int32_t>()[0] = -1; break;
        case DataType::kInt16: default_.data<int16_t>()[0] = -1; break;
        case DataType::kFloat: default_.data<float>()[0] = node.GetFloat("default_float", -0.0f); break;
        case DataType::kDouble: default_.data<double>()[0] = node.GetFloat("default_float", -0.0f); break;
        default: break;
      }
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (!KindAccepts(table_.kind(), x.dtype)) {
      throw InvalidArgumentError(ctx.Describe() + ": input type " + std::string(DataTypeName(x.dtype)) +
                                 " does not match the type of the keys (" + ctx.InputString(0) + ")");
    }
    ctx.SetOutput(0, values_.dtype(), x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    for (int64_t i = 0; i < x.size(); ++i) {
      const int64_t k = table_.Find(x, i);
      if (k >= 0) {
        CopyElement(y, i, values_, k);
      } else {
        CopyElement(y, i, default_, 0);
      }
    }
  }

 private:
  KeyTable table_;
  Tensor values_;
  Tensor default_;
};

// Opset 1: classes_strings, in either direction.
class LabelEncoderV1 : public OpKernel {
 public:
  explicit LabelEncoderV1(const ir::Node& node)
      : classes_(node.GetStrings("classes_strings")),
        default_int_(node.GetInt("default_int64", -1)),
        default_string_(node.GetString("default_string", "_Unused")) {
    for (size_t i = 0; i < classes_.size(); ++i) index_.emplace(classes_[i], static_cast<int64_t>(i));
  }

  // String input maps to int64, int64 input to string.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kString && x.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be string or int64, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, x.dtype == DataType::kString ? DataType::kInt64 : DataType::kString, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (x.dtype() == DataType::kString) {
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = index_.find(x.strings()[i]);
        y.data<int64_t>()[i] = it == index_.end() ? default_int_ : it->second;
      }
    } else {  // int64 (Prepare checked)
      for (int64_t i = 0; i < x.size(); ++i) {
        const int64_t v = x.data<int64_t>()[i];
        y.strings()[i] = v >= 0 && v < static_cast<int64_t>(classes_.size()) ? classes_[static_cast<size_t>(v)]
                                                                             : default_string_;
      }
    }
  }

 private:
  std::vector<std::string> classes_;
  std::unordered_map<std::string, int64_t> index_;
  int64_t default_int_;
  std::string default_string_;
};

}  // namespace

void RegisterLabelEncoderKernels(KernelRegistry& r) {
  const std::vector<DataType> v1 = {DataType::kString, DataType::kInt64};
  const std::vector<DataType> v2 = {DataType::kString, DataType::kInt64, DataType::kFloat};
  const std::vector<DataType> v4 = {DataType::kString, DataType::kInt64, DataType::kFloat,
                                    DataType::kInt32,  DataType::kInt16, DataType::kDouble};
  r.Add({.op = "LabelEncoder", .domain = "ai.onnx.ml", .since = 1, .until = 1, .types = {{"T1", v1}, {"T2", v1}},
         .create = MakeKernel<LabelEncoderV1>});
  r.Add({.op = "LabelEncoder", .domain = "ai.onnx.ml", .since = 2, .until = 3, .types = {{"T1", v2}, {"T2", v2}},
         .create = MakeKernel<LabelEncoder>});
  r.Add({.op = "LabelEncoder", .domain = "ai.onnx.ml", .since = 4, .types = {{"T1", v4}, {"T2", v4}},
         .create = MakeKernel<LabelEncoder>});
}

}  // namespace ferry::ref
