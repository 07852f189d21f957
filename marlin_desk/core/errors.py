"""Errors a user can act on. Each maps to a CLI exit code; the message is one plain line."""


class MarlinError(Exception):
    """Base of the errors we expect and explain."""

    exit_code = 1


class BadInput(MarlinError):
    """The file or the arguments cannot be used (unreadable, no video stream, bad range...)."""

    exit_code = 2


class ModelUnavailable(MarlinError):
    """The model is not on this machine and cannot be downloaded now."""

    exit_code = 3


class Cancelled(MarlinError):
    """The user cancelled a running job."""

    exit_code = 130
