"""Rules for the distributions of ``scipy.stats`` that autograd differentiates, registered when the program
imports ``scipy.stats``.

``scipy.stats.norm`` is an object (an ``rv_continuous``) and ``norm.logpdf`` its method: the rules
are registered on the methods users call (the rule table knows a bound method by its object and
function). Each template mirrors the method's parameters (``norm.logpdf(x, loc=0.0, scale=1.0)``).
For a location-scale family, with ``score`` the derivative of the log-density in x, the
derivative in `loc` is ``-score`` and in `scale` ``-(score * (x - loc) + 1) / scale``; a cdf's
derivative in x is the density. An argument with no derivative here (a count, the shape of
``gamma.cdf``) is marked `no_derivative`: a derivative flowing into it is refused. The templates
write the densities out with NumPy and `scipy_special` (generated code sees nothing else).
"""
import math

import numpy as np
from scipy import stats

from ..runtime import scipy_special, unbroadcast
from .registry import adjoint, d, no_derivative, tangent

# --- the normal distribution ----------------------------------------------------------


@adjoint(stats.norm.logpdf)
def norm_logpdf(y, x, loc=0.0, scale=1.0):
    score = -(x - loc) / scale ** 2
    d[x] = unbroadcast(d[y] * score, x)
    d[loc] = unbroadcast(-d[y] * score, loc)
    d[scale] = unbroadcast(-d[y] * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.norm.logpdf)
def norm_logpdf(y, x, loc=0.0, scale=1.0):
    score = -(x - loc) / scale ** 2
    d[y] = score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale


@adjoint(stats.norm.pdf)
def norm_pdf(y, x, loc=0.0, scale=1.0):
    score = -(x - loc) / scale ** 2
    d[x] = unbroadcast(d[y] * y * score, x)
    d[loc] = unbroadcast(-d[y] * y * score, loc)
    d[scale] = unbroadcast(-d[y] * y * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.norm.pdf)
def norm_pdf(y, x, loc=0.0, scale=1.0):
    score = -(x - loc) / scale ** 2
    d[y] = y * (score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale)


@adjoint(stats.norm.cdf)
def norm_cdf(y, x, loc=0.0, scale=1.0):
    density = np.exp(-0.5 * ((x - loc) / scale) ** 2) / (math.sqrt(2.0 * math.pi) * scale)
    d[x] = unbroadcast(d[y] * density, x)
    d[loc] = unbroadcast(-d[y] * density, loc)
    d[scale] = unbroadcast(-d[y] * density * (x - loc) / scale, scale)


@tangent(stats.norm.cdf)
def norm_cdf(y, x, loc=0.0, scale=1.0):
    density = np.exp(-0.5 * ((x - loc) / scale) ** 2) / (math.sqrt(2.0 * math.pi) * scale)
    d[y] = density * (d[x] - d[loc] - d[scale] * (x - loc) / scale)


@adjoint(stats.norm.sf)
def norm_sf(y, x, loc=0.0, scale=1.0):
    density = np.exp(-0.5 * ((x - loc) / scale) ** 2) / (math.sqrt(2.0 * math.pi) * scale)
    d[x] = unbroadcast(-d[y] * density, x)
    d[loc] = unbroadcast(d[y] * density, loc)
    d[scale] = unbroadcast(d[y] * density * (x - loc) / scale, scale)


@tangent(stats.norm.sf)
def norm_sf(y, x, loc=0.0, scale=1.0):
    density = np.exp(-0.5 * ((x - loc) / scale) ** 2) / (math.sqrt(2.0 * math.pi) * scale)
    d[y] = -density * (d[x] - d[loc] - d[scale] * (x - loc) / scale)


@adjoint(stats.norm.logcdf)
def norm_logcdf(y, x, loc=0.0, scale=1.0):
    """The density over the cdf, as ``exp(log density - logcdf)``: finite far in the lower tail."""
    ratio = np.exp(-0.5 * ((x - loc) / scale) ** 2 - y) / (math.sqrt(2.0 * math.pi) * scale)
    d[x] = unbroadcast(d[y] * ratio, x)
    d[loc] = unbroadcast(-d[y] * ratio, loc)
    d[scale] = unbroadcast(-d[y] * ratio * (x - loc) / scale, scale)


