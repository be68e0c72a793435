"""setup.py - the build step pyproject.toml cannot declare: libsimhash is built
from the repository's sources (`make` in the repository root, into a
temporary folder), then build_ffi.py compiles the cffi module against it
into the package. Needs the Debian build dependencies of .ci/deps.sh.
"""
import os
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib_build = os.path.abspath(os.path.join(self.build_lib, "..", "libsimhash"))
        jobs = str(max(1, min(4, os.cpu_count() or 1)))
        subprocess.check_call(["make", "-s", "-C", ROOT, "-j" + jobs, "BUILD=" + lib_build,
                               os.path.join(lib_build, "libsimhash.a")])
        subprocess.check_call([sys.executable, os.path.join(HERE, "build_ffi.py"),
                               os.path.abspath(self.build_lib),
                               os.path.join(lib_build, "libsimhash.a")])


class BinaryDistribution(Distribution):
    """The package holds a compiled module: a platform wheel."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
