"""Make the run's checkpoint volume writable for the user the job's image runs as.

Docker mounts a named volume at a path the image lacks as a root-owned 0755
directory (creating every missing parent), so a job whose image runs as a
non-root user (``USER tfchaos``, ``USER 1000``) cannot write its backups there:
``PermissionDeniedError: /shared/backup/workertemp_1``. The run owns that
volume, so it prepares it as Kubernetes' ``fsGroup`` does for a pod's volume:
before any worker starts, a short-lived helper container of the workers' image,
run as root with the volume mounted at ``checkpoint_dir``, gives the volume's
root to the image's user and group (mode ``2775``: owner and group write, new
files and folders keep the group). Names are resolved in the image's own
``/etc/passwd`` and ``/etc/group``, as Docker resolves the image's ``USER``.

Workers then mount the volume with ``nocopy``: Docker would otherwise give an
empty volume the owner and mode of the image's directory at each mount, undoing
this. (The helper's own mount copies what the image has at ``checkpoint_dir``
into the new volume, as Docker does for a first mount.)

Standard library only and no package imports: its source is run as-is by
``python3 -c`` in the helper container (``DockerCluster._prepare_backup_volume``)
and imported on the host by the unit tests.
"""

from __future__ import annotations

import json
import os
import sys

MODE = 0o2775  # rwxrwsr-x: the job's user and group write; setgid keeps the group on what is created
SHARED_MODE = 0o3777  # workers of images with different users: anyone writes, sticky as /tmp


def _entries(text: str) -> list[list[str]]:
    return [line.split(":") for line in text.splitlines() if line.strip() and not line.startswith("#")]


def resolve_user(spec: str, passwd: str, group: str) -> tuple[int, int]:
    """The (uid, gid) an image's ``USER`` value runs as, given the image's
    ``/etc/passwd`` and ``/etc/group`` texts, as Docker resolves it: empty is
    root; a name or uid from passwd (its primary group); a uid passwd does not
    list runs with gid 0; ``user:group`` takes the group by name or number."""
    user, _, grp = (spec or "").partition(":")
    users = [e for e in _entries(passwd) if len(e) >= 4]
    uid, gid = 0, 0
    if user:
        entry = next((e for e in users if e[0] == user), None)
        if entry is None and user.isdigit():
            entry = next((e for e in users if e[2] == user), None)
        if entry is not None:
            uid, gid = int(entry[2]), int(entry[3])
        elif user.isdigit():
            uid, gid = int(user), 0
        else:
            raise ValueError(f"user {user!r} of the image's USER is not in its /etc/passwd")
    if grp:
        entry = next((e for e in _entries(group) if len(e) >= 3 and e[0] == grp), None)
        if entry is not None:
            gid = int(entry[2])
        elif grp.isdigit():
            gid = int(grp)
        else:
            raise ValueError(f"group {grp!r} of the image's USER is not in its /etc/group")
    return uid, gid


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def prepare(root: str, user: str, shared: str = "") -> dict:
    """Give ``root`` (the volume's mount point) to ``user`` (the image's USER);
    ``shared`` non-empty: workers run as different users, anyone may write."""
    if shared:
        uid, gid, mode = 0, 0, SHARED_MODE
    else:
        uid, gid = resolve_user(user, _read("/etc/passwd"), _read("/etc/group"))
        mode = MODE
    os.chown(root, uid, gid)
    os.chmod(root, mode)
    return {"uid": uid, "gid": gid, "mode": oct(mode)}


if __name__ == "__main__":
    try:
        print(json.dumps(prepare(*sys.argv[1:])))
    except (OSError, ValueError, TypeError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)
