"""The pages' pictures as markup (report/svg.py) and the templates' compiled cache
(report/render.compiled_cache)."""
import os
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup, escape

from autograder.report import charts
from autograder.report.feedback import heatmap_pair
from autograder.report.render import compiled_cache, environment
from autograder.report.svg import drawn, escaped, svg_markup

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "</title><script>alert(1)</script>&amp;\"'"


def picture(text: str) -> charts.Svg:
    """One of each part, every text field ``text``."""
    rects = [charts.Rect(1, 2, 3, 4, "#fff", text, True), charts.Rect(5, 6, 7, 8, text)]
    texts = [charts.Text(1, 2, text, "middle", text), charts.Text(3, 4, text, rotate=True)]
    return charts.Svg(120.5, 80, text, text, 11, rects, texts, [charts.Line(0, 0.25, 10, 10)])


def titles(element) -> list[str]:
    return [t.text or "" for t in (r.find(f"{SVG}title") for r in element.iter(f"{SVG}rect")) if t is not None]


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn"))))
def test_every_text_comes_back_as_written(text):
    """Whatever a label, hover title, text or colour holds (any character XML allows), it stays
    text: the markup parses, and each field reads back exactly."""
    root = ET.fromstring(svg_markup(picture(text)))
    assert root.get("aria-label") == text and (root.get("class") or "") == text
    assert (root.find(f"{SVG}title").text or "") == text and titles(root) == [text]
    assert [r.get("fill") for r in root.iter(f"{SVG}rect")] == ["#fff", text]
    assert [t.text or "" for t in root.iter(f"{SVG}text")] == [text, text]


@settings(max_examples=500, deadline=None)
@given(st.text() | st.text("&<>'\"0123456789.#abc -"))
def test_escaped_is_markupsafes_escape_of_any_text(text):
    """The shortcut for text with nothing to escape prints what escape would, for any text."""
    assert escaped(text) == str(escape(text))


@pytest.mark.parametrize("value", [11, 0.5, None, Markup("<b>&amp;</b>"), Markup("plain")])
def test_escaped_is_markupsafes_escape_of_what_is_not_a_plain_string(value):
    """A number, None or markup already made goes through escape itself, as before."""
    assert escaped(value) == str(escape(value))


def test_a_hostile_text_makes_no_tag():
    markup = svg_markup(picture(HOSTILE))
    assert "<script" not in markup and markup.count("<title>") == 2


def test_the_parts_are_where_the_picture_puts_them():
    root = ET.fromstring(svg_markup(picture("t")))
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == ("120.5", "80", "0 0 120.5 80")
    cell = next(root.iter(f"{SVG}rect"))
    assert [cell.get(k) for k in ("x", "y", "width", "height", "stroke")] == ["1", "2", "3", "4", "#c8c8c8"]
    turned = list(root.iter(f"{SVG}text"))[1]
    assert turned.get("transform") == "translate(3 4) rotate(-90)" and turned.get("text-anchor") is None
    line = next(root.iter(f"{SVG}line"))
    assert [line.get(k) for k in ("x1", "y1", "x2", "y2")] == ["0", "0.25", "10", "10"]


def test_a_heatmap_has_a_cell_per_weight_with_its_value():
    weights = [[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]]
    root = ET.fromstring(svg_markup(charts.heatmap(weights, "w")))
    assert titles(root) == [f"query position {i}, key position {j}: {v:.3f}"
                            for i, row in enumerate(weights) for j, v in enumerate(row)]


def test_pictures_sharing_their_parts_are_drawn_each_as_alone():
    """One matrix under two titles (charts.heatmaps) has its parts written once: each picture
    still reads as svg_markup writes it alone, under its own title."""
    pictures = charts.heatmaps([[0.5, 0.25], [1.0, 0.0]], ["mine", HOSTILE])
    assert drawn([*pictures, None]) == [svg_markup(p) for p in pictures] + [None]


def cell_titles(markup) -> list[str]:
    return titles(ET.fromstring(str(markup)))


def test_the_same_weights_are_drawn_under_each_title():
    weights = [[0.5, 0.25], [1.0, 0.0]]
    (mine, _), (expected, _) = heatmap_pair("ex", {"got": weights, "expected": [list(r) for r in weights]})
    labels = [ET.fromstring(str(m)).get("aria-label") for m in (mine, expected)]
    assert labels[0].startswith("ex: your weights:") and labels[1].startswith("ex: expected:")
    assert cell_titles(mine) == cell_titles(expected)


def test_weights_equal_but_printed_apart_are_drawn_each_as_it_is():
    """0.0 == -0.0, yet a cell's title prints its weight: the two maps are not one picture."""
    (mine, _), (expected, _) = heatmap_pair("ex", {"got": [[-0.0, 1.0]], "expected": [[0.0, 1.0]]})
    assert cell_titles(mine)[0].endswith(": -0.000") and cell_titles(expected)[0].endswith(": 0.000")


def test_the_templates_draw_with_it():
    drawn = environment().from_string("{{ svg(p) }}").render(p=picture(HOSTILE))
    assert drawn == svg_markup(picture(HOSTILE))  # once escaped, not twice


def test_the_compiled_templates_are_kept_in_a_folder_only_this_user_may_write(tmp_path):
    mine = tmp_path / "mine"
    assert compiled_cache(mine) is not None and mine.is_dir()


@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777])
def test_a_folder_others_may_write_is_not_used(tmp_path, mode):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)
    assert compiled_cache(shared) is None


def test_a_link_is_not_used(tmp_path):
    (tmp_path / "real").mkdir(mode=0o755)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert compiled_cache(tmp_path / "link") is None


def test_a_folder_that_cannot_be_made_means_no_cache(tmp_path):
    (tmp_path / "file").write_text("")
    assert compiled_cache(tmp_path / "file" / "templates") is None
