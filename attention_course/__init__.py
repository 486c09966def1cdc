"""The attention chapter of the transformers course: its exercises' declarations, the words
for its mistakes, its worked inputs and its notebooks' pictures. No answers: this package
ships to students; the expected values of hidden checks come from solutions/ at grade time.
"""

# The exercise modules of exercises/, in the order the notebooks teach them; each says which
# problem set it belongs to, so the sets, their lists and every points total follow.
EXERCISES = (
    "softmax", "raw_self_attention", "wired_attention", "score_spread",
    "causal_mask", "scaled_dot_product_attention", "attention_shapes", "fused_self_attention",
    "attention_with_biases",
    "previous_token_head", "qk_circuit", "ov_circuit", "multi_head_attention",
    "attend_step", "decode_with_cache", "sinusoidal_positions", "rope", "key_bias_effect", "induction_heads",
)

# What a submission may import besides numpy and the standard library: the notebooks' given
# cells import the worked inputs and the heatmaps (matplotlib only when drawing, which grading never does).
PRELOAD = ("attention_course.worked_inputs", "attention_course.pictures")