@tangent(stats.norm.logcdf)
def norm_logcdf(y, x, loc=0.0, scale=1.0):
    ratio = np.exp(-0.5 * ((x - loc) / scale) ** 2 - y) / (math.sqrt(2.0 * math.pi) * scale)
    d[y] = ratio * (d[x] - d[loc] - d[scale] * (x - loc) / scale)


@adjoint(stats.norm.logsf)
def norm_logsf(y, x, loc=0.0, scale=1.0):
    ratio = np.exp(-0.5 * ((x - loc) / scale) ** 2 - y) / (math.sqrt(2.0 * math.pi) * scale)
    d[x] = unbroadcast(-d[y] * ratio, x)
    d[loc] = unbroadcast(d[y] * ratio, loc)
    d[scale] = unbroadcast(d[y] * ratio * (x - loc) / scale, scale)


@tangent(stats.norm.logsf)
def norm_logsf(y, x, loc=0.0, scale=1.0):
    ratio = np.exp(-0.5 * ((x - loc) / scale) ** 2 - y) / (math.sqrt(2.0 * math.pi) * scale)
    d[y] = -ratio * (d[x] - d[loc] - d[scale] * (x - loc) / scale)


# --- Student's t: the density in x, df, loc and scale; the cdf in x, loc and scale ------------------


@adjoint(stats.t.logpdf)
def t_logpdf(y, x, df, loc=0.0, scale=1.0):
    score = -(df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2)
    z2 = ((x - loc) / scale) ** 2
    d[x] = unbroadcast(d[y] * score, x)
    d[df] = unbroadcast(d[y] * 0.5 * (z2 * (df + 1.0) / (df * (z2 + df)) - np.log1p(z2 / df) - 1.0 / df
                                      - scipy_special.digamma(df / 2.0) + scipy_special.digamma((df + 1.0) / 2.0)), df)
    d[loc] = unbroadcast(-d[y] * score, loc)
    d[scale] = unbroadcast(-d[y] * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.t.logpdf)
def t_logpdf(y, x, df, loc=0.0, scale=1.0):
    score = -(df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2)
    z2 = ((x - loc) / scale) ** 2
    d[y] = score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale \
        + d[df] * 0.5 * (z2 * (df + 1.0) / (df * (z2 + df)) - np.log1p(z2 / df) - 1.0 / df
                         - scipy_special.digamma(df / 2.0) + scipy_special.digamma((df + 1.0) / 2.0))


@adjoint(stats.t.pdf)
def t_pdf(y, x, df, loc=0.0, scale=1.0):
    score = -(df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2)
    z2 = ((x - loc) / scale) ** 2
    d[x] = unbroadcast(d[y] * y * score, x)
    d[df] = unbroadcast(d[y] * y * 0.5 * (z2 * (df + 1.0) / (df * (z2 + df)) - np.log1p(z2 / df) - 1.0 / df
                                          - scipy_special.digamma(df / 2.0)
                                          + scipy_special.digamma((df + 1.0) / 2.0)), df)
    d[loc] = unbroadcast(-d[y] * y * score, loc)
    d[scale] = unbroadcast(-d[y] * y * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.t.pdf)
def t_pdf(y, x, df, loc=0.0, scale=1.0):
    score = -(df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2)
    z2 = ((x - loc) / scale) ** 2
    d[y] = y * (score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale
                + d[df] * 0.5 * (z2 * (df + 1.0) / (df * (z2 + df)) - np.log1p(z2 / df) - 1.0 / df
                                 - scipy_special.digamma(df / 2.0) + scipy_special.digamma((df + 1.0) / 2.0)))


