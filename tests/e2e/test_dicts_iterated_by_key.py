"""A loop, a comprehension or a builtin over a dict that srcgrad cannot tell is a
dict where it is made (a helper's return value, an alias, a copy, a set).

A loop over a local variable ran by position (``range(len(d))``, ``k = d[i]``)
unless the variable was bound to a dict display: ``params = init(x); for k in
params`` raised a raw KeyError, and a dict with int keys 0..n-1 gave a silently
wrong value and gradient; ``sum(d)`` differentiated the values while the
function adds the keys; ``a, b = d`` bound the values (findings R1-1, R1-9,
R1-10, reviewer R1; exposed further by helpers inlined for their updates and by
dict comprehensions).  A local that some binding may make something other than
a list, tuple or array is now listed first (``sequence(d)``: a dict's keys),
``sum`` of a dict gives its keys no derivative, and unpacking a dict or set is
refused, located.
"""
import numpy as np
import pytest
from numeric import check_every_policy

import dict_iteration_fns as fns
import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1, 0.5])

PROGRAMS = [fns.str_keys_from_a_helper, fns.int_keys_from_a_helper, fns.an_alias, fns.a_copy,
            fns.a_set, fns.training_loop, fns.comprehension_in_a_helper,
            fns.zipped_and_enumerated, fns.builtins_of_keys]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp_against_differences(fn):
    check_every_policy(fn, (X,))
    check_every_policy(fn, (X[::-1].copy(),))


def test_the_reviewers_values():
    # int keys 0..2 from a helper: Python's 1.5 + sum of the values, not the values twice
    assert srcgrad.value_and_grad(fns.int_keys_from_a_helper)(X)[0] == \
        fns.int_keys_from_a_helper(X)
    np.testing.assert_allclose(srcgrad.grad(fns.builtins_of_keys)(X),
                               [3.0, 2.0 + 0.0, 2.0, 3.0], rtol=1e-12)


def test_unpacking_a_dict_is_refused_located():
    for run in (lambda: srcgrad.grad(fns.unpacked)(X),
                lambda: srcgrad.jvp(fns.unpacked, wrt=[0])(X, X)):
        with pytest.raises(UnsupportedSyntaxError, match="unpack list") as info:
            run()
        assert info.value.lineno is not None
