#!/usr/bin/python3
"""Classify an image with a torchvision model, exported to ONNX here and run by Ferry through the ONNX Runtime
API (only the import differs from onnxruntime code).

    /usr/bin/python3 examples/python/classify_image.py [IMAGE.npy] [--model mobilenet_v3_small]

Without network access there are no pretrained weights: the model has random (seeded) weights, so the classes
it prints are arbitrary; with weights of your own, load them before the export. IMAGE.npy is an HxWx3 uint8 array
(a decoded image); without one a synthetic image is used.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

import ferry


def export(name, path):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    torch.onnx.export(model, torch.zeros(1, 3, 224, 224), path, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)


def preprocess(image):
    """HxWx3 uint8 -> 1x3x224x224 float32, center crop and ImageNet normalization."""
    h, w, _ = image.shape
    s = min(h, w)
    top, left = (h - s) // 2, (w - s) // 2
    crop = image[top:top + s, left:left + s].astype(np.float32) / 255
    idx = (np.arange(224) * s / 224).astype(int)  # nearest-neighbour resize, enough for an example
    crop = crop[idx][:, idx]
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    return ((crop - mean) / std).transpose(2, 0, 1)[None].copy()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("image", nargs="?")
    p.add_argument("--model", default="mobilenet_v3_small")
    args = p.parse_args()
    if args.image:
        image = np.load(args.image)
    else:
        yy, xx = np.mgrid[0:256, 0:320]
        image = np.stack([xx % 256, yy % 256, (xx + yy) % 256], -1).astype(np.uint8)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, args.model + ".onnx")
        export(args.model, path)
        sess = ferry.InferenceSession(path, providers=["CPUExecutionProvider"])
        inp = sess.get_inputs()[0]
        print("model %s: input %s %s %s" % (args.model, inp.name, inp.type, inp.shape))
        (logits,) = sess.run(None, {inp.name: preprocess(image)})
    e = np.exp(logits[0] - logits[0].max())
    probs = e / e.sum()
    for k in np.argsort(-probs)[:5]:
        print("  class %4d  p = %.4f" % (k, probs[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