@adjoint(stats.t.cdf)
def t_cdf(y, x, df, loc=0.0, scale=1.0):
    density = np.exp(scipy_special.gammaln((df + 1.0) / 2.0) - scipy_special.gammaln(df / 2.0)
                     - 0.5 * np.log(df * np.pi) - (df + 1.0) / 2.0 * np.log1p(((x - loc) / scale) ** 2 / df)) / scale
    d[x] = unbroadcast(d[y] * density, x)
    d[df] = no_derivative("scipy.stats.t.cdf has no derivative rule in its degrees of freedom df")
    d[loc] = unbroadcast(-d[y] * density, loc)
    d[scale] = unbroadcast(-d[y] * density * (x - loc) / scale, scale)


@tangent(stats.t.cdf)
def t_cdf(y, x, df, loc=0.0, scale=1.0):
    density = np.exp(scipy_special.gammaln((df + 1.0) / 2.0) - scipy_special.gammaln(df / 2.0)
                     - 0.5 * np.log(df * np.pi) - (df + 1.0) / 2.0 * np.log1p(((x - loc) / scale) ** 2 / df)) / scale
    d[y] = density * (d[x] - d[loc] - d[scale] * (x - loc) / scale) \
        + no_derivative("scipy.stats.t.cdf has no derivative rule in its degrees of freedom df", d[df])


@adjoint(stats.t.logcdf)
def t_logcdf(y, x, df, loc=0.0, scale=1.0):
    ratio = np.exp(scipy_special.gammaln((df + 1.0) / 2.0) - scipy_special.gammaln(df / 2.0) - 0.5 * np.log(df * np.pi)
                   - (df + 1.0) / 2.0 * np.log1p(((x - loc) / scale) ** 2 / df) - y) / scale
    d[x] = unbroadcast(d[y] * ratio, x)
    d[df] = no_derivative("scipy.stats.t.logcdf has no derivative rule in its degrees of freedom df")
    d[loc] = unbroadcast(-d[y] * ratio, loc)
    d[scale] = unbroadcast(-d[y] * ratio * (x - loc) / scale, scale)


@tangent(stats.t.logcdf)
def t_logcdf(y, x, df, loc=0.0, scale=1.0):
    ratio = np.exp(scipy_special.gammaln((df + 1.0) / 2.0) - scipy_special.gammaln(df / 2.0) - 0.5 * np.log(df * np.pi)
                   - (df + 1.0) / 2.0 * np.log1p(((x - loc) / scale) ** 2 / df) - y) / scale
    d[y] = ratio * (d[x] - d[loc] - d[scale] * (x - loc) / scale) \
        + no_derivative("scipy.stats.t.logcdf has no derivative rule in its degrees of freedom df", d[df])


# --- gamma, beta, chi-squared: the densities in every argument, the cdfs in x, loc and scale --------


