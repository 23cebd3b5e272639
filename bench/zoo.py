#!/usr/bin/python3
"""The model-zoo benchmark: Ferry against ONNX Runtime on every torchvision model that exports, plus a few
torch.nn models written here (LSTM, GRU, GPT-2-style decoder, nn.TransformerDecoder, Conformer block, YOLO-style
detector).

Exports (with /usr/bin/python3: Debian's python3-torch 1.13, python3-torchvision 0.14, python3-onnx) every model at
batch 1 with random weights (weights=None, weights_backbone=None, seeded; BatchNorm statistics re-estimated on random
inputs so activations stay O(1)), eval mode, opset 17, TorchScript exporter, static shapes, into MODELS_DIR/<name>/
(model.onnx, input_b1_<k>.npy, info.json), one subprocess per model; a model that does not export gets
MODELS_DIR/<name>/failed.json with the reason, and is listed, not hidden. Present models (or failures) are reused;
--retry-failed exports the failed ones again. Then, for each model and thread count, Ferry (`ferry run --lockstep`)
and ORT (bench/ort/ort_run.js --lockstep) run interleaved, with bench/compare_ort.py's machinery (bench(),
check_outputs()), and `ferry check MODEL --json` names the op types placed on `ref`.

    /usr/bin/python3 bench/zoo.py [--models /tmp/zoo-models] [--ferry build/bin/ferry] [--quick] [--only A,B]
        [--skip A,B] [--kinds classification,detection,...] [--threads 1,2] [--rounds 2] [--runs 5] [--json FILE]
    /usr/bin/python3 bench/zoo.py --list [--quick]          # the models, kind, inputs (or why export failed)
    /usr/bin/python3 bench/zoo.py --export-only             # export (or reuse) and list what failed, no run

Prints a Markdown table per thread count (model, Ferry p50, ORT p50, Ferry/ORT p50, session-creation and peak-RSS
ratios Ferry/ORT, max rel. diff Ferry vs ORT, op types on ref), then the geometric mean and the worst ratio per
thread count, then the models that failed to export or to run, with the reason.
"""
import argparse
import inspect
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OPSET = 17
SEED = 20240601

# ----------------------------------------------------------------------------------------------------------------
# The zoo: name -> (kind, builder). A builder returns (torch module, [(input name, tensor)], [output names]).

VIDEO_SHAPES = {"r3d_18": (16, 112, 112), "mc3_18": (16, 112, 112), "r2plus1d_18": (16, 112, 112),
                "s3d": (16, 224, 224), "mvit_v1_b": (16, 224, 224), "mvit_v2_s": (16, 224, 224),
                "swin3d_t": (16, 224, 224), "swin3d_s": (16, 224, 224), "swin3d_b": (16, 224, 224)}
# Detection inputs: the model's transform resizes to [min_size, max_size]; set both to the input so it does not
# upsample a small image to 800 px.
DETECTION_SIZE = {"ssd300_vgg16": 300, "ssdlite320_mobilenet_v3_large": 320}
# ~20 models spanning the kinds, for spot checks (--quick).
QUICK = ["resnet18", "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1", "shufflenet_v2_x1_0", "densenet121",
         "convnext_tiny", "regnet_y_400mf", "swin_t", "vit_b_32", "googlenet", "mnasnet0_5",
         "ssdlite320_mobilenet_v3_large", "fasterrcnn_mobilenet_v3_large_320_fpn", "lraspp_mobilenet_v3_large",
         "fcn_resnet50", "r3d_18", "raft_small", "lstm_text", "gru2", "gpt2_mini", "transformer_decoder",
         "conformer_block", "yolo_mini"]


def torch_modules():
    import torch
    import torchvision
    return torch, torchvision


def seeded(offset):
    torch, _ = torch_modules()
    torch.manual_seed(SEED + offset)
    np.random.seed((SEED + offset) % (2**32))


def calibrate_batchnorm(model, make_input, batches=2):
    """Re-estimates BatchNorm running statistics on random inputs (as scripts/gen_test_models.py does)."""
    torch, _ = torch_modules()
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(*make_input())
    model.eval()


