"""A run: one module's analysis, the rules' dispatch, summaries, the project's fixed point, the
process pool and the cache."""
