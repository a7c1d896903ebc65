"""The model zoo (issue 15): models written the way NumPy and autograd users
write them -- not adapted to srcgrad -- through the whole compiler.

Each model (tests/e2e/models/zoo_*.py) is checked by ``zoo_check.check_model``:
the value is the model's own bit for bit, the gradient matches central
differences, and it matches autograd running the same file with ``np`` bound
to ``autograd.numpy``.  A model srcgrad does not take yet is a strict xfail
naming the missing feature, so the day it starts working the test says so.
"""

import copy

import numpy as np
import pytest
import zoo_convnet
import zoo_dynamics
import zoo_gmm
import zoo_gp
import zoo_mlp
import zoo_rnn
import zoo_transformer
import zoo_vae
from numeric import assert_close
from zoo_check import autograd_copy, check_model

import srcgrad

pytest.importorskip("autograd")
pytest.importorskip("scipy")


def twin(module, name):
    """The same function, run by autograd."""
    return getattr(autograd_copy(module), name)


def rng(seed=0):
    return np.random.RandomState(seed)


# ---------------------------------------------------------------- MLP

def _mlp_data():
    rs = rng(1)
    params = zoo_mlp.init_params(0.3, [4, 5, 3], rs)
    inputs = rs.randn(6, 4)
    targets = np.eye(3)[rs.randint(0, 3, size=6)]
    return params, inputs, targets, 0.01


def test_mlp_with_flatten_helper():
    args = _mlp_data()
    check_model(zoo_mlp.log_posterior, args, (0,), twin=twin(zoo_mlp, "log_posterior"))


def test_mlp_layer_by_layer_prior():
    args = _mlp_data()
    check_model(zoo_mlp.loss_no_flatten, args, (0,), twin=twin(zoo_mlp, "loss_no_flatten"))


def test_mlp_of_the_flat_vector():
    params, inputs, targets, l2 = _mlp_data()
    vector, _ = zoo_mlp.flatten(params)
    args = (vector, params, inputs, targets, l2)
    check_model(zoo_mlp.flat_objective, args, (0,), twin=twin(zoo_mlp, "flat_objective"))


# ---------------------------------------------------------------- GP

def _gp_data():
    rs = rng(2)
    x = rs.randn(7, 2)
    y = np.sin(x[:, 0]) + 0.1 * rs.randn(7)
    params = np.array([0.1, np.log(0.05), 0.2, -0.1, 0.3])
    return params, x, y


def test_gp_marginal_likelihood():
    check_model(zoo_gp.neg_log_marginal, _gp_data(), (0,), twin=twin(zoo_gp, "neg_log_marginal"))


def test_gp_with_scipy_solve_triangular():
    check_model(zoo_gp.neg_log_marginal_triangular, _gp_data(), (0,),
                twin=twin(zoo_gp, "neg_log_marginal_triangular"))


def test_gp_with_scipy_cholesky():
    # no autograd twin: autograd has no gradient for scipy.linalg.cholesky
    check_model(zoo_gp.neg_log_marginal_scipy, _gp_data(), (0,))


def test_gp_with_scipy_cho_factor_and_cho_solve():
    # no autograd twin: autograd has no gradient for cho_factor
    check_model(zoo_gp.neg_log_marginal_cho, _gp_data(), (0,))


def test_gp_predictive_mean():
    params, x, y = _gp_data()
    args = (params, x, y, rng(3).randn(4, 2))
    check_model(zoo_gp.predictive_mean, args, (0,), twin=twin(zoo_gp, "predictive_mean"))


# ---------------------------------------------------------------- GMM

def _gmm_data():
    rs = rng(4)
    params = {"log proportions": rs.randn(3) * 0.3,
              "means": rs.randn(3, 2),
              "lower triangles": np.tril(rs.randn(3, 2, 2)) * 0.3 + np.eye(2)}
    data = rs.randn(10, 2)
    return params, data


@pytest.mark.parametrize("name", ["gmm_log_likelihood", "gmm_log_likelihood_by_hand"])
def test_gmm_log_likelihood(name):
    check_model(getattr(zoo_gmm, name), _gmm_data(), (0,), twin=twin(zoo_gmm, name))