def classification(name):
    def build():
        torch, tv = torch_modules()
        model = tv.models.get_model(name, weights=None)
        calibrate_batchnorm(model, lambda: (torch.randn(2, 3, 224, 224),))
        if name.startswith("vit_"):  # the zero-initialised head would give all-zero logits
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        return model.eval(), [("input", torch.randn(1, 3, 224, 224))], ["logits"]
    return build


def detection(name):
    def build():
        torch, tv = torch_modules()
        size = DETECTION_SIZE.get(name, 320)
        kwargs = {} if name.startswith("ssd") else {"min_size": size, "max_size": size}
        model = tv.models.get_model(name, weights=None, weights_backbone=None, **kwargs)
        calibrate_batchnorm(model.backbone, lambda: (torch.rand(2, 3, size, size),))

        class Wrapper(torch.nn.Module):  # one [1,3,H,W] tensor in, the first image's detections out
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, images):
                det = self.m([images[0]])[0]
                return tuple(det[k] for k in sorted(det))

        outputs = {"mask": ["boxes", "labels", "masks", "scores"],
                   "keypoint": ["boxes", "keypoints", "keypoints_scores", "labels", "scores"]}
        outs = next((v for k, v in outputs.items() if k in name), ["boxes", "labels", "scores"])
        return Wrapper(model.eval()).eval(), [("images", torch.rand(1, 3, size, size))], outs
    return build


def segmentation(name):
    def build():
        torch, tv = torch_modules()
        model = tv.models.get_model(name, weights=None, weights_backbone=None)
        calibrate_batchnorm(model, lambda: (torch.randn(2, 3, 224, 224),))

        class Wrapper(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]
        return Wrapper(model.eval()).eval(), [("input", torch.randn(1, 3, 224, 224))], ["out"]
    return build


def video(name):
    def build():
        torch, tv = torch_modules()
        t, h, w = VIDEO_SHAPES.get(name, (16, 112, 112))
        model = tv.models.get_model(name, weights=None)
        calibrate_batchnorm(model, lambda: (torch.randn(1, 3, t, h, w),), batches=1)
        return model.eval(), [("video", torch.randn(1, 3, t, h, w))], ["logits"]
    return build


def optical_flow(name):
    def build():
        torch, tv = torch_modules()
        model = tv.models.get_model(name, weights=None)

        class Wrapper(torch.nn.Module):  # the last (finest) of RAFT's flow estimates
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, a, b):
                return self.m(a, b, num_flow_updates=6)[-1]
        calibrate_batchnorm(model, lambda: (torch.rand(1, 3, 224, 224), torch.rand(1, 3, 224, 224)), batches=1)
        return (Wrapper(model.eval()).eval(), [("image1", torch.rand(1, 3, 224, 224) * 2 - 1),
                                               ("image2", torch.rand(1, 3, 224, 224) * 2 - 1)], ["flow"])
    return build


# -- torch.nn models written here --------------------------------------------------------------------------------

def lstm_text():
    torch, _ = torch_modules()

    class LstmText(torch.nn.Module):  # embedding + 2-layer LSTM + linear on the last step
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10000, 128)
            self.lstm = torch.nn.LSTM(128, 256, num_layers=2, batch_first=True)
            self.fc = torch.nn.Linear(256, 4)

        def forward(self, tokens):
            y, _ = self.lstm(self.emb(tokens))
            return self.fc(y[:, -1])
    return LstmText().eval(), [("tokens", torch.randint(0, 10000, (1, 64), dtype=torch.int64))], ["logits"]


def gru2():
    torch, _ = torch_modules()

    class Gru2(torch.nn.Module):  # 2-layer GRU over 80-dim features (speech-like), linear per step
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(80, 256, num_layers=2, batch_first=True)
            self.fc = torch.nn.Linear(256, 32)

        def forward(self, x):
            y, _ = self.gru(x)
            return self.fc(y)
    return Gru2().eval(), [("features", torch.randn(1, 64, 80))], ["logits"]


