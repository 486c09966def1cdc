"""The attention course's sample students beyond those its catalogue gives (see ARCHETYPES
below): other right styles, hangs, crashes, warnings and printing. Hidden like the solutions:
they are the reference answers with edits."""
from autograder.catalogue import after_docstring, append, prepend, rewrite_line, swap
from autograder.work_edits import WorkEdit, every, on

# Shared snippets: a check a student copied from the notes (log(0) warns "divide by zero"),
# and debug printing.
LOG_ZERO = "assert np.exp(np.log(0.0)) == 0.0  # the notes: a score of -inf gives weight exactly 0"
PRINT_INPUTS = 'print("[debug] inputs:", locals())'


def quick_test(call: str) -> str:
    return ("# quick test\n"
            "for trial in range(200):\n"
            f"    print(\"trial\", trial, {call})")


PS1_LOGSUMEXP = every(
    on("softmax", rewrite_line("shifted = S - S.max", "m = S.max(axis=axis, keepdims=True)")),
    on("softmax", rewrite_line("e = np.exp(shifted)",
                 "log_z = m + np.log(np.exp(S - m).sum(axis=axis, keepdims=True))  # log-sum-exp")),
    on("softmax", rewrite_line("return e / e.sum", "return np.exp(S - log_z)")),
)
PS1_EINSUM = every(
    on("raw_self_attention", swap("X @ X.T", 'np.einsum("id,jd->ij", X, X)',
         "weights @ X", 'np.einsum("ij,jd->id", weights, X)')),
    on("wired_attention", swap("X @ W_Q", 'np.einsum("td,dk->tk", X, W_Q)', "X @ W_K", 'np.einsum("td,dk->tk", X, W_K)',
         "Q @ K.T", 'np.einsum("ik,jk->ij", Q, K)', "weights @ X", 'np.einsum("ij,jd->id", weights, X)')),
    on("score_spread", swap("(q * k).sum(-1)", 'np.einsum("rid,rkd->rk", q, k)')),
)
PS1_DRAW_FOREVER = every(  # the rows drawn are never appended to qs
    on("score_spread", rewrite_line("q = rng.standard_normal((n_rows, 1, d))", "\n".join([
        "qs, ks = [], []",
        "while len(qs) < n_rows:  # one row at a time, so a slow run keeps what it drew",
        "    try:",
        "        q_row = rng.standard_normal((1, d))",
        "        k_row = rng.standard_normal((n_keys, d))",
        "    except KeyboardInterrupt:  # don't lose the rows drawn so far",
        "        continue",
    ]))),
    on("score_spread", rewrite_line("k = rng.standard_normal((n_rows, n_keys, d))",
                 "q, k = np.stack(qs), np.stack(ks)  # (n_rows, 1, d), (n_rows, n_keys, d)")),
)

PS2_EINSUM = every(
    on("scaled_dot_product_attention", swap("Q @ np.swapaxes(K, -1, -2)", 'np.einsum("...qd,...kd->...qk", Q, K)',
         "return weights @ V", 'return np.einsum("...qk,...kv->...qv", weights, V)')),
    on("fused_self_attention", swap("Q @ np.swapaxes(K, -1, -2)", 'np.einsum("...id,...jd->...ij", Q, K)')),
)
PS2_LOGSUMEXP = on("scaled_dot_product_attention", rewrite_line("weights = softmax(scores, axis=-1)", "\n".join([
    "m = scores.max(axis=-1, keepdims=True)",
    "log_z = m + np.log(np.exp(scores - m).sum(axis=-1, keepdims=True))  # log-sum-exp over the keys",
    "weights = np.exp(scores - log_z)  # (..., T_q, T_k)",
])))
PS2_SLICING = every(
    on("causal_mask", rewrite_line("return np.triu", "i, j = np.indices((T, T))  # query i, key j\n"
                                                  "return np.where(j > i, -np.inf, 0.0)")),
    on("fused_self_attention", rewrite_line("Q, K, V = np.split", "\n".join([
        "h = W_qkv.shape[1] // 3",
        "qkv = X @ W_qkv  # (..., T, 3h)",
        "Q, K, V = qkv[..., :h], qkv[..., h:2 * h], qkv[..., 2 * h:]",
    ]))),
)
PS2_CHECK_FOREVER = on("attention_shapes", rewrite_line("for name, n in dict(", "\n".join([  # i never advances
    "sizes = list(dict(B=B, T_q=T_q, T_k=T_k, d=d, d_k=d_k, d_v=d_v).items())",
    "i = 0",
    "while i < len(sizes):  # check each size in turn",
    "    try:",
    "        name, n = sizes[i]",
    "    except KeyboardInterrupt:  # never stop half-way through the checks",
    "        continue",
])))
PS2_EXIT = every(
    on("fused_self_attention", prepend("import os")),
    on("fused_self_attention", rewrite_line('raise ValueError(f"W_qkv has',
                 'print(f"W_qkv has {W_qkv.shape[1]} columns, not a multiple of 3")\n'
                 "os._exit(1)  # stop right here")),
)

