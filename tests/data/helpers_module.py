"""User functions in another module, called from corpus functions: they use
their own numpy alias and a global whose name the corpus also uses."""

import numpy as onp

SCALE = 0.5


def smooth(x, sharpness=2.0):
    return onp.log1p(onp.exp(sharpness * x)) / sharpness * SCALE


def split_stats(x):
    return onp.mean(x), onp.sum(x * x)