def gpt2_mini():
    torch, _ = torch_modules()
    d, heads, layers, seq, vocab = 256, 4, 4, 64, 8000

    class Block(torch.nn.Module):  # GPT-2's pre-LN block: causal self-attention, GELU MLP
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
            self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // heads) + self.mask[:t, :t], dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))

    class Gpt(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = torch.nn.Embedding(vocab, d), torch.nn.Embedding(seq, d)
            self.blocks = torch.nn.Sequential(*[Block() for _ in range(layers)])
            self.ln = torch.nn.LayerNorm(d)
            self.head = torch.nn.Linear(d, vocab, bias=False)

        def forward(self, tokens):
            pos = torch.arange(tokens.shape[1]).unsqueeze(0)
            return self.head(self.ln(self.blocks(self.tok(tokens) + self.pos(pos))))
    return Gpt().eval(), [("tokens", torch.randint(0, vocab, (1, seq), dtype=torch.int64))], ["logits"]


def transformer_decoder():
    torch, _ = torch_modules()

    class Decoder(torch.nn.Module):  # nn.TransformerDecoder, causal self-attention + cross-attention on memory
        def __init__(self):
            super().__init__()
            layer = torch.nn.TransformerDecoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
            self.dec = torch.nn.TransformerDecoder(layer, 3)
            self.register_buffer("mask", torch.triu(torch.full((64, 64), float("-inf")), diagonal=1))

        def forward(self, tgt, memory):
            return self.dec(tgt, memory, tgt_mask=self.mask)
    return (Decoder().eval(), [("tgt", torch.randn(1, 64, 256)), ("memory", torch.randn(1, 64, 256))],
            ["hidden_states"])


def conformer_block():
    torch, _ = torch_modules()
    d = 144
    nn = torch.nn

    class ConvModule(nn.Module):  # pointwise conv + GLU, depthwise conv k=31 + BatchNorm + SiLU, pointwise
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.pw1, self.dw = nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, 31, padding=15, groups=d)
            self.bn, self.pw2 = nn.BatchNorm1d(d), nn.Conv1d(d, d, 1)

        def forward(self, x):
            y = nn.functional.glu(self.pw1(self.ln(x).transpose(1, 2)), dim=1)
            return x + self.pw2(nn.functional.silu(self.bn(self.dw(y)))).transpose(1, 2)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
            self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
            self.ln_att, self.att = nn.LayerNorm(d), nn.MultiheadAttention(d, 4, batch_first=True)
            self.conv, self.ln = ConvModule(), nn.LayerNorm(d)

        def forward(self, x):
            x = x + 0.5 * self.ff1(x)
            y = self.ln_att(x)
            x = x + self.att(y, y, y, need_weights=False)[0]
            x = self.conv(x)
            return self.ln(x + 0.5 * self.ff2(x))

    class Conformer(nn.Module):  # conv subsampling (2x stride-2 3x3) on [1,1,T,80] mel frames, 2 blocks
        def __init__(self):
            super().__init__()
            self.sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
            self.lin = nn.Linear(d * 19, d)
            self.blocks = nn.Sequential(Block(), Block())

        def forward(self, mel):
            y = self.sub(mel.unsqueeze(1))  # [1, d, T/4, 19]
            b, c, t, f = y.shape
            return self.blocks(self.lin(y.permute(0, 2, 1, 3).reshape(b, t, c * f)))
    model = Conformer()
    calibrate_batchnorm(model, lambda: (torch.randn(2, 200, 80),))
    return model.eval(), [("mel", torch.randn(1, 200, 80))], ["encoded"]


