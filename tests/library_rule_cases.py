"""Rule cases of NumPy's Python-level functions (``np.median``, ``np.diff``, ``np.pad``, ...), of
``scipy.special`` and of the ``scipy.stats`` distributions, for tests/test_rules.py (and through it
test_tangent_rules.py and test_api_surface.py). `NAMES` gives the dotted name a user writes for a primitive
that is not NumPy's (``scipy.stats.norm.logpdf``).
"""
import numpy as np
from rule_harness import Case

from s2sgrad.rules import rule_for
from s2sgrad.rules.registry import key


def case(primitive, *args, wrt=(0,), name="", **kwargs):
    return Case(primitive, args, kwargs, tuple(wrt), name)


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def uniform(low, high, *shape):
    return lambda rng: rng.uniform(low, high, shape)


def scalar(low=-1.5, high=1.5):
    return lambda rng: float(rng.uniform(low, high))


def away(*shape):
    return lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)


CASES = []
NAMES = {}


def add(*cases):
    CASES.extend(cases)


# --- NumPy's Python functions ------------------------------------------------------------------------

REPEATED = np.array([[0, 0, 3], [2, 2, 1], [1, 3, 3]])
add(
    case(np.split, normal(6, 2), 3, name="split"), case(np.split, normal(6), [1, 4], name="split-list"),
    case(np.split, normal(2, 6), 2, axis=1, name="split-axis1"),
    case(np.array_split, normal(7), 3, name="array_split"),
    case(np.array_split, normal(2, 5), [2], 1, name="array_split-indices-axis1"),
    case(np.hsplit, normal(2, 4), 2, name="hsplit"), case(np.hsplit, normal(6), 3, name="hsplit-vector"),
    case(np.vsplit, normal(4, 2), 2, name="vsplit"), case(np.dsplit, normal(2, 2, 4), [1], name="dsplit"),
    case(np.rot90, normal(3, 4), name="rot90"), case(np.rot90, normal(3, 4), 2, name="rot90-k2"),
    case(np.rot90, normal(3, 4), -1, name="rot90-clockwise"),
    case(np.rot90, normal(2, 3, 4), 1, (1, 2), name="rot90-axes"),
    case(np.rollaxis, normal(2, 3, 4), 2, name="rollaxis"), case(np.rollaxis, normal(2, 3, 4), 0, 3, name="rollaxis-end"),
    case(np.rollaxis, normal(2, 3, 4), -1, 1, name="rollaxis-last"),
    case(np.rollaxis, normal(2, 3, 4), 1, -3, name="rollaxis-negative-start"),
    case(np.append, normal(3), normal(2), wrt=(0, 1), name="append"),
    case(np.append, normal(2, 3), normal(1, 3), axis=0, wrt=(0, 1), name="append-axis0"),
    case(np.append, normal(2, 3), normal(2, 2), -1, wrt=(0, 1), name="append-negative-axis"),
    case(np.append, normal(2, 2), scalar(), wrt=(0, 1), name="append-float"),
    case(np.take_along_axis, normal(3, 4), REPEATED, 1, name="take_along_axis-repeats"),
    case(np.take_along_axis, normal(4, 3), REPEATED, 0, name="take_along_axis-0"),
    case(np.take_along_axis, normal(4, 3), np.array([[1], [0], [2], [2]]), 1, name="take_along_axis-column"),
    case(np.take_along_axis, normal(5), np.array([4, 4, 0]), None, name="take_along_axis-none"),
    case(np.partition, normal(6), 2, name="partition"), case(np.partition, normal(3, 5), 1, axis=0, name="partition-axis0"),
    case(np.partition, normal(2, 5), [1, 3], name="partition-kths"),
    case(np.partition, normal(2, 3), 4, None, name="partition-none"),
    case(np.select, [np.array([True, False, False, True]), np.array([True, True, False, False])],
         lambda rng: [rng.standard_normal(4), rng.standard_normal(4)], normal(4), wrt=(1, 2), name="select"),
    case(np.select, [np.array([[True], [False], [False]]), np.array([True, False, True, False])],
         lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal(4)], scalar(), wrt=(1, 2),
         name="select-broadcast"),
    case(np.diff, normal(5), name="diff"), case(np.diff, normal(6), 2, name="diff-2"),
    case(np.diff, normal(4, 3), axis=0, name="diff-axis0"), case(np.diff, normal(3, 6), 3, -1, name="diff-3"),
    case(np.gradient, normal(5), name="gradient"), case(np.gradient, normal(4, 3), name="gradient-2d"),
    case(np.gradient, normal(5), 0.5, name="gradient-spacing"),
    case(np.gradient, normal(4, 3), 0.5, 2.0, name="gradient-spacings"),
    case(np.gradient, normal(4, 3), axis=1, edge_order=2, name="gradient-axis-edge2"),
    case(np.gradient, normal(4), np.array([0.0, 0.5, 1.5, 2.0]), name="gradient-coordinates"),
    case(np.pad, normal(3, 4), ((1, 2), (0, 1)), name="pad"), case(np.pad, normal(4), 2, name="pad-int"),
    *[case(np.pad, normal(3, 4), ((1, 2), (2, 1)), mode, name=f"pad-{mode}")
      for mode in ("edge", "reflect", "symmetric", "wrap")],
    case(np.convolve, normal(5), normal(3), wrt=(0, 1), name="convolve"),
    case(np.convolve, normal(3), normal(6), wrt=(0, 1), name="convolve-longer-v"),
    *[case(np.convolve, normal(a), normal(b), mode, wrt=(0, 1), name=f"convolve-{mode}-{a}-{b}")
      for mode in ("same", "valid") for a, b in ((6, 3), (3, 6), (4, 4))],
    *[case(np.correlate, normal(a), normal(b), mode, wrt=(0, 1), name=f"correlate-{mode}-{a}-{b}")
      for mode in ("full", "same", "valid") for a, b in ((6, 3), (3, 6))],
    case(np.kron, normal(3), normal(2), wrt=(0, 1), name="kron-1d"),
    case(np.cross, normal(4, 3), normal(3), wrt=(0, 1), name="cross-broadcast"),
    case(np.cross, normal(3, 2), normal(2, 3), axisa=0, wrt=(0, 1), name="cross-axisa"),
    case(np.polyval, normal(4), normal(5), wrt=(0, 1), name="polyval"),
    case(np.polyval, normal(3), scalar(), wrt=(0, 1), name="polyval-float"),
    case(np.polyval, normal(1), normal(2, 2), wrt=(0, 1), name="polyval-constant"),
    case(np.interp, uniform(-0.5, 3.5, 8), np.array([0.0, 1.0, 2.5, 3.0]), normal(4), wrt=(0, 2), name="interp"),
    case(np.interp, uniform(-0.5, 3.5, 2, 5), np.array([0.0, 1.0, 2.5, 3.0]), normal(4), scalar(), scalar(),
         wrt=(0, 2, 3, 4), name="interp-left-right"),
    case(np.interp, scalar(0.0, 3.0), np.array([0.0, 1.0, 2.5, 3.0]), normal(4), wrt=(0, 2), name="interp-float"),
    case(np.nan_to_num, normal(5), name="nan_to_num"),
    case(np.nan_to_num, lambda rng: np.array([1.5, np.nan, -np.inf, 0.3, np.inf, np.nan]),
         wrt=(0, "nan", "posinf", "neginf"), nan=scalar(), posinf=scalar(), neginf=scalar(), name="nan_to_num-values"),
)
WITH_NANS = lambda rng: np.where(rng.uniform(size=(3, 4)) < 0.3, np.nan, rng.standard_normal((3, 4)))  # noqa: E731
add(case(np.ptp, normal(5), name="ptp"), case(np.ptp, normal(3, 4), 1, keepdims=True, name="ptp-axis"),
    case(np.nansum, WITH_NANS, name="nansum"), case(np.nansum, WITH_NANS, 0, name="nansum-axis"),
    case(np.nanmean, WITH_NANS, name="nanmean"), case(np.nanmean, WITH_NANS, 1, keepdims=True, name="nanmean-axis"),
    case(np.nanmax, lambda rng: np.array([0.3, np.nan, 1.2, -0.5]), name="nanmax"),
    case(np.nanmin, lambda rng: np.array([[0.3, np.nan], [1.2, -0.5]]), 0, name="nanmin-axis"),
    *[case(fn, normal(3, 5), name=f"{fn.__name__}") for fn in (getattr(np, n) for n in ("trapezoid", "trapz")
                                                                 if hasattr(np, n))],
    *[case(np.trapezoid, normal(4, 3), np.array([0.0, 0.5, 2.0, 2.5]), axis=0, name="trapezoid-x"),
      case(np.trapezoid, normal(4, 3), dx=0.3, name="trapezoid-dx")] if hasattr(np, "trapezoid") else [],
    case(np.copysign, away(3, 4), normal(4), name="copysign"),
    case(np.ediff1d, normal(5), name="ediff1d"), case(np.ediff1d, normal(2, 3), normal(2), scalar(), wrt=(0, 1, 2),
                                                      name="ediff1d-ends"),
    case(np.vander, normal(4), name="vander"), case(np.vander, normal(3), 5, True, name="vander-increasing"),
    *[case(np.cumulative_sum, normal(5), name="cumulative_sum"),
      case(np.cumulative_sum, normal(3, 4), axis=1, include_initial=True, name="cumulative_sum-initial"),
      case(np.cumulative_sum, normal(4), include_initial=True, name="cumulative_sum-vector-initial")]
    if hasattr(np, "cumulative_sum") else [])
