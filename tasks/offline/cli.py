"""`sgr offline ...`: serve the sites, regenerate or check the committed task release, list tasks."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from tasks.offline.app import DEFAULT_SEED

app = typer.Typer(no_args_is_help=True)


@app.command("serve")
def serve(port: int = 8765, seed: int = DEFAULT_SEED,
          lab: bool = typer.Option(False, "--lab", help="Serve the widget lab (tasks/widget_lab) instead.")) -> None:
    """Serve the offline sites (or, with --lab, the widget lab) on 127.0.0.1:PORT until interrupted."""
    from tasks.offline.server import OfflineServer

    if lab:
        from tasks.widget_lab.registry import vendor_missing
        from tasks.widget_lab.server import LabServer

        if vendor_missing():
            typer.echo(f"warning: {vendor_missing()}", err=True)
        context, what = LabServer(port=port), "widget lab"
    else:
        context, what = OfflineServer(seed=seed, port=port), "offline sites"
    with context as server:
        typer.echo(f"{what} at {server.origin}/ (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


@app.command("build")
def build(
    check: bool = typer.Option(False, "--check", help="Fail if the committed files differ from a fresh build."),
    out: Path = typer.Option(None, help="Release folder (default: tasks/offline/data)."),
    seed: int = DEFAULT_SEED,
) -> None:
    """Regenerate the offline task release (records, JSONL splits, walkthroughs) and, without --out, the held-out
    set's own release (tasks/offline/heldout)."""
    from tasks.offline.heldout.release import HELDOUT_DIR, check_heldout, write_heldout
    from tasks.offline.suite import DATA_DIR, check_release, write_release

    out_dir = out or DATA_DIR
    if check:
        problems = check_release(out_dir, seed) + ([] if out else check_heldout(HELDOUT_DIR, seed))
        for problem in problems:
            typer.echo(problem, err=True)
        if problems:
            typer.echo(f"{len(problems)} difference(s); run `sgr offline build` and commit the result", err=True)
            raise typer.Exit(1)
        typer.echo(f"{out_dir} is up to date" + ("" if out else f"; so is {HELDOUT_DIR}"))
        return
    written = write_release(out_dir, seed)
    typer.echo(f"wrote {len(written)} files under {out_dir}")
    if not out:
        typer.echo(f"wrote {len(write_heldout(HELDOUT_DIR, seed))} files under {HELDOUT_DIR}")


@app.command("tasks")
def list_tasks(seed: int = DEFAULT_SEED,
               origin: str = typer.Option(None, "--origin", help="Where `sgr offline serve` listens, e.g. "
                                          "http://127.0.0.1:8765: replaces the placeholder origin "
                                          "http://sgr-offline.local in start URLs and instructions."),
               jsonl: bool = typer.Option(False, "--jsonl", help="Print the whole records, one JSON line each (the "
                                          "SGR-Bench record format), for another agent to run.")) -> None:
    """List the offline tasks: id, domain, cardinality, start URL (or, with --jsonl, the whole records)."""
    import json

    from tasks.offline.registry import PLACEHOLDER_ORIGIN
    from tasks.offline.suite import build_records

    if origin is not None and not origin.startswith(("http://", "https://")):
        typer.echo(f"error: --origin {origin!r}: give the served origin, e.g. http://127.0.0.1:8765", err=True)
        raise typer.Exit(2)
    for record in build_records(seed):
        if origin:  # the placeholder only ever stands in URLs: every occurrence is the served origin
            record = json.loads(json.dumps(record).replace(PLACEHOLDER_ORIGIN, origin.rstrip("/")))
        if jsonl:
            typer.echo(json.dumps(record, ensure_ascii=False))
        else:
            typer.echo(f"{record['task_id']}\t{record['domain']}\t{record['oracle_output_cardinality']}\t"
                       f"{record['start_url']}")
