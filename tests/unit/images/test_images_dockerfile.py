"""The commit builder's reading of an app Dockerfile (no Docker needed)."""

import pytest

from chaos.errors import InfrastructureError
from chaos.images import dockerfile, plans


def test_the_worker_dockerfile_runs_as_the_unprivileged_user_with_its_dirs():
    recipe = dockerfile.commit_recipe(open(plans.docker_file("worker", "Dockerfile")).read())
    assert recipe.copies == [("chaos/", "/opt/tfchaos/chaos/")]
    assert recipe.run is not None and recipe.run.user is None  # RUN as root, before USER
    assert "install -d -o tfchaos -g tfchaos" in recipe.run.script and "/backup /run/chaos" in recipe.run.script
    assert f"USER {plans.RUN_AS}" in recipe.changes
    assert not any(c.startswith("VOLUME") for c in recipe.changes)
    assert recipe.sets_entrypoint and not recipe.sets_cmd


def test_the_proxy_dockerfile_runs_as_the_unprivileged_user():
    recipe = dockerfile.commit_recipe(open(plans.docker_file("proxy", "Dockerfile")).read())
    assert f"USER {plans.RUN_AS}" in recipe.changes and recipe.run is None
    assert "EXPOSE 8474" in recipe.changes


def test_run_lines_form_one_script_with_the_env_before_them():
    recipe = dockerfile.commit_recipe(
        'FROM x\nCOPY a/ /a/\nENV A=1 B="two words"\nWORKDIR /w\nRUN echo one\nRUN echo two \\\n  three\nUSER u\n'
    )
    assert recipe.run.script == "set -e\necho one\necho two three\n"
    assert recipe.run.env == {"A": "1", "B": "two words"} and recipe.run.workdir == "/w"
    assert recipe.changes == ['ENV A=1 B="two words"', "WORKDIR /w", "USER u"]


@pytest.mark.parametrize(
    "text, why",
    [
        ("RUN true\nCOPY a /a\n", "after every COPY"),
        ("RUN true\nENV A=1\nRUN false\n", "one shell"),
        ('RUN ["true"]\n', "shell form"),
        ("COPY --chown=u a /a\n", "one source to one destination"),
        ("HEALTHCHECK NONE\n", "HEALTHCHECK is not supported"),
    ],
)
def test_what_the_commit_builder_cannot_do_is_a_clear_error(text, why):
    with pytest.raises(InfrastructureError) as exc:
        dockerfile.commit_recipe("FROM x\n" + text, "docker/x/Dockerfile")
    assert why in exc.value.message and exc.value.message.startswith("docker/x/Dockerfile: ")
    assert "TFCHAOS_BUILD_METHOD=dockerfile" in exc.value.hint


def test_env_forms():
    assert dockerfile.env_pairs("A 1 2") == {"A": "1 2"}
    assert dockerfile.env_pairs("PATH=/a:/b X=y") == {"PATH": "/a:/b", "X": "y"}
