"""Programs srcgrad once compiled wrong or refused (issue 13), one per class of
bug, as users write them; tests/e2e/test_miscompiles.py checks each one."""

import numpy as np


# --- parallel assignment inside loops: the forward sweep read `a = b; b = a` --------

def swap_in_loop(x):
    a = x * 2.0
    b = np.sin(x)
    for i in range(3):
        a, b = b, a
    return np.sum(a) + np.sum(b ** 2)


def rotation_in_loop(x):
    a, b, c = x * 2.0, np.sin(x), x ** 2
    for i in range(4):
        a, b, c = b, c, a
    return np.sum(a) + np.sum(b ** 2) + np.sum(c * a)


def previous_value(x):
    y, y_prev = x, x * 0.5
    for i in range(3):
        y, y_prev = np.sin(y) + y_prev, y
    return np.sum(y * y_prev)


def swap_in_branch(x):
    a, b = x * 2.0, np.cos(x)
    if np.sum(x) > -100.0:
        a, b = b, a
    return np.sum(a * 3.0 + b)


def unpack_own_tuple(x):
    t = (x, x * 2.0)
    for i in range(2):
        u, t = t
        t = (t * 1.5, u)
    return np.sum(t[0] * t[1])


def nested_unpacking(x):
    (p, q), r = (x, x * 2.0), np.sin(x)
    for i in range(2):
        (p, q), r = (q, r), p
    return np.sum(p * q + r)


def chained_in_loop(x):
    a = b = x
    for i in range(2):
        a = b = np.sin(a) + b
    return np.sum(a * b)


# --- tuple and list concatenation: differentiated as array addition ---------------

def tuple_concatenation(p, q):
    return np.sum(np.hstack((p,) + (q,)) ** 2)


def list_concatenation(p, q):
    return np.sum(np.hstack([p] + [q]) ** 2)


def list_repetition(p, q):
    return np.sum(np.stack([p] * 2 + 2 * [q * 2.0]) ** 2)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones(2),))
    return cat_state @ weights


def rnn(weights, x):
    h = np.zeros(3)
    for t in range(3):
        h = np.tanh(concat_and_multiply(weights, x * t, h))
    return np.sum(h ** 2)


# --- loops over slices of a list of parameters, empty ones too --------------------

def empty_slice_loop(x):
    ps = [x, x * 2.0]
    s = np.sum(x)
    for w in ps[1:-1]:
        s = s * np.sum(w)
    for w in ps[1:]:
        s = s + np.sum(w ** 2)
    return s


# --- a list of the values a rebound name took ---------------------------------------

def append_then_rebind(y):
    ys = [y]
    for k in range(3):
        y = y * 1.5
        ys.append(y)
    return np.sum(ys[0] * ys[-1]) + np.sum(ys[1])


# --- a dict of an array and an int as loop state ------------------------------------

def dict_state(x):
    state = {"h": x, "k": 0}
    for k in range(3):
        state["h"] = np.sin(state["h"])
        state["k"] = k
    return np.sum(state["h"]) * state["k"]


# --- += on immutable values: a float, a NumPy scalar -------------------------------

def float_update(x, s):
    t = s
    t += 1.0
    return np.sum(x) * t * s


def numpy_scalar_update(v):
    a = v[3]
    a += np.sum(v)
    a *= 2.0
    return a * v[0] + np.sum(v)


def array_update_shared(v):
    """``a += 1.0`` changes ``v`` too: a real sharing, refused."""
    a = v[1:]
    a += 1.0
    return np.sum(v * a[0])


# --- complex intermediates ------------------------------------------------------------

def complex_intermediate(x):
    z = x * (1 + 2j)
    return np.sum(np.abs(z) ** 2)


def complex_exponential(x):
    z = np.exp(1j * x) * (x + 0.5j)
    return np.sum(np.abs(z + 1.0))


# --- a, b = f(a, b): the call's arguments read before the targets are bound ---------

def pair(a, b):
    return a * b, a + b


def call_into_its_arguments(x, y):
    a, b = pair(x, y)
    a, b = pair(a, b)
    return np.sum(a * b)


def call_into_its_arguments_in_loop(x, y):
    a, b = x, y
    for i in range(3):
        a, b = pair(a, b)
        a, b = np.tanh(a), np.tanh(b)
    return np.sum(a * b)


# --- a dict iterated in sorted order and updated --------------------------------------

def sorted_dict_update(x):
    d = {"w": x, "b": np.ones(3)}
    for k in sorted(d):
        d[k] = d[k] * 2.0
    return np.sum(d["w"] * d["b"])


