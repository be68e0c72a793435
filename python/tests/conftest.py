"""Shared fixtures: the repository's compat vectors and the original package
`simhash` 2.1.2 (../shared/compat, beside the repository), loaded under the
name `orig_simhash` so that it never shadows the module under test."""
import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ../shared beside the repository, or where SIMHASH_SHARED says
SHARED = os.environ.get("SIMHASH_SHARED") or os.path.join(ROOT, "..", "shared")
ORIG = os.path.join(SHARED, "compat", "python-simhash-2.1.2", "simhash", "__init__.py")
VECTORS = os.path.join(ROOT, "tests", "data", "compat")


def _load_original():
    if not os.path.exists(ORIG):
        return None
    spec = importlib.util.spec_from_file_location("orig_simhash", ORIG)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["orig_simhash"] = mod
    spec.loader.exec_module(mod)
    return mod


_ORIG = _load_original()


@pytest.fixture(scope="session")
def orig():
    """The original package, or the test is skipped."""
    if _ORIG is None:
        pytest.skip("../shared/compat/python-simhash-2.1.2 not found")
    return _ORIG


@pytest.fixture(scope="session")
def simhash_build():
    """The folder holding the `simhash` command of the same build, if any."""
    import simhash
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(simhash.__file__))))
    exe = os.path.join(build, "simhash")
    return exe if os.access(exe, os.X_OK) else None