@adjoint(stats.gamma.logpdf)
def gamma_logpdf(y, x, a, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - 1.0 / scale
    d[x] = unbroadcast(d[y] * score, x)
    d[a] = unbroadcast(d[y] * (np.log((x - loc) / scale) - scipy_special.digamma(a)), a)
    d[loc] = unbroadcast(-d[y] * score, loc)
    d[scale] = unbroadcast(-d[y] * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.gamma.logpdf)
def gamma_logpdf(y, x, a, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - 1.0 / scale
    d[y] = score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale \
        + d[a] * (np.log((x - loc) / scale) - scipy_special.digamma(a))


@adjoint(stats.gamma.pdf)
def gamma_pdf(y, x, a, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - 1.0 / scale
    d[x] = unbroadcast(d[y] * y * score, x)
    d[a] = unbroadcast(d[y] * y * (np.log((x - loc) / scale) - scipy_special.digamma(a)), a)
    d[loc] = unbroadcast(-d[y] * y * score, loc)
    d[scale] = unbroadcast(-d[y] * y * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.gamma.pdf)
def gamma_pdf(y, x, a, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - 1.0 / scale
    d[y] = y * (score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale
                + d[a] * (np.log((x - loc) / scale) - scipy_special.digamma(a)))


@adjoint(stats.gamma.cdf)
def gamma_cdf(y, x, a, loc=0.0, scale=1.0):
    density = np.exp((a - 1.0) * np.log((x - loc) / scale) - (x - loc) / scale - scipy_special.gammaln(a)) / scale
    d[x] = unbroadcast(d[y] * density, x)
    d[a] = no_derivative("scipy.stats.gamma.cdf has no derivative rule in its shape a")
    d[loc] = unbroadcast(-d[y] * density, loc)
    d[scale] = unbroadcast(-d[y] * density * (x - loc) / scale, scale)


@tangent(stats.gamma.cdf)
def gamma_cdf(y, x, a, loc=0.0, scale=1.0):
    density = np.exp((a - 1.0) * np.log((x - loc) / scale) - (x - loc) / scale - scipy_special.gammaln(a)) / scale
    d[y] = density * (d[x] - d[loc] - d[scale] * (x - loc) / scale) \
        + no_derivative("scipy.stats.gamma.cdf has no derivative rule in its shape a", d[a])


@adjoint(stats.beta.logpdf)
def beta_logpdf(y, x, a, b, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc))
    d[x] = unbroadcast(d[y] * score, x)
    d[a] = unbroadcast(d[y] * (np.log((x - loc) / scale) - scipy_special.digamma(a) + scipy_special.digamma(a + b)), a)
    d[b] = unbroadcast(d[y] * (np.log1p(-(x - loc) / scale) - scipy_special.digamma(b)
                               + scipy_special.digamma(a + b)), b)
    d[loc] = unbroadcast(-d[y] * score, loc)
    d[scale] = unbroadcast(-d[y] * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.beta.logpdf)
def beta_logpdf(y, x, a, b, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc))
    d[y] = score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale \
        + d[a] * (np.log((x - loc) / scale) - scipy_special.digamma(a) + scipy_special.digamma(a + b)) \
        + d[b] * (np.log1p(-(x - loc) / scale) - scipy_special.digamma(b) + scipy_special.digamma(a + b))


@adjoint(stats.beta.pdf)
def beta_pdf(y, x, a, b, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc))
    d[x] = unbroadcast(d[y] * y * score, x)
    d[a] = unbroadcast(d[y] * y * (np.log((x - loc) / scale) - scipy_special.digamma(a)
                                   + scipy_special.digamma(a + b)), a)
    d[b] = unbroadcast(d[y] * y * (np.log1p(-(x - loc) / scale) - scipy_special.digamma(b)
                                   + scipy_special.digamma(a + b)), b)
    d[loc] = unbroadcast(-d[y] * y * score, loc)
    d[scale] = unbroadcast(-d[y] * y * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.beta.pdf)
def beta_pdf(y, x, a, b, loc=0.0, scale=1.0):
    score = (a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc))
    d[y] = y * (score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale
                + d[a] * (np.log((x - loc) / scale) - scipy_special.digamma(a) + scipy_special.digamma(a + b))
                + d[b] * (np.log1p(-(x - loc) / scale) - scipy_special.digamma(b) + scipy_special.digamma(a + b)))


@adjoint(stats.beta.cdf)
def beta_cdf(y, x, a, b, loc=0.0, scale=1.0):
    density = np.exp((a - 1.0) * np.log((x - loc) / scale) + (b - 1.0) * np.log1p(-(x - loc) / scale)
                     - scipy_special.betaln(a, b)) / scale
    d[x] = unbroadcast(d[y] * density, x)
    d[a] = no_derivative("scipy.stats.beta.cdf has no derivative rule in its shape a")
    d[b] = no_derivative("scipy.stats.beta.cdf has no derivative rule in its shape b")
    d[loc] = unbroadcast(-d[y] * density, loc)
    d[scale] = unbroadcast(-d[y] * density * (x - loc) / scale, scale)


@tangent(stats.beta.cdf)
def beta_cdf(y, x, a, b, loc=0.0, scale=1.0):
    density = np.exp((a - 1.0) * np.log((x - loc) / scale) + (b - 1.0) * np.log1p(-(x - loc) / scale)
                     - scipy_special.betaln(a, b)) / scale
    d[y] = density * (d[x] - d[loc] - d[scale] * (x - loc) / scale) \
        + no_derivative("scipy.stats.beta.cdf has no derivative rule in its shape a", d[a]) \
        + no_derivative("scipy.stats.beta.cdf has no derivative rule in its shape b", d[b])