# --- a view read after an update of elements it does not hold -------------------------

def disjoint_view_update(x):
    y = x * 1.0
    v = y[1:]
    s = np.sum(v)
    y[0] = 5.0
    w = y[:2]
    return s + np.sum(w * v)


def overlapping_view_update(x):
    """``y[2] = 0.0`` changes ``r``, a view of ``y``: taken again after the update."""
    y = x * 1.0
    r = y[1:]
    y[2] = 0.0
    return np.sum(r)


# --- checkpointed loops and the loop's own variables ----------------------------------

def loop_index_read_after_a_dead_loop(x):
    r = x * 0.05
    for k in range(2):
        r = r * 0.5
    return np.sum(x) * 0.5 ** k


def rebound_in_loop_read_by_an_earlier_adjoint(x):
    """``x`` is rebound in the loop without being read there; the adjoint of
    ``np.max`` before the loop needs its value from before the loop."""
    m = np.max(x, axis=0)
    for k in range(3):
        x = np.tanh(m + 0.5 * k)
    return np.sum(x) + np.sum(m)


def defined_only_inside_a_nested_loop(x):
    hist = [x]
    total = 0.0
    for k in range(3):
        n = 0
        while np.sum(hist[-1]) > -1e9 and n < 2:
            for j in range(2):
                inner = [x * (j + 1.0)]
            inner.append(np.sin(hist[-1]))
            n += 1
        hist.append(inner[-1] * 0.5)
        total = total + np.sum(inner[0] * hist[-1])
    return total


# --- a parameter overwritten in a loop before any read --------------------------------

def parameter_overwritten_in_loop(x, s):
    h = x * 0.5
    k = 0
    for j in range(3):
        s = 0.5 ** k
        h = 0.5 * h + np.sqrt(s ** 2 + 1.0)
        k += 1
    return np.sum(h)


# --- chained assignment to elements ------------------------------------------------------

def chained_element_assignment(x, y):
    st = {"h": y, "k": 0}
    a = st["h"] = np.tanh(x[0])
    b, c = d = (x[1], y)
    for i in range(2):
        a = st["h"] = np.sin(st["h"]) + a
    return np.sum(a * st["h"] * b * c) + np.sum(d[0])


def item_update_seen_by_a_view(x):
    """``d['h'] *= 0.5`` changes the array ``d['h']`` holds, which ``v`` views."""
    d = {"h": np.cos(x)}
    v = d["h"][1:]
    d["h"] *= 0.5
    return np.sum(v)


def update_through_a_view(x):
    """``r[0] = 3.0`` changes ``y`` through the view ``r``: written back."""
    y = x * 1.0
    r = y[1:]
    w = y[:2]
    r[0] = 3.0
    return np.sum(y * y) + np.sum(w)


def two_updates_seen_by_a_view(x):
    """``v`` views ``m``, updated twice with ``*=`` and ``+=``: taken again after each."""
    m = np.cos(x)
    v = m[1:]
    t = np.max(v * 0.5)
    m *= 0.5
    m += 0.5 * np.tanh(x)
    return np.mean(v) - t + np.sum(m)


# --- a loop's variable read after the loop, in a called function -----------------------

def _last_of_loop(b):
    for k in range(2):
        b = np.sin(b)
    return np.tanh(b[k % 3])


def loop_variable_after_the_loop_in_a_callee(x, s):
    return np.sum(_last_of_loop(x * s))


# --- a view made later in a loop's body, read on the next iteration --------------------

def view_made_later_in_the_loop(x, y, s):
    u = x @ y
    c = s
    for i in range(2):
        u *= s
        for j in range(2):
            c = u[2]
    c, s = s, c
    return c * s


def view_from_the_last_iteration_and_an_earlier_loop(x):
    """``y`` (a row of ``h``, itself ``m``) made at the end of each iteration is
    changed by ``m *= 0.5`` at the start of the next; an assignment of ``y`` in an
    earlier loop does not break that.  Refused, not miscompiled."""
    y = x[0]
    for i in range(2):
        y = np.tanh(y)
    h = m = np.tanh(x)
    for j in range(3):
        m *= 0.5
        t = np.sum(y)
        y = h[1]
    return np.sum(y) + t


# --- a loop's variable read after the loop, inside an enclosing loop --------------------

def inner_loop_variable_read_after_it(x, y, s):
    """The adjoint's backward inner loop rebinds ``n``; the adjoint of ``x[n] * y``
    in the earlier outer iterations needs the value the forward loop left."""
    for k in range(2):
        for n in range(2):
            s = s * 1.0
        y = x[n] * y
    return np.sum(y)


