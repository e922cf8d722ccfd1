"""Fit a decaying oscillation to noisy data with scipy.optimize, with s2sgrad's gradient and Hessian-vector
product: L-BFGS-B takes ``jac=sg.grad(loss)``, Newton-CG also ``hessp=sg.hvp(loss)``.

Run:  python examples/scipy_fit.py
"""
import numpy as np
from scipy.optimize import minimize

import s2sgrad as sg

TRUTH = np.array([2.0, 0.3, 1.5])                 # amplitude, decay rate, angular frequency
t = np.linspace(0.0, 10.0, 200)
rng = np.random.default_rng(0)
data = TRUTH[0] * np.exp(-TRUTH[1] * t) * np.cos(TRUTH[2] * t) + 0.05 * rng.standard_normal(t.size)


def loss(p):
    """Half the sum of squared residuals of the model a exp(-k t) cos(w t)."""
    model = p[0] * np.exp(-p[1] * t) * np.cos(p[2] * t)
    return 0.5 * np.sum((model - data) ** 2)


def main():
    start = np.array([1.0, 0.1, 1.4])
    print(f"truth:                   {np.round(TRUTH, 3)}")
    fits = {
        "L-BFGS-B (jac)": minimize(loss, start, jac=sg.grad(loss), method="L-BFGS-B"),
        "Newton-CG (jac, hessp)": minimize(loss, start, jac=sg.grad(loss), hessp=sg.hvp(loss), method="Newton-CG"),
    }
    for name, fit in fits.items():
        print(f"{name + ':':24} {np.round(fit.x, 3)}  loss {fit.fun:.4f}  gradient evaluations {fit.njev}")
    v = np.array([1.0, -2.0, 0.5])
    hv = sg.hvp(loss)(fits["Newton-CG (jac, hessp)"].x, v)
    print(f"hvp against sg.hessian:  {np.max(np.abs(hv - sg.hessian(loss)(fits['Newton-CG (jac, hessp)'].x) @ v)):.1e}")


if __name__ == "__main__":
    main()
