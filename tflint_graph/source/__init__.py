"""Files to source text to trees: finding files, reading and decoding, CPython's verdict, the
prefilter, the libcst tree (built from CPython's or parsed) and the store that keeps it."""