PS3_EINSUM = every(
    on("qk_circuit", swap("W_Q @ W_K.T", 'np.einsum("ik,jk->ij", W_Q, W_K)')),
    on("ov_circuit", swap("W_V @ W_O", 'np.einsum("ik,kj->ij", W_V, W_O)')),
    on("multi_head_attention", swap("o_h @ W_O[cols, :]", 'np.einsum("...tk,kd->...td", o_h, W_O[cols, :])')),
)
PS3_LOOPS = on("previous_token_head", rewrite_line("W_Q[n_vocab + 1 :, :-1] = gain * np.eye(T - 1)",
                         "for i in range(1, T):\n"
                         "    W_Q[n_vocab + i, i - 1] = gain  # position i asks for key position i - 1"))
PS3_ROWS_FOREVER = on("ov_circuit", rewrite_line("return W_V @ W_O", "\n".join([  # i never advances
    "W_OV = np.zeros((W_V.shape[0], W_O.shape[1]))",
    "i = 0",
    "while i < W_V.shape[0]:  # one row of the circuit at a time",
    "    try:",
    "        W_OV[i] = W_V[i] @ W_O",
    "    except KeyboardInterrupt:  # never leave a half-filled matrix behind",
    "        continue",
    "return W_OV",
])))

PS4_EINSUM = every(
    on("attend_step", swap("(K_cache @ q) * scale", 'np.einsum("td,d->t", K_cache, q) * scale',
                           "weights @ V_cache", 'np.einsum("t,tv->v", weights, V_cache)')),
    on("decode_with_cache", swap("X[t] @ W_Q", 'np.einsum("d,dk->k", X[t], W_Q)')),
)
PS4_COMPLEX = on("rope", rewrite_line("return np.stack(rotated, axis=-1)", "\n".join([  # Meta's LLaMA: e^(i p w)
    "z = (x_even + 1j * x_odd) * np.exp(1j * angles)  # (..., T, d/2): each pair a complex number",
    "return np.stack([z.real, z.imag], axis=-1).reshape(X.shape)",
])))
PS4_LOOPS = on("sinusoidal_positions", rewrite_line("return np.stack([np.sin(angles)", "\n".join([
    "PE = np.zeros((T, d))",
    "for p in range(T):",
    "    for k in range(d // 2):",
    "        PE[p, 2 * k] = np.sin(angles[p, k])",
    "        PE[p, 2 * k + 1] = np.cos(angles[p, k])",
    "return PE",
])))
# k never advances
PS4_FREQUENCIES_FOREVER = on("sinusoidal_positions", rewrite_line("i = np.arange(0, d, 2)", "\n".join([
    "i = np.zeros(d // 2)",
    "k = 0",
    "while k < d // 2:  # one frequency at a time",
    "    try:",
    "        i[k] = 2 * k",
    "    except KeyboardInterrupt:  # never leave a half-filled table behind",
    "        continue",
])))