def yolo_mini():
    torch, _ = torch_modules()
    nn = torch.nn

    def cbs(i, o, k=3, s=1):
        return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.SiLU())

    class Yolo(nn.Module):  # conv backbone (strides 8/16/32), FPN with nearest x2 Upsample + Concat, sigmoid heads
        def __init__(self, classes=80, anchors=3):
            super().__init__()
            self.c3 = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), cbs(32, 32), cbs(32, 64, 3, 2), cbs(64, 64))
            self.c4 = nn.Sequential(cbs(64, 128, 3, 2), cbs(128, 128))
            self.c5 = nn.Sequential(cbs(128, 256, 3, 2), cbs(256, 256), nn.MaxPool2d(5, 1, 2), cbs(256, 256, 1))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.l5, self.m4 = cbs(256, 128, 1), cbs(256, 128)
            self.l4, self.m3 = cbs(128, 64, 1), cbs(128, 64)
            n = anchors * (5 + classes)
            self.h3, self.h4, self.h5 = nn.Conv2d(64, n, 1), nn.Conv2d(128, n, 1), nn.Conv2d(256, n, 1)

        def forward(self, x):
            p3 = self.c3(x)
            p4 = self.c4(p3)
            p5 = self.c5(p4)
            f4 = self.m4(torch.cat([self.up(self.l5(p5)), p4], 1))
            f3 = self.m3(torch.cat([self.up(self.l4(f4)), p3], 1))
            return torch.sigmoid(self.h3(f3)), torch.sigmoid(self.h4(f4)), torch.sigmoid(self.h5(p5))
    model = Yolo()
    calibrate_batchnorm(model, lambda: (torch.randn(2, 3, 320, 320),))
    return model.eval(), [("images", torch.randn(1, 3, 320, 320))], ["p3", "p4", "p5"]


CUSTOM = {"lstm_text": ("rnn", lstm_text), "gru2": ("rnn", gru2), "gpt2_mini": ("transformer", gpt2_mini),
          "transformer_decoder": ("transformer", transformer_decoder),
          "conformer_block": ("audio", conformer_block), "yolo_mini": ("detection", yolo_mini)}


def zoo():
    """Ordered {name: (kind, builder)}."""
    _, tv = torch_modules()
    models = {}
    for n in tv.models.list_models(module=tv.models):
        models[n] = ("classification", classification(n))
    for n in tv.models.list_models(module=tv.models.detection):
        models[n] = ("detection", detection(n))
    for n in tv.models.list_models(module=tv.models.segmentation):
        models[n] = ("segmentation", segmentation(n))
    for n in tv.models.list_models(module=tv.models.video):
        models[n] = ("video", video(n))
    models["raft_small"] = ("optical_flow", optical_flow("raft_small"))
    models.update(CUSTOM)
    return models


# ----------------------------------------------------------------------------------------------------------------
# Export


def export_one(models_dir, name, offset):
    """Exports one model (in its own process: a crash or a 2 GB protobuf failure takes only this model)."""
    torch, _ = torch_modules()
    torch.set_num_threads(1)
    kind, build = zoo()[name]
    d = os.path.join(models_dir, name)
    os.makedirs(d, exist_ok=True)
    seeded(offset)
    t0 = time.monotonic()
    with torch.no_grad():
        model, inputs, outputs = build()
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    path = os.path.join(d, "model.onnx")
    # Not under no_grad: nn.MultiheadAttention's inference fast path (aten::_native_multi_head_attention) does not
    # export.
    torch.onnx.export(model, tuple(t for _, t in inputs), path, opset_version=OPSET,
                      input_names=[n for n, _ in inputs], output_names=outputs, do_constant_folding=True, **kwargs)
    info = {"name": name, "kind": kind, "input": inputs[0][0], "outputs": outputs, "inputs": [],
            "export_s": round(time.monotonic() - t0, 1), "onnx_bytes": os.path.getsize(path)}
    for k, (n, t) in enumerate(inputs):
        a = np.ascontiguousarray(t.detach().numpy())
        a = a.astype(np.int64) if a.dtype.kind in "iu" else a.astype(np.float32)
        np.save(os.path.join(d, f"input_b1_{k}.npy"), a, allow_pickle=False)
        info["inputs"].append({"name": n, "file": f"input_b1_{k}.npy", "dtype": str(a.dtype), "shape": list(a.shape)})
    with open(os.path.join(d, "info.json"), "w") as f:
        json.dump(info, f, indent=1)


