"""Task packs: many repo tasks sharing one snapshot per package version, installed offline.

A pack is a directory::

    pack.json            name, packages (version, licence, snapshot, split, counts), held_out
    snapshots/*.tar.gz   one pristine tree per package version (licence file inside)
    tasks.jsonl.gz       one `Task.to_dict()` per line: setup patch, gold patch, tests, metadata

A task names its snapshot ``pack:<pack name>/<file>``; loading a pack from another directory
rewrites that to the file's absolute path. Splits are by repository: every task of a held-out
package is ``split="test"`` (a package the train split never saw); the tasks of the other
packages are ``"train"``, or ``"validation"`` for a stable 10% drawn by task id.

    rlvr tasks pack --from ~/.cache/rlvr-envs/repo --name mypack --held-out semver --out DIR
    gym.make("rlvr/RepoEdit-v0", tasks="pack:pypi", split="test")

`update_pack` rewrites a pack in place: tasks that failed an audit left out, measured pass
rates stored in each task's `difficulty.pass_rate` (`rlvr tasks pack-update`).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from rlvr_envs.tasks.repo.records import check_repo_task
from rlvr_envs.tasks.repo.snapshot import SHIPPED_DIR, resolve_snapshot

from rlvr_envs.core.task import Task

PACKS_DIR = SHIPPED_DIR / "packs"
DEFAULT_PACK = "pypi"
VALIDATION_PERCENT = 10
SPLITS = ("train", "validation", "test")


def pack_dir(name_or_path: str | Path) -> Path:
    """`pypi` → the shipped pack of that name; a path → that directory."""
    text = str(name_or_path)
    path = Path(text)
    if "/" not in text and not path.exists():
        path = PACKS_DIR / text
    if not (path / "pack.json").is_file():
        shipped = sorted(p.name for p in PACKS_DIR.glob("*") if (p / "pack.json").is_file())
        raise ValueError(f"no repo task pack at {path} (a pack is a directory with pack.json; "
                         f"shipped packs: {shipped})")
    return path


def split_of(task_id: str, package: str, held_out: Iterable[str]) -> str:
    if package in set(held_out):
        return "test"
    bucket = int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % 100
    return "validation" if bucket < VALIDATION_PERCENT else "train"


def write_pack(tasks: Sequence[Task], out: Path, *, name: str, held_out: Sequence[str] = (),
               build_dir: Path | None = None) -> dict:
    """Write `tasks` (built by `rlvr tasks build-repo`) as a pack in `out`; return the
    manifest. Each distinct snapshot is copied once; splits are assigned by repository.
    `build_dir`: the build's output directory, where `cache:` snapshots are found (default:
    the cache dir)."""
    if not tasks:
        raise ValueError("a pack needs at least one task")
    repos = {t.metadata["repo"] for t in tasks}
    unknown = sorted(set(held_out) - repos)
    if unknown:
        raise ValueError(f"held-out package(s) {unknown} have no task; packages: {sorted(repos)}")
    if out.exists():
        shutil.rmtree(out)
    (out / "snapshots").mkdir(parents=True)
    packages: dict[str, dict] = {}
    lines = []
    for task in sorted(tasks, key=lambda t: t.source_id or t.id):
        meta = dict(check_repo_task(task).metadata)
        location = str(meta["snapshot"])
        if build_dir is not None and location.startswith("cache:"):
            source = Path(build_dir) / "snapshots" / location.split(":", 1)[1]
        else:
            source = resolve_snapshot(location)
        if not source.is_file():
            raise FileNotFoundError(f"snapshot {location!r} of {task.source_id} not found at "
                                    f"{source}")
        if not (out / "snapshots" / source.name).exists():
            shutil.copyfile(source, out / "snapshots" / source.name)
        meta["snapshot"] = f"pack:{name}/{source.name}"
        split = split_of(task.id, meta["repo"], held_out)
        record = task.to_dict() | {"metadata": meta, "split": split}
        lines.append(json.dumps(record, sort_keys=True))
        entry = packages.setdefault(meta["repo"], {
            "version": meta.get("version"), "license": meta.get("license"),
            "snapshot": source.name, "split": "test" if split == "test" else "train",
            "tasks": 0, "levels": Counter(), "operators": Counter()})
        entry["tasks"] += 1
        entry["levels"][str(task.difficulty.level)] += 1
        entry["operators"][(meta.get("mutation") or {}).get("operator", "?")] += 1
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(("\n".join(lines) + "\n").encode("utf-8"))
    (out / "tasks.jsonl.gz").write_bytes(buf.getvalue())
    manifest = {"name": name, "tasks": len(lines), "held_out": sorted(held_out),
                "packages": {k: v | {"levels": dict(sorted(v["levels"].items())),
                                     "operators": dict(sorted(v["operators"].items()))}
                             for k, v in sorted(packages.items())}}
    (out / "pack.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def read_pack(name_or_path: str | Path) -> list[Task]:
    """The tasks of a pack, their snapshots resolved to the pack's own directory."""
    root = pack_dir(name_or_path)
    manifest = json.loads((root / "pack.json").read_text())
    shipped = root.resolve().parent == PACKS_DIR.resolve()
    tasks = []
    with gzip.open(root / "tasks.jsonl.gz", "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            snapshot = str(record["metadata"]["snapshot"])
            prefix = f"pack:{manifest['name']}/"
            if not snapshot.startswith(prefix):
                raise ValueError(f"{root}/tasks.jsonl.gz:{n}: snapshot {snapshot!r} is not in "
                                 f"this pack ({prefix}...)")
            if not shipped:
                record["metadata"]["snapshot"] = str(
                    (root / "snapshots" / snapshot[len(prefix):]).resolve())
            try:
                tasks.append(check_repo_task(Task.from_dict(record)))
            except (ValueError, TypeError) as err:
                raise ValueError(f"{root}/tasks.jsonl.gz:{n}: bad repo task record: {err}") \
                    from err
    return tasks


def shipped_packs() -> list[str]:
    return sorted(p.name for p in PACKS_DIR.glob("*") if (p / "pack.json").is_file())


def pack_manifest(name_or_path: str | Path) -> dict:
    return json.loads((pack_dir(name_or_path) / "pack.json").read_text())


def update_pack(name_or_path: str | Path, *, drop: Iterable[str] = (),
                pass_rates: dict[str, float] | None = None,
                pass_rate_source: str | None = None) -> dict:
    """Rewrite a pack in place: leave out the tasks in `drop` (source ids or task ids: those
    that failed an audit) and set `difficulty.pass_rate` from `pass_rates` (task id → rate,
    e.g. `PassRates.as_dict()` of `rlvr difficulty estimate`). Splits, snapshots and the other
    files of the directory (the audit report) stay. Returns the new manifest, which records
    what measured the pass rates (`pass_rate_source`)."""
    root = pack_dir(name_or_path)
    manifest = json.loads((root / "pack.json").read_text())
    dropped = set(drop)
    tasks = [t for t in read_pack(root) if t.source_id not in dropped and t.id not in dropped]
    if pass_rates:
        tasks = [t.with_pass_rate(pass_rates[t.id]) if t.id in pass_rates else t
                 for t in tasks]
    out = root.with_name(root.name + ".tmp")
    new = write_pack(tasks, out, name=manifest["name"], held_out=manifest["held_out"])
    measured = sum(t.difficulty.pass_rate is not None for t in tasks)
    if measured:
        new["pass_rates"] = {"tasks": measured, "measured_by": pass_rate_source
                             or manifest.get("pass_rates", {}).get("measured_by")}
        (out / "pack.json").write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
    for extra in root.iterdir():
        if extra.name not in ("pack.json", "tasks.jsonl.gz", "snapshots"):
            shutil.copy2(extra, out / extra.name) if extra.is_file() else \
                shutil.copytree(extra, out / extra.name)
    for snapshot in (out / "snapshots").iterdir():  # unchanged bytes, the same names
        if not (root / "snapshots" / snapshot.name).is_file():
            raise RuntimeError(f"snapshot {snapshot.name} is new; refusing to replace {root}")
    old = root.with_name(root.name + ".old")
    root.rename(old)
    out.rename(root)
    shutil.rmtree(old)
    return new