# ---------------------------------------------------------------- VAE

def test_vae_negative_elbo():
    rs = rng(5)
    enc = [(0.3 * rs.randn(6, 5), 0.1 * rs.randn(5)), (0.3 * rs.randn(5, 4), 0.1 * rs.randn(4))]
    dec = [(0.3 * rs.randn(2, 5), 0.1 * rs.randn(5)), (0.3 * rs.randn(5, 6), 0.1 * rs.randn(6))]
    data = (rs.rand(4, 6) > 0.5).astype(float)
    noise = rs.randn(4, 2)
    check_model(zoo_vae.neg_elbo, (enc, dec, data, noise), (0, 1),
                twin=twin(zoo_vae, "neg_elbo"))


# ---------------------------------------------------------------- LSTM, GRU

def _sequences(rs, steps=5, batch=3, size=4):
    inputs = np.eye(size)[rs.randint(0, size, size=(steps, batch))]
    targets = np.eye(size)[rs.randint(0, size, size=(steps, batch))]
    return inputs, targets


def test_lstm():
    rs = rng(6)
    size, hidden = 4, 3

    def gate():
        return 0.3 * rs.randn(size + hidden + 1, hidden)

    params = {"init hiddens": 0.1 * rs.randn(1, hidden), "init cells": 0.1 * rs.randn(1, hidden),
              "change": gate(), "forget": gate(), "ingate": gate(), "outgate": gate(),
              "predict": 0.3 * rs.randn(hidden + 1, size)}
    inputs, targets = _sequences(rs)
    check_model(zoo_rnn.lstm_log_likelihood, (params, inputs, targets), (0,),
                twin=twin(zoo_rnn, "lstm_log_likelihood"))


def test_gru():
    rs = rng(7)
    size, hidden = 4, 3
    params = {"Wz": 0.3 * rs.randn(size + hidden, hidden), "bz": 0.1 * rs.randn(hidden),
              "Wr": 0.3 * rs.randn(size + hidden, hidden), "br": 0.1 * rs.randn(hidden),
              "Wh": 0.3 * rs.randn(size + hidden, hidden), "bh": 0.1 * rs.randn(hidden),
              "Wo": 0.3 * rs.randn(hidden, size), "bo": 0.1 * rs.randn(size)}
    inputs, targets = _sequences(rs)
    check_model(zoo_rnn.gru_loss, (params, inputs, targets), (0,),
                twin=twin(zoo_rnn, "gru_loss"))


# ---------------------------------------------------------------- conv net

def _convnet_data():
    rs = rng(8)
    params = [(0.3 * rs.randn(2, 1, 3, 3), 0.1 * rs.randn(2)), None, None, None,
              (0.3 * rs.randn(2 * 2 * 2, 3), 0.1 * rs.randn(3))]
    images = rs.randn(3, 1, 4, 4)
    labels = np.array([0, 2, 1])
    return params, images, labels


def test_convnet_with_layer_objects():
    params, images, labels = _convnet_data()
    # no autograd twin: autograd does not differentiate a list holding None (the
    # parameters of the layers that have none)
    check_model(zoo_convnet.convnet_loss, (params, images, labels), (0,))


def test_convnet_with_layers_passed_in():
    params, images, labels = _convnet_data()
    check_model(zoo_convnet.convnet_loss_of, (zoo_convnet.LAYERS, params, images, labels), (1,),
                twin=None)


# ---------------------------------------------------------------- transformer

def _transformer_args():
    rs = rng(9)
    vocab, d, ff, seq = 7, 4, 8, 5
    params = {"embed": 0.3 * rs.randn(vocab, d), "pos": 0.1 * rs.randn(seq, d),
              "w_qkv": 0.3 * rs.randn(d, 3 * d), "b_qkv": 0.1 * rs.randn(3 * d),
              "w_out": 0.3 * rs.randn(d, d), "b_out": 0.1 * rs.randn(d),
              "ln1_g": 1 + 0.1 * rs.randn(d), "ln1_b": 0.1 * rs.randn(d),
              "ln2_g": 1 + 0.1 * rs.randn(d), "ln2_b": 0.1 * rs.randn(d),
              "w_ff1": 0.3 * rs.randn(d, ff), "b_ff1": 0.1 * rs.randn(ff),
              "w_ff2": 0.3 * rs.randn(ff, d), "b_ff2": 0.1 * rs.randn(d),
              "lnf_g": 1 + 0.1 * rs.randn(d), "lnf_b": 0.1 * rs.randn(d)}
    return params, rs.randint(0, vocab, size=(2, seq))


