"""Fits the polynomial coefficients of src/arith/math.h (binary32 + fma algorithms).

  python3 tests/arith/fit_polynomials.py [name ...]

Each fit is a near-minimax polynomial (Lawson's iteratively reweighted least squares on a dense grid, the
reference computed with mpmath at 40 digits), then rounded to float32 and reported with its error after
rounding. The printed arrays are pasted into math.h as they are; this script is how they can be regenerated
and checked. Accuracy of the whole functions is proven by tests/arith/exhaustive_math.cpp, not here.
"""
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def lawson(xs, target, weight, degree, iters=60):
    """Coefficients c[0..degree] of sum c_i x^i minimising max |weight * (poly - target)| (approximately)."""
    A = np.vander(xs, degree + 1, increasing=True)
    w = np.ones_like(xs) / len(xs)
    for _ in range(iters):
        sw = np.sqrt(w) * weight
        c, *_ = np.linalg.lstsq(A * sw[:, None], target * sw, rcond=None)
        err = np.abs(weight * (A @ c - target))
        w = w * err
        w /= w.sum()
    return c


def float_literal(v):
    """C++ hex literal of a float32 value: 0x1.8p-3f."""
    mantissa, exponent = float(v).hex().split("p")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{exponent}f"


def report(name, xs, target, weight, degree, transform=lambda c: c):
    c = lawson(xs, target, weight, degree)
    c32 = c.astype(np.float32).astype(np.float64)
    A = np.vander(xs, degree + 1, increasing=True)
    e64 = np.max(np.abs(weight * (A @ c - target)))
    e32 = np.max(np.abs(weight * (A @ c32 - target)))
    body = ", ".join(float_literal(v) for v in c.astype(np.float32))
    print(f"// {name}: degree {degree}, weighted max error {e64:.3g} (double), {e32:.3g} (float coefficients)")
    print(f"static constexpr float {name}[{degree + 1}] = {{{body}}};")
    return c32


def grid(lo, hi, n=4000):
    # Chebyshev-distributed points plus the ends.
    k = np.arange(n)
    return np.sort(np.concatenate([[lo, hi], (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)]))


def f64(fn, xs):
    return np.array([float(fn(mp.mpf(float(x)))) for x in xs])


LN2 = float(mp.log(2))


def fit_exp():
    # e^r = 1 + r + r^2 q(r), |r| <= ln2/2; error weight: r^2 / e^r (error of the result, relative).
    xs = grid(-LN2 / 2 * 1.0001, LN2 / 2 * 1.0001)
    xs = xs[np.abs(xs) > 1e-6]
    q = f64(lambda r: (mp.exp(r) - 1 - r) / r**2, xs)
    report("kExpQ", xs, q, xs**2 / np.exp(xs), 4)


def fit_expm1():
    # e^r - 1 = r + r^2 q(r), r in [-ln2/2, 1.5 ln2]; weight r^2 / |expm1(r)|.
    xs = grid(-LN2 / 2 * 1.0001, 1.5 * LN2 * 1.0001)
    xs = xs[np.abs(xs) > 1e-6]
    q = f64(lambda r: (mp.expm1(r) - r) / r**2, xs)
    report("kExpm1Q", xs, q, xs**2 / np.abs(np.expm1(xs)), 7)


def fit_log():
    # log1p(f) = f - h + s (h + R(s^2)), s = f / (2 + f), h = f^2 / 2; R(z) = z * P(z), z <= s(sqrt2 - 1)^2.
    smax = (2**0.5 - 1) / (2**0.5 + 1)
    ss = grid(1e-4, smax * 1.0001)

    def r_of_s(s):
        f = 2 * s / (1 - s)
        h = f * f / 2
        return ((mp.log1p(f) - f + h) / s - h)

    R = f64(r_of_s, ss)
    z = ss**2
    # R / z as a polynomial in z; weight: s z / log1p(f) (the term's share of the result).
    f = 2 * ss / (1 - ss)
    report("kLogP", z, R / z, ss * z / np.log1p(f), 3)


def fit_tanh(hi):
    # tanh x = x + x^3 P(x^2), 0 <= x <= hi; weight x^3 / tanh x.
    xs = grid(1e-3, hi * 1.0001)
    P = f64(lambda x: (mp.tanh(x) - x) / x**3, xs)
    report("kTanhP", xs**2, P, xs**3 / np.tanh(xs), int(sys.argv[2]) if len(sys.argv) > 2 else 7)


def fit_erf_small():
    # erf x = x + x p(x^2), 0 <= x <= 1; weight x / erf x.
    xs = grid(1e-4, 1.0001)
    p = f64(lambda x: mp.erf(x) / x - 1, xs)
    report("kErfSmallP", xs**2, p, xs / np.array([float(mp.erf(x)) for x in xs]), 6)


def fit_erfc_pieces(edges):
    # erf x = 1 - q_i(x - m_i) on [a_i, b_i]: absolute error weight 2^24 (in ulps of the result, ~1).
    for i in range(len(edges) - 1):
        a, b = edges[i], edges[i + 1]
        m = (a + b) / 2
        xs = grid(a, b * 1.0001)
        q = f64(mp.erfc, xs)
        report(f"kErfc{i}", xs - m, q, np.full_like(xs, 2.0**24), 9)


def fit_odd(name, fn, hi, degree):
    # fn(x) = x + x^3 P(x^2), 0 <= x <= hi; weight x^3 / fn(x) (the term's share of the result).
    xs = grid(1e-3, hi * 1.0001)
    P = f64(lambda x: (fn(x) - x) / x**3, xs)
    report(name, xs**2, P, xs**3 / f64(fn, xs), degree)


def fit_sin_cos():
    xs = grid(1e-3, np.pi / 4 * 1.001)
    S = f64(lambda r: (mp.sin(r) - r) / r**3, xs)
    report("kSinS", xs**2, S, xs**3 / np.sin(xs), 3)
    C = f64(lambda r: (mp.cos(r) - 1) / r**2, xs)
    report("kCosC", xs**2, C, xs**2 / np.cos(xs), 4)


FITS = {
    "exp": fit_exp, "expm1": fit_expm1, "log": fit_log, "tanh": lambda: fit_tanh(float(sys.argv[3]) if len(sys.argv) > 3 else 0.9),
    "erf": fit_erf_small, "erfc": lambda: fit_erfc_pieces([1.0, 1.75, 2.5, 3.25, 4.0]), "sincos": fit_sin_cos,
    "sinh": lambda: fit_odd("kSinhP", mp.sinh, 0.55, 3),
    "atan": lambda: fit_odd("kAtanP", mp.atan, float(mp.tan(mp.pi / 8)), 6),
    "asin": lambda: fit_odd("kAsinP", mp.asin, 0.5, 6),
}

if __name__ == "__main__":
    for name in (sys.argv[1:2] or FITS):
        FITS[name]()
