# expect: partial raw_self_attention
# expect: others full
# base: reference
# Wrong with no catalogued mistake: raw_self_attention's output is off by 1e-3, so its
# weights checks pass and its output checks fail, with no misconception tag.


def raw_self_attention(X):
    scores = X @ X.T  # (T, T), unscaled
    weights = softmax(scores, axis=-1)
    out = weights @ X + 1e-3
    return out, weights
