"""Helpers of another module reading arrays from their globals or closure,
called by tests/api/test_called_globals.py after the caller updated its
argument in place: ``f(called_arrays.W)`` must see Python's values or be
refused, located."""

import numpy as np

W = np.array([1.0, 2.0, 3.0])


def weighted(v):
    return np.sum(v * W)


def lvl2(v):
    return weighted(v) * 1.0


def lvl3(v):
    return lvl2(v)


def lvl4(v):
    return lvl3(v)


def lvl5(v):
    return lvl4(v)


def make_reader(table):
    def reader(v):
        return np.sum(v * table)

    return reader
