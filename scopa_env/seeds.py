"""The one check every environment makes of a ``seed`` before using it."""

from __future__ import annotations

from typing import Any

import numpy as np

from scopa_env.errors import EnvironmentArgumentError


def check_seed(seed: Any) -> None:
    """Refuse a seed that is not ``None`` or a non-negative integer (floats and bools too).

    NumPy would raise its own TypeError for ``1.5`` and silently take ``True`` as ``1``.
    """
    if seed is None:
        return
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer) or seed < 0:
        raise EnvironmentArgumentError(f"seed must be None or a non-negative integer, got {seed!r}")
