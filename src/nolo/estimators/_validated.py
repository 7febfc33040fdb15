"""Configurable objects that check their parameters when built and when changed.

``__init__`` stores its arguments under their own names (the scikit-learn
contract) and then calls ``_validate_params()``; ``set_params`` re-validates
and restores the previous values if the new ones are rejected, so a rejected
call leaves the object unchanged.
"""

from __future__ import annotations

from nolo._config import Configurable

__all__ = ["ValidatedConfigurable"]


class ValidatedConfigurable(Configurable):
    """A :class:`~nolo._config.Configurable` whose parameters are always valid."""

    def _validate_params(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def set_params(self, **params):
        old = {k: getattr(self, k) for k in params if hasattr(self, k)}
        super().set_params(**params)
        try:
            self._validate_params()
        except Exception:
            super().set_params(**old)
            raise
        return self
