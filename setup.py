"""Builds the extension module ferry._ferry with Ferry's own CMake build (scripts/build.sh, target ferry-python,
without the tests) and packages the result, build/python/ferry/, as the package `ferry`. See pyproject.toml."""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithCMake(build_py):
    def run(self):
        build_dir = os.environ.get("BUILD_DIR", "build")
        env = dict(os.environ, TARGETS="ferry-python", FERRY_BUILD_TESTS="OFF", BUILD_DIR=build_dir,
                   CMAKE_ARGS=os.environ.get("CMAKE_ARGS", "") + " -DFERRY_PYTHON=ON")
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True, env=env, cwd=ROOT)
        src = os.path.join(ROOT, build_dir, "python", "ferry")
        dst = os.path.join(self.build_lib, "ferry")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: the package holds a compiled module
        return True


setup(packages=[], cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution)
