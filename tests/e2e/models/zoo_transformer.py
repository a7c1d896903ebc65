"""One transformer block on a batch of token sequences: multi-head causal
self-attention with a softmax, residual connections, layer norm, a GELU
feed-forward layer, and a softmax cross-entropy of the next token."""

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def attention(params, x, n_heads):
    batch, seq, d = x.shape
    hd = d // n_heads
    qkv = x @ params["w_qkv"] + params["b_qkv"]
    q, k, v = np.split(qkv, 3, axis=-1)
    q = q.reshape(batch, seq, n_heads, hd).transpose(0, 2, 1, 3)
    k = k.reshape(batch, seq, n_heads, hd).transpose(0, 2, 1, 3)
    v = v.reshape(batch, seq, n_heads, hd).transpose(0, 2, 1, 3)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    mask = np.tril(np.ones((seq, seq)))
    scores = np.where(mask == 1, scores, -1e9)
    out = softmax(scores) @ v
    out = out.transpose(0, 2, 1, 3).reshape(batch, seq, d)
    return out @ params["w_out"] + params["b_out"]


def block(params, x, n_heads):
    x = x + attention(params, layer_norm(x, params["ln1_g"], params["ln1_b"]), n_heads)
    h = gelu(layer_norm(x, params["ln2_g"], params["ln2_b"]) @ params["w_ff1"] + params["b_ff1"])
    return x + h @ params["w_ff2"] + params["b_ff2"]


def lm_loss(params, tokens, n_heads=2):
    x = params["embed"][tokens] + params["pos"][: tokens.shape[1]]
    x = block(params, x, n_heads)
    logits = layer_norm(x, params["lnf_g"], params["lnf_b"]) @ params["embed"].T
    logits = logits[:, :-1]
    targets = tokens[:, 1:]
    log_probs = logits - np.log(np.sum(np.exp(logits - logits.max(-1, keepdims=True)), -1,
                                       keepdims=True)) - logits.max(-1, keepdims=True)
    b, t = targets.shape
    picked = log_probs[np.arange(b)[:, None], np.arange(t)[None, :], targets]
    return -np.mean(picked)
