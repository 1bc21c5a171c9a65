"""Where clusters come from: the seam (``base``), what to bring up (``spec``),
and one package per engine (``docker``: one Docker host). Nothing above this
room speaks an engine's language."""
