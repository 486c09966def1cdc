"""Reports from Results: pure functions from data to text; the caller writes files."""
