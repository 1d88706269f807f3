"""Input checks shared by the metric functions.

Every check raises :class:`ValueError` with one line naming the argument and the first offending row, so a bad input
never turns into a silently wrong number or a traceback from deep inside numpy. Large arrays are checked in blocks of
rows (:func:`row_blocks`) so that no check needs more than a small, fixed amount of memory, however wide the rows.
"""

import numbers

import numpy as np

#: values processed per block by the vectorised loops: 1 MiB of float64 (13,107 rows of 10 columns), cache friendly.
BLOCK_VALUES = 1 << 17

#: how far a probability row's sum may be from 1 (float32 softmax over a few hundred classes stays well inside).
SUM_TOLERANCE = 1e-4

#: the most bins a calibration metric accepts: far beyond any useful binning, and small enough to allocate.
MAX_BINS = 1_000_000

#: integer ids must fit in int64.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class UndefinedMetricWarning(UserWarning):
    """A score is undefined for this input and is reported as 0 (as ``sklearn.exceptions.UndefinedMetricWarning``)."""


def row_blocks(n_rows: int, width: int = 1):
    """Yield ``(start, stop)`` pairs covering ``range(n_rows)`` in blocks of about ``BLOCK_VALUES`` values.

    ``width`` is the number of values per row, so a block of very wide rows holds fewer rows (at least one).
    """
    block_rows = max(1, BLOCK_VALUES // max(1, width))
    for start in range(0, n_rows, block_rows):
        yield start, min(start + block_rows, n_rows)


def as_array(values, name: str, ndim: int, dtype=None) -> np.ndarray:
    """``values`` as a non-empty numpy array of real numbers with ``ndim`` dimensions, or a ValueError naming ``name``.

    Lists, tuples, numpy arrays and CPU tensors are accepted. A ragged list of rows is reported with the index of
    the first row whose length differs from row 0; a value that is not a real number (a string, None, a nested list,
    a complex number, an integer beyond 64 bits) with the index of its row.
    """
    if values is None:
        raise ValueError(f"{name} is missing")
    if isinstance(values, (str, bytes, dict, set, frozenset)):
        raise ValueError(f"{name} must be a list or array of numbers, got a {type(values).__name__}")
    try:
        array = np.asarray(values, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as error:
        if ndim == 2 and isinstance(values, (list, tuple)):
            _raise_ragged(values, name)
        _raise_not_real(values, name, ndim)
        raise ValueError(f"{name} cannot be read as a numeric array: {cut(error)}") from None
    if array.dtype.kind not in "biuf":
        if array.dtype == object and ndim == 2 and isinstance(values, (list, tuple)):
            _raise_ragged(values, name)
        _raise_not_real(values, name, ndim)
        if array.dtype == object:  # every item is a real number held as a Python object: convert it
            array = np.asarray(array.tolist(), dtype=dtype)
        if array.dtype.kind not in "biuf":
            raise ValueError(f"{name} must hold real numbers, got dtype {array.dtype}")
    if array.size == 0 and array.ndim <= ndim:
        raise ValueError(f"{name} is empty: nothing to evaluate")
    if array.ndim != ndim:
        shape = "one value per example" if ndim == 1 else "one row of values per example (a 2-D array)"
        raise ValueError(f"{name} must have {shape}; got an array of shape {array.shape}")
    if ndim == 2 and array.shape[1] == 0:
        raise ValueError(f"{name} has rows of length 0: each row needs at least one value")
    return array


def _is_real(item) -> bool:
    if isinstance(item, (bool, np.bool_)):
        return True
    if isinstance(item, numbers.Integral):
        return INT64_MIN <= int(item) <= np.iinfo(np.uint64).max
    return isinstance(item, numbers.Real)


def _raise_not_real(values, name: str, ndim: int):
    """Raise a ValueError naming the first row of ``values`` holding something other than real numbers, if any."""
    if isinstance(values, np.ndarray):
        if values.ndim == 0:
            values = [values.item()]
        elif values.dtype.kind in "biuf":
            return
    elif not isinstance(values, (list, tuple)):
        if hasattr(values, "__array__") or hasattr(values, "__len__"):  # tensors and other array-likes
            return
        raise ValueError(f"{name} must be a list or array of numbers, got a {type(values).__name__}")
    for index, row in enumerate(values):
        if ndim >= 2 and isinstance(row, (list, tuple, np.ndarray)):
            items = np.asarray(row, dtype=object).ravel() if isinstance(row, np.ndarray) else row
        else:
            items = [row]
        for item in items:
            if isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_)) and not _is_real(item):
                raise ValueError(f"{name}[{index}] holds the integer {cut(item)}, which does not fit in 64 bits")
            if not _is_real(item):
                expected = "a list of numbers" if ndim >= 2 and item is row else "numbers"
                raise ValueError(
                    f"{name}[{index}] holds a {type(item).__name__} ({cut(item)}), expected {expected}"
                )


