"""The mistakes the project reports: one error type per kind, each naming the bad value.

Every type derives from :class:`ScopaError` and from the builtin a Python reader expects
(``ValueError``; ``TypeError`` too for a bad argument), so ``except ValueError`` keeps working
and the ``scopa`` command line catches ``ScopaError`` once, prints the message and exits with
status 2. Each message names the bad value and what would be accepted. The layers above add
their own kinds beside these (``training.config.ConfigError``).

============================  =======================================================
Error                         Raised for
============================  =======================================================
``RulesError``                an unknown preset, an unknown or ill-typed rule option
``TableError``                an unknown table, or one a player or game cannot seat
``PlayerError``               a player that cannot be built: bad options or values
``UnknownPlayerError``        a player name no installed package provides
``CheckpointError``           a checkpoint that is incomplete or not loadable
``CheckpointNotFoundError``   no checkpoint at that path (also ``FileNotFoundError``)
``PositionError``             a position, deck or seat that no deal can have
``IllegalMoveError``          a move the rules do not allow here, or not a move at all
``EnvironmentArgumentError``  an environment argument it does not take (also a
                              ``TypeError``), or a value it does not accept
``ResetNeededError``          an environment stepped before ``reset`` (a ``RuntimeError``)
============================  =======================================================
"""

from __future__ import annotations


class ScopaError(Exception):
    """Base of every mistake reported with a message rather than a traceback."""


class RulesError(ScopaError, ValueError):
    """Rules that do not exist or cannot go together."""


class TableError(ScopaError, ValueError):
    """A table that is not registered, or that the chosen players or game cannot seat."""


class PlayerError(ScopaError, ValueError):
    """A player that cannot be built: unknown options, option values of the wrong kind."""


class UnknownPlayerError(PlayerError):
    """A player name that no installed package provides."""


class CheckpointError(ScopaError, ValueError):
    """A checkpoint file or folder that is missing, cut short or not a checkpoint."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """No checkpoint at the path given (also a ``FileNotFoundError``, as it was before)."""


class PositionError(ScopaError, ValueError):
    """A deck, position or seat that no deal can have."""


class IllegalMoveError(PositionError):
    """A move that is not legal in the current position (or not a move at all)."""


class EnvironmentArgumentError(ScopaError, TypeError, ValueError):
    """An argument an environment does not take, or a value it does not accept."""


class ResetNeededError(ScopaError, RuntimeError):
    """An environment used before its first ``reset``."""


__all__ = [
    "CheckpointError",
    "CheckpointNotFoundError",
    "EnvironmentArgumentError",
    "IllegalMoveError",
    "PlayerError",
    "PositionError",
    "ResetNeededError",
    "RulesError",
    "ScopaError",
    "TableError",
    "UnknownPlayerError",
]
