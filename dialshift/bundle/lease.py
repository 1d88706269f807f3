"""One lease, one command: run as many whole units of a bundle's plan as finish by a deadline, then say what is left.

A lent GPU comes in leases of 15 device-minutes (start-up of one to two minutes included) with at most 10 minutes a
command, so ``bash BUNDLE/run.sh lease [--deadline SECONDS] [--resume DIR ...]`` runs the plan in one command:

* **Units.** The plan's steps are grouped into units that must run on one machine: a step and the steps that
  ``need`` it (Lee: ``lee-train-S`` with ``lee-dropout-S`` and ``lee-fp32-S``, i.e. one whole seed; Han and Xing:
  one step per variant and seed). A unit runs whole or not at all, so no seed is ever half returned.
* **Resume.** A step whose returned files are all in ``--out`` or in a ``--resume`` folder (the committed returned
  files of the earlier leases, ``docs/full_scale/returned/<paper>``) is skipped. A unit with some steps returned
  reruns the ones the others need (their files go to the work folder, not ``--out``).
* **Deadline and speed.** The deadline (default :data:`DEFAULT_DEADLINE`, 9 minutes) counts from the moment
  ``run.sh`` started (``$DIALSHIFT_LEASE_START``), set-up included. A unit runs only when its projected seconds fit
  in what is left: the plan's estimate times a *speed factor*, measured seconds over estimated seconds. The factor is
  first that of the steps returned by earlier leases (the last measured figures), else 1 (the assumed figures); the
  first unit the lease runs (Lee: ``smoke``, about a minute, when it has not been returned) measures it again (its
  wall time, loading included, over its estimate), and every later unit updates it. A unit projected over the whole
  deadline is never started (no lease could return it whole); the summary names it.
* **What is left.** ``--out`` gets ``lease.jsonl`` (one JSON line per lease, earlier leases' lines kept from the
  ``--resume`` folders): the deadline, the factor and where it came from, the steps run, skipped and left, and the
  projected seconds of what is left; one line on stdout says the same in words.
"""

import json
import os
import time
from pathlib import Path

from dialshift.errors import DialshiftError

#: Seconds of wall time a lease command may use, set-up included: 9 minutes, under the 10-minute command cap.
DEFAULT_DEADLINE = 540.0
#: A lease: 15 device-minutes in all, about 2 of them start-up, at most 10 per command.
LEASE_SECONDS, LEASE_START_SECONDS, COMMAND_SECONDS = 900.0, 120.0, 600.0
SUMMARY = "lease.jsonl"


def units(steps: list[dict]) -> list[list[dict]]:
    """The plan's steps grouped into the units that run whole on one machine, in plan order."""
    groups: dict[str, list[dict]] = {}
    for step in steps:
        root = step["name"]
        while "needs" in next((s for s in steps if s["name"] == root), {}):
            root = next(s for s in steps if s["name"] == root)["needs"]
        groups.setdefault(root, []).append(step)
    return list(groups.values())


def returned_descriptions(steps: list[dict], folders) -> dict[str, dict]:
    """``{step: description}`` of every step of the plan whose returned files are all in one of ``folders``."""
    found = {}
    for folder in map(Path, folders):
        for step in steps:
            if step["name"] not in found and all((folder / name).is_file() for name in step["returns"]):
                from dialshift.returned import read_json_object

                found[step["name"]] = read_json_object(folder / f"{step['name']}.json", "step description",
                                                       f"fetch {step['name']} again or delete its files")
    return found


