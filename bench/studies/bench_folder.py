"""Puts bench/ on ``sys.path`` for the studies beside this file, so that a study, run as
``python bench/studies/NAME.py``, imports ``support`` and the suite's scripts (``bench_pipeline``,
``bench_ranking``) as the suite's scripts themselves do. A study imports it first, for that alone."""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent

if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
