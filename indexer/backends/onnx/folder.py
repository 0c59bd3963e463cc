"""A model folder as sentence-transformers exports it: ``model.onnx`` (or ``onnx/model.onnx``),
``tokenizer.json``, and the pooling and input limit its config files declare. Read once, when a
backend is made for a folder of the user's own."""

from __future__ import annotations

import json
from pathlib import Path

from indexer.errors import ConfigError

#: Input limit for a user's model folder that does not say its own.
DEFAULT_MAX_SEQ_LENGTH = 512
#: sentence-transformers' 1_Pooling/config.json keys for the poolings we run.
POOLING_KEYS = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean"}


def find_onnx_file(folder: Path) -> Path:
    """The ONNX file of a user's model folder, or ConfigError saying what is missing."""
    if not folder.is_dir():
        raise ConfigError(f"embedded model folder {folder} does not exist or is not a folder")
    for candidate in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"embedded model folder {folder} has no model.onnx (nor onnx/model.onnx)")


def read_max_seq_length(folder: Path) -> int:
    """The input limit a sentence-transformers folder records, else :data:`DEFAULT_MAX_SEQ_LENGTH`."""
    config_path = folder / "sentence_bert_config.json"
    if not config_path.is_file():
        return DEFAULT_MAX_SEQ_LENGTH
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {config_path}: {exc}") from exc
    max_seq_length = config.get("max_seq_length") if isinstance(config, dict) else None
    if not isinstance(max_seq_length, int) or max_seq_length < 3:
        raise ConfigError(f"{config_path} has no usable max_seq_length (got {max_seq_length!r})")
    return max_seq_length


def read_pooling(folder: Path) -> str:
    """The pooling a sentence-transformers folder declares in ``1_Pooling/config.json`` ("mean" or
    "cls"), else "mean"; ConfigError for a pooling we do not run (max, last token, several at once)."""
    config_path = folder / "1_Pooling" / "config.json"
    if not config_path.is_file():
        return "mean"
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {config_path}: {exc}") from exc
    declared = config.items() if isinstance(config, dict) else []
    modes = sorted(key for key, value in declared if key.startswith("pooling_mode_") and value is True)
    if len(modes) != 1 or modes[0] not in POOLING_KEYS:
        raise ConfigError(
            f"{config_path} asks for pooling {', '.join(modes) or 'none'}; "
            f"the embedded backend runs one of {', '.join(POOLING_KEYS)}"
        )
    return POOLING_KEYS[modes[0]]
