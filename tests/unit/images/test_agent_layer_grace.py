"""Agent layers of a source tag are dropped once replaced, but never one made in
the last day: a run next door may still be using it (chaos.images.workload)."""

from chaos.images import workload

NOW = 1_800_000_000.0


class FakeApi:
    def __init__(self, images):
        self._images = images
        self.removed = []

    def images(self, filters=None):
        return list(self._images)

    def remove_image(self, image_id, noprune=False):
        self.removed.append(image_id)


class FakeClient:
    def __init__(self, images):
        self.api = FakeApi(images)


def test_a_layer_made_minutes_ago_by_a_run_next_door_is_kept_an_old_one_dropped():
    client = FakeClient(
        [
            {"Id": "sha256:new", "Created": NOW - 5},
            {"Id": "sha256:next-door", "Created": NOW - 120},
            {"Id": "sha256:last-week", "Created": NOW - 7 * 24 * 3600},
        ]
    )
    workload._drop_older_layers(client, "tfchaos/workload:x", keep="sha256:new", now=NOW)
    assert client.api.removed == ["sha256:last-week"]
