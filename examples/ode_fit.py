"""Fit the four rates of a Lotka-Volterra predator-prey model to noisy observations: the loss integrates
the ODE with Runge-Kutta steps in a ``while`` loop checkpointed with ``sg.Online``, so its gradient keeps
a few snapshots of the state instead of every step's values, and scipy's L-BFGS-B minimizes it.

Run:  python examples/ode_fit.py
"""
import numpy as np
from scipy.optimize import minimize

import s2sgrad as sg

DT, STEPS = 0.1, 100                   # the loop's trip count is known only when it runs (t < T)
TRUTH = np.array([1.0, 0.5, 0.4, 0.8])  # prey growth, predation, predator growth per prey, predator death
START = np.array([2.0, 1.0])


def rates(u, theta):
    prey, predators = u[0], u[1]
    return np.array([theta[0] * prey - theta[1] * prey * predators,
                     theta[2] * prey * predators - theta[3] * predators])


def loss(theta, observed):
    """Half the sum of squared differences between the simulated and the observed populations."""
    u, t, k, total = START, 0.0, 0, 0.0
    while sg.checkpointed(t < DT * STEPS - 1e-9, sg.Online(snapshots=8)):
        k1 = rates(u, theta)
        k2 = rates(u + 0.5 * DT * k1, theta)
        k3 = rates(u + 0.5 * DT * k2, theta)
        k4 = rates(u + DT * k3, theta)
        u = u + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + DT
        total = total + 0.5 * np.sum((u - observed[k]) ** 2)
        k = k + 1
    return total


def simulate(theta):
    """The populations after each step (the same steps as `loss`, without differentiating)."""
    u, path = START, []
    for _ in range(STEPS):
        k1 = rates(u, theta)
        k2 = rates(u + 0.5 * DT * k1, theta)
        k3 = rates(u + 0.5 * DT * k2, theta)
        k4 = rates(u + DT * k3, theta)
        u = u + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        path.append(u)
    return np.array(path)


def main():
    rng = np.random.default_rng(0)
    observed = simulate(TRUTH) + 0.05 * rng.standard_normal((STEPS, 2))
    start = np.array([0.8, 0.6, 0.3, 0.9])
    print(f"error of the gradient against finite differences: {sg.check_grad(loss, start, observed):.1e}")
    fit = minimize(loss, start, args=(observed,), jac=sg.grad(loss), method="L-BFGS-B",
                   bounds=[(0.1, 2.0)] * 4)
    print(f"truth:  {np.round(TRUTH, 3)}")
    print(f"fitted: {np.round(fit.x, 3)}  loss {fit.fun:.4f} after {fit.nit} iterations")


if __name__ == "__main__":
    main()
