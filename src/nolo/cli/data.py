"""``nolo data list``, ``nolo data check`` and ``nolo data fetch``: which dataset files are present, are they intact,
and downloading them."""

from __future__ import annotations

import click

from nolo.datasets.paths import ENV_VAR, resolve_data_dir
from nolo.datasets.registry import REGISTRY, FileDataset, file_status

_DATA_DIR = click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Data directory (default: $NOLO_DATA_DIR, else ~/.cache/nolo/data).",
)


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, tuple("-" * w for w in widths), *rows]:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def _selected(names: tuple[str, ...]) -> list[str]:
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise click.BadParameter(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}", param_hint="NAMES")
    return list(names) or list(REGISTRY)


@click.group()
def data() -> None:
    """Datasets: list the expected files, check their SHA-256, download them."""


@data.command("list")
@_DATA_DIR
@click.argument("names", nargs=-1)
def list_(data_dir, names) -> None:
    """List datasets and their files: present or missing, and where.

    NAMES restricts the table to those datasets.
    """
    where = resolve_data_dir(data_dir)
    click.echo(f"data directory: {where.describe()}")
    rows = []
    for name in _selected(names):
        spec = REGISTRY[name]
        if not isinstance(spec, FileDataset):
            rows.append((name, "(none)", "built-in", "-"))
            continue
        for st in file_status(spec, where.path, verify=False):
            rows.append((name, st.expected, "present" if st.path else "missing", str(st.path) if st.path else "-"))
    _table(rows, ("dataset", "file", "status", "where"))
    missing = list(dict.fromkeys(r[0] for r in rows if r[2] == "missing"))
    if missing:
        click.echo(f"\nmissing files are expected under {where.path}; to use files elsewhere pass --data-dir DIR "
                   f"or set {ENV_VAR}=DIR (DIR holds {', '.join(m + '/' for m in missing)}).")


@data.command("check")
@_DATA_DIR
@click.argument("names", nargs=-1)
def check(data_dir, names) -> None:
    """Verify SHA-256 checksums; exit code 1 on a mismatch.

    Present files are hashed and compared with the known checksums; missing
    files are listed with their expected names and checksums.
    """
    where = resolve_data_dir(data_dir)
    click.echo(f"data directory: {where.describe()}")
    rows, missing, mismatches = [], [], 0
    for name in _selected(names):
        spec = REGISTRY[name]
        if not isinstance(spec, FileDataset):
            continue
        for st in file_status(spec, where.path, verify=True):
            if st.status == "missing":
                missing.append(st)
                continue
            mismatches += st.status == "mismatch"
            note = {"ok": "ok", "mismatch": "MISMATCH", "unverified": "present (no checksum known)"}[st.status]
            rows.append((name, st.expected, note, st.sha256_actual or "-"))
    if rows:
        _table(rows, ("dataset", "file", "check", "sha256"))
    else:
        click.echo("no dataset files present")
    if missing:
        click.echo(f"\nmissing files (expected under {where.path}; elsewhere: --data-dir DIR or {ENV_VAR}=DIR):")
        expected_rows = []
        for st in missing:
            known = st.file.known_checksums()
            if known:
                expected_rows += [(st.dataset, fname, sha) for fname, sha in known]
            else:
                expected_rows.append((st.dataset, st.expected, "unknown"))
        _table(expected_rows, ("dataset", "expected file", "sha256"))
    if mismatches:
        click.echo(f"\n{mismatches} file(s) do not match their SHA-256", err=True)
        raise SystemExit(1)


@data.command("fetch")
@_DATA_DIR
@click.option("--base-url", default=None, help="Download from this address instead of the data set's source (a "
              "mirror holding the same file names).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.argument("names", nargs=-1, required=True)
def fetch_(data_dir, base_url, quiet, names) -> None:
    """Download the files of NAMES (mnist, fashion-mnist) into the data directory, checking the SHA-256 nolo knows.

    USPS has no public download (Kaggle needs an account): the command says where to put the file.  The sources
    are listed in the nolo.datasets.fetch module's documentation.
    """
    from nolo.datasets.errors import DatasetNotFoundError
    from nolo.datasets.fetch import fetch
    from nolo.exceptions import ParameterError

    if base_url is not None and len(names) > 1:
        raise click.UsageError("--base-url serves one data set: give one NAME with it")
    from nolo._validation import check_writable_dir

    where = resolve_data_dir(data_dir)
    try:  # before downloading
        check_writable_dir(where.path, "--data-dir" if data_dir is not None else f"the data directory ({where.source})")
    except ParameterError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"data directory: {where.describe()}")
    for name in names:
        try:
            files = fetch(name, data_dir, base_url=base_url, progress=not quiet)
        except ParameterError as exc:
            raise click.UsageError(str(exc)) from None
        except DatasetNotFoundError as exc:
            raise click.ClickException(str(exc)) from None
        for f in files:
            state = "downloaded" if f["downloaded"] else "already present"
            check = "checksum ok" if f["verified"] else f"no pinned checksum; sha256 {f['sha256']}"
            click.echo(f"{f['file']}: {state}, {check}")
