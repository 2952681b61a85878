"""oi's errors, as Python exceptions."""


class OiError(Exception):
    """Something oi could not do: `message` says what, `hint` how to fix it."""

    def __init__(self, message, hint=None):
        self.message = message
        self.hint = hint
        super().__init__(message if not hint else f"{message}\nhint: {hint}")
