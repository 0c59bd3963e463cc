"""``index eval``: retrieval quality measured through the same build and search users get.

- :mod:`indexer.eval.beir`: a BEIR-layout collection (documents, queries, graded judgments);
- :mod:`indexer.eval.fixtures`: a user's own questions and the files or lines that answer them;
- :mod:`indexer.eval.metrics`: nDCG, recall and MRR, which both report.
"""
