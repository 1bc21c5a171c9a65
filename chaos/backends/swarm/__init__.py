"""Docker Swarm, the second backend (issue 23). What exists so far is its
ground: a multi-node swarm on one machine (``nodes``: N containers each
running Debian's Docker engine, joined into one swarm with an attachable
overlay network), brought up by ``chaos swarm up`` and by the test fixture
``local_swarm``. See docs/backends.md.
"""
