"""``scopa recipe``: make an agent by a recipe, a config of ``scopa`` commands run in order.

An agent such as the shipped one is made by a chain of commands: collect a search's
decisions, fit a network, collect the decisions that network's play reaches, refit, ...,
average the fits. A recipe (``configs/pretrained.yaml``) lists them as steps, each a command
line of ``scopa`` with a name::

    steps:
      - name: AV
        run: train --config configs/expert_iteration_alphabeta_value.yaml --collect-only seed=11
      - name: SV0
        run: seat-value --tasks {AV}/warm_start --epochs 4
    agent: seat_value:network={SV0}

and ``scopa recipe RECIPE --run-dir DIR`` runs them. Each step writes one thing in ``DIR``,
named after the step: the folder ``DIR/NAME`` for ``train`` (given as ``--run-dir``) and
``value`` (given as ``--out``), the file ``DIR/NAME.pt`` for the commands that fit a network
(given as ``--out``). ``{NAME}`` in a
later step, or in ``agent`` (the player the recipe makes, for ``scopa eval``), stands for it.

Everything is checked before the first step starts: the recipe's keys, the steps' names and
references, every step's options by its own command's parser and a ``train`` step's config
with its overrides. So a typo in the last step stops the run at once, not hours in.

Each step runs as its own process, exactly as the same command typed alone would (the dry run,
``--dry-run``, prints those commands). ``DIR/recipe.json`` records each step's command when it
starts and when it ends. The same command run again skips the steps that ended and carries on
the one that was stopped: its command continues its own work (a warm start's saved tasks, a
fit's saved epochs), so the recipe ends as one that never stopped. A step whose command ended
before its end was recorded (a stop between the two) is recorded done, not run again, when what
it writes is whole and nothing of a stopped run is left beside it. A step recorded with another
command line than the recipe gives now is refused: the folder was made by another recipe.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from pydantic import Field, model_validator

from evaluation.records import atomic_path, folder_lock
from training.config import ConfigError, Section, load_model


class Writes(NamedTuple):
    """What a step's command writes: the option that names it and the suffix of the name."""

    option: str
    suffix: str = ""


#: The commands a step may run, and what each writes: a folder or a network's file.
STEP_COMMANDS: dict[str, Writes] = {
    "train": Writes("--run-dir"),
    "value": Writes("--out"),
    "value-ensemble": Writes("--out", ".npz"),
    "last-round": Writes("--out", ".pt"),
    "seat-value": Writes("--out", ".pt"),
    "seat-ensemble": Writes("--out", ".pt"),
}
#: Options the recipe gives each step itself.
RESERVED = ("--run-dir", "--out", "--resume")
#: The journal of a recipe's folder.
JOURNAL = "recipe.json"
#: A step's name; ``{NAME}`` refers to what the step wrote.
_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_REFERENCE = re.compile(rf"\{{({_NAME})\}}")


class Step(Section):
    """One command of a recipe."""

    #: Names what the step writes (``DIR/NAME`` or ``DIR/NAME.pt``) and ``{NAME}`` later on.
    name: str = Field(pattern=rf"^{_NAME}$")
    #: The command line after ``scopa``, without what the recipe gives (``--run-dir``,
    #: ``--out``); ``{NAME}`` is an earlier step's folder or file.
    run: str = Field(min_length=1)

    @property
    def words(self) -> list[str]:
        return shlex.split(self.run)

    @property
    def command(self) -> str:
        return self.words[0]


class Recipe(Section):
    """A chain of ``scopa`` commands that makes an agent."""

    name: str = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    #: The player the recipe makes, as ``scopa eval`` names one; ``{NAME}`` as in the steps.
    agent: str = Field(min_length=1)

    @model_validator(mode="after")
    def _check_steps(self) -> Recipe:
        seen: list[str] = []
        for step in self.steps:
            try:
                words = step.words
            except ValueError as error:
                raise ValueError(f"step {step.name}: {error} in {step.run!r}") from None
            if not words:
                raise ValueError(f"step {step.name} runs no command")
            if step.name in seen:
                raise ValueError(f"two steps are named {step.name}")
            if words[0] not in STEP_COMMANDS:
                raise ValueError(
                    f"step {step.name} runs {words[0]!r}; a step runs one of "
                    f"{', '.join(STEP_COMMANDS)}"
                )
            given = [word for word in words if word.split("=")[0] in RESERVED]
            if given:
                raise ValueError(
                    f"step {step.name} gives {given[0]}: the recipe gives each step its "
                    f"{STEP_COMMANDS[words[0]].option} (DIR/NAME), and carries on a stopped one "
                    "itself"
                )
            _check_references(step.run, seen, f"step {step.name}")
            seen.append(step.name)
        _check_references(self.agent, seen, "agent")
        return self


