#!/usr/bin/python3
"""Builds the small CNN shipped in models/ for the quick start and for tests that need a real model in the repo.

Usage: /usr/bin/python3 scripts/make_quickstart_model.py [OUT_DIR]   (default: models/ next to this script's repo)

Writes, deterministically (fixed seed, random weights, nothing downloaded):
  quickstart_cnn.onnx          a ResNet-ish CNN: 1x3x32x32 float32 "input" -> 1x10 float32 "logits" (opset 17)
  quickstart_cnn_input.npy     a fixed random input (float32, 1x3x32x32, N(0,1))
  quickstart_cnn_expected.npy  PyTorch's output for that input (float32, 1x10)

Needs Debian's python3-torch 1.13 and python3-onnx 1.12. The model is ~310 KB (77k parameters).
"""

import os
import sys

import numpy as np
import onnx
import torch

SEED = 1234


class Block(torch.nn.Module):
    """Basic residual block: conv-bn-relu-conv-bn + shortcut (1x1 conv when the shape changes), relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class QuickstartCnn(torch.nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(16),
                                        torch.nn.ReLU())
        self.stage1 = Block(16, 16, 1)
        self.stage2 = Block(16, 32, 2)
        self.stage3 = Block(32, 64, 2)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(64, classes)

    def forward(self, x):
        x = self.stage3(self.stage2(self.stage1(self.stem(x))))
        x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.pool(x), 1), 1)
        return self.fc(x)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "models")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    model = QuickstartCnn()
    # Random weights with BatchNorm statistics estimated on random inputs, so activations stay O(1).
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, 3, 32, 32))
    model.eval()

    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, "quickstart_cnn.onnx")
    torch.onnx.export(model, (x,), path, opset_version=17, input_names=["input"], output_names=["logits"],
                      do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    m.producer_name = "ferry scripts/make_quickstart_model.py"
    m.doc_string = "Ferry quick-start CNN: random weights (seed 1234), 1x3x32x32 input -> 1x10 logits."
    onnx.save(m, path)
    np.save(os.path.join(out_dir, "quickstart_cnn_input.npy"), x.numpy(), allow_pickle=False)
    np.save(os.path.join(out_dir, "quickstart_cnn_expected.npy"), y.numpy(), allow_pickle=False)
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"wrote {path} ({os.path.getsize(path)} bytes; ops: {', '.join(ops)})")
    print(f"logits: {np.array2string(y.numpy()[0], precision=4)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
