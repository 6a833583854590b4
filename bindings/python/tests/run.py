"""Runs every test of the Python binding (unittest discovery in this folder) and prints one closing
summary line with the seed, so a failure can be replayed with MXQ_TEST_SEED=<seed>."""

import sys
import unittest
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from _support import SEED  # noqa: E402

suite = unittest.defaultTestLoader.discover(str(here), pattern="test_*.py", top_level_dir=str(here))
result = unittest.TextTestRunner(verbosity=2 if "-v" in sys.argv else 1).run(suite)
skipped = len(result.skipped)
passed = result.testsRun - len(result.failures) - len(result.errors) - skipped
for test, reason in result.skipped:
    print(f"skipped {test.id() if hasattr(test, 'id') else test}: {reason}")
print(f"python bindings: {passed} passed, {len(result.failures) + len(result.errors)} failed, "
      f"{skipped} skipped (seed {SEED})")
sys.exit(0 if result.wasSuccessful() else 1)