def export_all(models_dir, names, retry_failed=False, timeout_s=3600):
    """Exports what is missing, each in a subprocess; returns {name: reason} for the models that failed."""
    os.makedirs(models_dir, exist_ok=True)
    order = list(zoo())
    failed = {}
    for name in names:
        d = os.path.join(models_dir, name)
        info, fail = os.path.join(d, "info.json"), os.path.join(d, "failed.json")
        if os.path.exists(info):
            continue
        if os.path.exists(fail) and not retry_failed:
            with open(fail) as f:
                failed[name] = json.load(f)["reason"]
            continue
        print(f"[zoo] exporting {name}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-one", name, "--models",
                                models_dir, "--offset", str(order.index(name))], capture_output=True, text=True,
                               timeout=timeout_s)
            ok, err = p.returncode == 0, p.stderr
        except subprocess.TimeoutExpired:
            ok, err = False, f"export took more than {timeout_s} s"
        if ok and os.path.exists(info):
            print(f"[zoo] exported {name} in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
            continue
        reason = export_reason(err)
        failed[name] = reason
        os.makedirs(d, exist_ok=True)
        with open(fail, "w") as f:
            json.dump({"name": name, "reason": reason, "stderr_tail": err[-4000:]}, f, indent=1)
        print(f"[zoo] {name} failed to export: {reason}", file=sys.stderr, flush=True)
    return failed


def export_reason(stderr):
    """The last exception line of a traceback (or the last line), short."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ("Error" in ln or "Exception" in ln) and not ln.startswith("File "):
            return ln[:300]
    return (lines[-1] if lines else "no output (killed?)")[:300]


# ----------------------------------------------------------------------------------------------------------------
# Benchmark (bench/compare_ort.py's machinery)


# Ops on ref that cost nothing at run time (folded or metadata only): not listed.
TRIVIAL_REF_OPS = {"Constant"}


def ref_ops(ferry, model):
    """["Op xN"] for the op types `ferry check` places on ref (most nodes first; Constant left out), or (None, the
    error)."""
    p = subprocess.run([ferry, "check", model, "--json"], capture_output=True, text=True)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        return None, (p.stderr.strip().splitlines() or ["ferry check failed"])[-1][:200]
    counts = {}
    for node in report.get("nodes", []):
        if node.get("backend") == "ref" and node.get("op") not in TRIVIAL_REF_OPS:
            counts[node.get("op", "?")] = counts.get(node.get("op", "?"), 0) + 1
    return [f"{op} x{c}" for op, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))], None


def fmt_diff(v):
    return "-" if v is None else ("shape/missing" if v == float("inf") else f"{v:.1e}")


def run_bench(args, models, names, export_failed):
    sys.path.insert(0, HERE)
    from compare_ort import bench, check_outputs  # the lock-step measurement and the output comparison
    threads = [int(t) for t in args.threads.split(",")]
    rows, diffs, refs, run_failed = [], {}, {}, {}

    def save():
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"rows": rows, "max_rel_diff_vs_ort": diffs, "ref_ops": refs,
                           "export_failed": export_failed, "run_failed": run_failed}, f, indent=1)
    for name in names:
        d = os.path.join(args.models, name)
        with open(os.path.join(d, "info.json")) as f:
            info = json.load(f)
        model = os.path.join(d, "model.onnx")
        ops, err = ref_ops(args.ferry, model)
        refs[name] = ops if ops is not None else f"check failed: {err}"
        try:
            diffs[name] = check_outputs(args, name, info, with_ref=False)[0]
            for t in threads:
                row = bench(args, name, info, 1, t)
                row["kind"] = models[name][0]
                rows.append(row)
                print(f"[zoo] {name} t{t}: ferry {row['ferry_p50']:.2f} ms, ort {row['ort_p50']:.2f} ms, "
                      f"ratio {row['ratio']:.2f} (paired {row['paired_ratio_median']:.2f})", file=sys.stderr,
                      flush=True)
        except (RuntimeError, subprocess.CalledProcessError, ValueError, OSError) as e:
            msg = getattr(e, "stderr", None) or str(e)
            run_failed[name] = (msg.strip().splitlines() or ["?"])[-1][:300]
            print(f"[zoo] {name} failed to run: {run_failed[name]}", file=sys.stderr, flush=True)
        save()
    for t in threads:
        trows = [r for r in rows if r["threads"] == t]
        print(f"\n### batch 1, {t} thread{'s' if t > 1 else ''}\n")
        print("| model | kind | Ferry p50 ms | ORT p50 ms | Ferry/ORT p50 | session Ferry/ORT | peak RSS Ferry/ORT | "
              "max rel. diff vs ORT | ops on ref |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for r in trows:
            ref = refs.get(r["model"])
            if isinstance(ref, list):  # the 10 op types with most nodes (--json keeps them all)
                ref = ", ".join(ref[:10]) + (f", +{len(ref) - 10} more" if len(ref) > 10 else "")
            print(f"| {r['model']} | {r['kind']} | {r['ferry_p50']:.2f} | {r['ort_p50']:.2f} | **{r['ratio']:.2f}** | "
                  f"{r['ferry_session_ms'] / r['ort_session_ms']:.2f} | {r['ferry_rss_mb'] / r['ort_rss_mb']:.2f} | "
                  f"{fmt_diff(diffs.get(r['model']))} | {ref or '-'} |")
        if trows:
            worst = max(trows, key=lambda r: r["ratio"])
            print(f"\n{t} thread(s), {len(trows)} models: geometric mean Ferry/ORT p50 "
                  f"**{geomean([r['ratio'] for r in trows]):.3f}**, session creation "
                  f"{geomean([r['ferry_session_ms'] / r['ort_session_ms'] for r in trows]):.2f}, peak RSS "
                  f"{geomean([r['ferry_rss_mb'] / r['ort_rss_mb'] for r in trows]):.2f}; worst p50 ratio "
                  f"{worst['ratio']:.2f} ({worst['model']})")
    if export_failed or run_failed:
        print("\n### Not measured\n")
        print("| model | kind | stage | reason |")
        print("|---|---|---|---|")
        for n, why in export_failed.items():
            print(f"| {n} | {models[n][0]} | export | {why.replace('|', '/')} |")
        for n, why in run_failed.items():
            print(f"| {n} | {models[n][0]} | run | {why.replace('|', '/')} |")
    save()
    return 0


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="/tmp/zoo-models", help="export cache directory")
    p.add_argument("--ferry", default=os.path.join(ROOT, "build", "bin", "ferry"))
    p.add_argument("--only", default="")
    p.add_argument("--skip", default="")
    p.add_argument("--kinds", default="", help="e.g. classification,detection,segmentation,video,rnn,...")
    p.add_argument("--quick", action="store_true", help=f"the {len(QUICK)}-model subset spanning the kinds")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--backends", default="cpu,ref")
    p.add_argument("--ferry-args", default="")
    p.add_argument("--ort-args", default="")
    p.add_argument("--json", default="")
    p.add_argument("--list", action="store_true", help="list the models (and export status) without running")
    p.add_argument("--export-only", action="store_true")
    p.add_argument("--retry-failed", action="store_true")
    p.add_argument("--export-one", default="", help=argparse.SUPPRESS)
    p.add_argument("--offset", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.export_one:
        export_one(args.models, args.export_one, args.offset)
        return 0
    models = zoo()
    names = QUICK if args.quick else list(models)
    if args.only:
        names = [n for n in args.only.split(",") if n]
        unknown = [n for n in names if n not in models]
        if unknown:
            p.error(f"unknown models: {', '.join(unknown)} (see --list)")
    skip = set(n for n in args.skip.split(",") if n)
    kinds = set(k for k in args.kinds.split(",") if k)
    names = [n for n in names if n not in skip and (not kinds or models[n][0] in kinds)]
    if args.list:
        for n in names:
            d = os.path.join(args.models, n)
            state = "not exported"
            if os.path.exists(os.path.join(d, "info.json")):
                with open(os.path.join(d, "info.json")) as f:
                    info = json.load(f)
                state = "exported\t" + ", ".join(f"{i['name']} {i['dtype']}{i['shape']}" for i in info["inputs"])
            elif os.path.exists(os.path.join(d, "failed.json")):
                with open(os.path.join(d, "failed.json")) as f:
                    state = "export failed\t" + json.load(f)["reason"]
            print(f"{n}\t{models[n][0]}\t{state}")
        return 0
    failed = export_all(args.models, names, args.retry_failed)
    if args.export_only:
        ok = [n for n in names if n not in failed]
        print(f"exported ({len(ok)}): {', '.join(ok)}")
        print(f"failed ({len(failed)}):")
        for n, r in failed.items():
            print(f"- {n}: {r}")
        return 0
    return run_bench(args, models, [n for n in names if n not in failed], failed)


if __name__ == "__main__":
    sys.exit(main())
