#!/usr/bin/python3
"""Run a model on torch tensors without copies: inputs go in through DLPack (a contiguous CPU tensor is read in
place), outputs are NumPy arrays that torch.from_dlpack wraps without a copy.

    /usr/bin/python3 examples/python/torch_dlpack.py
"""
import os
import sys
import tempfile

import torch

import ferry


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def main():
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 3, 16, 16)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "block.onnx")
        torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], opset_version=17)
        sess = ferry.InferenceSession(path)
        (y,) = sess.run(None, {"x": x})  # the torch tensor is read in place through DLPack
    y_torch = torch.from_dlpack(y)       # and the result shared back without a copy
    with torch.no_grad():
        expected = model(x)
    err = (y_torch - expected).abs().max().item()
    print("output %s, shares memory with the NumPy array: %s, max |ferry - torch| = %.2e"
          % (tuple(y_torch.shape), y_torch.data_ptr() == y.ctypes.data, err))
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
