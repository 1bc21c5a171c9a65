"""The cells of the degraded-network matrix, each a scenario."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from chaos.scenario.loader import scenario_from_dict
from chaos.scenario.model import Scenario

# toxic name -> the fault's parameters (besides worker and stream)
TOXICS: dict[str, dict] = {
    "connection_reset": {"fault": "connection_reset", "params": {"timeout_ms": 0}},
    "stream_cut": {"fault": "stream_cut", "params": {"limit_bytes": 65536}},
    "slow_close": {"fault": "slow_close", "params": {"delay_ms": 5000}},
    "sliced": {"fault": "sliced", "params": {"average_bytes": 64, "variation_bytes": 16, "delay_us": 200}},
    "blackhole": {"fault": "blackhole", "params": {}},
    "latency": {"fault": "latency", "params": {"latency_ms": 100}},
}
# The packet faults (chaos.faults.packet), in the worker's own namespace: their
# direction is the packets' (ingress: into the worker, as the proxy's upstream;
# egress: what it sends, as downstream), and they act on every connection of the
# worker, its own to its peers included (the proxy's toxics only on those into it).
PACKET_FAULTS: dict[str, dict] = {
    "packet_loss": {"fault": "packet_loss", "params": {"percent": 20}},
    "packet_corrupt": {"fault": "packet_corrupt", "params": {"percent": 5}},
    "packet_delay": {"fault": "packet_delay", "params": {"delay_ms": 100}},
    "packet_reorder": {"fault": "packet_reorder", "params": {"percent": 25, "delay_ms": 10}},
    # Duplication without netem is egress only (chaos/netns/nfqueue.py): one direction.
    "packet_duplicate": {"fault": "packet_duplicate", "params": {"percent": 10}, "directions": ("downstream",)},
    "silent_drop": {"fault": "silent_drop", "params": {"connections": "all"}},
    "syn_drop": {"fault": "syn_drop", "params": {}},
    "mtu_blackhole": {"fault": "mtu_blackhole", "params": {"max_bytes": 1400}},
}
PACKET_DIRECTION = {"upstream": "ingress", "downstream": "egress", "both": "both"}
TOXICS.update({name: {**spec, "packet": True} for name, spec in PACKET_FAULTS.items()})
# A packet fault's helper container takes 0.3 s to land on a quiet machine and
# seconds under load (docs/packet-faults.md): its cells train 500 steps, not 100,
# so the fault fired at epoch 2 lands while training runs.
PACKET_STEPS_PER_EPOCH = 100
DIRECTIONS = ("upstream", "downstream", "both")
TARGETS = {"chief": 0, "non-chief": 1}
WHENS = ("bring_up", "mid_training")
WINDOW_S = 30  # how long the fault stays: longer than the 10 s heartbeat timeout


@dataclass(frozen=True)
class Cell:
    toxic: str
    direction: str
    target: str
    when: str

    @property
    def name(self) -> str:
        return f"matrix-{self.toxic}-{self.direction}-{self.target}-{self.when}".replace("_", "-")

    def _direction(self, spec: dict) -> dict:
        """A toxic's ``stream``, or a packet fault's ``direction``."""
        if spec.get("packet"):
            return {"direction": PACKET_DIRECTION[self.direction]}
        return {"stream": self.direction}

    def scenario(self) -> Scenario:
        spec = TOXICS[self.toxic]
        at = "bring_up" if self.when == "bring_up" else {"epoch": 2}
        return scenario_from_dict(
            {
                "name": self.name,
                "description": f"{self.toxic} on {self.direction} of the {self.target}'s link, {self.when.replace('_', ' ')}",
                "explain": {
                    "symptom": "measured by chaos matrix",
                    "cause": "a degraded link",
                    "fix": "see docs/network-matrix.md",
                },
                "cluster": {
                    "workers": 2,
                    "training": {"epochs": 5, "steps_per_epoch": PACKET_STEPS_PER_EPOCH if spec.get("packet") else 20},
                    "recovery": {"restart": "all", "max_restarts": 1},
                },
                "faults": [
                    {
                        spec["fault"]: {"worker": TARGETS[self.target], **self._direction(spec), **spec["params"]},
                        "at": at,
                        "for": WINDOW_S,
                    }
                ],
                "recover": [{"matches_uninterrupted": {}}, {"completed": {}}],
                "timeouts": {"bring_up": 120, "symptom": WINDOW_S + 30, "total": 360},
            },
            source=f"<matrix {self.name}>",
        )


def all_cells() -> list[Cell]:
    return [
        Cell(*c)
        for c in itertools.product(TOXICS, DIRECTIONS, TARGETS, WHENS)
        if c[1] in TOXICS[c[0]].get("directions", DIRECTIONS)
    ]


def select(toxics=None, directions=None, targets=None, whens=None) -> list[Cell]:
    return [
        c
        for c in all_cells()
        if (not toxics or c.toxic in toxics)
        and (not directions or c.direction in directions)
        and (not targets or c.target in targets)
        and (not whens or c.when in whens)
    ]
