"""The examples in examples/python run and say what they should."""
import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

EXAMPLES = os.path.join(ROOT, "examples", "python")


def run(script, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_classify_image():
    pytest.importorskip("torchvision")
    r = run("classify_image.py")
    assert r.returncode == 0, r.stderr
    assert "input image tensor(float)" in r.stdout and r.stdout.count("class") == 5


def test_check_before_deploy(quickstart_model):
    r = run("check_before_deploy.py", quickstart_model)
    assert r.returncode == 0, r.stderr
    assert "native" in r.stdout
    r = run("check_before_deploy.py", quickstart_model, "--backends", "cpu", "--target-isa", "sse4.1")
    assert "nodes:" in r.stdout


def test_torch_dlpack():
    pytest.importorskip("torch")
    r = run("torch_dlpack.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "shares memory with the NumPy array: True" in r.stdout
