"""Where clusters come from: the seam (``base``: what every cluster serves;
``abilities``: what only some serve, one protocol each, found by type), which
backends exist (``catalog``) and what each refuses (``refusals``), what to bring
up (``spec``), and one package per engine (``docker``: one Docker host;
``swarm``: a Docker Swarm). Nothing above this room speaks an engine's language."""