def _raise_ragged(rows, name: str):
    width = None
    for index, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise ValueError(
                f"{name}[{index}] is a {type(row).__name__} ({cut(row)}), expected a list of numbers"
            ) from None
        length = len(row)
        if width is None:
            width = length
        elif length != width:
            raise ValueError(
                f"{name}[{index}] has {length} values but {name}[0] has {width}: every row must have the same length"
            ) from None


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str):
    if len(a) != len(b):
        raise ValueError(f"{name_a} has {len(a)} rows but {name_b} has {len(b)}: they must describe the same examples")


def first_bad_row(bad: np.ndarray) -> int:
    """Index of the first row of ``bad`` (1-D or 2-D boolean) that is True anywhere."""
    if bad.ndim > 1:
        bad = bad.any(axis=tuple(range(1, bad.ndim)))
    return int(np.argmax(bad))


def check_finite(block: np.ndarray, name: str, offset: int = 0):
    """ValueError naming the first row of ``block`` (rows ``offset`` onwards of ``name``) with a NaN or inf."""
    if np.issubdtype(block.dtype, np.floating) and not np.isfinite(block).all():
        row = first_bad_row(~np.isfinite(block))
        raise ValueError(f"{name}[{offset + row}] contains NaN or inf: {_show(block[row])}")


def check_probabilities(block: np.ndarray, name: str, offset: int = 0, tolerance: float = SUM_TOLERANCE):
    """Check that every row of ``block`` is a probability vector: finite, in [0, 1], summing to 1 within tolerance."""
    low, high = block.min(), block.max()
    if not (low >= 0 and high <= 1):  # also catches NaN, which fails every comparison
        check_finite(block, name, offset)
        row = first_bad_row((block < 0) | (block > 1))
        raise ValueError(
            f"{name}[{offset + row}] has values outside [0, 1]: {_show(block[row])}; "
            "pass probabilities (apply a softmax to logits first)"
        )
    sums = block @ np.ones(block.shape[1])  # a BLAS matrix-vector product: much faster than sum(axis=1)
    bad = np.abs(sums - 1.0) > tolerance
    if bad.any():
        row = first_bad_row(bad)
        raise ValueError(
            f"{name}[{offset + row}] sums to {sums[row]:.6g}, not 1 (tolerance {tolerance:g}): "
            "each row must be a probability distribution over the classes"
        )


def as_class_ids(values, name: str, n_classes: int | None = None) -> np.ndarray:
    """1-D int64 class ids (integral floats accepted), each in ``[0, n_classes)`` when ``n_classes`` is given."""
    array = as_array(values, name, ndim=1)
    if array.dtype == bool:
        array = array.astype(np.int64)
    elif np.issubdtype(array.dtype, np.floating):
        check_finite(array, name)
        fractional = array != np.round(array)
        if fractional.any():
            row = first_bad_row(fractional)
            raise ValueError(f"{name}[{row}] = {array[row]} is not an integer class id")
        _check_int64_range(array, name)
        array = array.astype(np.int64)
    else:
        _check_int64_range(array, name)
        array = array.astype(np.int64, copy=False)
    if n_classes is not None:
        bad = (array < 0) | (array >= n_classes)
        if bad.any():
            row = first_bad_row(bad)
            raise ValueError(
                f"{name}[{row}] = {array[row]} is out of range: expected a class id in [0, {n_classes - 1}] "
                f"for {n_classes} columns of predictions"
            )
    return array


def _check_int64_range(array: np.ndarray, name: str):
    if np.issubdtype(array.dtype, np.floating):  # 2.0**63 is the first float beyond int64
        bad = (array >= 2.0**63) | (array < -(2.0**63))
    elif array.dtype == np.uint64:
        bad = array > INT64_MAX
    else:
        return
    if bad.any():
        row = first_bad_row(bad)
        raise ValueError(f"{name}[{row}] = {cut(array[row])} does not fit in a 64-bit integer class id")


def check_class_id(value, name: str) -> int:
    """A single integer id (an option such as ``oos_label``), or a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer class id, got {cut(value)}")
    if not INT64_MIN <= int(value) <= INT64_MAX:
        raise ValueError(f"{name} = {cut(value)} does not fit in a 64-bit integer class id")
    return int(value)


def check_n_bins(n_bins) -> int:
    if isinstance(n_bins, (bool, np.bool_)) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {cut(n_bins)}")
    if n_bins > MAX_BINS:
        raise ValueError(f"n_bins = {cut(n_bins)} is too large: at most {MAX_BINS:,} bins are supported")
    return int(n_bins)


def check_choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {cut(value)}")
    return value


def cut(value, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to about ``limit`` characters (error messages echo user input)."""
    try:
        text = repr(value).replace("\n", " ")
    except ValueError:  # an int too long for Python's str conversion limit, or a container holding one
        if isinstance(value, int):
            return f"<an integer of {value.bit_length():,} bits>"
        return f"<a {type(value).__name__} too large to show>"
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text):,} characters)"


def _show(row) -> str:
    return np.array2string(np.asarray(row), precision=6, threshold=12, max_line_width=10**6).replace("\n", " ")