def test_transformer_block():
    params, tokens = _transformer_args()
    # no autograd twin: autograd's arrays take x.transpose(axes) but not
    # x.transpose(0, 2, 1, 3), which NumPy users write
    check_model(zoo_transformer.lm_loss, (params, tokens), (0,))


# ---------------------------------------------------------------- ODE, fixed point, fluid

def _ode_args():
    rs = rng(10)
    params = (0.5 * rs.randn(4, 2), 0.1 * rs.randn(4), 0.5 * rs.randn(2, 4), 0.1 * rs.randn(2))
    return params, rs.randn(2), rs.randn(2)


def test_ode_rk4_neural_dynamics():
    args = _ode_args()
    check_model(zoo_dynamics.ode_loss, args, (0, 1), twin=twin(zoo_dynamics, "ode_loss"))


def test_ode_rk4_oscillator():
    args = (1.7, np.array([1.0, 0.0]))
    check_model(zoo_dynamics.oscillator_energy, args, (0, 1),
                twin=twin(zoo_dynamics, "oscillator_energy"))


def test_fixed_point_solver():
    rs = rng(11)
    args = (0.4 * rs.randn(3, 3), np.zeros(3), rs.randn(3))
    check_model(zoo_dynamics.equilibrium_loss, args, (0,),
                twin=twin(zoo_dynamics, "equilibrium_loss"))


def test_fixed_point_sqrt():
    grads = check_model(zoo_dynamics.babylonian_sqrt, (2.0, 1.0), (0, 1),
                        twin=twin(zoo_dynamics, "babylonian_sqrt"))
    assert abs(grads[0] - 0.5 / np.sqrt(2.0)) < 1e-12
    assert abs(grads[1]) < 1e-12  # the start is forgotten


