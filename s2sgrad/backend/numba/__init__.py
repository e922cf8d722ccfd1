"""The numba backend: the generated gradient written in the subset numba compiles (`translate`, `scalars`),
checked against what it covers (`support`), and compiled (`build`) with its run-time helpers (`helpers`)."""
