"""The harness's peek at the backup before fit: a backup it cannot read is left
to BackupAndRestore (which then raises TF's own error), not failed on here."""

from chaos.worker import backup_formats


def test_no_backup_starts_at_the_beginning():
    assert backup_formats.resume_position_or_start(None, "epoch", 20) == (0, 0)


def test_a_readable_backup_gives_its_position(monkeypatch):
    monkeypatch.setattr(backup_formats, "resume_position", lambda path, freq, spe: (2, 0))
    assert backup_formats.resume_position_or_start("/backup/chief/ckpt-2", "epoch", 20) == (2, 0)


def test_an_unreadable_backup_is_left_to_backup_and_restore(monkeypatch, capsys):
    def broken(path, freq, spe):
        raise IndexError("Read less bytes than requested")

    monkeypatch.setattr(backup_formats, "resume_position", broken)
    assert backup_formats.resume_position_or_start("/backup/chief/ckpt-2", "epoch", 20) == (0, 0)
    assert (
        "unreadable (IndexError: Read less bytes than requested); leaving it to BackupAndRestore"
        in capsys.readouterr().err
    )
