"""The notebooks' heatmaps (attention_course/pictures.py): read off a labelled colour bar."""
import matplotlib.pyplot as plt  # a dependency of the package: the notebooks draw with it
import numpy as np
import pytest

from attention_course import pictures


@pytest.fixture
def drawn(monkeypatch):
    """The figure show_heatmaps draws, kept open instead of shown."""
    plt.switch_backend("Agg")
    monkeypatch.setattr(plt, "show", lambda: None)
    yield lambda *args, **kwargs: (pictures.show_heatmaps(*args, **kwargs), plt.gcf())[1]
    plt.close("all")


PANELS = {"one": np.eye(3), "two": np.full((3, 3), 1 / 3)}


def test_heatmaps_have_one_colour_bar_labelled_as_attention_weights(drawn):
    fig = drawn(PANELS, ["a", "b", "c"])
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert [bar.get_ylabel() for bar in bars] == [pictures.ATTENTION_SCALE]


def test_the_colour_bar_spans_every_panels_colours(drawn):
    fig = drawn(PANELS)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == len(PANELS) and {im.get_clim() for im in images} == {(0, 1)}


def test_another_table_names_its_own_scale(drawn):
    fig = drawn({"positions": np.zeros((2, 4))}, axes=("column", "position"), scale="(PE + 1) / 2")
    assert [ax.get_ylabel() for ax in fig.axes if ax.get_label() == "<colorbar>"] == ["(PE + 1) / 2"]
