"""Data-generating processes and head configurations shared by the checks and notebooks.

A :class:`DGP` is the regression model ``y = f(x) + eps``, ``x ~ p`` (the design density),
``eps ~ N(0, sigma^2)``; :func:`make_dgp` builds the named processes, :func:`head_projections` ``H``
projections ``(H, d, d_k)`` with orthonormal columns and a prescribed geometry (overlap of two heads,
SPEC: ``rho_hh' = ||U_h^T U_h'||_F^2 / d_k``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from verify._validate import fail, finite_number, fits_in_memory, memory_error_as, positive_int, positive_number
from verify._validate import one_of, received
from verify._validate import seed as valid_seed

__all__ = ["DGP", "make_dgp", "DGP_NAMES", "DESIGN_NAMES", "head_projections", "HEAD_KINDS", "haar_frame",
           "TORUS_RADIUS", "SIN_BLOCK_VAR"]


@dataclass(frozen=True)
class DGP:
    """Regression model ``y = f(x) + eps``, ``x ~ p``, ``eps ~ N(0, sigma^2)``.

    ``f`` maps ``(..., d) -> (...)``; ``sample_x(rng, shape)`` returns design points of shape
    ``(*shape, d)`` drawn from ``p`` with the numpy Generator ``rng``.
    """

    name: str
    d: int
    sigma: float
    f: Callable[[np.ndarray], np.ndarray]
    sample_x: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
    description: str = ""
    #: the design density's name and the target's extra parameters (``freq``, ``width``), as built
    design: str = "normal"
    params: tuple[tuple[str, float], ...] = ()


def _normal_design(d: int) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    return lambda rng, shape: rng.standard_normal((*shape, d))


def _uniform_design(d: int) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    half = math.sqrt(3.0)  # U[-sqrt3, sqrt3] has unit variance, like N(0, 1)
    return lambda rng, shape: rng.uniform(-half, half, (*shape, d))


#: Radius of each circle of the torus design: sqrt(2) gives every coordinate unit variance.
TORUS_RADIUS = math.sqrt(2.0)


def _torus_design(d: int) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    # each coordinate pair (2b-1, 2b) at r (cos t_b, sin t_b), t_b ~ U[0, 2 pi) i.i.d.: a head keeping
    # whole circles has keys of equal norm, so its softmax kernel is a local (von Mises) smoother (C1)
    def sample_x(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        t = rng.uniform(0.0, 2.0 * math.pi, (*shape, d // 2))
        x = np.empty((*shape, d))
        x[..., 0::2] = TORUS_RADIUS * np.cos(t)
        x[..., 1::2] = TORUS_RADIUS * np.sin(t)
        return x

    return sample_x


_DESIGNS = {
    "normal": (_normal_design, "x ~ N(0, I_d)"),
    "uniform": (_uniform_design, "x ~ U[-sqrt(3), sqrt(3)]^d (unit variance per coordinate)"),
    "torus": (_torus_design, "x on the torus: each coordinate pair uniform on a circle of radius sqrt(2) "
                             "(unit variance per coordinate, equal norms of whole-circle keys)"),
}
#: Designs that need an even dimension d (coordinate pairs).
_EVEN_DESIGNS = ("torus",)


def _single_index(d: int, freq: float = 2.0) -> tuple[Callable, str]:
    return lambda x: np.sin(freq * x[..., 0]), f"f(x) = sin({freq:g} x_1)"


def _additive(d: int) -> tuple[Callable, str]:
    root_d = math.sqrt(d)
    return lambda x: np.sin(x).sum(axis=-1) / root_d, "f(x) = sum_j sin(x_j) / sqrt(d)"


def _bump(d: int, width: float = 1.0) -> tuple[Callable, str]:
    two_w2 = 2.0 * width * width
    return lambda x: np.exp(-np.sum(x * x, axis=-1) / two_w2), f"f(x) = exp(-||x||^2 / (2 * {width:g}^2))"


def _linear(d: int) -> tuple[Callable, str]:
    return lambda x: np.array(x[..., 0], dtype=float, copy=True), "f(x) = x_1"


def _pairs(d: int, name: str) -> int:
    if d % 2:
        raise fail("d", received(d), f"an even dimension (the {name!r} target is a sum over coordinate pairs)")
    return d // 2


def _block(d: int) -> tuple[Callable, str]:
    # disjoint 2-d blocks, Var f = 1 under N(0, I), no linear part: H = B heads of d_k = 2 must
    # specialise, one block each (C9's positive control)
    c = 1.0 / math.sqrt(_pairs(d, "block"))
    return lambda x: c * np.sum(x[..., 0::2] * x[..., 1::2], axis=-1), "f(x) = sum_b x_(2b-1) x_(2b) / sqrt(d/2)"


#: Var of sin(X_1) sin(X_2) for X ~ N(0, I_2): (E sin^2 X)^2 = ((1 - e^-2)/2)^2.
SIN_BLOCK_VAR = ((1.0 - math.exp(-2.0)) / 2.0) ** 2


def _sin_block(d: int) -> tuple[Callable, str]:
    # disjoint 2-d blocks again, bounded, Var f = 1 under N(0, I), no linear or constant part
    c = 1.0 / math.sqrt(_pairs(d, "sin-block") * SIN_BLOCK_VAR)
    return (lambda x: c * np.sum(np.sin(x[..., 0::2]) * np.sin(x[..., 1::2]), axis=-1),
            "f(x) = sum_b sin(x_(2b-1)) sin(x_(2b)) / sqrt(d/2 * ((1 - e^-2)/2)^2)")


def _zero(d: int) -> tuple[Callable, str]:
    return lambda x: np.zeros(np.shape(x)[:-1]), "f(x) = 0 (noise only)"


# name -> (builder, accepted extra parameters)
_REGISTRY: dict[str, tuple[Callable[..., tuple[Callable, str]], tuple[str, ...]]] = {
    "single-index": (_single_index, ("freq",)),
    "additive": (_additive, ()),
    "bump": (_bump, ("width",)),
    "linear": (_linear, ()),
    "block": (_block, ()),
    "sin-block": (_sin_block, ()),
    "zero": (_zero, ()),
}
DGP_NAMES = tuple(_REGISTRY)
DESIGN_NAMES = tuple(_DESIGNS)


def make_dgp(name: str, d: int = 4, sigma: float = 0.5, *, design: str = "normal", **params: Any) -> DGP:
    """The named process (:data:`DGP_NAMES`, extra parameters ``freq`` of ``single-index`` and ``width``
    of ``bump``) in dimension ``d`` with noise sd ``sigma`` on the design density ``design``
    (:data:`DESIGN_NAMES`: ``normal``, ``uniform`` with unit variance, or ``torus``, even d)."""
    one_of("name", name, DGP_NAMES)
    d = positive_int("d", d)
    sigma = finite_number("sigma", sigma, minimum=0.0, strict_minimum=True)   # a noise standard deviation
    one_of("design", design, _DESIGNS)
    if design in _EVEN_DESIGNS and d % 2:
        raise fail("d", received(d), f"an even dimension (design {design!r} pairs the coordinates)")
    builder, accepted = _REGISTRY[name]
    for key, value in params.items():
        if key not in accepted:
            raise fail(f"{name} parameter {received(key)}", received(value),
                       f"one of {accepted}" if accepted else "no extra parameters")
    values = {k: positive_number(f"{name} parameter {k!r}", v) for k, v in params.items()}
    f, f_text = builder(d, **values)
    make_sampler, design_text = _DESIGNS[design]
    return DGP(name=name, d=d, sigma=sigma, f=f, sample_x=make_sampler(d),
               description=f"{f_text}, {design_text}, eps ~ N(0, {sigma:g}^2)", design=design,
               params=tuple(sorted(values.items())))


HEAD_KINDS = ("orthogonal", "identical", "random", "overlap", "aligned", "coordinate")


def haar_frame(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    """A Haar-distributed ``(d, k)`` orthonormal frame: QR of a Gaussian matrix with the signs
    of ``diag(R)`` moved into ``Q`` (without the fix, QR's sign convention biases the law)."""
    q, r = np.linalg.qr(rng.standard_normal((d, k)))
    signs = np.where(np.diag(r) < 0, -1.0, 1.0)
    return q * signs


def _overlap_family(frame: np.ndarray, H: int, d_k: int, rho: float) -> np.ndarray:
    # U_h = cos(t) A + sin(t) B_h with A = frame block 0, B_h = frame block h+1 (all mutually
    # orthogonal): U_h^T U_h = I, U_h^T U_h' = cos^2(t) I, so rho = cos^4(t).
    cos_t = rho ** 0.25
    sin_t = math.sqrt(max(0.0, 1.0 - cos_t * cos_t))
    A = frame[:, :d_k]
    return np.stack([cos_t * A + sin_t * frame[:, (h + 1) * d_k:(h + 2) * d_k] for h in range(H)])


def head_projections(kind: str, H: int, d: int, d_k: int, *, rng: np.random.Generator | int | None = None,
                     rho: float | None = None) -> np.ndarray:
    """``H`` projections ``(H, d, d_k)`` with orthonormal columns: ``orthogonal`` (the blocks of one Haar
    frame, H d_k <= d), ``identical`` (one Haar frame repeated), ``random`` (independent Haar frames),
    ``overlap`` (``U_h = cos t A + sin t B_h`` with A, B_h blocks of one Haar frame, so every pair has
    ``rho = cos^4 t``; (H+1) d_k <= d), ``aligned`` (that family on the coordinate frame: as rho -> 0 the
    heads turn away from ``e_1``, the C5 counterexample path) or ``coordinate`` (head h spans its own
    d_k coordinates; only head 1 sees ``e_1``). ``rng`` (a Generator or int seed) for the random kinds."""
    if not isinstance(kind, str) or kind not in HEAD_KINDS:
        raise fail("kind", received(kind), f"one of {', '.join(map(repr, HEAD_KINDS))}")
    H = positive_int("H", H)
    d = positive_int("d", d)
    d_k = positive_int("d_k", d_k)
    if d_k > d:
        raise fail("d_k", d_k, f"d_k <= d = {d}")
    needs_rho = kind in ("overlap", "aligned")
    if needs_rho:
        # compared as given (Python compares an int with a float exactly), converted only inside [0, 1]
        if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not (0 <= rho <= 1):
            raise fail("rho", received(rho), f"a pairwise overlap in [0, 1] (required by kind={kind!r})")
        rho = float(rho)
    elif rho is not None:
        raise fail("rho", received(rho), f"None (kind={kind!r} has no overlap parameter)")
    if kind in ("orthogonal", "coordinate") and H * d_k > d:
        raise fail("H, d_k", f"H*d_k = {H}*{d_k} = {H * d_k} > d = {d}",
                   f"H*d_k <= d: {H} mutually orthogonal {d_k}-dim subspaces need {H * d_k} dimensions")
    if needs_rho and (H + 1) * d_k > d:
        raise fail("H, d_k", f"(H+1)*d_k = {(H + 1) * d_k} > d = {d}",
                   f"(H+1)*d_k <= d: kind={kind!r} uses a shared block and {H} private blocks of width {d_k}")

    # the result and the frame it is cut from: at most (H + 1) d d_k float64 values each
    size = f"H = {H}, d = {d}, d_k = {d_k}: (H + 1) d d_k = {(H + 1) * d * d_k} float64 values, twice"
    fits_in_memory("H, d, d_k", 16 * (H + 1) * d * d_k, size)
    with memory_error_as("H, d, d_k", size):
        return _build(kind, H, d, d_k, rng, rho)


def _build(kind: str, H: int, d: int, d_k: int, rng: Any, rho: float | None) -> np.ndarray:
    if kind in ("aligned", "coordinate"):
        if kind == "coordinate":  # columns (h-1) d_k .. h d_k of the identity
            out = np.zeros((H, d, d_k))
            for h in range(H):
                out[h, h * d_k:(h + 1) * d_k, :] = np.eye(d_k)
            return out
        return _overlap_family(np.eye(d, (H + 1) * d_k), H, d_k, rho)  # the first (H+1) d_k columns of I_d

    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, bool):
        rng = np.random.default_rng(valid_seed("rng", rng))
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", received(rng), f"a numpy Generator or a non-negative int seed (kind={kind!r} is random)")
    if kind == "orthogonal":
        return haar_frame(rng, d, H * d_k).reshape(d, H, d_k).transpose(1, 0, 2).copy()
    if kind == "identical":
        return np.repeat(haar_frame(rng, d, d_k)[None], H, axis=0)
    if kind == "random":
        return np.stack([haar_frame(rng, d, d_k) for _ in range(H)])
    return _overlap_family(haar_frame(rng, d, (H + 1) * d_k), H, d_k, rho)
