"""Input checks shared by the metric functions.

Every check raises :class:`ValueError` naming the argument and the first offending row, so a bad input never turns
into a silently wrong number. Large arrays are checked in row blocks (:func:`row_blocks`) so that no check needs
more than a small fraction of the input's memory.
"""

import numpy as np

#: rows processed per block by the vectorised loops: ~1.3 MB of float64 for 10 columns, cache friendly.
BLOCK_ROWS = 1 << 14

#: how far a probability row's sum may be from 1 (float32 softmax over a few hundred classes stays well inside).
SUM_TOLERANCE = 1e-4


def row_blocks(n_rows: int, block_rows: int | None = None):
    """Yield ``(start, stop)`` pairs that cover ``range(n_rows)`` in blocks of at most ``block_rows`` rows."""
    block_rows = block_rows or BLOCK_ROWS
    for start in range(0, n_rows, block_rows):
        yield start, min(start + block_rows, n_rows)


def as_array(values, name: str, ndim: int, dtype=None) -> np.ndarray:
    """``values`` as a non-empty numpy array with ``ndim`` dimensions, or a ValueError that names ``name``.

    Lists, tuples, numpy arrays and CPU tensors are accepted. A ragged list of rows is reported with the index of
    the first row whose length differs from row 0.
    """
    if values is None:
        raise ValueError(f"{name} is missing")
    try:
        array = np.asarray(values, dtype=dtype)
    except (ValueError, TypeError) as error:
        if ndim == 2 and isinstance(values, (list, tuple)):
            _raise_ragged(values, name)
        raise ValueError(f"{name} cannot be read as a numeric array: {error}") from None
    if array.dtype == object:
        if ndim == 2:
            _raise_ragged(values, name)
        raise ValueError(f"{name} must hold numbers, got objects of type {type(array.flat[0]).__name__}")
    if array.size == 0 and array.ndim <= ndim:
        raise ValueError(f"{name} is empty: nothing to evaluate")
    if array.ndim != ndim:
        shape = "one value per example" if ndim == 1 else "one row of values per example (a 2-D array)"
        raise ValueError(f"{name} must have {shape}; got an array of shape {array.shape}")
    if ndim == 2 and array.shape[1] == 0:
        raise ValueError(f"{name} has rows of length 0: each row needs at least one value")
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise ValueError(f"{name} must hold numbers, got dtype {array.dtype}")
    return array


def _raise_ragged(rows, name: str):
    width = None
    for index, row in enumerate(rows):
        try:
            length = len(row)
        except TypeError:
            raise ValueError(f"{name}[{index}] is a {type(row).__name__}, expected a list of numbers") from None
        if width is None:
            width = length
        elif length != width:
            raise ValueError(
                f"{name}[{index}] has {length} values but {name}[0] has {width}: every row must have the same length"
            )
    raise ValueError(f"{name} cannot be read as a numeric array")


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
        array = array.astype(np.int64)
    elif not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer class ids, got dtype {array.dtype}")
    else:
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


def check_n_bins(n_bins) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    return int(n_bins)


def check_choice(value, name: str, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def _show(row) -> str:
    text = np.array2string(np.asarray(row), precision=6, threshold=12, max_line_width=200)
    return text
