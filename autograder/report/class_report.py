"""Kept for imports of the old name: the class report is now the dashboard (dashboard.py)."""
from .dashboard import ABOUT_CODE, bar_chart_svg, summary_text

__all__ = ["ABOUT_CODE", "bar_chart_svg", "summary_text"]
