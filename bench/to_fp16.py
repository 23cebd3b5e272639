#!/usr/bin/python3
"""Converts a float32 ONNX model to float16 (or bfloat16) storage, as `--fp16` exporters write it: what
onnxconverter-common's convert_float_to_float16(model, keep_io_types=False) does, with onnx and numpy only.

    /usr/bin/python3 bench/to_fp16.py IN.onnx OUT.onnx [--dtype float16|bfloat16] [--keep-io-types]
        [--block-op OP]... [--no-default-block-list]

- Every float32 tensor becomes float16: initializers (values clipped as onnxconverter-common clips them: magnitudes
  below 1e-7 become +-1e-7, above 1e4 become +-1e4 — for float16 only), the tensor attributes of nodes (Constant's
  value, ConstantOfShape's value), the declared types of graph inputs, outputs and value_info (keep_io_types keeps
  the graph inputs and outputs float32, with Casts after and before them), Cast's `to` = FLOAT.
- The ops of the block list (onnxconverter-common's DEFAULT_OP_BLOCK_LIST: Resize, Range, TopK, Min, Max, ...) stay
  float32: a Cast to float32 before each of their half inputs and a Cast back after each float output.
- Subgraphs (If, Loop, Scan bodies) are converted the same way.

Which values are float32 is read from onnx.shape_inference on the input model. The output passes onnx.checker.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

DEFAULT_OP_BLOCK_LIST = [
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer", "FeatureVectorizer",
    "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder",
    "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsembleClassifier",
    "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK", "RoiAlign", "Resize", "Range", "CumSum", "Min",
    "Max", "Upsample"]
MIN_POSITIVE, MAX_FINITE = 1e-7, 1e4


def half_tensor(t, half):
    """A float32 TensorProto as float16 (clipped) or bfloat16 (round to nearest even), same name."""
    a = numpy_helper.to_array(t).astype(np.float32)
    if half == TensorProto.FLOAT16:
        a = np.where((np.abs(a) < MIN_POSITIVE) & (a != 0), np.sign(a) * MIN_POSITIVE, a)
        a = np.clip(a, -MAX_FINITE, MAX_FINITE)
        out = numpy_helper.from_array(a.astype(np.float16), t.name)
    else:
        bits = np.ascontiguousarray(a).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        nan = np.isnan(a)
        rounded[nan] = 0x7FC0
        out = TensorProto()
        out.name = t.name
        out.data_type = TensorProto.BFLOAT16
        out.dims.extend(a.shape)
        out.raw_data = rounded.tobytes()
    out.doc_string = t.doc_string
    return out


def float_names(graph):
    """Names of the values of `graph` (and its subgraphs) that are float32 tensors."""
    names = set()
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            names.add(vi.name)
    for t in graph.initializer:
        if t.data_type == TensorProto.FLOAT:
            names.add(t.name)
    for n in graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                    names.update(n.output)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                names |= float_names(a.g)
            for g in a.graphs:
                names |= float_names(g)
    return names


class Converter:
    def __init__(self, half, block, keep_io_types):
        self.half, self.block, self.keep_io = half, set(block), keep_io_types
        self.counter = 0

    def fresh(self, base):
        self.counter += 1
        return "%s_fp16cvt%d" % (base, self.counter)

    def retype(self, vi):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is not None and tt.elem_type == TensorProto.FLOAT:
            tt.elem_type = self.half

    def graph(self, g, floats, top):
        blocked_only = {}
        for n in g.node:
            for i in n.input:
                blocked_only[i] = blocked_only.get(i, True) and n.op_type in self.block
        for idx, t in enumerate(g.initializer):
            if t.data_type == TensorProto.FLOAT and not blocked_only.get(t.name, False):
                g.initializer[idx].CopyFrom(half_tensor(t, self.half))
        kept = {t.name for t in g.initializer if t.data_type == TensorProto.FLOAT}  # read by blocked ops only
        for vi in g.value_info:
            self.retype(vi)
        renamed_inputs, renamed_outputs = {}, {}
        if top and self.keep_io:
            for vi in g.input:
                if vi.type.tensor_type.elem_type == TensorProto.FLOAT and vi.name not in kept:
                    renamed_inputs[vi.name] = self.fresh(vi.name)
            for vi in g.output:
                if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
                    renamed_outputs[vi.name] = self.fresh(vi.name)
        else:
            for vi in list(g.input) + list(g.output):
                self.retype(vi)
        # The values that are half once converted (node inputs are renamed before this is asked).
        half_values = (floats - kept - set(renamed_inputs)) | set(renamed_inputs.values())
        nodes = []
        for name, inner in renamed_inputs.items():  # input (float32) -> Cast -> the half value the graph reads
            nodes.append(helper.make_node("Cast", [name], [inner], name=self.fresh("cast_in"), to=self.half))
        for n in g.node:
            for k, i in enumerate(n.input):
                if i in renamed_inputs:
                    n.input[k] = renamed_inputs[i]
            for k, o in enumerate(n.output):
                if o in renamed_outputs:
                    n.output[k] = renamed_outputs[o]
            if n.op_type in self.block:
                for k, i in enumerate(n.input):
                    if i in half_values:
                        cast = self.fresh(i + "_to_float")
                        nodes.append(helper.make_node("Cast", [i], [cast], name=self.fresh("cast"),
                                                      to=TensorProto.FLOAT))
                        n.input[k] = cast
                after = []
                for k, o in enumerate(n.output):
                    if o in floats or (o in renamed_outputs.values()):
                        inner = self.fresh(o + "_float")
                        n.output[k] = inner
                        after.append(helper.make_node("Cast", [inner], [o], name=self.fresh("cast"), to=self.half))
                nodes.append(n)
                nodes.extend(after)
                continue
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                    a.t.CopyFrom(half_tensor(a.t, self.half))
                if a.type == onnx.AttributeProto.TENSORS:
                    for j, t in enumerate(a.tensors):
                        if t.data_type == TensorProto.FLOAT:
                            a.tensors[j].CopyFrom(half_tensor(t, self.half))
                if a.type == onnx.AttributeProto.GRAPH:
                    self.graph(a.g, floats, False)
                for sub in a.graphs:
                    self.graph(sub, floats, False)
            if n.op_type == "Cast":
                for a in n.attribute:
                    if a.name == "to" and a.i == TensorProto.FLOAT:
                        a.i = self.half
            nodes.append(n)
        for outer, inner in renamed_outputs.items():  # the half value -> Cast -> the float32 graph output
            nodes.append(helper.make_node("Cast", [inner], [outer], name=self.fresh("cast_out"),
                                          to=TensorProto.FLOAT))
        del g.node[:]
        g.node.extend(nodes)


def convert(model, half=TensorProto.FLOAT16, keep_io_types=False, block=DEFAULT_OP_BLOCK_LIST):
    inferred = shape_inference.infer_shapes(model)
    floats = float_names(inferred.graph)
    out = onnx.ModelProto()
    out.CopyFrom(inferred)
    Converter(half, block, keep_io_types).graph(out.graph, floats, True)
    onnx.checker.check_model(out)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--dtype", choices=["float16", "bfloat16"], default="float16")
    ap.add_argument("--keep-io-types", action="store_true", help="graph inputs and outputs stay float32")
    ap.add_argument("--block-op", action="append", default=[], help="an op to keep in float32 (repeatable)")
    ap.add_argument("--no-default-block-list", action="store_true")
    args = ap.parse_args(argv)
    block = ([] if args.no_default_block_list else DEFAULT_OP_BLOCK_LIST) + args.block_op
    half = TensorProto.FLOAT16 if args.dtype == "float16" else TensorProto.BFLOAT16
    model = onnx.load(args.input)
    out = convert(model, half, args.keep_io_types, block)
    onnx.save(out, args.output)
    n_half = sum(1 for t in out.graph.initializer if t.data_type == half)
    print("%s: %d initializers %s, %d nodes" % (args.output, n_half, args.dtype, len(out.graph.node)))


if __name__ == "__main__":
    main(sys.argv[1:])
