"""What the bench's scripts share and none of them measures: the row every script reports
(``rows``), the gate a run is judged by (``gate``), instant embeddings and a backend built on them,
the cache of real vectors, the doc sets and test collections read from this machine, the test
suite's servers (``from_tests``), and the workers that run other tools in their own environments."""
