"""Integrators and iterations: an ODE with neural-net dynamics integrated by
classical Runge-Kutta over a fixed number of steps (the dynamics passed to
the integrator as a function), a fixed-point solver run for a fixed number of
iterations, and one step of a grid fluid simulation with ``np.roll``
(advection by bilinear interpolation, pressure projection by Jacobi sweeps)."""

import numpy as np


def nn_dynamics(y, t, params):
    W1, b1, W2, b2 = params
    h = np.tanh(np.dot(W1, y) + b1 + t)
    return np.dot(W2, h) + b2


def rk4(f, y0, t0, t1, n_steps, params):
    dt = (t1 - t0) / n_steps
    y, t = y0, t0
    for _ in range(n_steps):
        k1 = f(y, t, params)
        k2 = f(y + dt / 2 * k1, t + dt / 2, params)
        k3 = f(y + dt / 2 * k2, t + dt / 2, params)
        k4 = f(y + dt * k3, t + dt, params)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + dt
    return y


def ode_loss(params, y0, target):
    y1 = rk4(nn_dynamics, y0, 0.0, 1.0, 20, params)
    return np.sum((y1 - target) ** 2)


def damped_oscillator(state, t, k):
    x, v = state[0], state[1]
    return np.array([v, -k * x - 0.1 * v])


def oscillator_energy(k, state0):
    """A spring constant's effect on the energy after integrating with RK4."""
    state = rk4(damped_oscillator, state0, 0.0, 2.0, 40, k)
    return 0.5 * state[1] ** 2 + 0.5 * k * state[0] ** 2


def fixed_point(f, a, x0, n_iter=40):
    x = x0
    for _ in range(n_iter):
        x = f(a, x)
    return x


def contraction(a, x):
    return 0.5 * np.tanh(a @ x) + 0.3


def equilibrium_loss(a, x0, target):
    x_star = fixed_point(contraction, a, x0)
    return np.sum((x_star - target) ** 2)


def babylonian_sqrt(a, x0):
    """sqrt(a) by Heron's iteration, 20 rounds: the gradient is 1 / (2 sqrt(a))."""
    x = x0
    for i in range(20):
        x = 0.5 * (x + a / x)
    return x


def advect(field, vx, vy, dt):
    """Move ``field`` along the velocity by looking back and interpolating."""
    rows, cols = field.shape
    ys, xs = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    src_x = (xs - dt * vx).ravel()
    src_y = (ys - dt * vy).ravel()
    x0 = np.floor(src_x).astype(int)
    y0 = np.floor(src_y).astype(int)
    fx = src_x - x0
    fy = src_y - y0
    x0, x1 = np.mod(x0, cols), np.mod(x0 + 1, cols)
    y0, y1 = np.mod(y0, rows), np.mod(y0 + 1, rows)
    top = (1 - fx) * field[y0, x0] + fx * field[y0, x1]
    bottom = (1 - fx) * field[y1, x0] + fx * field[y1, x1]
    return ((1 - fy) * top + fy * bottom).reshape(rows, cols)


def project(vx, vy, n_iter=8):
    """Remove the divergent part of the velocity (periodic boundaries)."""
    div = 0.5 * (np.roll(vx, -1, axis=1) - np.roll(vx, 1, axis=1)
                 + np.roll(vy, -1, axis=0) - np.roll(vy, 1, axis=0))
    p = np.zeros_like(vx)
    for _ in range(n_iter):
        p = (np.roll(p, 1, axis=0) + np.roll(p, -1, axis=0)
             + np.roll(p, 1, axis=1) + np.roll(p, -1, axis=1) - div) / 4.0
    vx = vx - 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1))
    vy = vy - 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0))
    return vx, vy


def fluid_step(vx, vy, smoke, dt):
    vx2 = advect(vx, vx, vy, dt)
    vy2 = advect(vy, vx, vy, dt)
    vx2, vy2 = project(vx2, vy2)
    return vx2, vy2, advect(smoke, vx2, vy2, dt)


def fluid_loss(vx, vy, smoke, target, n_steps=3):
    for _ in range(n_steps):
        vx, vy, smoke = fluid_step(vx, vy, smoke, 0.4)
    return np.sum((smoke - target) ** 2)
