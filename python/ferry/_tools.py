"""The tools as Python functions: the same options as the CLI (dashes become underscores), the same document as
its --json output, as a dict (docs/check.md, docs/optimize.md, docs/compare.md, docs/bench.md)."""
import json
import os

from . import _ferry
from ._options import resolve_providers


def _list(value, what):
    if value is None:
        return []
    if isinstance(value, str):
        return [s for s in value.split(",") if s]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise _ferry.InvalidArgumentError("%s: expected a list or a comma-separated string" % what) from None


def _shapes(shapes, what="shapes"):
    if shapes is None:
        return {}
    if not isinstance(shapes, dict):
        raise _ferry.InvalidArgumentError("%s: expected a dict of input name -> dims" % what)
    out = {}
    for name, dims in shapes.items():
        if isinstance(dims, str):
            dims = dims.replace(",", "x").split("x")
        try:
            out[str(name)] = [int(d) for d in dims]
        except (TypeError, ValueError):
            raise _ferry.InvalidArgumentError("%s['%s']: expected dims like [1, 3, 224, 224]" % (what, name)) from None
    return out


def _pins(pins):
    if pins is None:
        return []
    if isinstance(pins, dict):
        return [(str(k), str(v)) for k, v in pins.items()]
    out = []
    for p in pins:
        if isinstance(p, str):
            node, _, backend = p.partition("=")
            out.append((node, backend))
        else:
            node, backend = p
            out.append((str(node), str(backend)))
    return out


def check(model, backends=None, isa="", target_isa=None, compute_capability=0, shapes=None, no_fallback=False,
          pins=None, plugins=None):
    """`ferry check MODEL --json`: will this model run on these backends and this hardware, node by node (the
    census; docs/check.md). `isa` narrows this host's CPU extensions (--isa); `target_isa` judges for another
    machine's (--target-isa); `shapes` fixes symbolic input dims (--shape)."""
    exact = target_isa is not None
    text = _ferry.check_json(os.fspath(model), _list(backends, "backends"), target_isa if exact else isa, exact,
                             int(compute_capability), _shapes(shapes), not no_fallback, _pins(pins),
                             _list(plugins, "plugins"))
    return json.loads(text)


def ops(backend="", op="", domain=None, plugins=None):
    """`ferry ops --json`: the operator support matrix (every backend, or one), optionally one op or domain."""
    return json.loads(_ferry.ops_json(backend or "", op or "", domain, _list(plugins, "plugins")))


def optimize(src, dst, level=3, opset=0, target=None, shapes=None, isa="", disable=None, legalize=False,
             external_data=False):
    """`ferry optimize SRC DST --json`: runs the optimizer's passes and writes the model as ONNX. `target`:
    backends to optimize for (None: portable, standard ONNX any runtime loads); `opset`: convert the default
    domain first (0 keeps it). Returns the report (what each pass did, node counts, times)."""
    return json.loads(_ferry.optimize_json(os.fspath(src), os.fspath(dst), int(level), _shapes(shapes),
                                           _list(target, "target"), isa, _list(disable, "disable"), int(opset),
                                           bool(legalize), bool(external_data)))


def compare(model, a="cpu,ref", b="ref:opt=0", reference="", inputs="random", shapes=None, ranges=None, batch=None,
            trials=1, seed=0, atol=1e-4, rtol=1e-3, per_output=None, layerwise=False, bisect=""):
    """`ferry compare MODEL --json`: the model under configuration `a` against `b` (or the outputs stored in
    `reference`) on the same inputs, per output; `layerwise` finds the first divergent node, `bisect` (a
    directory) writes a reproducer. `ranges`: {input: (lo, hi)}; `per_output`: {output: (atol, rtol)}. The
    result's "pass" says whether every output is within tolerance."""
    ranges = {str(k): (float(v[0]), float(v[1])) for k, v in (ranges or {}).items()}
    per = {}
    for k, v in (per_output or {}).items():
        per[str(k)] = (float(v), float(rtol)) if isinstance(v, (int, float)) else (float(v[0]), float(v[1]))
    return json.loads(_ferry.compare_json(os.fspath(model), a, b, os.fspath(reference) if reference else "",
                                          os.fspath(inputs) if inputs else "random", _shapes(shapes), ranges,
                                          None if batch is None else int(batch), int(trials), int(seed), float(atol),
                                          float(rtol), per, bool(layerwise), os.fspath(bisect) if bisect else ""))


def bench(model, batch=(1,), threads=(0,), concurrency=(1,), duration=2.0, iterations=0, warmup=2,
          percentiles=(50, 90, 99), shapes=None, ranges=None, seed=0, providers=None, backends=None,
          optimization_level=3):
    """`ferry bench MODEL --json`: latency and throughput over batch sizes x threads x concurrency (docs/bench.md).
    `backends` (Ferry's names) or `providers` (ONNX Runtime's) choose where it runs."""
    if backends is not None and providers is not None:
        raise _ferry.InvalidArgumentError("bench: give backends or providers, not both")
    chosen = _list(backends, "backends") if backends is not None else resolve_providers(providers, None)[0]
    ranges = {str(k): (float(v[0]), float(v[1])) for k, v in (ranges or {}).items()}

    def ints(v):
        return [int(x) for x in ([v] if isinstance(v, int) else v)]

    session = {"backends": chosen, "optimization_level": int(optimization_level)}
    return json.loads(_ferry.bench_json(os.fspath(model), session, _shapes(shapes), ranges, int(seed), ints(batch),
                                        ints(threads), ints(concurrency), int(warmup), int(iterations),
                                        float(duration), [float(p) for p in percentiles]))