for shape, axis, keepdims in [((5,), None, False), ((4,), None, False), ((3, 4), 0, False), ((3, 4), 1, True),
                              ((2, 3, 4), (0, 2), False), ((2, 3, 4), None, True), ((3, 4), -1, False)]:
    add(case(np.median, normal(*shape), axis=axis, keepdims=keepdims, name=f"median-{shape}-{axis}-{keepdims}"))
add(case(np.average, normal(5), name="average"), case(np.average, normal(3, 4), 1, name="average-axis"),
    case(np.average, normal(3, 4), weights=uniform(0.5, 2.0, 3, 4), wrt=(0, "weights"), name="average-weights"),
    case(np.average, normal(3, 4), 0, uniform(0.5, 2.0, 3), wrt=(0, 2), name="average-weights-1d"),
    case(np.average, normal(2, 3, 4), (0, 2), uniform(0.5, 2.0, 2, 3, 4), keepdims=True, wrt=(0, 2),
         name="average-keepdims"))
for fn in (np.max, np.min, np.amax, np.amin):
    add(case(fn, normal(5), initial=-10.0 if fn in (np.max, np.amax) else 10.0, name=f"{fn.__name__}-initial-far"),
        case(fn, normal(5), wrt=(0, "initial"), initial=5.0 if fn in (np.max, np.amax) else -5.0,
             name=f"{fn.__name__}-initial-wins"),
        case(fn, normal(3, 4), 1, wrt=(0, "initial"), initial=0.0, name=f"{fn.__name__}-initial-axis"))