# --- a checkpointed loop whose state holds two names for one array ---------------------

def two_names_updated_in_a_checkpointed_loop(x, s):
    """Under 'sqrt'/'revolve' the loop reruns from snapshots, which must keep ``h``
    and ``m`` one array (and a view a view) as the first run had them."""
    h = m = np.tanh(x)
    v = h[1]
    for i in [1.0, 2.0]:
        h *= 0.5
        h += x * s
    return np.sum(m ** 2) + np.sum(v)


# --- found by a review: each is followed correctly, or refused; never wrong -----------

def list_copy_sees_item_store(x):
    xs = [x * 1.0]
    ys = xs
    xs[0] = x * x
    return np.sum(ys[0])


def dict_copy_sees_item_store(x):
    d = {"a": x * 1.0}
    e = d
    d["a"] = x * x
    return np.sum(e["a"])


def list_copy_sees_extend(x):
    xs = [x * 1.0]
    ys = xs
    xs += [x * 2.0]
    return np.sum(np.stack(ys))


def item_of_list_updated_through_it(x):
    y = x * 1.0
    xs = [y]
    t = xs[0]
    t[0] = t[1] * 3.0
    return np.sum(y * y)


def base_rebound_to_another_window(x):
    y = x * 1.0
    r = y[1:]
    if x[0] > 0:
        y = y[::-1]
    y[0] = y[1] * 5.0
    return np.sum(r * r * np.arange(5.0))


def base_rebound_then_augmented(x):
    y = x * np.arange(1.0, 7.0)
    r = y[1:]
    z = y
    if x[0] > 0:
        y = y[::-1]
    y += x
    return np.sum(r * r * np.arange(5.0)) + np.sum(z * np.arange(6.0))


def other_item_sees_item_update(x):
    y = x * 1.0
    xs = [y, y[1:]]
    xs[0] += x
    return np.sum(xs[1] * xs[1])


def dict_holding_a_list_extended(x):
    xs = [x * 1.0]
    d = {"k": xs}
    xs += [x * 2.0]
    return np.sum(np.stack(d["k"]))


def arrays_of_a_list_updated_in_a_loop(x):
    """``w *= 0.5`` changes the array the list holds: ``ps`` shows it (stored back)."""
    ps = [np.sin(x), np.exp(-x)]
    for w in ps:
        w *= 0.5
        w += np.tanh(np.sum(np.stack(ps)))
    return np.sum(np.stack(ps) ** 2)


def arrays_of_zipped_lists_updated(x):
    """The same through ``enumerate(zip(...))`` targets."""
    ps = [np.sin(x), np.exp(-x)]
    qs = [np.cos(x), x * 2.0]
    for k, (a, b) in enumerate(zip(ps, qs)):
        a *= 0.5 ** k
        b -= a
    return np.sum(np.stack(ps) * np.stack(qs))


def appended_then_updated(x):
    """``hist.append(h); h *= 0.5``: the list holds the array, which changes."""
    hist = []
    h = x * 1.0
    for k in range(3):
        h = np.sin(h) + k
        hist.append(h)
        h *= 0.5
    return np.sum(np.stack(hist) ** 2) + np.sum(h)


def dict_item_updated_through_a_name(x):
    """``a = d['h']; a *= 0.5``: the dict shows the change."""
    d = {"h": np.sin(x), "k": 0}
    a = d["h"]
    a *= 0.5
    return np.sum(d["h"] ** 2) + np.sum(a)


def view_after_an_early_return(x, s):
    """An early return copies the rest of the function into both branches: each
    copy's view is taken again after its own update."""
    if s > 5.0:
        return np.sum(x)
    v = np.concatenate([np.tanh(x), 0.1 * x])[1:][:4]
    r = v[:, None]
    for k in range(2):
        v *= 0.5
        v += np.tanh(r[k, 0])
    return np.sum(r ** 2) + np.sum(v)



def loop_over_a_slice_of_a_rebound_list(x, s):
    """``for a in hist[1:]`` with ``hist`` rebound in the loop: under 'recompute' the
    adjoint of the loop's sequence compared two recomputed objects by identity."""
    hist = [0.5 * s] + [np.tanh(x[1] ** 2)]
    for a in hist[1:]:
        hist = hist + [np.log(1.0 + s ** 2)]
        return np.sum(x / (1.0 + a ** 2))
    return s