def speed_factor(steps: list[dict], descriptions: dict[str, dict]) -> tuple[float, str]:
    """Measured over estimated seconds of the described steps, and where it came from (``assumed`` when none)."""
    estimated = measured = 0.0
    count = 0
    for step in steps:
        seconds = descriptions.get(step["name"], {}).get("seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and step["seconds"] > 0:
            estimated, measured, count = estimated + step["seconds"], measured + seconds, count + 1
    if not count:
        return 1.0, "assumed"
    return measured / estimated, f"measured on {count} step{'s' * (count > 1)}"


def projected(unit: list[dict], factor: float) -> float:
    return factor * sum(step["seconds"] for step in unit)


def fits_in_lease(pending: list[list[dict]], factor: float, deadline: float = DEFAULT_DEADLINE) -> list[list[dict]]:
    """The leading units of ``pending`` whose projected seconds add up to at most ``deadline``."""
    chosen, total = [], 0.0
    for unit in pending:
        total += projected(unit, factor)
        if total > deadline:
            break
        chosen.append(unit)
    return chosen


def _lease_start() -> float:
    value = os.environ.get("DIALSHIFT_LEASE_START")
    try:
        return float(value) if value else time.time()
    except ValueError:
        raise DialshiftError(f"$DIALSHIFT_LEASE_START={value!r}: not a time in seconds; unset it") from None


def _earlier_leases(folders) -> list[str]:
    for folder in map(Path, folders):
        path = folder / SUMMARY
        if path.is_file():
            return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return []


def run_lease(bundle, out, work, deadline: float = DEFAULT_DEADLINE, resume=(), progress: bool = False,
              clock=time.time, run_step=None) -> dict:
    """Run the whole units of the bundle's plan that fit by ``deadline`` seconds after the lease started; write
    ``lease.jsonl`` into ``out`` and return this lease's summary (see the module docstring)."""
    from dialshift.bundle.manifest import read_manifest
    from dialshift.bundle.steps import run_step as default_run_step

    run_step = run_step or default_run_step
    if deadline <= 0:
        raise DialshiftError(f"--deadline {deadline:g}: give the seconds the lease may run (default "
                             f"{DEFAULT_DEADLINE:g})")
    missing = [str(folder) for folder in resume if not Path(folder).is_dir()]
    if missing:
        raise DialshiftError(f"--resume {', '.join(missing)}: no such folder (give the folders of the returned files "
                             "of the earlier leases)")
    started = _lease_start()
    bundle, out, work = Path(bundle), Path(out), Path(work)
    out.mkdir(parents=True, exist_ok=True)
    steps = read_manifest(bundle)["steps"]
    earlier = returned_descriptions(steps, [out, *resume])
    factor, source = speed_factor(steps, earlier)
    ran, unit_seconds, unit_estimates = [], 0.0, 0.0
    pending = [unit for unit in units(steps) if not all(s["name"] in earlier for s in unit)]
    left = list(pending)
    too_long = []
    for unit in pending:
        before = clock()
        if projected(unit, factor) > deadline:  # no lease can run it whole: say so, and go on with the others
            too_long.append(unit[0]["name"])
            continue
        if projected(unit, factor) > deadline - (before - started):
            break
        for step in unit:
            target = out if step["name"] not in earlier else work / "rerun"  # needed by a later step of the unit
            run_step(bundle, step["name"], target, work, progress=progress)
            if target == out:
                ran.append(step["name"])
        left.remove(unit)
        # this lease's own speed: the units' wall time (loading included) over their estimates
        unit_seconds, unit_estimates = unit_seconds + clock() - before, unit_estimates + sum(s["seconds"] for s in unit)
        factor, source = unit_seconds / max(unit_estimates, 1e-9), f"measured in this lease on {len(ran)} steps"
    elapsed = clock() - started
    left_steps = [s["name"] for unit in left for s in unit]
    summary = {"bundle": read_manifest(bundle)["id"], "deadline_seconds": deadline, "seconds": round(elapsed, 1),
               "speed_factor": round(factor, 3), "speed_from": source, "ran": ran,
               "skipped_returned": sorted(earlier), "left": left_steps,
               "left_projected_seconds": round(sum(projected(unit, factor) for unit in left)),
               "left_leases": len(plan_leases(left, factor)), "over_deadline": too_long}
    lines = [*_earlier_leases([out, *resume]), json.dumps(summary, sort_keys=True)]
    from dialshift.io import atomic_write

    atomic_write(out / SUMMARY, "\n".join(lines) + "\n")
    return summary


def plan_leases(pending: list[list[dict]], factor: float, deadline: float = DEFAULT_DEADLINE) -> list[list[list[dict]]]:
    """``pending`` split into leases of one command each, in order (a unit longer than a command gets its own)."""
    leases = []
    while pending:
        chosen = fits_in_lease(pending, factor, deadline) or pending[:1]
        leases.append(chosen)
        pending = pending[len(chosen):]
    return leases


def summary_line(summary: dict) -> str:
    """The lease's one line on stdout."""
    ran = ", ".join(summary["ran"]) or "nothing"
    left = (f"left: {len(summary['left'])} steps, ~{summary['left_projected_seconds'] / 60:.1f} min, "
            f"{summary['left_leases']} more lease{'s' * (summary['left_leases'] != 1)} (run.sh lease --resume "
            "the returned files)") if summary["left"] else "nothing left"
    if summary.get("over_deadline"):
        left += (f"; {', '.join(summary['over_deadline'])} and the steps that need it project over the "
                 "deadline: no lease runs them whole until they are cut down")
    return (f"lease: ran {ran} in {summary['seconds']:.0f} s of {summary['deadline_seconds']:.0f} "
            f"(speed factor {summary['speed_factor']:.2f}, {summary['speed_from']}); {left}")


def render_plan(manifest: dict, resume=()) -> str:
    """The bundle's plan per unit (phase): estimated, measured and projected seconds, and the leases it needs."""
    steps = manifest["steps"]
    done = returned_descriptions(steps, resume)
    factor, source = speed_factor(steps, done)
    figures = "the last measured figures" if done else "the assumed figures (nothing returned yet)"
    lines = [f"{manifest.get('paper', 'lee')} plan by {figures}: speed factor {factor:.2f} ({source}); one lease = "
             f"{LEASE_SECONDS / 60:.0f} device-min, ~{LEASE_START_SECONDS / 60:.0f} of start-up, one command of "
             f"at most {COMMAND_SECONDS / 60:.0f} min, run with a {DEFAULT_DEADLINE / 60:.0f}-min deadline"]
    pending = []
    for unit in units(steps):
        names = " + ".join(s["name"] for s in unit)
        estimate = sum(s["seconds"] for s in unit)
        measured = [done[s["name"]].get("seconds") for s in unit if s["name"] in done]
        if len(measured) == len(unit) and all(isinstance(m, (int, float)) for m in measured):
            lines.append(f"  {names:<44} returned: {sum(measured) / 60:5.1f} min measured (estimate "
                         f"{estimate / 60:.1f})")
            continue
        pending.append(unit)
        lines.append(f"  {names:<44} {projected(unit, factor) / 60:5.1f} min projected (estimate "
                     f"{estimate / 60:.1f})")
    leases = plan_leases(pending, factor)
    for number, lease in enumerate(leases, 1):
        seconds = sum(projected(unit, factor) for unit in lease)
        over = " OVER the command cap: cut the unit (fewer passes or instances)" if seconds > COMMAND_SECONDS else ""
        lines.append(f"  lease {number}: {' + '.join(unit[0]['name'] for unit in lease)} "
                     f"(~{seconds / 60:.1f} min){over}")
    lines.append(f"  {len(leases)} lease{'s' * (len(leases) != 1)} left" if leases else "  nothing left")
    return "\n".join(lines) + "\n"