# --- SciPy ---------------------------------------------------------------------------------------------

try:
    import scipy.signal as signal
    import scipy.special as special
    import scipy.stats as stats
except ImportError:                                  # scipy is optional
    signal = special = stats = None


def registered(fn, name):
    """The object `fn`'s rule was registered on (a bound method is a new object at each read)."""
    rule = rule_for(fn)
    assert rule is not None, name
    NAMES[key(fn)] = name
    return rule.primitive


if special is not None:
    UNARY = [("gamma", (0.5, 3.0)), ("gammaln", (0.5, 3.0)), ("rgamma", (0.5, 3.0)), ("digamma", (0.5, 3.0)),
             ("erf", (-1.5, 1.5)), ("erfc", (-1.5, 1.5)), ("erfcx", (-1.5, 1.5)), ("erfinv", (-0.9, 0.9)),
             ("erfcinv", (0.1, 1.9)), ("dawsn", (-1.5, 1.5)), ("ndtr", (-1.5, 1.5)), ("log_ndtr", (-3.0, 1.5)),
             ("ndtri", (0.1, 0.9)), ("expit", (-3.0, 3.0)), ("logit", (0.1, 0.9)), ("log_expit", (-3.0, 3.0)),
             ("entr", (0.2, 2.0)), ("j0", (0.5, 3.0)), ("y0", (0.5, 3.0)), ("j1", (0.5, 3.0)), ("y1", (0.5, 3.0)),
             ("i0", (-2.0, 2.0)), ("i1", (-2.0, 2.0)), ("i0e", (0.3, 2.0)), ("i1e", (-2.0, -0.3))]
    for fname, (low, high) in UNARY:
        fn = registered(getattr(special, fname), f"scipy.special.{fname}")
        add(case(fn, uniform(low, high, 3, 2), name=f"special.{fname}"),
            case(fn, scalar(low, high), name=f"special.{fname}-float"))
    POSITIVE = uniform(0.5, 3.0, 3, 4)
    for fname, first, second in [("beta", POSITIVE, uniform(0.5, 3.0, 4)), ("betaln", POSITIVE, uniform(0.5, 3.0, 4)),
                                 ("xlogy", normal(3, 4), uniform(0.5, 2.0, 4)),
                                 ("xlog1py", normal(3, 4), uniform(-0.5, 2.0, 3, 1))]:
        fn = registered(getattr(special, fname), f"scipy.special.{fname}")
        add(case(fn, first, second, wrt=(0, 1), name=f"special.{fname}"))
    add(case(special.xlogy, np.array([0.0, 0.0, 1.5]), uniform(0.5, 2.0, 3), wrt=(1,), name="special.xlogy-zeros"))
    for fname, order, x in [("polygamma", np.array([0, 1, 2]), uniform(0.5, 3.0, 3)),
                            ("jv", np.array([0.5, 1.0, 2.5]), uniform(0.5, 3.0, 3)),
                            ("yv", np.array([0.5, 1.0, 2.5]), uniform(0.5, 3.0, 3)),
                            ("yn", np.array([0, 1, 3]), uniform(0.5, 3.0, 3)),
                            ("iv", np.array([0.5, 1.0, 2.5]), uniform(0.3, 2.0, 3)),
                            ("iv", np.array([0, 1, 2]), uniform(-2.0, 2.0, 3)),
                            ("ive", np.array([0.5, 1.0, 2.5]), uniform(0.3, 2.0, 3)),
                            ("ive", np.array([0, 1, 2]), away(3)),
                            ("gammainc", np.array([0.5, 1.0, 2.5]), uniform(0.2, 3.0, 3)),
                            ("gammaincc", np.array([0.5, 1.0, 2.5]), uniform(0.2, 3.0, 3))]:
        fn = registered(getattr(special, fname), f"scipy.special.{fname}")
        add(case(fn, order, x, wrt=(1,), name=f"special.{fname}-{order.dtype.kind}"))
    add(case(registered(special.betainc, "scipy.special.betainc"), np.array([0.5, 2.0]), np.array([1.5, 0.7]),
             uniform(0.1, 0.9, 2), wrt=(2,), name="special.betainc"),
        case(registered(special.multigammaln, "scipy.special.multigammaln"), uniform(3.0, 5.0, 4), 3,
             name="special.multigammaln"))
    logsumexp = registered(special.logsumexp, "scipy.special.logsumexp")
    softmax = registered(special.softmax, "scipy.special.softmax")
    log_softmax = registered(special.log_softmax, "scipy.special.log_softmax")
    add(case(logsumexp, normal(5), name="special.logsumexp"),
        case(logsumexp, normal(3, 4), 1, keepdims=True, name="special.logsumexp-axis-keepdims"),
        case(logsumexp, normal(2, 3, 4), (0, 2), name="special.logsumexp-axes"),
        case(logsumexp, normal(3, 4), 0, uniform(0.5, 2.0, 3, 4), wrt=(0, 2), name="special.logsumexp-b"),
        case(logsumexp, normal(3, 4), b=uniform(0.5, 2.0, 4), wrt=(0, "b"), name="special.logsumexp-b-broadcast"),
        case(softmax, normal(5), name="special.softmax"), case(softmax, normal(3, 4), 1, name="special.softmax-axis"),
        case(log_softmax, normal(5), name="special.log_softmax"),
        case(log_softmax, normal(3, 4), axis=0, name="special.log_softmax-axis"))