def chained_names_updated_in_a_loop(x):
    """``v = g = ...; g *= 0.5`` in a loop: ``v`` is the same array, and stays so
    (the loop's own ``g = g * 0.5`` hid the copy ``g = v`` from the check)."""
    v = g = np.tanh(x)
    for k in range(3):
        view = g[1:]
        g *= 0.5
        g += 0.5 * np.tanh(v)
        t = np.mean(view)
    return np.sum(v) + np.sum(g) + t


def items_of_a_slice_of_a_list_updated(x):
    """``for w in hist[1:]: w *= 0.5``: the slice and the list hold the same arrays."""
    hist = [np.sin(x), np.cos(x), x * 2.0]
    for w in hist[1:]:
        w *= 0.5
        w += np.tanh(hist[0])
    return np.sum(np.stack(hist) ** 2)


def loop_state_read_by_an_earlier_checkpointed_loop(x):
    """The second loop rebinds ``h``, which the first loop reads; no adjoint needs
    the old ``h``, so no tape restores it: under 'sqrt' and 'revolve' the first
    loop reran with the second loop's last ``h`` until the adjoint of a
    checkpointed loop left its state as it was before the loop."""
    h = np.sin(x)
    sh = x
    for c in range(1):
        sh = np.tanh(sh + np.tanh(h))
    ps = [h, x * 0.5, h]
    for w in ps[1:]:
        for k in range(2):
            h = sum(ps)
            w = 0.05 * (x - w * sh)
            ps.append(w)
    return np.sum(np.sin(h))


def view_handed_on_by_a_swap(x):
    """``y = h[k]`` made last iteration, then ``y, w = w, y``: ``y`` is rebound, but
    ``w`` now holds the view, and sees ``m *= 0.5`` (``m`` is ``h``)."""
    h = m = np.tanh(np.outer(x[:3], x[:4]))
    y = w = x[:4] * 1.0
    for k in range(3):
        y, w = w, y
        m *= 0.5
        m += np.sin(w)
        y = h[k % 3]
    return np.sum(w) + np.sum(y) + np.sum(h)


def concatenated_list_holds_a_view(x):
    """``ps = [a] + [z[1:]]``: the concatenation holds the view, which sees ``z += 1``."""
    z = np.tanh(x)
    ps = [z * 2.0] + [z[1:]]
    for k in range(2):
        z += 1.0
        y = np.sum(ps[1])
    return y + np.sum(z)


def list_copy_holds_the_array(x):
    """``ps = list(qs)`` holds the arrays ``qs`` holds: ``z *= 2`` changes ``ps[0]``."""
    z = np.tanh(x)
    ps = list([z, x])
    z *= 2.0
    return np.sum(ps[0] * ps[1])


def list_holds_a_view_of_the_updated_array(x):
    """``hist = [..., z[2], ...]; z *= 0.5``: the view ``hist[1]`` sees the update;
    taken again and stored back into the list."""
    z = np.outer(x[:3], x) * 1.0
    hist = [np.max(z, axis=0), z[2], x * 0.5]
    for k in range(2):
        z *= 0.5
        z += 0.5 * np.tanh(z)
        y = np.sum(hist[1] * hist[0]) + np.sum(hist[2])
    return y + np.sum(z)


def views_of_a_dict_item_updated_in_place(x):
    """``v = d['h'].T; r = d['h'].reshape(2, 6); d['h'] *= 0.5``: both views see the
    update; each is compared with the same view of the updated array."""
    d = {"h": np.outer(x[:3], x), "k": 0}
    for k in range(2):
        v = d["h"].T
        r = d["h"].reshape(2, 6)
        t = np.mean(v ** 2)
        d["h"] *= 0.5
        d["h"] += np.tanh(d["h"])
        t2 = np.mean(v) - t + np.sum(r[1])
    return t2


def other_container_sees_an_item_update(x):
    """``d['k'] += 1.0`` changes the array ``e`` holds too: stored back into ``e``."""
    a = x * 1.0
    d = {"k": a}
    e = [a]
    d["k"] += 1.0
    return np.sum(e[0] * x)


def list_item_assigned_then_updated(x):
    """``ws[0] = y; y += 1.0``: the list holds ``y``, and shows the update."""
    ws = [x * 0.0]
    y = x * 1.0
    ws[0] = y
    y += 1.0
    return np.sum(ws[0] * x)


def element_assignment_to_an_array_a_list_holds(x):
    """``w = ws[0]; w[1] = ...``: refused (storing ``w`` back into ``ws`` after an
    in-place update broke the adjoint's restores)."""
    ws = [x * 1.0]
    q = np.sin(ws[0])
    w = ws[0]
    w[1] = w[1] * 1.5 + x[0]
    return np.sum(q) + np.sum(ws[0] * x)


