#!/usr/bin/python3
"""Writes a model whose run time is per-node overhead: a chain of N tiny element-wise nodes on a float tensor of
shape [batch, WIDTH] (dynamic batch), cycling Add (a per-node constant) -> Relu -> Mul (a per-node constant) -> ...
Every node reads the previous node's output and the constants differ, so at -O 0 nothing is folded, merged or
fused; the few flops per node make a run the executor's cost per node (dispatch, argument binding, output
allocation) rather than arithmetic. Run with /usr/bin/python3 (onnx, numpy).

    /usr/bin/python3 bench/gen_overhead_model.py OUT_DIR [--nodes 1000] [--width 8] [--name tiny_chain_1000]

Layout as bench/gen_bench_models.py, read by bench/compare_ort.py and bench/ab_ferry.py: OUT_DIR/<name>/model.onnx,
input_b1.npy, input_b8.npy and info.json (input and output names). The name defaults to tiny_chain_<N>. An existing
model of that name is overwritten.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper

OPSET = 17
SEED = 20240601


def make_chain(nodes, width, rng):
    """The chain: Add(x, c_k) / Relu / Mul(x, m_k) in turn. The constants keep values near the input's (adds of
    +-0.01, multiplies by 0.99..1.01), so the output stays finite and comparable between engines at any N."""
    inits, body = [], []
    prev = "input"
    for k in range(nodes):
        out = "output" if k == nodes - 1 else f"t{k}"
        kind = k % 3
        if kind == 0:
            c = f"add_c{k}"
            inits.append(numpy_helper.from_array(rng.uniform(-0.01, 0.01, width).astype(np.float32), c))
            body.append(oh.make_node("Add", [prev, c], [out], name=f"add_{k}"))
        elif kind == 1:
            body.append(oh.make_node("Relu", [prev], [out], name=f"relu_{k}"))
        else:
            c = f"mul_c{k}"
            inits.append(numpy_helper.from_array(rng.uniform(0.99, 1.01, width).astype(np.float32), c))
            body.append(oh.make_node("Mul", [prev, c], [out], name=f"mul_{k}"))
        prev = out
    graph = oh.make_graph(
        body, f"tiny_chain_{nodes}",
        [oh.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", width])],
        [oh.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", width])],
        initializer=inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="ferry-gen_overhead_model")
    onnx.checker.check_model(model)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--nodes", type=int, default=1000, help="nodes in the chain (default 1000)")
    p.add_argument("--width", type=int, default=8, help="elements per batch row (default 8)")
    p.add_argument("--name", default="", help="model folder name (default tiny_chain_<nodes>)")
    args = p.parse_args()
    if args.nodes < 1 or args.width < 1:
        sys.exit("gen_overhead_model: --nodes and --width must be at least 1")
    name = args.name or f"tiny_chain_{args.nodes}"
    d = os.path.join(args.out_dir, name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(SEED)
    onnx.save(make_chain(args.nodes, args.width, rng), os.path.join(d, "model.onnx"))
    for b in (1, 8):
        np.save(os.path.join(d, f"input_b{b}.npy"), rng.uniform(-1, 1, (b, args.width)).astype(np.float32),
                allow_pickle=False)
    with open(os.path.join(d, "info.json"), "w") as f:
        json.dump({"name": name, "input": "input", "outputs": ["output"], "nodes": args.nodes, "width": args.width}, f)
    print(f"[gen_overhead_model] {name}: {args.nodes} nodes, input [batch, {args.width}] -> {d}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
