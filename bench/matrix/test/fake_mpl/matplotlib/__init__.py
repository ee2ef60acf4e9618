"""A do-nothing stand-in for matplotlib (bench/matrix/test/e2e_test.sh runs
bench/matrix/plot.py with it where matplotlib is not installed: the code
paths run, nothing is drawn; savefig writes a marker file)."""


def use(_backend):
    pass
