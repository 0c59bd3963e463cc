"""The re-ranker with the real cross-encoder ms-marco-MiniLM-L-12-v2: no mocks, no network."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from indexer import formats
from indexer.backends.packaged import MS_MARCO_MINILM
from indexer.chunking import ChunkSettings, chunk_document
from indexer.errors import ConfigError
from indexer.rerank import PAIR_TOKENS, QUESTION_TOKENS, Reranker, passage_text, probability, rerank

REPO = Path(__file__).resolve().parent.parent
#: fastembed's canonical logits for this model (its tests/test_text_cross_encoder.py).
FRANCE = "What is the capital of France?"
FRANCE_PASSAGES = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
FRANCE_LOGITS = [9.330912, -2.0380247]
#: The example of the model card of cross-encoder/ms-marco-MiniLM-L-12-v2 and the logits it
#: publishes (sentence-transformers CrossEncoder.predict, float32 PyTorch).
BERLIN = "How many people live in Berlin?"
BERLIN_PASSAGES = [
    "Berlin had a population of 3,520,031 registered inhabitants in an area of 891.82 square kilometers.",
    "Berlin is well known for its museums.",
]
BERLIN_LOGITS = [9.218911, -4.0780287]


@pytest.fixture(scope="module")
def float32(model_cache: Path) -> Reranker:
    with Reranker(precision="float32") as reranker:
        yield reranker


@pytest.fixture(scope="module")
def int8(model_cache: Path) -> Reranker:
    with Reranker(precision="int8") as reranker:
        yield reranker


def sample_passages(relative: str) -> list[str]:
    """The passages a search of sample_corpus/ returns from one file: its chunks, heading path first."""
    path = REPO / "sample_corpus" / relative
    document = formats.read_document(str(path), path.read_bytes())
    chunks = chunk_document(
        document, lambda texts: [len(text.split()) for text in texts], ChunkSettings.for_limit(200)
    )
    return [passage_text(chunk.heading, chunk.text) for chunk in chunks]


@pytest.mark.heavy
def test_the_logits_are_the_published_ones(float32: Reranker, int8: Reranker) -> None:
    """Within the rounding of the packaged int8 weights (0.2 of a logit)."""
    for reranker in (float32, int8):
        logits = reranker.logits(FRANCE, FRANCE_PASSAGES)
        assert np.abs(logits - FRANCE_LOGITS).max() < 0.25


@pytest.mark.heavy
def test_the_model_cards_example_scores_as_published(float32: Reranker, int8: Reranker) -> None:
    for reranker in (float32, int8):
        logits = reranker.logits(BERLIN, BERLIN_PASSAGES)
        assert np.abs(logits - BERLIN_LOGITS).max() < 0.25
        assert logits[0] > 5 > 0 > -2 > logits[1]


def plain_logits(question: str, passages: list[str]) -> np.ndarray:
    """The shipped file run as it is (no graph edits, no optimisation), on pairs assembled here from
    the tokenizer's word pieces: [CLS] question [SEP] passage [SEP], token types 0 then 1."""
    tokenizer = Tokenizer.from_file(str(MS_MARCO_MINILM.tokenizer_path()))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    asked = tokenizer.encode(question, add_special_tokens=False).ids
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        str(MS_MARCO_MINILM.onnx_path()), options, providers=["CPUExecutionProvider"]
    )
    logits = []
    for passage in passages:
        read = tokenizer.encode(passage, add_special_tokens=False).ids
        ids = [cls, *asked, sep, *read, sep]
        types = [0] * (len(asked) + 2) + [1] * (len(read) + 1)
        feed = {
            "input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
            "token_type_ids": np.array([types], dtype=np.int64),
        }
        names = {model_input.name for model_input in session.get_inputs()}
        (out,) = session.run(None, {name: value for name, value in feed.items() if name in names})
        logits.append(float(out[0, 0]))
    return np.array(logits)


