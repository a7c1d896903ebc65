"""User functions in another module, called from corpus functions: they use
their own numpy alias and a global whose name the corpus also uses."""

import numpy as onp

SCALE = 0.5


def smooth(x, sharpness=2.0):
    return onp.log1p(onp.exp(sharpness * x)) / sharpness * SCALE


def split_stats(x):
    return onp.mean(x), onp.sum(x * x)


def make_scale(a):
    return lambda x: a * x


def make_softplus(sharpness):
    def softplus(x):
        return onp.log1p(onp.exp(sharpness * x)) / sharpness * SCALE

    return softplus


def unflattener(shapes):
    sizes = [int(onp.prod(s)) for s in shapes]

    def unflatten(v):
        out, i = [], 0
        for shape, n in zip(shapes, sizes):
            out.append(v[i:i + n].reshape(shape))
            i += n
        return out

    return onp.sum(sizes), unflatten


def apply_twice(f, x):
    return f(f(x)) * SCALE


def make_dynamic(a):
    return lambda x: eval("x") * a
