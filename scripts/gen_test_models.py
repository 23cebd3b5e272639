#!/usr/bin/python3
"""Export the real-model test set: ONNX models with random (seeded) weights plus PyTorch's own outputs.

Usage: /usr/bin/python3 scripts/gen_test_models.py [OUT_DIR] [--force] [--only NAME[,NAME...]] [--list]

OUT_DIR defaults to build/test-models. For each model it writes OUT_DIR/<name>/{model.onnx, input_N.npy,
output_N.npy, manifest.json}; then OUT_DIR/manifest.json lists every model:

  {"models": [{"name": ..., "dir": ..., "model": "model.onnx",
               "inputs":  [{"name": onnx input name,  "file": "input_0.npy",  "dtype": ..., "shape": [...]}],
               "outputs": [{"name": onnx output name, "file": "output_0.npy", "dtype": ..., "shape": [...]}],
               "tolerance": {"atol": A, "rtol": R, "why": "one line"}, "notes": "..."}]}

A result passes when |ferry - torch| <= atol + rtol * |torch| elementwise (numpy.allclose's rule).

Nothing is downloaded: every torchvision model is built with weights=None and initialised from torch.manual_seed.
Random weights need two precautions to make the comparison meaningful:
  * BatchNorm running statistics are re-estimated on random inputs (train-mode forward passes with momentum=None),
    so activations stay O(1) through deep nets instead of growing or collapsing; errors then reflect kernel
    numerics, not a blown-up dynamic range.
  * Detection post-processing (score threshold, top-k, NMS) makes discrete decisions that a 1e-6 change can flip.
    See gen_ssdlite_full() for how the SSDlite detections are kept stable.

The script is idempotent: a model whose files all exist (and were made by this GENERATOR_VERSION) is skipped unless
--force. It needs Debian's python3-torch
1.13 / python3-torchvision 0.14 / python3-onnx 1.12 and takes a few minutes on 2 cores.
"""

import argparse
import copy
import json
import math
import os
import sys
import time

# Exit code 77 means "skipped" to ctest (SKIP_RETURN_CODE in tests/models/CMakeLists.txt): without PyTorch there is
# nothing to generate, and the real-model tests skip themselves when the models are missing.
try:
    import numpy as np
    import onnx
    import onnx.helper as oh
    import torch
    import torchvision
except ImportError as e:
    print(f"[gen_test_models] skipped: {e} (needs Debian's python3-torch, python3-torchvision, python3-onnx)",
          flush=True)
    sys.exit(77)

OPSET = 17
SEED = 20240601
# Bump when a change here changes what gets generated: existing models with another version are regenerated.
GENERATOR_VERSION = 1


def log(msg):
    print(f"[gen_test_models] {msg}", flush=True)


# ----------------------------------------------------------------------------------------------------------------
# helpers


def seeded(offset=0):
    torch.manual_seed(SEED + offset)
    np.random.seed((SEED + offset) % (2**32))


