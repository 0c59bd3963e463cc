"""Run under ``qemu-x86_64 -cpu EPYC-v3`` (AVX2 and FMA, no AVX-512, no VNNI) by
tests/test_embedded.py: what int8 gives on the CPUs without int8 dot products, on a machine that has them.

onnxruntime picks its int8 kernel by the CPU's cpuid, which qemu emulates; the backends read the CPU's
instructions from Linux's /proc/cpuinfo, which qemu passes through from the host. So each int8 backend
is told here what its own reading would give on that CPU (no dot-product instructions), and the rest
runs as a build runs it. Prints one JSON object: what the CPU reports, and per model the lowest and
mean cosine of int8 to float32, whether a text's int8 vector is the same alone and in its batch, and,
for the re-ranker, the largest logit difference.

Usage: int8_without_dot_products.py CHUNKS WORDS [all]: the first CHUNKS chunks, each cut to its first
WORDS words (0: whole); all: bge-small and the re-ranker too, not only MiniLM. Every instruction is
emulated, so a chunk costs about a thousand times what it costs on the CPU itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from numpy._core._multiarray_umath import __cpu_features__ as cpu_features

from indexer import corpus, formats
from indexer.backends.embedded import EmbeddedBackend
from indexer.backends.onnx.cpu import weight_layout
from indexer.backends.onnx.int8 import with_int8_matmuls
from indexer.backends.packaged import BGE_SMALL, MINILM
from indexer.chunking import chunk_document
from indexer.pipeline.run import chunk_settings
from indexer.rerank import Reranker
from indexer.sizes import DEFAULT_MAX_FILE_SIZE

REPO = Path(__file__).resolve().parents[2]
#: A pair one token of which falls to cosine 0.98868 with the signed layout on AVX2.
TOKEN_IDS = np.array([[101, 2129, 2079, 1045, 8081, 1037, 102, 0, 0], [101] + [2000] * 7 + [102]])


def sample_chunks(backend: EmbeddedBackend, count: int, words: int) -> list[str]:
    """The first ``count`` chunk texts a build of sample_corpus/ embeds, as its planner prefixes them,
    each cut to its first ``words`` words (0: whole)."""
    settings = chunk_settings(backend, chunk_tokens=None)
    texts: list[str] = []
    for source in corpus.walk(REPO / "sample_corpus").files:
        try:
            document = formats.read_document(source.path, corpus.read_bytes(source, DEFAULT_MAX_FILE_SIZE))
        except formats.UnreadableFile:
            continue
        chunks = chunk_document(document, backend.count_tokens, settings)
        texts.extend(backend.document_prefix + chunk.embed_text for chunk in chunks)
        if len(texts) >= count:
            break
    return [" ".join(text.split()[:words]) if words else text for text in texts[:count]]


def embedder_fidelity(model: str, count: int, words: int) -> dict:
    float32, int8 = EmbeddedBackend(model, precision="float32"), EmbeddedBackend(model, precision="int8")
    with float32, int8:
        int8.int8_instructions = None  # what its /proc/cpuinfo would say on this CPU
        texts = sample_chunks(float32, count, words)
        together, expected = int8.embed(texts), float32.embed(texts)
        alone = np.vstack([int8.embed([text]) for text in texts[:2]])
        cosines = (together * expected).sum(axis=1)
        return {
            "chunks": len(texts),
            "lowest": float(cosines.min()),
            "mean": float(cosines.mean()),
            "alone_as_in_batch": bool(np.array_equal(alone, together[:2])),
        }


def signed_layout_lowest() -> float:
    """The lowest token cosine the signed weight layout gives here: under 0.99 shows the kernel run is
    the one that adds pairs of u8 x s8 products in 16 bits (what the unsigned layout avoids)."""
    import onnxruntime as ort

    from indexer.backends.onnx.session import session_options

    shipped = MINILM.onnx_path().read_bytes()
    mask = (TOKEN_IDS != 0).astype(np.int64)
    feed = {"input_ids": TOKEN_IDS, "attention_mask": mask, "token_type_ids": np.zeros_like(TOKEN_IDS)}

    def run(model: bytes) -> np.ndarray:
        options = session_options(1, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return session.run(["last_hidden_state"], feed)[0]

    expected = run(shipped)
    signed = run(with_int8_matmuls(shipped, weights="int8")[0])
    norms = np.linalg.norm(expected, axis=-1) * np.linalg.norm(signed, axis=-1)
    cosines = (expected * signed).sum(-1) / norms
    return float(cosines[mask == 1].min())


def reranker_fidelity() -> dict:
    question = "How many people live in Berlin?"
    passages = [
        "Berlin had a population of 3,520,031 registered inhabitants in an area of 891.82 square kilometers.",
        "Berlin is well known for its museums.",
        "Paris is the capital of France.",
    ]
    with Reranker(precision="float32") as float32, Reranker(precision="int8") as int8:
        int8.int8_instructions = None
        got, expected = int8.logits(question, passages), float32.logits(question, passages)
        return {"largest_logit_difference": float(np.abs(got - expected).max()), "logits": got.tolist()}


def main() -> None:
    count, words, every_model = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["all"]
    report = {
        "cpu": {flag: bool(cpu_features[flag]) for flag in ("AVX2", "FMA3", "AVX512F", "AVX512VNNI")},
        "layout": weight_layout(None),
        "signed_layout_lowest_token": signed_layout_lowest(),
        MINILM.name: embedder_fidelity(MINILM.name, count, words),
    }
    if every_model:
        report[BGE_SMALL.name] = embedder_fidelity(BGE_SMALL.name, count, words)
        report["reranker"] = reranker_fidelity()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
