"""ferry.check / ops / optimize / compare / bench: the CLI's --json documents as dicts, equal to the CLI's."""
import json
import subprocess

import onnx
import pytest

import ferry


def cli_json(ferry_cli, *args):
    out = subprocess.run([ferry_cli, *args, "--json"], check=False, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_check_matches_the_cli(models, ferry_cli):
    report = ferry.check(models["conv"])
    assert report == cli_json(ferry_cli, "check", models["conv"])
    assert {n["name"] for n in report["nodes"]} >= {"conv", "relu"}


def test_check_options(models):
    report = ferry.check(models["conv"], backends=["ref"], shapes={"X": [2, 3, 8, 8]})
    assert report["target"]["backends"] == ["ref"]
    pinned = ferry.check(models["conv"], pins={"Relu": "ref"})
    assert any(n["verdict"] == "pinned" for n in pinned["nodes"])
    with pytest.raises(ferry.InvalidArgumentError, match="shape"):
        ferry.check(models["conv"], shapes={"nope": [1]})


def test_ops(ferry_cli):
    m = ferry.ops(op="Conv")
    assert m == cli_json(ferry_cli, "ops", "--op", "Conv")
    # ONNX's Conv and ONNX Runtime's com.microsoft.nchwc Conv (a contrib op of that name)
    assert sorted((o["domain"], o["op"]) for o in m["ops"]) == [("ai.onnx", "Conv"), ("com.microsoft.nchwc", "Conv")]
    with pytest.raises(ferry.InvalidArgumentError, match="unknown backend"):
        ferry.ops(backend="nope")


def test_optimize(models, tmp_path):
    report = ferry.optimize(models["conv"], tmp_path / "out.onnx", level=2, target=["cpu", "ref"])
    assert report["nodes_after"] < report["nodes_before"]
    assert [n.op_type for n in onnx.load(str(tmp_path / "out.onnx")).graph.node] == ["FusedConv"]
    portable = ferry.optimize(models["conv"], tmp_path / "p.onnx", level=2)
    assert all(n.domain in ("", "ai.onnx") for n in onnx.load(str(tmp_path / "p.onnx")).graph.node)
    assert portable["targets"] == []


def test_compare(models, ferry_cli):
    r = ferry.compare(models["conv"], a="cpu", b="ref", shapes={"X": [1, 3, 8, 8]}, trials=2)
    assert r["pass"] is True
    cli = cli_json(ferry_cli, "compare", models["conv"], "--a", "cpu", "--b", "ref", "--shape", "X=1x3x8x8",
                   "--trials", "2")
    assert r["outputs"] == cli["outputs"] and r["inputs"] == cli["inputs"]
    lw = ferry.compare(models["conv"], a="cpu", b="ref", shapes={"X": [1, 3, 8, 8]}, layerwise=True)
    assert "layerwise" in lw
    with pytest.raises(ferry.InvalidArgumentError):
        ferry.compare(models["conv"], atol=-1)


def test_bench(models):
    r = ferry.bench(models["conv"], batch=[1, 2], threads=[1], iterations=5, warmup=1)
    results = r["configurations"]
    assert [x["batch"] for x in results] == [1, 2]
    assert all(x["requests"] == 5 for x in results)
    with pytest.raises(ferry.InvalidArgumentError, match="batch"):
        ferry.bench(models["conv"], batch=[0])
