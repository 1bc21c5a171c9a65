"""The scenario runner: bring up, inject at triggers, supervise (play the
orchestrator MWMS needs), heal, judge, report."""