@adjoint(stats.chi2.logpdf)
def chi2_logpdf(y, x, df, loc=0.0, scale=1.0):
    score = (df / 2.0 - 1.0) / (x - loc) - 0.5 / scale
    d[x] = unbroadcast(d[y] * score, x)
    d[df] = unbroadcast(d[y] * 0.5 * (np.log((x - loc) / (2.0 * scale)) - scipy_special.digamma(df / 2.0)), df)
    d[loc] = unbroadcast(-d[y] * score, loc)
    d[scale] = unbroadcast(-d[y] * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.chi2.logpdf)
def chi2_logpdf(y, x, df, loc=0.0, scale=1.0):
    score = (df / 2.0 - 1.0) / (x - loc) - 0.5 / scale
    d[y] = score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale \
        + d[df] * 0.5 * (np.log((x - loc) / (2.0 * scale)) - scipy_special.digamma(df / 2.0))


@adjoint(stats.chi2.pdf)
def chi2_pdf(y, x, df, loc=0.0, scale=1.0):
    score = (df / 2.0 - 1.0) / (x - loc) - 0.5 / scale
    d[x] = unbroadcast(d[y] * y * score, x)
    d[df] = unbroadcast(d[y] * y * 0.5 * (np.log((x - loc) / (2.0 * scale)) - scipy_special.digamma(df / 2.0)), df)
    d[loc] = unbroadcast(-d[y] * y * score, loc)
    d[scale] = unbroadcast(-d[y] * y * (score * (x - loc) + 1.0) / scale, scale)


@tangent(stats.chi2.pdf)
def chi2_pdf(y, x, df, loc=0.0, scale=1.0):
    score = (df / 2.0 - 1.0) / (x - loc) - 0.5 / scale
    d[y] = y * (score * (d[x] - d[loc]) - d[scale] * (score * (x - loc) + 1.0) / scale
                + d[df] * 0.5 * (np.log((x - loc) / (2.0 * scale)) - scipy_special.digamma(df / 2.0)))


@adjoint(stats.chi2.cdf)
def chi2_cdf(y, x, df, loc=0.0, scale=1.0):
    density = np.exp((df / 2.0 - 1.0) * np.log((x - loc) / scale) - (x - loc) / (2.0 * scale)
                     - df / 2.0 * math.log(2.0) - scipy_special.gammaln(df / 2.0)) / scale
    d[x] = unbroadcast(d[y] * density, x)
    d[df] = no_derivative("scipy.stats.chi2.cdf has no derivative rule in its degrees of freedom df")
    d[loc] = unbroadcast(-d[y] * density, loc)
    d[scale] = unbroadcast(-d[y] * density * (x - loc) / scale, scale)


@tangent(stats.chi2.cdf)
def chi2_cdf(y, x, df, loc=0.0, scale=1.0):
    density = np.exp((df / 2.0 - 1.0) * np.log((x - loc) / scale) - (x - loc) / (2.0 * scale)
                     - df / 2.0 * math.log(2.0) - scipy_special.gammaln(df / 2.0)) / scale
    d[y] = density * (d[x] - d[loc] - d[scale] * (x - loc) / scale) \
        + no_derivative("scipy.stats.chi2.cdf has no derivative rule in its degrees of freedom df", d[df])


# --- Poisson: in the mean only (k and loc are counts) ------------------------------------------------


@adjoint(stats.poisson.logpmf)
def poisson_logpmf(y, k, mu, loc=0):
    d[k] = no_derivative("scipy.stats.poisson.logpmf has no derivative in its count k")
    d[mu] = unbroadcast(d[y] * ((k - loc) / mu - 1.0), mu)
    d[loc] = no_derivative("scipy.stats.poisson.logpmf has no derivative in its shift loc")


@tangent(stats.poisson.logpmf)
def poisson_logpmf(y, k, mu, loc=0):
    d[y] = d[mu] * ((k - loc) / mu - 1.0) + no_derivative("scipy.stats.poisson.logpmf has no derivative in its "
                                                          "count k", d[k]) \
        + no_derivative("scipy.stats.poisson.logpmf has no derivative in its shift loc", d[loc])


