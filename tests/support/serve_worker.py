"""`index serve` through the Python API, with limits of a test's choosing:

python serve_worker.py INDEX REQUEST_SECONDS KEEP_ALIVE_SECONDS
"""

from __future__ import annotations

import sys

from indexer import Index
from indexer.serving.limits import ServeLimits
from indexer.serving.run import serve

if __name__ == "__main__":
    location, request_seconds, keep_alive_seconds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    limits = ServeLimits(request_seconds=request_seconds, keep_alive_seconds=keep_alive_seconds)
    with Index.open(location, create=False) as index:
        serve(index, port=0, limits=limits, say=lambda message: print(message, file=sys.stderr, flush=True))