@pytest.mark.heavy
def test_the_pairs_score_as_the_shipped_file_run_plainly(float32: Reranker, int8: Reranker) -> None:
    """The graph edits, the pairs' assembly and the sub-batches change a logit by the rounding of
    int8 activations only; a question and passage swapped, or token types all 0, move the card's
    answer by 2 to 7."""
    pairs = [(BERLIN, BERLIN_PASSAGES), (FRANCE, FRANCE_PASSAGES)]
    for question, passages in pairs:
        expected = plain_logits(question, passages)
        for reranker in (float32, int8):
            assert np.abs(reranker.logits(question, passages) - expected).max() < 0.3


@pytest.mark.heavy
def test_a_pair_scores_the_same_alone_and_among_others_bit_for_bit(float32: Reranker, int8: Reranker) -> None:
    passages = [*FRANCE_PASSAGES, "Lyon is a city in France. " * 30, "France"]
    for reranker in (float32, int8):
        together = reranker.logits(FRANCE, passages)
        alone = np.array([reranker.logits(FRANCE, [passage])[0] for passage in passages])
        assert np.array_equal(together, alone)


@pytest.mark.heavy
def test_an_answering_chunk_scores_high_and_an_unrelated_one_low(float32: Reranker) -> None:
    """The question `make demo` asks; long paraphrased questions fare worse (bench/bench_models.py)."""
    question = "how do I fix a flat tyre"
    answers = float32.scores(question, sample_passages("bicycle-repair/fixing-a-flat-tyre.md"))
    unrelated = float32.scores(question, sample_passages("cooking/sourdough-starter.md"))

    assert answers.max() >= 0.7
    assert unrelated.max() < 0.3


@pytest.mark.heavy
def test_rerank_gives_probabilities_in_input_order(model_cache: Path) -> None:
    scores = rerank(FRANCE, [FRANCE_PASSAGES[1], FRANCE_PASSAGES[0]])

    assert scores[1] > 0.99 > 0.2 > scores[0]
    assert rerank(FRANCE, []) == []


@pytest.mark.heavy
def test_a_long_passage_is_read_up_to_the_token_budget(float32: Reranker) -> None:
    long_passage = "Paris is the capital of France. " + "It has many museums and bridges. " * 400
    tokenizer = float32._pair_tokenizer()

    assert len(tokenizer.encode(FRANCE, long_passage).ids) == PAIR_TOKENS
    assert float32.scores(FRANCE, [long_passage])[0] > 0.9  # the answer is in what was read


@pytest.mark.heavy
def test_only_the_passage_is_cut_and_a_long_question_to_its_first_tokens(float32: Reranker) -> None:
    tokenizer = float32._pair_tokenizer()
    long_passage = "It has many museums and bridges. " * 400
    question_ids = tokenizer.encode(FRANCE, add_special_tokens=False).ids
    pair = tokenizer.encode(float32.read_question(FRANCE), long_passage)

    assert pair.ids[1 : 1 + len(question_ids)] == question_ids
    assert pair.ids[1 + len(question_ids)] == 102
    assert len(pair.ids) == PAIR_TOKENS
    pasted = "Why does the bridge over the river in the old town of Lyon have so many arches? " * 10
    read = float32.read_question(pasted)
    assert pasted.startswith(read)
    assert len(tokenizer.encode(read, add_special_tokens=False).ids) == QUESTION_TOKENS
    assert float32.logits(pasted, [long_passage]).shape == (1,)


def test_the_heading_path_comes_before_the_text() -> None:
    assert passage_text("Wheels > Truing", "  Spin the wheel.\n") == "Wheels > Truing\nSpin the wheel."
    assert passage_text("", "Spin the wheel.") == "Spin the wheel."


def test_the_score_map_is_monotone_and_centred_at_a_logit_of_zero() -> None:
    scores = probability(np.array([-12.0, -1.0, 0.0, 1.0, 12.0]))

    assert np.all(np.diff(scores) > 0)
    assert scores[2] == 0.5
    assert scores[0] < 1e-5
    assert scores[-1] > 1 - 1e-5


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="threads"):
        Reranker(threads=0)
    with pytest.raises(ConfigError, match="precision"):
        Reranker(precision="int4")
