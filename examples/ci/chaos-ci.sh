#!/bin/sh
# The steps both CI templates run (github-actions.yml, gitlab-ci.yml), in one script so
# that they are the same everywhere and can be run by hand against any engine:
#
#   DOCKER_HOST=tcp://docker:2375 sh examples/ci/chaos-ci.sh chaos_suite [BASE_SUITE]
#
# 1. build the images on the engine DOCKER_HOST names (its architecture's; reused when unchanged);
# 2. run SUITE (a folder of scenarios) into $REPORTS/suite: junit.xml, index.html, one page per scenario;
# 3. with BASE_SUITE (the same suite in a checkout of the pull request's base): run it into
#    $REPORTS/base and compare the two folders (chaos compare), the Markdown into
#    $REPORTS/compare/compare.md and, on GitHub, the job summary ($GITHUB_STEP_SUMMARY).
# Exit status: the suite's (0 all passed), else the comparison's (1: a regression).
set -eu
SUITE=${1:?usage: chaos-ci.sh SUITE [BASE_SUITE]}
BASE_SUITE=${2:-}
REPORTS=${REPORTS:-reports}
TF_VERSION=${TF_VERSION:-2.21}
JOBS=${CHAOS_JOBS:-2}

chaos images build --tf "$TF_VERSION"
status=0
chaos run --jobs "$JOBS" --report-dir "$REPORTS/suite" "$SUITE" || status=$?
if [ -n "$BASE_SUITE" ]; then
  chaos run --jobs "$JOBS" --report-dir "$REPORTS/base" "$BASE_SUITE" || true
  compared=0
  chaos compare --report-dir "$REPORTS/compare" "$REPORTS/base" "$REPORTS/suite" || compared=$?
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$REPORTS/compare/compare.md" ]; then
    cat "$REPORTS/compare/compare.md" >> "$GITHUB_STEP_SUMMARY"
  fi
  [ "$status" -ne 0 ] || status=$compared
fi
exit "$status"
