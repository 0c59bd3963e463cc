"""Stage 6: answer a question from the index: vector, keyword, or both fused, with calibrated scores.

One module per part of the answer, each apart because it changes for a reason of its own:

- :mod:`~indexer.search.query`: the question as typed (:class:`~indexer.search.query.Query`: words,
  phrases, exclusions, prefixes) and the terms the keyword search looks for;
- :mod:`~indexer.search.evidence`: each hit's evidence, on scales the question's length does not
  move (BM25 over its ceiling, the question's information, the fusion of the two lists);
- :mod:`~indexer.search.calibration`: the maps from evidence to the chance that a hit answers, with
  every fitted constant of them, the thresholds, and the scores held in rank order;
- :mod:`~indexer.search.name_rules`: a question read against the names documents declare (a
  one-name question, definitions, lists of names);
- :mod:`~indexer.search.order_rules`: the rules that reorder the first hits by what the chunks are
  (tests after the code, a lookup's chunks first, the re-ranker's order);
- :mod:`~indexer.search.hit`: :class:`~indexer.search.hit.Hit`, the result every front end shows;
- :mod:`~indexer.search.run`: the search itself, its steps numbered in its docstring.

Nothing is imported here, so that a front end that only shows hits imports
:mod:`~indexer.search.hit` alone.
"""
