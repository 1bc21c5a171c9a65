"""The runner tells the agent which steps it acts on, so those step events are written at once."""

from dataclasses import replace

from chaos.agent.batching import WATCH_ENV
from chaos.backends.overrides import Overrides
from chaos.backends.spec import Deployment
from chaos.runner.reference import reference_key
from chaos.runner.run import watched_steps
from chaos.scenario.loader import scenario_from_dict

SCENARIO = {
    "name": "watch",
    "description": "d",
    "explain": {"symptom": "s", "cause": "c", "fix": "f"},
    "cluster": {"workers": 2, "training": {"epochs": 3, "steps_per_epoch": 100}},
    "faults": [
        {"kill_worker": {"worker": 1}, "at": {"step": 100}},
        {"partition": {"worker": 1}, "at": {"epoch": 2}, "until": {"step": 230}},
        {"partition": {"worker": 1}, "at": {"step": 250}, "until": {"seconds": 5}},
    ],
}


def test_the_faults_step_triggers_at_and_until_are_watched_epochs_and_times_are_not():
    assert watched_steps(scenario_from_dict(SCENARIO)) == (100, 230, 250)


def test_every_worker_is_created_with_the_watch_and_the_reference_key_ignores_it():
    spec = Deployment(images=("w", "w"), proxy_image="p", watched_steps=(100, 230))
    _, env = Overrides(spec).environment(1, "{}")
    assert env[WATCH_ENV] == "100,230"
    _, unwatched = Overrides(replace(spec, watched_steps=())).environment(1, "{}")
    assert WATCH_ENV not in unwatched
    assert reference_key(spec, ["id"]) == reference_key(replace(spec, watched_steps=()), ["id"])