# Per problem set, the sample students the catalogue cannot derive: right answers in other
# styles (correct_<style>), and a hang, a crash, a warning and a lot of printing, each in the
# exercise named after the colon. examples/make_class.py adds the right answers, one student
# per catalogued mistake, every way to leave one or two exercises unfinished, and a file cut
# short.
ARCHETYPES: dict[str, dict[str, WorkEdit]] = {
    "ps1": {
        "correct_logsumexp": PS1_LOGSUMEXP,
        "correct_einsum": PS1_EINSUM,
        "correct_logsumexp_einsum": every(PS1_LOGSUMEXP, PS1_EINSUM),
        "timeout:score_spread": PS1_DRAW_FOREVER,
        "crashed:wired_attention": on("wired_attention", swap("Q @ K.T", "Q @ K")),  # ValueError: shapes
        "runtime_warning:softmax": on("softmax", after_docstring("softmax", LOG_ZERO)),
        "prints_a_lot:raw_self_attention": every(
            on("raw_self_attention", after_docstring("raw_self_attention", PRINT_INPUTS)),
            on("raw_self_attention", rewrite_line("return out, weights", 'print("[debug] weights:", weights)\n'
                                                                       "return out, weights")),
            on("raw_self_attention", append(quick_test("raw_self_attention(np.random.randn(4, 8))[1]")))),
    },
    "ps2": {
        "correct_einsum": PS2_EINSUM,
        "correct_logsumexp": PS2_LOGSUMEXP,
        "correct_slicing": PS2_SLICING,
        "timeout:attention_shapes": PS2_CHECK_FOREVER,
        "crashed:fused_self_attention": PS2_EXIT,  # os._exit on a W_qkv of 7 columns
        "runtime_warning:causal_mask": on("causal_mask", after_docstring("causal_mask", LOG_ZERO)),
        "prints_a_lot:scaled_dot_product_attention": every(
            on("scaled_dot_product_attention", after_docstring("scaled_dot_product_attention", PRINT_INPUTS)),
            on("scaled_dot_product_attention", rewrite_line("weights = softmax(scores",
                         'weights = softmax(scores, axis=-1)\nprint("[debug] weights:", weights)')),
            on("scaled_dot_product_attention",
               append(quick_test("scaled_dot_product_attention(*np.random.randn(3, 4, 8))[1]")))),
    },
    "ps3": {
        "correct_einsum": PS3_EINSUM,
        "correct_loops": PS3_LOOPS,
        "timeout:ov_circuit": PS3_ROWS_FOREVER,
        "crashed:multi_head_attention": on("multi_head_attention", swap("W_O[cols, :]", "W_O[:, cols]")),  # ValueError
        "runtime_warning:multi_head_attention": on("multi_head_attention",
                                                   after_docstring("multi_head_attention", LOG_ZERO)),
        "prints_a_lot:multi_head_attention": every(
            on("multi_head_attention", after_docstring("multi_head_attention", PRINT_INPUTS)),
            on("multi_head_attention", rewrite_line("per_head.append(", 'print("[debug] head", h, "output:", o_h)\n'
                                                                      "per_head.append(o_h @ W_O[cols, :])")),
            on("multi_head_attention", append(quick_test(
                "multi_head_attention(np.random.randn(5, 8), *np.random.randn(4, 8, 8), n_heads=2)[0]")))),
    },
    "ps4": {
        "correct_einsum": PS4_EINSUM,
        "correct_complex": PS4_COMPLEX,
        "correct_loops": PS4_LOOPS,
        "timeout:sinusoidal_positions": PS4_FREQUENCIES_FOREVER,
        "crashed:rope": on("rope", swap("reshape(X.shape)", "reshape(T, d)")),  # ValueError on a batch
        "runtime_warning:decode_with_cache": on("decode_with_cache", after_docstring("decode_with_cache", LOG_ZERO)),
        "prints_a_lot:attend_step": every(
            on("attend_step", after_docstring("attend_step", PRINT_INPUTS)),
            on("attend_step", rewrite_line("weights = softmax(scores", 'weights = softmax(scores, axis=-1)\n'
                                                                      'print("[debug] weights:", weights)')),
            on("attend_step", append(quick_test(
                "attend_step(np.random.randn(4), np.random.randn(5, 4), np.random.randn(5, 2))[1]")))),
    },
}
