"""Stand-in for matplotlib.pyplot: every call is accepted and recorded."""
calls = []


class Any:
    def __init__(self, name="obj"):
        self.name = name

    def __getattr__(self, attr):
        def f(*a, **k):
            calls.append((self.name + "." + attr, a, k))
            if attr == "bar":
                return [Any("bar") for _ in a[0]]
            if attr == "savefig":
                with open(a[0], "w") as out:
                    out.write("fake figure\n")
            return Any(attr)
        return f


class Grid:
    def __init__(self, rows, cols):
        self.cells = [[Any("ax%d%d" % (r, c)) for c in range(cols)] for r in range(rows)]

    def __getitem__(self, idx):
        r, c = idx
        if isinstance(r, slice):
            return [row[c] for row in self.cells[r]]
        return self.cells[r][c]


def subplots(rows, cols, **_k):
    return Any("fig"), Grid(rows, cols)
