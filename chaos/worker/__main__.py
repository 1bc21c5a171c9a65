import os
import sys

from chaos.worker.standby import STANDBY_ENV, hold_go_signal, wait_for_go

# A standby container imports TensorFlow now and learns its cluster and
# settings at its go (chaos.worker.standby).
if os.environ.get(STANDBY_ENV):
    hold_go_signal()
    wait_for_go(os.environ[STANDBY_ENV])

from chaos.worker.settings import WorkerSettings  # noqa: E402


def _strategy() -> str:
    try:
        return WorkerSettings.from_env(dict(os.environ)).strategy
    except ValueError:  # the MWMS harness reports bad settings as an error event
        return ""


# One image, two strategies: the settings say which harness trains.
if _strategy() == "parameter_server":
    from chaos.worker.ps_harness import main
else:
    from chaos.worker.harness import main

sys.exit(main())
