"""Checks exp_f64 and log_f64 against mpmath at 160 bits: reads `exp|log x y` lines (hex floats) from
`math_f64_check --dump N` on stdin and prints, per function, the largest error in ulps of the exact result's
binade and how many results are not the correctly rounded double. Needs `pip install mpmath`."""

import math
import sys

import mpmath as mp

mp.mp.prec = 160


def ulp(v):
    if v == 0:
        return mp.mpf(2) ** -1074
    return mp.mpf(2) ** (max(int(mp.floor(mp.log(abs(v), 2))), -1022) - 52)


stats = {}
for line in sys.stdin:
    name, xs, ys = line.split()
    x, y = float.fromhex(xs), float.fromhex(ys)
    s = stats.setdefault(name, {"max_err": 0.0, "at": 0.0, "not_nearest": 0, "n": 0, "special_bad": 0})
    s["n"] += 1
    if math.isnan(x) or (name == "log" and x < 0) or (name == "log" and x == 0) or math.isinf(x):
        continue  # special values: tests/cpp/test_math_f64.cpp checks them bit for bit
    r = mp.exp(mp.mpf(x)) if name == "exp" else mp.log(mp.mpf(x))
    nearest = float(r)  # mpmath rounds to nearest even (inf beyond the largest double, 0 or denormals below)
    if math.isinf(nearest) or math.isinf(y):
        s["special_bad"] += nearest != y
        continue
    err = float(abs(mp.mpf(y) - r) / ulp(r))
    s["not_nearest"] += y != nearest
    if err > s["max_err"]:
        s["max_err"], s["at"] = err, x
for name, s in stats.items():
    print(f"{name}: max error {s['max_err']:.4f} ulp (x = {s['at'].hex()}), not the nearest double "
          f"{s['not_nearest']} of {s['n']}, wrong overflow {s['special_bad']}")
bad = any(s["max_err"] >= 1 or s["special_bad"] for s in stats.values())
sys.exit(1 if bad else 0)