if stats is not None:
    SCALE = uniform(0.5, 2.0, 4)
    for method in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
        fn = registered(getattr(stats.norm, method), f"scipy.stats.norm.{method}")
        add(case(fn, normal(3, 4), normal(4), SCALE, wrt=(0, 1, 2), name=f"norm.{method}"),
            case(fn, normal(3, 4), name=f"norm.{method}-standard"),
            case(fn, scalar(), wrt=(0, "loc", "scale"), loc=scalar(), scale=scalar(0.5, 2.0),
                 name=f"norm.{method}-{'keywords' if method in ('logpdf', 'cdf') else 'named'}"))
    for method in ("logpdf", "pdf", "cdf", "logcdf"):
        fn = registered(getattr(stats.t, method), f"scipy.stats.t.{method}")
        differentiated = (0, 1, 2, 3) if "pdf" in method else (0, 2, 3)
        add(case(fn, normal(3, 4), uniform(1.0, 5.0, 4), normal(3, 1), SCALE, wrt=differentiated,
                 name=f"t.{method}"),
            case(fn, normal(3, 4), uniform(1.0, 5.0, 4), name=f"t.{method}-standard"))
    for dist, shapes in [("gamma", [uniform(0.5, 3.0, 4)]), ("beta", [uniform(0.5, 3.0, 4), uniform(0.5, 3.0, 3, 1)]),
                         ("chi2", [uniform(1.0, 5.0, 4)])]:
        x = uniform(0.2, 0.8, 3, 4) if dist == "beta" else uniform(0.5, 3.0, 3, 4)
        for method in ("logpdf", "pdf", "cdf"):
            fn = registered(getattr(getattr(stats, dist), method), f"scipy.stats.{dist}.{method}")
            count = len(shapes)
            differentiated = tuple(range(count + 3)) if method != "cdf" else (0, count + 1, count + 2)
            add(case(fn, x, *shapes, uniform(-0.15, -0.05, 4), uniform(1.2, 1.5, 3, 1), wrt=differentiated,
                     name=f"{dist}.{method}"),
                case(fn, x, *shapes, wrt=(0,) if method == "cdf" else tuple(range(count + 1)),
                     name=f"{dist}.{method}-standard"))
    COUNTS = np.array([[0, 1, 4], [2, 7, 3]])
    for method in ("logpmf", "pmf", "cdf"):
        fn = registered(getattr(stats.poisson, method), f"scipy.stats.poisson.{method}")
        add(case(fn, COUNTS, uniform(0.5, 3.0, 3), wrt=(1,), name=f"poisson.{method}"))
    COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
    for method in ("logpdf", "pdf"):
        fn = registered(getattr(stats.multivariate_normal, method), f"scipy.stats.multivariate_normal.{method}")
        add(case(fn, normal(4, 3), normal(3), COV, wrt=(0, 1), name=f"multivariate_normal.{method}"),
            case(fn, normal(3), normal(3), COV, wrt=(0, 1), name=f"multivariate_normal.{method}-single"),
            case(fn, normal(4, 3), normal(3), uniform(0.5, 2.0, 3), wrt=(0, 1, 2),
                 name=f"multivariate_normal.{method}-variances"),
            case(fn, normal(4, 2), np.zeros(2), scalar(0.5, 2.0), wrt=(0, 2), name=f"multivariate_normal.{method}-number"))
    entropy = registered(stats.multivariate_normal.entropy, "scipy.stats.multivariate_normal.entropy")
    add(case(entropy, np.zeros(3), uniform(0.5, 2.0, 3), wrt=(1,), name="multivariate_normal.entropy-variances"),
        case(entropy, np.zeros(3), scalar(0.5, 2.0), wrt=(1,), name="multivariate_normal.entropy-number"))
    SIMPLEX = np.array([0.2, 0.5, 0.3])
    for method in ("logpdf", "pdf"):
        fn = registered(getattr(stats.dirichlet, method), f"scipy.stats.dirichlet.{method}")
        add(case(fn, SIMPLEX, uniform(0.5, 3.0, 3), wrt=(1,), name=f"dirichlet.{method}"),
            case(fn, np.array([[0.2, 0.6], [0.5, 0.1], [0.3, 0.3]]), uniform(0.5, 3.0, 3), wrt=(1,),
                 name=f"dirichlet.{method}-points"))

if signal is not None:
    for fname in ("convolve", "correlate"):
        fn = registered(getattr(signal, fname), f"scipy.signal.{fname}")
        add(case(fn, normal(5), normal(3), wrt=(0, 1), name=f"signal.{fname}"),
            *[case(fn, normal(*a), normal(*b), mode, wrt=(0, 1), name=f"signal.{fname}-{mode}-{a}-{b}")
              for mode in ("same", "valid", "full") for a, b in (((4, 5), (2, 3)), ((2, 3), (4, 5)))
              if not (mode == "valid" and a < b)],
            case(fn, normal(3, 6), normal(4, 2), "same", wrt=(0, 1), name=f"signal.{fname}-same-crossed"))
