"""One base exception; each subclass maps to a CLI exit code.

A failed check is a result (a Verdict), never an exception: these are for bad
input and broken infrastructure only.
"""

from __future__ import annotations


class ChaosError(Exception):
    """Base of every error the framework raises on purpose.

    ``hint`` is one line telling the user what to do next.
    """

    exit_code = 3

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def render(self) -> str:
        text = f"error: {self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


class ScenarioError(ChaosError):
    """A scenario file or value is invalid (exit code 2)."""

    exit_code = 2


class InfrastructureError(ChaosError):
    """Docker, an image, the proxy or a container misbehaved (exit code 3)."""

    exit_code = 3
