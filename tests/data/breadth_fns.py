"""Programs written the way NumPy users write them, with the NumPy functions of
issue 15: ``np.roll``, ``np.diff``, ``np.pad``, ``np.gradient``, ``np.sort``,
``np.partition``, ``np.split``, ``np.tril``, ``np.diag``, traces with
``np.einsum``, ``np.kron``, ``np.cross``, ``np.select``, complex parts.

tests/e2e/test_numpy_breadth.py differentiates each one (srcgrad reads their
source, so they live in a file of their own) and checks it against finite
differences and autograd.  ``CASES`` pairs each function with its arguments.
``VIEW_UPDATES`` are updates in place of an array that a view made by one of
these functions sees.
"""

import numpy as np


def fluid_step(dens, u, v):
    """Advection and diffusion of a density on a periodic grid: three explicit
    steps, central differences and the 5-point Laplacian with np.roll."""
    dt, nu = 0.1, 0.05
    for _ in range(3):
        ddx = (np.roll(dens, -1, axis=1) - np.roll(dens, 1, axis=1)) / 2
        ddy = (np.roll(dens, -1, axis=0) - np.roll(dens, 1, axis=0)) / 2
        lap = (np.roll(dens, 1, axis=0) + np.roll(dens, -1, axis=0)
               + np.roll(dens, 1, axis=1) + np.roll(dens, -1, axis=1) - 4 * dens)
        dens = dens - dt * (u * ddx + v * ddy) + nu * dt * lap
    return np.sum((dens - 0.5) ** 2)


def membrane_energy(h, load):
    """The Dirichlet energy of a membrane fixed at 0 on the boundary (np.pad), with
    forward differences (np.diff), minus the work of the load."""
    hp = np.pad(h, 1)
    gx = np.diff(hp, axis=0)
    gy = np.diff(hp, axis=1)
    return 0.5 * np.sum(gx ** 2) + 0.5 * np.sum(gy ** 2) - np.sum(load * h)


def smoothing_penalty(x):
    """Curvature (second differences of the edge-padded signal) and slope
    (np.gradient with a spacing) of a 1-D signal."""
    xp = np.pad(x, 1, mode="edge")
    curvature = np.diff(xp, n=2)
    slope = np.gradient(x, 0.1)
    return np.sum(curvature ** 2) + 0.1 * np.sum(slope ** 2)


def image_gradient_tv(img):
    """A smoothed total variation of an image, from np.gradient's two components."""
    gy, gx = np.gradient(img)
    return np.sum(np.sqrt(gx ** 2 + gy ** 2 + 1e-3))


def trimmed_mse(pred, target):
    """Mean squared error without the two largest residuals (a robust fit)."""
    r = (pred - target) ** 2
    s = np.sort(r)
    return np.mean(s[:-2])


def top3_minus_min(scores):
    """The sum of the three largest scores (np.partition) minus the smallest."""
    part = np.partition(scores, -3)
    return np.sum(part[-3:]) - np.min(scores)


def lstm_cell(W, b, x, h, c):
    """One LSTM step: the gates split out of one affine map with np.split."""
    z = W @ np.concatenate([x, h]) + b
    i, f, o, g = np.split(z, 4)
    i = 1 / (1 + np.exp(-i))
    f = 1 / (1 + np.exp(-f))
    o = 1 / (1 + np.exp(-o))
    c = f * c + i * np.tanh(g)
    h = o * np.tanh(c)
    return np.sum(h ** 2) + np.sum(c)


def gaussian_kl(mu, l_raw, log_d):
    """KL(N(mu, L L^T) || N(0, I)), L lower triangular (np.tril) with a positive
    diagonal (np.diag); the trace with np.einsum('ii'), the log-determinant from
    np.diagonal."""
    lower = np.tril(l_raw, -1) + np.diag(np.exp(log_d))
    cov = lower @ lower.T
    k = np.float64(np.int64(mu.shape[0]))
    return 0.5 * (np.einsum("ii", cov) + mu @ mu - k
                  - 2 * np.sum(np.log(np.diagonal(lower))))


def batch_traces(t):
    """Traces and diagonals of a stack of matrices with repeated einsum indices."""
    diagonals = np.einsum("bii->bi", t)
    return np.sum(diagonals ** 2) + np.einsum("iij->", t[:3, :3]) ** 2


def phase_loss(re, im, w):
    """A complex field re + i im turned by exp(i w): phases, amplitudes, real and
    imaginary parts of complex intermediates of a real loss."""
    z = re + 1j * im
    zw = z * np.exp(1j * w)
    return (np.sum(np.angle(zw) ** 2) + np.sum(np.abs(z)) + np.sum(np.real(np.conj(z) * zw))
            + np.sum(np.imag(zw) ** 2))


def rigid_body_torque(r, forces):
    """The squared norm of the total torque of forces at positions r (np.cross)."""
    torque = np.cross(r, forces)
    return np.sum(np.sum(torque, axis=0) ** 2)


