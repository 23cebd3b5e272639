#!/usr/bin/python3
"""Exports the models of the ONNX Runtime comparison (bench/compare_ort.py) with a dynamic batch dim, and writes
inputs for batch 1 and 8. Run with /usr/bin/python3 (Debian's python3-torch, python3-torchvision, python3-onnx).

    /usr/bin/python3 bench/gen_bench_models.py OUT_DIR [--only NAME,NAME]

OUT_DIR/<name>/model.onnx, OUT_DIR/<name>/input_b1.npy, input_b8.npy, and OUT_DIR/<name>/info.json with the input
name. Models already present are skipped. Random weights (seeded): timing does not depend on the values, and the
outputs are compared between Ferry and ONNX Runtime, not with a trained model's.
"""
import argparse
import importlib.util
import json
import os
import sys

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gen_test_models", os.path.join(HERE, "..", "scripts", "gen_test_models.py"))
gtm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gtm)


def classifier(ctor, offset, prepare=None):
    def make():
        gtm.seeded(offset)
        model = ctor()
        if prepare:
            prepare(model)
        gtm.calibrate_batchnorm(model, (1, 3, 224, 224))
        return model.eval(), "input", lambda b: torch.randn(b, 3, 224, 224)
    return make


def bert(layers, d_model, heads, ffn, offset):
    def make():
        gtm.seeded(offset)
        model = gtm.BertEncoder(d_model=d_model, nhead=heads, layers=layers, ffn=ffn).eval()
        return model, "embeddings", lambda b: torch.randn(b, 128, d_model)
    return make


MODELS = {
    "resnet50": classifier(lambda: torchvision.models.resnet50(weights=None), 1),
    "mobilenet_v2": classifier(lambda: torchvision.models.mobilenet_v2(weights=None), 2),
    "efficientnet_b0": classifier(lambda: torchvision.models.efficientnet_b0(weights=None), 3),
    "vit_b_16": classifier(lambda: torchvision.models.vit_b_16(weights=None), 4, gtm.randomize_vit_head),
    # BERT-style encoders at sequence length 128: a small one (4 layers, d=256) and a base-sized one (12, d=768).
    "bert_small": bert(4, 256, 4, 1024, 7),
    "bert_base": bert(12, 768, 12, 3072, 8),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    only = [n for n in args.only.split(",") if n]
    for name, make in MODELS.items():
        if only and name not in only:
            continue
        d = os.path.join(args.out_dir, name)
        if os.path.exists(os.path.join(d, "info.json")):
            print(f"[gen_bench_models] {name}: present, skipped", flush=True)
            continue
        os.makedirs(d, exist_ok=True)
        model, input_name, make_input = make()
        x1 = make_input(1)
        outputs = ["hidden_states", "pooled"] if name.startswith("bert") else ["logits"]
        dynamic = {input_name: {0: "batch"}}
        for o in outputs:
            dynamic[o] = {0: "batch"}
        print(f"[gen_bench_models] {name}: exporting", flush=True)
        torch.onnx.export(model, (x1,), os.path.join(d, "model.onnx"), opset_version=gtm.OPSET,
                          input_names=[input_name], output_names=outputs, do_constant_folding=True,
                          dynamic_axes=dynamic)
        for b in (1, 8):
            gtm.save_npy(os.path.join(d, f"input_b{b}.npy"), gtm.to_numpy(make_input(b)).astype(np.float32))
        with open(os.path.join(d, "info.json"), "w") as f:
            json.dump({"name": name, "input": input_name, "outputs": outputs}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
