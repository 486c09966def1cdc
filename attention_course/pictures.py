"""The notebooks' picture helper: attention weights as heatmaps, side by side.

Written once here and imported by each notebook's first given cell, as ``worked_inputs``
is; it draws only what a demo cell hands it, so it computes nothing a student writes.
"""
from __future__ import annotations

import numpy as np

WRITTEN_IN_SQUARES = 36  # up to 6 x 6 weights, each weight is written in its square


def pyplot():
    """matplotlib.pyplot, or None without matplotlib (then the picture cells print numbers).
    Imported when a picture is drawn: grading runs the given cells and draws none."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


ATTENTION_AXES = ("key j (looked at)", "query i (looking)")
ATTENTION_SCALE = "attention weight"


def show_heatmaps(panels, labels=None, axes=ATTENTION_AXES, scale=ATTENTION_SCALE):
    """Attention weights as pictures, side by side: ``panels`` maps a title to a (T_q, T_k) array
    (row i: what query i looks at), each entry between 0 and 1, read off one colour bar that
    ``scale`` labels; ``axes`` names the columns and the rows (another table drawn the same way
    names its own, and its scale). Without matplotlib, prints the numbers instead."""
    plt = pyplot()
    if plt is None:
        for title, weights in panels.items():
            print(f"{title}:\n{np.round(weights, 3)}")
        return
    # Constrained layout makes room for the colour bar (tight_layout warns beside one).
    fig, grid = plt.subplots(1, len(panels), figsize=(3.8 * len(panels) + 0.9, 3.6), squeeze=False,
                             layout="constrained")
    for ax, (title, weights) in zip(grid[0], panels.items(), strict=True):
        image = ax.imshow(weights, vmin=0, vmax=1, cmap="Blues")
        ax.set_title(title)
        ax.set_xlabel(axes[0])
        ax.set_ylabel(axes[1])
        if labels is not None:
            ax.set_xticks(range(len(labels)), labels)
            ax.set_yticks(range(len(labels)), labels)
        if weights.size <= WRITTEN_IN_SQUARES:
            for (i, j), w in np.ndenumerate(weights):
                ax.text(j, i, f"{w:.2f}", ha="center", va="center", color="white" if w > 0.6 else "black")
    fig.colorbar(image, ax=list(grid[0]), label=scale, shrink=0.85)  # one scale: every panel spans 0 to 1
    plt.show()