def element_assignment_seen_by_a_view_a_list_holds(x):
    y = np.outer(x, x)
    hist = [y[1]]
    q = np.sin(hist[0])
    y[1, 0] = x[2] * 3.0
    return np.sum(q) + np.sum(hist[0] * x)


def element_assignment_in_a_checkpointed_loop_to_a_held_array(x):
    ws = [x * 1.0]
    for i in range(6):
        w = ws[0]
        w[1] = np.sin(w[1]) * 1.2 + x[0] * 0.1
    return np.sum(np.sin(ws[0]) * x)


def loop_over_a_list_it_appends_to(x):
    """Python's loop would go on over the appended items: refused, not miscompiled."""
    ws = [x * 1.0]
    for w in ws:
        if len(ws) < 3:
            ws.append(w * 2.0)
    return np.sum(np.stack(ws))


def view_before_a_checkpointed_loop_that_updates_its_base(x):
    """``r = y[1:]`` read by an adjoint, then a loop changing ``y`` in place: under
    'sqrt' and 'revolve' the reruns restored only snapshot copies, never ``y``'s
    own memory, and the adjoint of ``r * r`` read the values after the loop."""
    y = x * 1.0
    r = y[1:]
    q = r * r
    for i in range(4):
        y[1] = y[1] * 1.5 + x[0]
    return np.sum(q) + np.sum(y * x)


def view_before_a_checkpointed_while_loop_that_updates_its_base(x):
    y = x * 1.0
    r = y[1:]
    q = np.sin(r)
    k = 0
    while k < 3:
        y[1] = np.sin(y[1]) * 1.5 + x[0]
        k += 1
    return np.sum(q) + np.sum(y * x)


def dict_built_by_item_assignment(x):
    """``d = {}; d['a'] = ...``: the forward sweep saved ``d['a']`` before the first
    assignment, a key the dict did not have yet (a raw KeyError)."""
    d = {}
    d["a"] = x * 2.0
    for k in range(2):
        d["b"] = np.sin(d["a"]) + k
        d["a"] = d["a"] * d["b"]
    return np.sum(d["a"] * d["b"])


# --- x += v keeps what NumPy's update in place keeps: a 0-d array, a float32 array -----
#
# ``x += v`` writes into the array ``x``; ``x + v`` of 0-d arrays is a NumPy scalar,
# and of a float32 and a float64 array a float64 one.  Each was compiled to
# ``x_1 = x + v``: the value's type or dtype was not the function's.

def zero_d_array_plus_itself(x):
    """Found by the fuzzer (test_focused_constructs[arg_index_update])."""
    v = np.where(x > 0.5, x, x)
    v += v
    return v


def zero_d_array_every_operator(x):
    v = np.where(x > 0.0, x, 2.0 * x)
    v *= x
    v -= 0.5
    v /= 1.5
    v **= 2
    v += np.sin(v)
    return v


def zero_d_array_updated_in_a_loop(x):
    h = np.array(x)
    for _ in range(3):
        h += 0.3 * np.tanh(h)
        h *= 0.9
    return h


def zero_d_array_in_a_branch(x, y):
    h = np.where(x > 0.0, x, 2.0 * x)
    if x > 0.0:
        h *= y
    else:
        h -= y
    return h


def zero_d_array_shared_by_two_names(x):
    """``u`` is ``t``: both see the update, and both stay 0-d arrays.  (``u`` is
    copied: returned as it is, the update is not followed -- another bug, of aliases
    read only by the return.)"""
    t = np.where(x > 0.0, x, x)
    u = t
    t += x
    return np.array(u)


def zero_d_array_a_dict_holds(x):
    d = {"h": np.where(x > 0.0, x, x)}
    d["h"] += x
    d["h"] *= 2.0
    return d["h"]


def zero_d_array_elements(x):
    """``y[...] *= x``, ``y[()] += 1.0``: element updates keep ``y`` an array.  (A copy
    is returned: the adjoint sweep restores ``y``'s elements in place, and a value
    that is ``y`` itself would change with them -- another bug, of element updates.)"""
    y = np.where(x > 0.0, x, 2.0 * x)
    y[...] *= x
    y[()] += 1.0
    return np.array(y)


def float32_array_plus_float64(x):
    """``y += x`` on a float32 ``y``: NumPy rounds the float64 sum into ``y``."""
    y = np.zeros(x.shape, dtype=np.float32)
    y += x
    y *= x
    return np.sum(y)
