"""Running ONNX models in-process, as the embedded backend and the re-ranker do.

- :mod:`~indexer.backends.onnx.session`: onnxruntime sessions, sub-batches, the tokenizer;
- :mod:`~indexer.backends.onnx.cache`: the optimised copy kept on disk;
- :mod:`~indexer.backends.onnx.cpu`: int8 or float32, weight layout and threads, by the CPU;
- :mod:`~indexer.backends.onnx.folder`: a user's own model folder, as sentence-transformers lays it out;
- :mod:`~indexer.backends.onnx.fusions` and :mod:`~indexer.backends.onnx.int8`: the graph edits;
- :mod:`~indexer.backends.onnx.model` over :mod:`~indexer.backends.onnx.protobuf`: the ONNX file as
  those edits read and write it.
"""