def upsample_loss(img, target):
    """Nearest-neighbour upsampling with np.kron, against a target image."""
    up = np.kron(img, np.ones((2, 2)))
    return np.sum((up - target) ** 2)


def piecewise_response(x):
    """A piecewise response with np.select (quadratic tails, a linear middle), and
    a sinc term."""
    y = np.select([x < -1, x > 1], [-(x + 1) ** 2, (x - 1) ** 2], default=0.5 * x)
    return np.sum(np.nan_to_num(y) + np.sinc(x))


def symmetric_views(img, w):
    """A model applied to flips and rotations of an image (test-time augmentation)."""
    views = [img, np.fliplr(img), np.flipud(img), np.rot90(img), np.rot90(img, 2)]
    total = 0.0
    for v in views:
        total = total + np.sum(np.tanh(v * w))
    return total


def stacked_features(a, b):
    """Features joined and taken apart again: column_stack, append, hsplit, atleast_3d."""
    m = np.column_stack([a, b])
    left, right = np.hsplit(m, [1])
    v = np.append(left, right ** 2)
    cube = np.atleast_3d(m)
    return np.sum(v ** 2) + np.sum(np.rollaxis(cube, 2) * np.diff(cube, axis=0).sum())


def flipped_then_updated(x):
    """np.fliplr returns a view: updating the base changes it."""
    y = x * 1.0
    r = np.fliplr(y)
    y[0, 0] = 5.0
    return np.sum(r * x)


def real_part_then_updated(x):
    """np.real of a real array is the array itself."""
    y = x * 1.0
    r = np.real(y)
    y[1] = 5.0
    return np.sum(r * x)


def rolled_axes_then_updated(x):
    """np.rollaxis and np.diagonal return views."""
    y = x * 1.0
    r = np.rollaxis(y, 1)
    d = np.diagonal(y)
    y[0, 0] = 5.0
    return np.sum(r * x.T) + np.sum(d ** 2)


def split_then_updated(x):
    """np.split returns views: srcgrad cannot follow the update into them."""
    y = x * 1.0
    a, b = np.split(y, 2)
    y[0] = 5.0
    return np.sum(a * x[:2]) + np.sum(b)


def _args_fluid(rng):
    return rng.uniform(0, 1, (6, 6)), rng.normal(0, 0.5, (6, 6)), rng.normal(0, 0.5, (6, 6))


def _args_lstm(rng):
    n, m = 3, 2
    return (rng.normal(0, 0.5, (4 * n, m + n)), rng.normal(0, 0.1, 4 * n), rng.normal(size=m),
            rng.normal(size=n), rng.normal(size=n))


def _args_piecewise(rng):
    """Away from the kinks at -1 and 1."""
    return (np.array([-2.0, -1.5, -0.5, 0.0, 0.3, 1.4, 2.2]) + rng.uniform(-0.05, 0.05, 7),)


CASES = {
    "fluid_step": (fluid_step, _args_fluid),
    "membrane_energy": (membrane_energy, lambda rng: (rng.normal(size=(4, 5)),
                                                      rng.normal(size=(4, 5)))),
    "smoothing_penalty": (smoothing_penalty, lambda rng: (rng.normal(size=9),)),
    "image_gradient_tv": (image_gradient_tv, lambda rng: (rng.normal(size=(5, 6)),)),
    "trimmed_mse": (trimmed_mse, lambda rng: (rng.normal(size=8), rng.normal(size=8))),
    "top3_minus_min": (top3_minus_min, lambda rng: (rng.permutation(9) * 0.3
                                                    + rng.uniform(0, 0.1, 9),)),
    "lstm_cell": (lstm_cell, _args_lstm),
    "gaussian_kl": (gaussian_kl, lambda rng: (rng.normal(size=3), rng.normal(size=(3, 3)),
                                              rng.normal(0, 0.3, 3))),
    "batch_traces": (batch_traces, lambda rng: (rng.normal(size=(3, 3, 3)),)),
    "phase_loss": (phase_loss, lambda rng: (rng.normal(size=5), rng.normal(size=5),
                                            rng.normal(size=5))),
    "rigid_body_torque": (rigid_body_torque, lambda rng: (rng.normal(size=(4, 3)),
                                                          rng.normal(size=(4, 3)))),
    "upsample_loss": (upsample_loss, lambda rng: (rng.normal(size=(2, 3)),
                                                  rng.normal(size=(4, 6)))),
    "piecewise_response": (piecewise_response, _args_piecewise),
    "symmetric_views": (symmetric_views, lambda rng: (rng.normal(size=(3, 3)),
                                                      rng.normal(size=(3, 3)))),
    "stacked_features": (stacked_features, lambda rng: (rng.normal(size=3),
                                                        rng.normal(size=3))),
}

VIEW_UPDATES = {
    "flipped_then_updated": (flipped_then_updated, (3, 3)),
    "real_part_then_updated": (real_part_then_updated, (4,)),
    "rolled_axes_then_updated": (rolled_axes_then_updated, (3, 3)),
}
