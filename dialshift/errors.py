"""The one exception type users see: the CLI prints its message on one line and exits non-zero."""


class DialshiftError(Exception):
    """A problem with the user's input or environment, with a message that says what and how to fix it."""


class SourceError(DialshiftError):
    """A raw data file is missing, unreadable or does not match its documented format."""

    def __init__(self, path, message, line=None):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