def _check_references(text: str, earlier: list[str], where: str) -> None:
    for name in _REFERENCE.findall(text):
        if name not in earlier:
            raise ValueError(
                f"{where} refers to {{{name}}}, which is not an earlier step "
                f"(earlier: {', '.join(earlier) or 'none'})"
            )


def output(step: Step, run_dir: Path) -> Path:
    """What ``step`` writes in ``run_dir``."""
    return run_dir / f"{step.name}{STEP_COMMANDS[step.command].suffix}"


def resolve(text: str, outputs: dict[str, Path]) -> str:
    """``text`` with each ``{NAME}`` replaced by that step's output."""
    return _REFERENCE.sub(lambda match: str(outputs[match.group(1)]), text)


def command_lines(recipe: Recipe, run_dir: Path) -> list[list[str]]:
    """Each step's whole command line (after ``scopa``) in ``run_dir``."""
    outputs = _outputs(recipe, run_dir)
    lines = []
    for step in recipe.steps:
        words = [resolve(word, outputs) for word in step.words]
        lines.append([*words, STEP_COMMANDS[step.command].option, str(outputs[step.name])])
    return lines


def check(recipe: Recipe, lines: list[list[str]]) -> None:
    """Parse every step's command line by its own command, and load a ``train`` or ``value``
    step's config with its overrides: a mistake in any step is a ``ConfigError`` naming it."""
    from cli.main import build_parser

    for step, line in zip(recipe.steps, lines, strict=True):
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr):
                args = build_parser(line).parse_args(line)
        except SystemExit:
            message = stderr.getvalue().strip().splitlines()
            raise ConfigError(
                f"step {step.name} ({step.command}): {message[-1] if message else 'bad options'}"
            ) from None
        try:
            _check_config(step, args)
        except ConfigError as error:
            raise ConfigError(f"step {step.name}: {error}") from None


def _check_config(step: Step, args: argparse.Namespace) -> None:
    """Load the config a ``train`` or ``value`` step gives, with its overrides."""
    if step.command == "train":
        from training.config import is_rllib_config, load_config

        if args.config is None:
            raise ConfigError("a train step gives --config")
        if args.config.is_file() and is_rllib_config(args.config):
            raise ConfigError("a recipe runs no RLlib config")
        load_config(args.config, args.overrides)
    elif step.command == "value":
        from training.deal_value import DealValueConfig

        load_model(DealValueConfig, args.config, args.overrides)


def read_journal(run_dir: Path) -> dict[str, dict[str, object]]:
    """The steps begun in ``run_dir``: ``{name: {"command": [...], "done": bool}}``."""
    path = run_dir / JOURNAL
    if not path.is_file():
        return {}
    try:
        journal = json.loads(path.read_text())
        if not isinstance(journal, dict) or not all(
            isinstance(entry, dict) and {"command", "done"} <= entry.keys()
            for entry in journal.values()
        ):
            raise ValueError("not a mapping of steps")
    except ValueError as error:
        raise ConfigError(f"{path} is not a recipe's journal ({error})") from None
    return journal


def _write_journal(run_dir: Path, journal: dict[str, dict[str, object]]) -> None:
    with atomic_path(run_dir / JOURNAL) as tmp:
        tmp.write_text(json.dumps(journal, indent=1) + "\n")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", type=Path, help="the recipe (configs/pretrained.yaml)")
    parser.add_argument(
        "--run-dir", type=Path, required=True, help="the folder the steps write; again to resume"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="check the recipe and print its commands only"
    )
    parser.add_argument("--until", metavar="STEP", help="stop after this step")


