"""What a person watching a run sees: progress lines (``progress``) and, in a
terminal, the live view of every worker (``view``)."""
