#!/usr/bin/python3
"""Makes the demo repository docs/serve.md serves: the quickstart CNN (models/quickstart_cnn.onnx) with its batch
dim made dynamic, twice: `cnn` with the config.pbtxt shown there, `cnn_auto` without one (ferry serve completes
it from the model). Run with /usr/bin/python3 (Debian's python3-onnx).

    /usr/bin/python3 examples/serve/make_demo_repository.py [DIR]      # default ./demo
    build/bin/ferry serve DIR --http-port 8123 --model-control-mode explicit --load-model '*'
"""
import os
import sys

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CNN_CONFIG = """name: "cnn"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "input" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 32, 32 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 2000
  default_queue_policy { max_queue_size: 64 }
}
model_warmup [ { name: "zeros" batch_size: 1
                 inputs { key: "input" value: { data_type: TYPE_FP32 dims: [ 3, 32, 32 ] zero_data: true } } } ]
"""


def dynamic_batch_model():
    model = onnx.load(os.path.join(ROOT, "models", "quickstart_cnn.onnx"))
    graph = model.graph
    for value in list(graph.input) + list(graph.output):
        dims = value.type.tensor_type.shape.dim
        if dims:
            dims[0].ClearField("dim_value")
            dims[0].dim_param = "N"
    del graph.value_info[:]  # inferred again, with the symbolic batch
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "demo"
    model = dynamic_batch_model()
    for name, config in (("cnn", CNN_CONFIG), ("cnn_auto", None)):
        os.makedirs(os.path.join(out, name, "1"), exist_ok=True)
        onnx.save(model, os.path.join(out, name, "1", "model.onnx"))
        if config:
            with open(os.path.join(out, name, "config.pbtxt"), "w") as f:
                f.write(config)
    print("wrote", out, "(cnn, cnn_auto)")


if __name__ == "__main__":
    main()
