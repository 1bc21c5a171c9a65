"""docker-compose tooling: the generated docker-compose.yml (``files``), and the
running compose cluster explored by hand: watched (``watch``) and faulted
(``inject`` through ``control``, a ``ClusterControl`` of its containers)."""