@adjoint(stats.poisson.pmf)
def poisson_pmf(y, k, mu, loc=0):
    d[k] = no_derivative("scipy.stats.poisson.pmf has no derivative in its count k")
    d[mu] = unbroadcast(d[y] * y * ((k - loc) / mu - 1.0), mu)
    d[loc] = no_derivative("scipy.stats.poisson.pmf has no derivative in its shift loc")


@tangent(stats.poisson.pmf)
def poisson_pmf(y, k, mu, loc=0):
    d[y] = d[mu] * y * ((k - loc) / mu - 1.0) + no_derivative("scipy.stats.poisson.pmf has no derivative in its "
                                                              "count k", d[k]) \
        + no_derivative("scipy.stats.poisson.pmf has no derivative in its shift loc", d[loc])


@adjoint(stats.poisson.cdf)
def poisson_cdf(y, k, mu, loc=0):
    """``-pmf(floor(k - loc), mu)``: the cdf sums the pmf up to k."""
    d[k] = no_derivative("scipy.stats.poisson.cdf has no derivative in its count k")
    d[mu] = unbroadcast(-d[y] * np.exp(np.floor(k - loc) * np.log(mu) - mu - scipy_special.gammaln(np.floor(k - loc)
                                                                                                   + 1.0)), mu)
    d[loc] = no_derivative("scipy.stats.poisson.cdf has no derivative in its shift loc")


@tangent(stats.poisson.cdf)
def poisson_cdf(y, k, mu, loc=0):
    d[y] = -d[mu] * np.exp(np.floor(k - loc) * np.log(mu) - mu - scipy_special.gammaln(np.floor(k - loc) + 1.0)) \
        + no_derivative("scipy.stats.poisson.cdf has no derivative in its count k", d[k]) \
        + no_derivative("scipy.stats.poisson.cdf has no derivative in its shift loc", d[loc])


# --- multivariate: the normal (cov read as symmetric, as SciPy reads it) and the Dirichlet -------------


