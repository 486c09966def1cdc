# expect: zero ov_circuit
# expect: others full
# base: reference
# Wrong with no catalogued mistake: ov_circuit multiplies in the wrong order, W_O @ W_V,
# a (d_head, d_head) matrix.


def ov_circuit(W_V, W_O):
    return W_O @ W_V
