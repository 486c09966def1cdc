"""One module per exercise: how to make its inputs and its checks, with points and
visibility. No answers here: expected values of hidden checks come from the reference at
grade time."""