@adjoint(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(y, x, mean=None, cov=1, allow_singular=False):
    """x holds points along its last axis; cov is a matrix, or variances (a number, or one per coordinate).
    The gradient in a matrix cov is the symmetric one, ``(C^-1 r r^T C^-1 - C^-1) / 2`` summed over the
    points: right along symmetric directions, the only ones SciPy reads."""
    solved = (x - (0.0 if mean is None else mean)) @ np.linalg.inv(cov) if np.ndim(cov) == 2 \
        else (x - (0.0 if mean is None else mean)) / cov
    d[x] = -np.expand_dims(d[y], -1) * solved
    d[mean] = unbroadcast(np.expand_dims(d[y], -1) * solved, mean)
    rows = np.reshape(solved, (-1, np.shape(solved)[-1]))
    d[cov] = 0.5 * (np.transpose(rows) @ (np.reshape(d[y], (-1, 1)) * rows) - np.sum(d[y]) * np.linalg.inv(cov)) \
        if np.ndim(cov) == 2 else unbroadcast(0.5 * np.expand_dims(d[y], -1) * (solved ** 2 - 1.0 / cov), cov)


@tangent(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(y, x, mean=None, cov=1, allow_singular=False):
    solved = (x - (0.0 if mean is None else mean)) @ np.linalg.inv(cov) if np.ndim(cov) == 2 \
        else (x - (0.0 if mean is None else mean)) / cov
    d[y] = -np.sum(solved * (d[x] - d[mean]), -1) \
        + (0.5 * (np.einsum("...i,ij,...j->...", solved, d[cov], solved) - np.sum(np.linalg.inv(cov) * d[cov]))
           if np.ndim(cov) == 2 else 0.5 * np.sum((solved ** 2 - 1.0 / cov) * d[cov], -1))


@adjoint(stats.multivariate_normal.pdf)
def multivariate_normal_pdf(y, x, mean=None, cov=1, allow_singular=False):
    solved = (x - (0.0 if mean is None else mean)) @ np.linalg.inv(cov) if np.ndim(cov) == 2 \
        else (x - (0.0 if mean is None else mean)) / cov
    d[x] = -np.expand_dims(d[y] * y, -1) * solved
    d[mean] = unbroadcast(np.expand_dims(d[y] * y, -1) * solved, mean)
    rows = np.reshape(solved, (-1, np.shape(solved)[-1]))
    d[cov] = 0.5 * (np.transpose(rows) @ (np.reshape(d[y] * y, (-1, 1)) * rows)
                    - np.sum(d[y] * y) * np.linalg.inv(cov)) if np.ndim(cov) == 2 \
        else unbroadcast(0.5 * np.expand_dims(d[y] * y, -1) * (solved ** 2 - 1.0 / cov), cov)


@tangent(stats.multivariate_normal.pdf)
def multivariate_normal_pdf(y, x, mean=None, cov=1, allow_singular=False):
    solved = (x - (0.0 if mean is None else mean)) @ np.linalg.inv(cov) if np.ndim(cov) == 2 \
        else (x - (0.0 if mean is None else mean)) / cov
    d[y] = y * (-np.sum(solved * (d[x] - d[mean]), -1)
                + (0.5 * (np.einsum("...i,ij,...j->...", solved, d[cov], solved) - np.sum(np.linalg.inv(cov) * d[cov]))
                   if np.ndim(cov) == 2 else 0.5 * np.sum((solved ** 2 - 1.0 / cov) * d[cov], -1)))


@adjoint(stats.multivariate_normal.entropy)
def multivariate_normal_entropy(y, mean=None, cov=1):
    """Half the log-determinant of cov, and constants: a number cov is the variance of each of mean's coordinates."""
    d[cov] = 0.5 * d[y] * np.linalg.inv(cov) if np.ndim(cov) == 2 \
        else 0.5 * d[y] / cov * (np.size(mean) if np.ndim(cov) == 0 else 1.0)


@tangent(stats.multivariate_normal.entropy)
def multivariate_normal_entropy(y, mean=None, cov=1):
    d[y] = 0.5 * np.sum(np.linalg.inv(cov) * d[cov]) if np.ndim(cov) == 2 \
        else 0.5 * np.sum(d[cov] / cov) * (np.size(mean) if np.ndim(cov) == 0 else 1.0)


@adjoint(stats.dirichlet.logpdf)
def dirichlet_logpdf(y, x, alpha):
    """x is a point of the simplex, or points as its columns (SciPy's layout); off it SciPy refuses to evaluate."""
    column = np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))
    d[x] = d[y] * (column - 1.0) / x
    d[alpha] = np.reshape(np.sum(np.reshape(d[y] * (np.log(x) + scipy_special.digamma(np.sum(alpha))
                                                    - scipy_special.digamma(column)), (np.size(alpha), -1)), 1),
                          np.shape(alpha))


@tangent(stats.dirichlet.logpdf)
def dirichlet_logpdf(y, x, alpha):
    column = np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))
    d[y] = np.sum(d[x] * (column - 1.0) / x, 0) + np.sum(np.reshape(d[alpha], np.shape(column)) * (
        np.log(x) + scipy_special.digamma(np.sum(alpha)) - scipy_special.digamma(column)), 0)


@adjoint(stats.dirichlet.pdf)
def dirichlet_pdf(y, x, alpha):
    column = np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))
    d[x] = d[y] * y * (column - 1.0) / x
    d[alpha] = np.reshape(np.sum(np.reshape(d[y] * y * (np.log(x) + scipy_special.digamma(np.sum(alpha))
                                                        - scipy_special.digamma(column)), (np.size(alpha), -1)), 1),
                          np.shape(alpha))


@tangent(stats.dirichlet.pdf)
def dirichlet_pdf(y, x, alpha):
    column = np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))
    d[y] = y * (np.sum(d[x] * (column - 1.0) / x, 0) + np.sum(np.reshape(d[alpha], np.shape(column)) * (
        np.log(x) + scipy_special.digamma(np.sum(alpha)) - scipy_special.digamma(column)), 0))