def run(args: argparse.Namespace) -> int:
    recipe = load_model(Recipe, args.recipe)
    names = [step.name for step in recipe.steps]
    if args.until is not None and args.until not in names:
        raise ConfigError(f"--until {args.until}: the steps are {', '.join(names)}")
    run_dir = args.run_dir.resolve()
    lines = command_lines(recipe, run_dir)
    check(recipe, lines)
    journal = _reconcile(read_journal(run_dir), recipe, lines, run_dir)
    if args.dry_run:
        for step, line in zip(recipe.steps, lines, strict=True):
            state = journal.get(step.name, {}).get("done")
            mark = "done" if state else "begun" if step.name in journal else "to do"
            print(f"# {step.name} ({mark})\nscopa {shlex.join(line)}")
        print(f"# the agent\n{resolve(recipe.agent, _outputs(recipe, run_dir))}")
        return 0
    with folder_lock(run_dir):
        for number, (step, line) in enumerate(zip(recipe.steps, lines, strict=True), 1):
            head = f"[{number}/{len(lines)}] {step.name}"
            if journal.get(step.name, {}).get("done"):
                print(f"{head}: done")
            elif step.name in journal and finished(step, run_dir):
                print(f"{head}: done (it ended before the journal recorded it)")
                journal[step.name]["done"] = True
                _write_journal(run_dir, journal)
            else:
                again = step.name in journal
                journal[step.name] = {"command": line, "done": False}
                _write_journal(run_dir, journal)
                code = _run_step(line, step, run_dir, again, head)
                if code != 0:
                    print(
                        f"scopa recipe: step {step.name} ended with status {code}; the same "
                        f"command carries it on: scopa recipe {args.recipe} --run-dir {run_dir}",
                        file=sys.stderr,
                    )
                    return code
                journal[step.name]["done"] = True
                _write_journal(run_dir, journal)
            if step.name == args.until:
                print(f"stopped after {step.name}, as asked (--until)")
                return 0
    agent = resolve(recipe.agent, _outputs(recipe, run_dir))
    print(f"{recipe.name}: made; the agent is {agent}\n  scopa eval '{agent}' ismcts --deals 2000")
    return 0


def _reconcile(
    journal: dict[str, dict[str, object]], recipe: Recipe, lines: list[list[str]], run_dir: Path
) -> dict[str, dict[str, object]]:
    """The journal, checked against the command lines the recipe gives now: a step made by
    another is refused, and one begun by another that left nothing is forgotten."""
    for step, line in zip(recipe.steps, lines, strict=True):
        entry = journal.get(step.name)
        if entry is None or entry["command"] == line:
            continue
        before = f"scopa {shlex.join(map(str, entry['command']))}"  # type: ignore[call-overload]
        if entry["done"]:
            raise ConfigError(
                f"step {step.name} of {run_dir} was made by another command, {before}; run "
                "that recipe again, or choose another --run-dir"
            )
        if output(step, run_dir).exists():
            raise ConfigError(
                f"step {step.name} was begun by another command, {before}, and left "
                f"{output(step, run_dir)}: remove it to run the step as the recipe gives it now"
            )
        del journal[step.name]
    return journal


def finished(step: Step, run_dir: Path) -> bool:
    """Whether a step's command has ended, read from what it writes: a deal value's weights with
    no stopped run's progress beside them, or a network's file with no saved fit. A ``train``
    step is never taken as ended here: carried on, it ends at once if nothing is left."""
    from cli.last_round import saved_fit
    from training.deal_value import PROGRESS, WEIGHTS

    out = output(step, run_dir)
    if step.command == "value":
        return (out / WEIGHTS).is_file() and not (out / PROGRESS).exists()
    if STEP_COMMANDS[step.command].suffix == ".pt":
        return out.is_file() and not saved_fit(out).exists()
    return False


def _outputs(recipe: Recipe, run_dir: Path) -> dict[str, Path]:
    return {step.name: output(step, run_dir) for step in recipe.steps}


def _run_step(line: list[str], step: Step, run_dir: Path, again: bool, head: str) -> int:
    """Run one step's command in its own process; a ``train`` step begun before resumes."""
    if again and step.command == "train" and output(step, run_dir).exists():
        words = ["train", "--resume", str(output(step, run_dir))]
        line = words + [word for word in line if word in ("--collect-only", "--no-progress")]
    print(f"{head}: scopa {shlex.join(line)}", flush=True)
    process = subprocess.Popen([sys.executable, "-m", "cli.main", *line])
    try:
        return process.wait()
    except KeyboardInterrupt:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        process.wait()
        raise KeyboardInterrupt(
            f"step {step.name} is kept; the same command carries it on"
        ) from None
