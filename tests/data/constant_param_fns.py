"""Functions for tests/rules/test_constant_parameters.py: a value being
differentiated passed where a constant usually goes (a clip bound, interpolation
knots, a pad value, a log base, np.diff's prepend, np.gradient's spacing,
np.linspace's end points, np.arange's start and step).  srcgrad reads their
source, so they live in a file of their own."""

import math

import numpy as np

import srcgrad


def clip_bounds(x, c):
    return np.sum(np.clip(x, -c, c) ** 2)


def clip_method(x, c):
    return np.sum(x.clip(-c, c) ** 2)


def clip_array_bounds(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) ** 2)


def clip_lower(x, c):
    return np.sum(np.tanh(np.clip(x, c, None)))


def clip_upper(x, c):
    return np.sum(np.clip(x, None, c) ** 3)


def interp_xp(x, s):
    xp = np.array([0.0, 0.5, 1.0]) * s
    return np.sum(np.interp(x, xp, np.array([0.0, 2.0, 1.0])))


def interp_all(x, xp, fp):
    return np.sum(np.interp(x, xp, fp) ** 2)


def interp_left(x, a):
    return np.sum(np.interp(x, np.array([0.0, 1.0]), np.array([0.0, 1.0]), left=a, right=2 * a))


def pad_const(x, c):
    return np.sum(np.pad(x, 2, constant_values=c) ** 2)


def pad_pairs(x, c):
    return np.sum(np.pad(x, ((1, 2), (2, 0)), constant_values=c) ** 2 * np.arange(20.0).reshape(5, 4))


def pad_tuple(x, a, b):
    return np.sum(np.pad(x, (1, 3), 'constant', constant_values=(a, b)) ** 2 * np.arange(8.0))


def log_base(x, b):
    return math.log(x, b)


def diff_prepend(x, x0):
    return np.sum(np.diff(x, prepend=x0) ** 2)


def diff_append(x, x1):
    return np.sum(np.diff(x, append=x1) ** 3)


def diff_both(x, p, q):
    return np.sum(np.diff(x, 2, 0, prepend=p, append=q) ** 2)


def grad_spacing(u, dx):
    return np.sum(np.gradient(u, dx) ** 2)


def grad_spacing_float(u, dx):
    return np.sum(np.gradient(u, float(dx)) ** 2)


def grad_spacings_2d_float(u, dx, dy):
    gx, gy = np.gradient(u, float(dx), float(dy))
    return np.sum(gx ** 2) + np.sum(gx * gy)


def grad_spacings_2d(u, dx, dy):
    gx, gy = np.gradient(u, dx, dy)
    return np.sum(gx ** 2) + np.sum(gx * gy)


def timegrid(T, k):
    t = np.linspace(0.0, T, 11)
    return np.sum(np.exp(-k * t))


def linspace_open(a, b):
    return np.sum(np.sin(np.linspace(a, b, 7, endpoint=False)))


def linspace_arrays(a, b):
    return np.sum(np.linspace(a, b, 4, axis=1) ** 2)


def linspace_retstep(a, b):
    t, h = np.linspace(a, b, 6, retstep=True)
    return np.sum(np.cos(t)) * h


def linspace_one(a, b):
    return np.sum(np.linspace(a, b, 1) ** 2)


def arange_start(t0):
    t = np.arange(t0, 1.0, 0.25)
    return np.sum(t ** 2)


def arange_step(s):
    return np.sum(np.exp(np.arange(0.0, 1.0, s)))


def nan_to_num_values(x, c):
    return np.sum(np.nan_to_num(x, nan=c, posinf=2 * c, neginf=-c) ** 2)


# -- values srcgrad differentiates nowhere: refused, not a silent zero -----------------

def norm_order(x, p):
    return np.linalg.norm(x, ord=p)


def grad_coordinates(u, x):
    return np.sum(np.gradient(u, x) ** 2)


def var_ddof(x, d):
    return np.var(x, ddof=d)


def norm_order_stopped(x, p):
    return np.linalg.norm(x, ord=srcgrad.stop_gradient(p))


# -- valid code: what reaches a constant parameter is an int or a shape ---------------

def axis_from_list(W, x):
    params = [W, 1]
    return np.sum(np.sum(params[0] * x, axis=params[1]) ** 2)


def arange_of_shape(x):
    n = x.shape[0]
    return np.sum(x * np.arange(n))


def linspace_of_len(x):
    return np.sum(x * np.linspace(0.0, 1.0, len(x)))


def full_like_shape(x, c):
    return np.sum(np.full_like(x, c) * x)


def linspace_int(a, b):
    return np.sum(np.linspace(a, b, 5, dtype=int) * 1.0) + a * b
