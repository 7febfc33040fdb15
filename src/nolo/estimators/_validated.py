"""Configurable objects that check their parameters when built and when changed.

``__init__`` stores its arguments under their own names (the scikit-learn
contract) and then calls ``_validate_params()``; ``set_params`` (from
:class:`~nolo._config.Configurable`) re-validates and restores the previous
values if the new ones are rejected, so a rejected call leaves the object
unchanged.
"""

from __future__ import annotations

from nolo._config import Configurable

__all__ = ["ValidatedConfigurable"]


class ValidatedConfigurable(Configurable):
    """A :class:`~nolo._config.Configurable` whose parameters are always valid.

    Subclasses call ``self._validate_params()`` at the end of ``__init__``;
    :meth:`Configurable.set_params` re-validates and rolls back a rejected change.
    """

    def _validate_params(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
