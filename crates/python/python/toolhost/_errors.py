"""The exceptions toolhost raises for the caller's mistakes.

Tool calls never raise: their failures come back as ``Error: ...`` texts.
"""


class ToolhostError(Exception):
    """The base of toolhost's own exceptions."""


class LoadError(ToolhostError, ValueError):
    """A module that cannot be loaded: a missing or bad file, a component of
    another world, an unsupported feature, bad limits or grants. The message
    is the core's, naming the module and the reason."""


class ConfigError(ToolhostError, ValueError):
    """A config file that cannot be read or used, or one of its modules that
    cannot be loaded. The message names the file and the key or module."""
