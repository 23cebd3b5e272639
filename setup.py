"""Builds the extension module ferry._ferry with Ferry's own CMake build (scripts/build.sh, target ferry-python,
without the tests) and packages the result, build/python/ferry/ (or $BUILD_DIR/python/ferry), as the package
`ferry`. See pyproject.toml."""
import os
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.environ.get("BUILD_DIR", "build")


class BuildWithCMake(build_py):
    def run(self):
        env = dict(os.environ, TARGETS="ferry-python", FERRY_BUILD_TESTS="OFF", BUILD_DIR=BUILD_DIR,
                   CMAKE_ARGS=os.environ.get("CMAKE_ARGS", "") + " -DFERRY_PYTHON=ON")
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True, env=env, cwd=ROOT)
        super().run()


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: the package holds a compiled module
        return True


setup(packages=["ferry"], package_dir={"ferry": os.path.join(BUILD_DIR, "python", "ferry")},
      package_data={"ferry": ["*.so"]}, cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution)