def calibrate_batchnorm(model, input_shape, batches=3, batch_size=4):
    """Re-estimates BatchNorm running mean/var on random normal inputs (cumulative average over `batches`)."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, *input_shape[1:]))
    model.eval()


def to_numpy(t):
    return t.detach().cpu().numpy()


def save_npy(path, array):
    array = np.ascontiguousarray(array)
    np.save(path, array, allow_pickle=False)


def describe(array, name, file):
    return {"name": name, "file": file, "dtype": str(array.dtype), "shape": list(array.shape)}


def write_entry(out_dir, name, onnx_path, inputs, outputs, tolerance, notes="", output_tolerances=None):
    """inputs/outputs: lists of (onnx_name, numpy array). Writes the .npy files and the per-model manifest.
    `tolerance` applies to every output unless `output_tolerances` gives one per output."""
    model_dir = os.path.join(out_dir, name)
    entry = {"name": name, "dir": name, "model": os.path.basename(onnx_path), "inputs": [], "outputs": [],
             "tolerance": tolerance, "notes": notes, "generator_version": GENERATOR_VERSION}
    for i, (io_name, array) in enumerate(inputs):
        save_npy(os.path.join(model_dir, f"input_{i}.npy"), array)
        entry["inputs"].append(describe(array, io_name, f"input_{i}.npy"))
    for i, (io_name, array) in enumerate(outputs):
        save_npy(os.path.join(model_dir, f"output_{i}.npy"), array)
        entry["outputs"].append(describe(array, io_name, f"output_{i}.npy"))
        if output_tolerances is not None:
            entry["outputs"][-1]["tolerance"] = output_tolerances[i]
    check_io_names(onnx_path, entry)
    # The manifest goes last: its presence marks the model as complete.
    with open(os.path.join(model_dir, "manifest.json"), "w") as f:
        json.dump(entry, f, indent=2)
        f.write("\n")
    return entry


def check_io_names(onnx_path, entry):
    m = onnx.load(onnx_path, load_external_data=False)
    initializers = {i.name for i in m.graph.initializer}
    graph_inputs = [i.name for i in m.graph.input if i.name not in initializers]
    graph_outputs = [o.name for o in m.graph.output]
    want_in = [i["name"] for i in entry["inputs"]]
    want_out = [o["name"] for o in entry["outputs"]]
    if graph_inputs != want_in or graph_outputs != want_out:
        raise RuntimeError(f"{entry['name']}: ONNX graph io {graph_inputs} -> {graph_outputs} does not match "
                           f"the manifest {want_in} -> {want_out}")


# Export and reference runs keep autograd enabled (parameters require grad): in eval mode under no_grad, PyTorch
# 1.13 routes nn.TransformerEncoderLayer and nn.MultiheadAttention through fused "fast path" kernels that cannot be
# exported; with grad enabled both the export and the reference outputs use the same, exportable, math.
def export(model, args, path, input_names, output_names, opset=OPSET, dynamic_axes=None):
    torch.onnx.export(model, args, path, opset_version=opset, input_names=input_names,
                      output_names=output_names, do_constant_folding=True, dynamic_axes=dynamic_axes)
    onnx.checker.check_model(path)


def fp64_tolerances(model, args, outs32, factor=50.0, floor=1e-5, rtol=1e-3):
    """Per-output tolerances from how far PyTorch's own fp32 result is from an fp64 run of the same model:
    atol = factor * max|fp32 - fp64| (at least `floor`), rounded up to one significant digit. Any correct fp32
    implementation differs from the fp64 result by about as much as PyTorch does, so `factor` leaves room for a
    different summation order without hiding real bugs (a wrong op is off by far more)."""
    model64 = copy.deepcopy(model).double().eval()
    outs64 = run_torch(model64, [a.double() if a.is_floating_point() else a for a in args])
    tolerances, diffs = [], []
    for a, b in zip(outs32, outs64):
        if a.dtype.kind != "f" or a.size == 0:
            tolerances.append({"atol": 0.0, "rtol": 0.0})
            diffs.append(0.0)
            continue
        diff = float(np.max(np.abs(a.astype(np.float64) - b)))
        diffs.append(diff)
        tolerances.append({"atol": round_up(max(floor, factor * diff)), "rtol": rtol})
    return tolerances, diffs


def round_up(x):
    """Rounds a positive number up to one significant digit: 1.4e-4 -> 2e-4."""
    exp = math.floor(math.log10(x))
    return float(f"{math.ceil(x / 10**exp - 1e-9)}e{exp}")


def model_tolerance(per_output, diffs, why):
    atol = max(t["atol"] for t in per_output)
    rtol = max(t["rtol"] for t in per_output)
    return {"atol": atol, "rtol": rtol,
            "why": f"{why}; atol = 50x PyTorch's own fp32-vs-fp64 max abs difference ({max(diffs):.2g}), "
                   f"floor 1e-5, rtol 1e-3"}


def run_torch(model, args):
    with torch.enable_grad():
        out = model(*args)
    if isinstance(out, torch.Tensor):
        out = (out,)
    return [to_numpy(o) for o in out]


# ----------------------------------------------------------------------------------------------------------------
# image classifiers


def export_classifier(out_dir, name, ctor, why, size=224, offset=0, prepare=None):
    seeded(offset)
    model = ctor()
    if prepare:
        prepare(model)
    calibrate_batchnorm(model, (1, 3, size, size))
    model.eval()
    x = torch.randn(1, 3, size, size)
    path = os.path.join(out_dir, name, "model.onnx")
    export(model, (x,), path, ["input"], ["logits"])
    outs = run_torch(model, (x,))
    per_output, diffs = fp64_tolerances(model, (x,), outs)
    return write_entry(out_dir, name, path, [("input", to_numpy(x))], [("logits", outs[0])],
                       model_tolerance(per_output, diffs, why), output_tolerances=per_output)


def gen_resnet50(out_dir):
    return export_classifier(
        out_dir, "resnet50", lambda: torchvision.models.resnet50(weights=None),
        "53 fp32 convs (K up to 4608); summation-order differences compound through depth", offset=1)


def gen_mobilenet_v2(out_dir):
    return export_classifier(
        out_dir, "mobilenet_v2", lambda: torchvision.models.mobilenet_v2(weights=None),
        "52 fp32 convs incl. depthwise, ReLU6 clipping", offset=2)


def gen_efficientnet_b0(out_dir):
    return export_classifier(
        out_dir, "efficientnet_b0", lambda: torchvision.models.efficientnet_b0(weights=None),
        "81 fp32 convs with SiLU (x*Sigmoid(x)) and squeeze-excitation gates", offset=3)


def gen_vit_b_16(out_dir):
    return export_classifier(
        out_dir, "vit_b_16", lambda: torchvision.models.vit_b_16(weights=None),
        "12 encoder blocks: 768-wide matmuls, softmax over 197 tokens, erf-GELU, LayerNorm", offset=4,
        prepare=randomize_vit_head)


def randomize_vit_head(model):
    # torchvision zero-initialises the classification head, which would make every logit exactly 0.
    torch.nn.init.normal_(model.heads.head.weight, std=model.heads.head.in_features ** -0.5)
    torch.nn.init.normal_(model.heads.head.bias, std=0.1)


# ----------------------------------------------------------------------------------------------------------------
# detection

SSD_SIZE = 320
# With random weights SSDlite's class logits have a std of ~0.015, so every softmax score is ~1/91 and the scores of
# different anchors are within float rounding of each other. Scaling the last classification conv spreads the
# logits to a std of ~1, which gives well-separated scores (see gen_ssdlite_full for why that matters).
SSD_LOGIT_SCALE = 60.0


def build_ssd(**kwargs):
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    seeded(5)
    ssd = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=91, **kwargs)
    # The detector's forward wants a list of images; calibrate through the backbone directly.
    calibrate_batchnorm(ssd.backbone, (1, 3, SSD_SIZE, SSD_SIZE))
    ssd.eval()
    with torch.no_grad():
        for m in ssd.head.classification_head.module_list.modules():
            if isinstance(m, torch.nn.Conv2d) and m.out_channels % 91 == 0:
                m.weight.mul_(SSD_LOGIT_SCALE)
                if m.bias is not None:
                    m.bias.mul_(SSD_LOGIT_SCALE)
    return ssd


class SsdRaw(torch.nn.Module):
    """SSDlite up to (not including) the post-processing: raw head outputs plus the decoded boxes and class
    probabilities that the post-processing thresholds. All continuous functions of the input: no ties."""

    def __init__(self, ssd):
        super().__init__()
        self.ssd = ssd

    def forward(self, images):
        # images: [1, 3, 320, 320] in [0, 1]. The transform's resize is a no-op at 320x320 and is left out; its
        # normalisation is done here so the exported graph contains it.
        mean = torch.tensor(self.ssd.transform.image_mean, dtype=images.dtype).view(1, 3, 1, 1)
        std = torch.tensor(self.ssd.transform.image_std, dtype=images.dtype).view(1, 3, 1, 1)
        x = (images - mean) / std
        features = list(self.ssd.backbone(x).values())
        head = self.ssd.head(features)
        from torchvision.models.detection.image_list import ImageList
        anchors = self.ssd.anchor_generator(ImageList(x, [(SSD_SIZE, SSD_SIZE)]), features)[0]
        boxes = self.ssd.box_coder.decode_single(head["bbox_regression"][0], anchors)
        scores = torch.nn.functional.softmax(head["cls_logits"][0], dim=-1)
        return head["cls_logits"], head["bbox_regression"], boxes, scores


def gen_ssdlite(out_dir):
    """ssdlite320_mobilenet_v3_large: the backbone, head, anchor decoding and softmax (SsdRaw), everything before
    the data-dependent post-processing, compared with a plain tolerance. Nearly all the compute is here, and the
    comparison is meaningful: every output is a continuous function of the input."""
    name = "ssdlite320_mobilenet_v3_large"
    raw = SsdRaw(build_ssd()).eval()
    seeded(50)
    x = torch.rand(1, 3, SSD_SIZE, SSD_SIZE)
    path = os.path.join(out_dir, name, "model.onnx")
    out_names = ["cls_logits", "bbox_regression", "boxes", "scores"]
    export(raw, (x,), path, ["images"], out_names)
    outs = run_torch(raw, (x,))
    per_output, diffs = fp64_tolerances(raw, (x,), outs)
    return write_entry(
        out_dir, name, path, [("images", to_numpy(x))], list(zip(out_names, outs)),
        model_tolerance(per_output, diffs, "MobileNetV3 backbone (hardswish, SE) + SSD heads; boxes in pixels"),
        output_tolerances=per_output,
        notes="Pre-NMS outputs (head logits/regressions, decoded boxes, softmax scores); the full detector with "
              "NMS is the _full entry.")


class SsdFull(torch.nn.Module):
    def __init__(self, ssd):
        super().__init__()
        self.ssd = ssd

    def forward(self, images):
        det = self.ssd([images[0]])[0]
        return det["boxes"], det["scores"], det["labels"]


def gen_ssdlite_full(out_dir):
    """ssdlite320_mobilenet_v3_large_full: the complete detector (resize, score threshold, per-class top-k,
    batched NMS, final top-k) -> boxes [N,4], scores [N], labels [N].

    Post-processing makes discrete decisions that a 1e-6 difference can flip: two scores within rounding of each
    other swap places in TopK (changing which detections survive the cut), and an IoU within rounding of the 0.55
    NMS threshold keeps or drops a box. To keep the expected output meaningful and stable:
      1. the class logits are scaled (SSD_LOGIT_SCALE) so scores are well separated instead of all ~1/91;
      2. only the strongest detections are kept (topk_candidates=50 per class, detections_per_img=25), where
         gaps between scores are largest;
      3. stability is verified at generation: PyTorch in float64, and in float32 on the input plus 1e-5 relative
         noise, must give the same number of detections and the same labels, with scores within 1e-4 and boxes
         within 1e-2 pixels; otherwise the next input seed is tried.
    Ferry's fp32 numerics differ from PyTorch's by far less than that noise, so the count and labels must match
    exactly and scores/boxes within tolerance; a mismatch is a real bug (or an unlucky input: rerun with --force
    after changing the seed).
    """
    name = "ssdlite320_mobilenet_v3_large_full"
    full = SsdFull(build_ssd(detections_per_img=25, topk_candidates=50, score_thresh=0.01)).eval()
    full64 = copy.deepcopy(full).double().eval()

    def same(a, b):
        return (a[0].shape == b[0].shape and np.array_equal(a[2], b[2]) and
                np.allclose(a[1], b[1], rtol=0, atol=1e-4) and np.allclose(a[0], b[0], rtol=0, atol=1e-2))

    for attempt in range(8):
        seeded(500 + attempt)
        x = torch.rand(1, 3, SSD_SIZE, SSD_SIZE)
        outs = run_torch(full, (x,))
        noisy = run_torch(full, (x * (1 + 1e-5 * torch.randn_like(x)),))
        outs64 = run_torch(full64, (x.double(),))
        if outs[0].shape[0] > 0 and same(outs, outs64) and same(outs, noisy):
            break
        log(f"{name}: input seed {attempt}: {outs[0].shape[0]} detections, not stable under fp64/noise; "
            "trying the next")
    else:
        raise RuntimeError(f"{name}: no input with stable detections found")
    path = os.path.join(out_dir, name, "model.onnx")
    export(full, (x,), path, ["images"], ["boxes", "scores", "labels"])
    outs = run_torch(full, (x,))
    per_output = [{"atol": 1e-2, "rtol": 1e-3}, {"atol": 1e-4, "rtol": 1e-3}, {"atol": 0.0, "rtol": 0.0}]
    return write_entry(
        out_dir, name, path, [("images", to_numpy(x))], list(zip(["boxes", "scores", "labels"], outs)),
        {"atol": 1e-2, "rtol": 1e-3,
         "why": "detections verified stable at generation (fp64 and 1e-5 input noise give the same detections, "
                "boxes within 1e-2 px, scores within 1e-4), so count and labels must match exactly"},
        output_tolerances=per_output,
        notes=f"Full detector with NMS; {outs[0].shape[0]} detections. Boxes in pixels (atol 1e-2), scores "
              "(atol 1e-4), labels exact.")


# ----------------------------------------------------------------------------------------------------------------
# transformer encoder (BERT-style)


class BertEncoder(torch.nn.Module):
    def __init__(self, d_model=384, nhead=6, layers=4, ffn=1536):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ffn, dropout=0.0,
                                                 activation="gelu", batch_first=True, layer_norm_eps=1e-12)
        self.embed_norm = torch.nn.LayerNorm(d_model, eps=1e-12)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        # TransformerEncoder deep-copies one layer, so every layer would start with the same weights, and the
        # exporter then stores them once: give each layer its own, as a trained model has.
        for encoder_layer in self.encoder.layers:
            for module in encoder_layer.modules():
                if module is not encoder_layer and hasattr(module, "reset_parameters"):
                    module.reset_parameters()
            encoder_layer.self_attn._reset_parameters()
        self.pooler = torch.nn.Linear(d_model, d_model)

    def forward(self, embeddings):
        h = self.encoder(self.embed_norm(embeddings))
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return h, pooled


def gen_bert(out_dir):
    name = "bert_encoder"
    seeded(6)
    model = BertEncoder().eval()
    x = torch.randn(1, 128, 384)
    path = os.path.join(out_dir, name, "model.onnx")
    export(model, (x,), path, ["embeddings"], ["hidden_states", "pooled"])
    outs = run_torch(model, (x,))
    per_output, diffs = fp64_tolerances(model, (x,), outs)
    return write_entry(
        out_dir, name, path, [("embeddings", to_numpy(x))], list(zip(["hidden_states", "pooled"], outs)),
        model_tolerance(per_output, diffs, "4 post-norm layers (d=384, 6 heads, erf-GELU, LayerNorm)"),
        output_tolerances=per_output,
        notes="torch.nn.TransformerEncoder, batch_first, d_model 384, 6 heads, ffn 1536, 4 layers, seq 128.")

# ----------------------------------------------------------------------------------------------------------------
# control flow


class LoopIf(torch.nn.Module):
    """A loop whose trip count comes from the input's shape, with a data-dependent branch inside."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 8) * 0.5)

    def forward(self, x):
        h = torch.zeros(x.size(1))
        acc = torch.zeros(1)
        for i in range(x.size(0)):
            row = x[i]
            if bool(torch.sum(row * h) >= 0):
                h = torch.tanh(torch.matmul(self.w, h) + row)
                acc = acc + 1.0
            else:
                h = torch.sigmoid(h) - row
                acc = acc - 1.0
        return h, acc


