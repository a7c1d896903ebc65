"""A global list of layer objects the differentiated function loops over,
whose items are replaced by objects of another class after the code was made.

The code is made for the classes the list held (one branch per class) and
checks each object's class as it runs; an object of another class raised a
raw TypeError from that check.  It is now a SrcGradError located at the call
(``layer.forward(x)``), saying why and what to do (pass the list as an
argument: the code is then made for the classes of each list passed).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad


class Dense:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(self.w * x)


class Scale:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return self.w * x


LAYERS = [Dense(0.5), Dense(2.0)]
X = np.array([0.1, 0.2, -0.4])


def run_global(x):
    for layer in LAYERS:
        x = layer.forward(x)
    return np.sum(x)


def run_passed(layers, x):
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x)


def test_replaced_items_raise_a_located_srcgrad_error():
    saved = list(LAYERS)
    try:
        check(run_global, (X,))
        g = srcgrad.grad(run_global)
        g(X)
        LAYERS[0] = Scale(3.0)
        for run in (lambda: g(X), lambda: srcgrad.grad(run_global)(X),
                    lambda: srcgrad.jvp(run_global, (X,), (np.ones(3),))):
            with pytest.raises(srcgrad.SrcGradError) as info:
                run()
            err = info.value
            assert err.filename == __file__
            assert err.lineno == run_global.__code__.co_firstlineno + 2
            assert "layer.forward(...)" in err.message and "pass the list as an argument" \
                in err.message
    finally:
        LAYERS[:] = saved


def test_the_list_passed_gets_code_for_its_classes():
    check(run_passed, ([Dense(0.5), Dense(2.0)], X), wrt=1)
    check(run_passed, ([Scale(3.0), Dense(2.0)], X), wrt=1)
