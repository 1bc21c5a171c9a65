import os
import sys

from chaos.worker.settings import WorkerSettings


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