def gen_loop_if(out_dir):
    name = "scripted_loop_if"
    seeded(7)
    model = torch.jit.script(LoopIf().eval())
    x = torch.randn(6, 8)
    path = os.path.join(out_dir, name, "model.onnx")
    export(model, (x,), path, ["x"], ["h", "acc"], dynamic_axes={"x": {0: "steps"}})
    outs = run_torch(model, (x,))
    return write_entry(
        out_dir, name, path, [("x", to_numpy(x))], list(zip(["h", "acc"], outs)),
        {"atol": 1e-5, "rtol": 1e-5, "why": "six tiny steps of 8x8 matvec + tanh/sigmoid; fp32 rounding only"},
        notes=f"torch.jit.script -> ONNX Loop (trip count from Shape) with an If on data; acc={outs[1].tolist()} "
              "counts then-branches minus else-branches.")


def gen_scan(out_dir):
    """Built with onnx.helper: Scan carrying a running sum and a running max of the rows, and scanning out
    running_sum * row."""
    name = "scan_cumsum"
    np.random.seed(SEED + 8)
    x = np.random.randn(7, 5).astype(np.float32)
    init = np.random.randn(5).astype(np.float32)

    body = oh.make_graph(
        [oh.make_node("Add", ["sum_in", "row"], ["sum_out"]),
         oh.make_node("Max", ["max_in", "row"], ["max_out"]),
         oh.make_node("Mul", ["sum_out", "row"], ["prod_row"])],
        "scan_body",
        [oh.make_tensor_value_info("sum_in", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("max_in", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("row", onnx.TensorProto.FLOAT, [5])],
        [oh.make_tensor_value_info("sum_out", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("max_out", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("prod_row", onnx.TensorProto.FLOAT, [5])])
    scan = oh.make_node("Scan", ["init_sum", "init_max", "x"], ["final_sum", "final_max", "prods"],
                        num_scan_inputs=1, body=body)
    graph = oh.make_graph(
        [scan], "scan_model",
        [oh.make_tensor_value_info("init_sum", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("init_max", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["steps", 5])],
        [oh.make_tensor_value_info("final_sum", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("final_max", onnx.TensorProto.FLOAT, [5]),
         oh.make_tensor_value_info("prods", onnx.TensorProto.FLOAT, ["steps", 5])])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="ferry-gen_test_models")
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, name, "model.onnx")
    onnx.save(model, path)

    s, m = init.copy(), init.copy()
    prods = []
    for row in x:
        s = s + row
        m = np.maximum(m, row)
        prods.append(s * row)
    return write_entry(
        out_dir, name, path, [("init_sum", init), ("init_max", init.copy()), ("x", x)],
        [("final_sum", s), ("final_max", m), ("prods", np.stack(prods))],
        {"atol": 1e-6, "rtol": 1e-6, "why": "seven fp32 additions per element, same order as numpy"},
        notes="onnx.helper-built Scan (opset 17): two loop-carried states and one scan output.")


# ----------------------------------------------------------------------------------------------------------------

GENERATORS = [
    ("resnet50", gen_resnet50),
    ("mobilenet_v2", gen_mobilenet_v2),
    ("efficientnet_b0", gen_efficientnet_b0),
    ("vit_b_16", gen_vit_b_16),
    ("ssdlite320_mobilenet_v3_large", gen_ssdlite),
    ("ssdlite320_mobilenet_v3_large_full", gen_ssdlite_full),
    ("bert_encoder", gen_bert),
    ("scripted_loop_if", gen_loop_if),
    ("scan_cumsum", gen_scan),
]


def is_complete(out_dir, name):
    manifest = os.path.join(out_dir, name, "manifest.json")
    if not os.path.exists(manifest):
        return False
    try:
        with open(manifest) as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return False
    if entry.get("generator_version") != GENERATOR_VERSION:
        return False
    files = [entry.get("model", "model.onnx")] + [io["file"] for io in entry["inputs"] + entry["outputs"]]
    return all(os.path.exists(os.path.join(out_dir, name, f)) for f in files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?", default="build/test-models")
    parser.add_argument("--force", action="store_true", help="regenerate models whose files already exist")
    parser.add_argument("--only", default="", help="comma-separated model names to generate")
    parser.add_argument("--list", action="store_true", help="list the model names and exit")
    args = parser.parse_args()

    if args.list:
        for name, _ in GENERATORS:
            print(name)
        return 0
    only = {n for n in args.only.split(",") if n}
    unknown = only - {n for n, _ in GENERATORS}
    if unknown:
        parser.error(f"unknown model(s): {', '.join(sorted(unknown))}")

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    out_dir = os.path.abspath(args.out_dir)
    os.makedirs(out_dir, exist_ok=True)
    failures = []
    for name, gen in GENERATORS:
        if only and name not in only:
            continue
        if not args.force and is_complete(out_dir, name):
            log(f"{name}: up to date, skipped")
            continue
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)
        manifest = os.path.join(out_dir, name, "manifest.json")
        if os.path.exists(manifest):
            os.remove(manifest)
        log(f"{name}: exporting ...")
        start = time.time()
        try:
            gen(out_dir)
        except Exception as e:  # keep going: one broken export should not hide the others
            failures.append(name)
            log(f"{name}: FAILED: {type(e).__name__}: {e}")
            continue
        log(f"{name}: done in {time.time() - start:.1f}s")

    # The top-level manifest lists every complete model (including ones skipped this run).
    entries = []
    for name, _ in GENERATORS:
        if is_complete(out_dir, name):
            with open(os.path.join(out_dir, name, "manifest.json")) as f:
                entries.append(json.load(f))
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"generator": "scripts/gen_test_models.py", "opset": OPSET, "models": entries}, f, indent=2)
        f.write("\n")
    log(f"{len(entries)} model(s) in {os.path.join(out_dir, 'manifest.json')}")
    if failures:
        log(f"FAILED: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