def test_fluid_step_with_roll():
    rs = rng(12)
    n = 6
    vx, vy = 0.5 * rs.randn(n, n), 0.5 * rs.randn(n, n)
    smoke = rs.rand(n, n)
    target = rs.rand(n, n)
    check_model(zoo_dynamics.fluid_loss, (vx, vy, smoke, target), (0, 1, 2),
                twin=twin(zoo_dynamics, "fluid_loss"), rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- forward mode, hvp
# The models that go through srcgrad, once more in forward mode (jvp) and
# with second derivatives (hvp: reverse mode over their generated tangent code).

def _vae_args():
    rs = rng(5)
    enc = [(0.3 * rs.randn(6, 5), 0.1 * rs.randn(5)), (0.3 * rs.randn(5, 4), 0.1 * rs.randn(4))]
    dec = [(0.3 * rs.randn(2, 5), 0.1 * rs.randn(5)), (0.3 * rs.randn(5, 6), 0.1 * rs.randn(6))]
    return enc, dec, (rs.rand(4, 6) > 0.5).astype(float), rs.randn(4, 2)


def _rnn_args(which):
    rs = rng(6)
    size, hidden = 4, 3
    if which == "lstm":
        def gate():
            return 0.3 * rs.randn(size + hidden + 1, hidden)
        params = {"init hiddens": 0.1 * rs.randn(1, hidden),
                  "init cells": 0.1 * rs.randn(1, hidden),
                  "change": gate(), "forget": gate(), "ingate": gate(), "outgate": gate(),
                  "predict": 0.3 * rs.randn(hidden + 1, size)}
    else:
        params = {name: 0.3 * rs.randn(*shape) for name, shape in [
            ("Wz", (size + hidden, hidden)), ("bz", (hidden,)), ("Wr", (size + hidden, hidden)),
            ("br", (hidden,)), ("Wh", (size + hidden, hidden)), ("bh", (hidden,)),
            ("Wo", (hidden, size)), ("bo", (size,))]}
    return (params, *_sequences(rs))


def _fluid_args():
    rs = rng(12)
    return 0.5 * rs.randn(5, 5), 0.5 * rs.randn(5, 5), rs.rand(5, 5), rs.rand(5, 5)


SECOND_ORDER = [
    pytest.param(zoo_mlp, "loss_no_flatten", _mlp_data, 0, id="mlp"),
    pytest.param(zoo_gp, "neg_log_marginal", _gp_data, 0, id="gp"),
    pytest.param(zoo_gp, "neg_log_marginal_triangular", _gp_data, 0, id="gp_triangular"),
    pytest.param(zoo_gp, "neg_log_marginal_scipy", _gp_data, 0, id="gp_scipy_cholesky"),
    pytest.param(zoo_gp, "neg_log_marginal_cho", _gp_data, 0, id="gp_cho_solve"),
    pytest.param(zoo_gmm, "gmm_log_likelihood", _gmm_data, 0, id="gmm_scipy"),
    pytest.param(zoo_gmm, "gmm_log_likelihood_by_hand", _gmm_data, 0, id="gmm_by_hand"),
    pytest.param(zoo_vae, "neg_elbo", _vae_args, 1, id="vae"),
    pytest.param(zoo_rnn, "lstm_log_likelihood", lambda: _rnn_args("lstm"), 0, id="lstm"),
    pytest.param(zoo_rnn, "gru_loss", lambda: _rnn_args("gru"), 0, id="gru"),
    pytest.param(zoo_dynamics, "equilibrium_loss",
                 lambda: (0.4 * rng(11).randn(3, 3), np.zeros(3), rng(12).randn(3)), 0,
                 id="fixed_point"),
    pytest.param(zoo_dynamics, "oscillator_energy", lambda: (1.7, np.array([1.0, 0.0])), 1,
                 id="ode_oscillator"),
    pytest.param(zoo_dynamics, "fluid_loss", _fluid_args, 2, id="fluid"),
    pytest.param(zoo_gp, "predictive_mean", lambda: (*_gp_data(), rng(3).randn(4, 2)), 0,
                 id="gp_predictive"),
    pytest.param(zoo_dynamics, "ode_loss", _ode_args, 0, id="ode_neural"),
    pytest.param(zoo_transformer, "lm_loss", _transformer_args, 0, id="transformer"),
    pytest.param(zoo_convnet, "convnet_loss", _convnet_data, 0, id="convnet"),
]

#: autograd's arrays take x.transpose(axes) but not x.transpose(0, 2, 1, 3)
#: and has no gradient for scipy.linalg.cholesky or cho_factor
#: and a list holding None
NO_AUTOGRAD = {"lm_loss", "neg_log_marginal_scipy", "neg_log_marginal_cho", "convnet_loss"}


@pytest.mark.parametrize("module, name, make, index", SECOND_ORDER)
def test_forward_mode(module, name, make, index):
    from zoo_check import check_forward
    check_forward(getattr(module, name), make(), index)


@pytest.mark.parametrize("module, name, make, index", SECOND_ORDER)
def test_hessian_vector_product(module, name, make, index):
    from zoo_check import check_hvp
    check_hvp(getattr(module, name), make(), index,
              twin=None if name in NO_AUTOGRAD else twin(module, name), rtol=1e-4, atol=1e-6)


POLICIES = ("recompute", "save_products", "sqrt", ("revolve", 2))


@pytest.mark.parametrize("module, name, make, index", SECOND_ORDER)
def test_every_policy_gives_the_same_gradient(module, name, make, index):
    """Saving, recomputing and checkpointing: the same value (checked bit for bit
    against the model's own with check=True) and the same gradient as 'save'."""
    from zoo_check import flat
    fn, args = getattr(module, name), make()
    _, expected = srcgrad.value_and_grad(fn, wrt=index)(*copy.deepcopy(args))
    for policy in POLICIES:
        _, got = srcgrad.value_and_grad(fn, wrt=index, policy=policy, check=True)(
            *copy.deepcopy(args))
        assert_close(flat(got), flat(expected), rtol=1e-12, atol=1e-13,
                     what=f"{name}, policy {policy!r}")
