"""One module per exercise: its checks (visible and hidden), their points, and how its
inputs are drawn."""
