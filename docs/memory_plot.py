"""The memory plot of the loops-and-checkpointing tutorial: the peak memory of a loop's gradient over the trip
count, storing the values each trip's backward code reads, recomputing each trip's step from its input
(``sg.recompute``), and checkpointed (``sg.Revolve``), measured with tracemalloc.

Run:  python docs/memory_plot.py     (writes docs/tutorials/checkpointing-memory.png)
"""
import tracemalloc
from pathlib import Path

import numpy as np

import s2sgrad as sg

SNAPSHOTS = 8


@sg.recompute
def layer(h, w, M):
    """Three matrix products and tanh: each trip of the loop calls it once."""
    a = np.tanh(M @ h)
    b = np.tanh(M @ a)
    return np.tanh(M @ b) * w


def store_all(h, w, M, n):
    for _ in range(n):
        a = np.tanh(M @ h)
        b = np.tanh(M @ a)
        h = np.tanh(M @ b) * w
    return np.sum(h ** 2)


def recomputed(h, w, M, n):
    for _ in range(n):
        h = layer(h, w, M)
    return np.sum(h ** 2)


def checkpointed(h, w, M, n):
    for _ in sg.checkpointed(range(n), sg.Revolve(snapshots=SNAPSHOTS)):
        a = np.tanh(M @ h)
        b = np.tanh(M @ a)
        h = np.tanh(M @ b) * w
    return np.sum(h ** 2)


LOSSES = {"store all": store_all, "sg.recompute each trip": recomputed, f"Revolve({SNAPSHOTS} snapshots)": checkpointed}


def peak_bytes(loss, n: int, size: int) -> int:
    """The peak memory allocated while the gradient of `loss` with respect to `w` runs (its code made before)."""
    rng = np.random.default_rng(0)
    h, w, M = rng.standard_normal(size), rng.standard_normal(size), rng.standard_normal((size, size)) / size ** 0.5
    gradient = sg.grad(loss, wrt=1)
    gradient(h, w, M, 2)                                   # generate (and cache) the code first
    tracemalloc.start()
    gradient(h, w, M, n)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(out: Path = Path(__file__).parent / "tutorials" / "checkpointing-memory.png") -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size, trips = 500, [25, 50, 100, 200, 400, 800]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, loss in LOSSES.items():
        peaks = [peak_bytes(loss, n, size) / 2 ** 20 for n in trips]
        ax.plot(trips, peaks, marker="o", label=label)
        print(f"{label:24} " + "  ".join(f"{p:7.1f}" for p in peaks) + "  MiB")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(trips, [str(n) for n in trips])
    ax.minorticks_off()
    ax.set_xlabel("trips of the loop")
    ax.set_ylabel("peak memory of the gradient (MiB)")
    ax.set_title(f"a loop over a state of {size} floats")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
