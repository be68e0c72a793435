#!/bin/sh
# run_tests.sh PYTHON BUILD_PYTHON - `make python-check`: the module's pytest
# suite (python/tests), then, when ../shared/compat/python-simhash-2.1.2 holds
# the original package's own tests, those, unchanged, against this module
# (SIMHASH_SHARED names another shared/ folder).
# Runs from the repository root so that only BUILD_PYTHON provides `simhash`.
set -u
py=${1:-/usr/bin/python3}
mod=$2
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
case $mod in /*) ;; *) mod=$root/$mod ;; esac
status=0
PYTHONPATH=$mod "$py" -m pytest -q -p no:cacheprovider python/tests || status=1
orig=${SIMHASH_SHARED:-$root/../shared}/compat/python-simhash-2.1.2
# its tests in tests/ or beside the package; --import-mode=append keeps the
# original package (in $orig) behind this module on sys.path
tests=
[ -d "$orig/tests" ] && tests="$orig/tests"
[ -z "$tests" ] && [ -f "$orig/test_simhash.py" ] && tests="$orig/test_simhash.py"
if [ -n "$tests" ]; then
	echo "python: the original package's own tests, against this module"
	PYTHONPATH=$mod "$py" -m pytest -q -p no:cacheprovider --import-mode=append "$tests" || status=1
else
	echo "python: no tests of the original package in $orig, skipped"
fi
exit $status
