"""Compose, resolve and validate a parbench config.

Hydra is the one source of truth for parameters. A run composes, in order, each
registered study's config group (`conf/<study>/<profile>.yaml` where the study has one
for the profile, else `conf/<study>/default.yaml`), then the profile (`conf/local.yaml`
= profile `local`, which extends `conf/config.yaml` and may override any study's
values), then the Hydra overrides, into one plain dict. That dict is checked against
`workflow/schemas/config.schema.yaml` with every study's own schema merged in, plus the
checks that span keys. Snakemake (workflow/rules/common.smk) and every cell command load
the config through `load()`, so both see the same values.

Composing takes most of a second (Hydra parses every YAML file), and every cell and every
job of a run loads the config: a composed config is kept in `data/cache/config/` beside
`conf/`, under a key of everything composition reads (the profile, the overrides, every
file of `conf/`, the values of the resolvers on this machine, the registered studies, this
module, the studies' override aliases and the versions of Hydra and OmegaConf), and
composed again whenever any of them differs. Validation runs on every load, cached or not.

Errors are `ConfigError`s whose message names the bad value, where it is, and what is
allowed.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
from pathlib import Path

from parbench import project, studies, yaml_file
from parbench.telemetry.affinity import available_cpus, core_topology

DEFAULT_PROFILE = "local"


class ConfigError(ValueError):
    """The config cannot be used; the message says what is wrong and what is allowed."""


# --- resolvers used by the profiles --------------------------------------------------------

def usable_cores() -> int:
    return len(available_cpus())


def worker_sweep(cores: int | None = None) -> list[int]:
    """1, 2, 4, ... below `cores`, then `cores` itself: [1, 2] on 2 cores, [1, 2, 4, 8, 12]
    on 12."""
    cores = usable_cores() if cores is None else int(cores)
    counts, n = [], 1
    while n < cores:
        counts.append(n)
        n *= 2
    counts.append(cores)
    return counts


def thread_range(cores: int | None = None) -> list[int]:
    """1, 2, ..., cores."""
    cores = usable_cores() if cores is None else int(cores)
    return list(range(1, cores + 1))


# The resolvers the profiles use (`${cores:}`): each reads this machine or the registry.
RESOLVERS = {
    "available_cpus": lambda: available_cpus(),
    "performance_cpus": lambda: core_topology()["performance"],
    "efficiency_cpus": lambda: core_topology()["efficiency"],
    "cores": lambda: usable_cores(),
    "worker_sweep": lambda cores=None: worker_sweep(cores),
    "thread_range": lambda cores=None: thread_range(cores),
    "registered_studies": lambda: studies.names(),
}


def _register_resolvers() -> None:
    from omegaconf import OmegaConf

    for name, fn in RESOLVERS.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)


# --- composition -------------------------------------------------------------------------

def profile_from_path(path: str | os.PathLike, conf_dir: Path | None = None) -> str:
    """The profile name of a `--configfile` path; it must be a file directly in conf/."""
    path = Path(path)
    conf_dir = Path(conf_dir or project.conf_dir())
    if path.suffix not in (".yaml", ".yml"):
        raise ConfigError(f"config file {str(path)!r} is not a YAML profile; use one of "
                          f"{', '.join(list_profiles(conf_dir))} in {conf_dir}/")
    if not path.exists():
        raise ConfigError(f"config file {str(path)!r} does not exist; profiles: "
                          f"{', '.join(list_profiles(conf_dir))} (in {conf_dir}/)")
    if path.resolve().parent != conf_dir.resolve():
        raise ConfigError(f"profile {str(path)!r} must live in {conf_dir}/ (it extends "
                          f"{conf_dir}/config.yaml through Hydra); copy it there")
    return path.stem


def list_profiles(conf_dir: Path | None = None) -> list[str]:
    return sorted(p.stem for p in Path(conf_dir or project.conf_dir()).glob("*.yaml") if p.stem != "config")


def study_option(study: str, profile: str, conf_dir: Path) -> str:
    """The option of a study's config group that a profile composes: the one named after
    the profile, else `default`."""
    return profile if (conf_dir / study / f"{profile}.yaml").is_file() else "default"


def _expand_aliases(overrides: list[str]) -> list[str]:
    """Rewrite the override aliases studies keep for users (`algorithms=fast` is
    `sigpar/algorithms=fast`)."""
    aliases = {alias: group for s in studies.registered() for alias, group in s.override_aliases.items()}
    out = []
    for override in overrides:
        prefix = override[:1] if override[:1] in "+~" else ""
        key, sep, value = override[len(prefix):].partition("=")
        out.append(f"{prefix}{aliases[key]}{sep}{value}" if key in aliases else override)
    return out


def _primary(profile: str, conf_dir: Path) -> str:
    """Register (in Hydra's config store) the config a run composes: every study's group,
    then the profile, so that the profile's own values win over the studies' defaults."""
    from hydra.core.config_store import ConfigStore

    name = f"_parbench_{profile}"
    defaults = [{s: study_option(s, profile, conf_dir)} for s in studies.names()] + [profile, "_self_"]
    ConfigStore.instance().store(name=name, node={"defaults": defaults})
    return name


# The composed configs kept (see the module's docstring), beside conf/.
COMPOSED_CACHE = "data/cache/config"
# Bumped when what a cached file holds changes.
COMPOSED_FORMAT = 1


def composed_key(profile: str, overrides: list[str] | tuple[str, ...], conf_dir: Path) -> str | None:
    """The key of a composed config: a digest of everything composition reads. None where a
    value may come from outside those (a resolver other than parbench's own in a file or an
    override: OmegaConf's `${oc.env:...}`, Hydra's `${hydra:...}` or `${now:...}`): such a
    config is composed every time."""
    from importlib.metadata import version

    files = sorted(p for p in conf_dir.rglob("*") if p.is_file())
    texts = [p.read_bytes() for p in files]
    called = set(re.findall(rb"\$\{\s*([\w.]+)\s*:", b"\n".join([*texts, *(o.encode() for o in overrides)])))
    if any(name.decode() not in RESOLVERS for name in called):
        return None
    topology = core_topology()
    digest = hashlib.sha256(json.dumps({
        "format": COMPOSED_FORMAT, "profile": profile, "overrides": list(overrides), "conf_dir": str(conf_dir),
        "available_cpus": available_cpus(), "performance_cpus": topology["performance"],
        "efficiency_cpus": topology["efficiency"], "studies": studies.names(),
        "aliases": {s.name: s.override_aliases for s in studies.registered()},
        "hydra": version("hydra-core"), "omegaconf": version("omegaconf"),
        "files": [str(p.relative_to(conf_dir)) for p in files]}, sort_keys=True).encode())
    for text in texts:
        digest.update(len(text).to_bytes(8, "little") + text)
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:32]


def compose(profile: str, overrides: list[str] | tuple[str, ...] = (),
            conf_dir: Path | None = None) -> dict:
    """Compose profile + overrides with Hydra and resolve it to a plain dict: the one kept
    under its key when there is one (`composed_key`), else composed and kept."""
    conf_dir = Path(conf_dir or project.conf_dir()).resolve()
    if profile not in list_profiles(conf_dir):
        raise ConfigError(f"unknown profile {profile!r}; allowed: {', '.join(list_profiles(conf_dir))} "
                          f"(files in {conf_dir}/)")
    if isinstance(overrides, str):
        raise ConfigError(f"overrides must be a list of Hydra overrides, got the string {overrides!r}")
    key = composed_key(profile, overrides, conf_dir)
    kept = conf_dir.parent / COMPOSED_CACHE / f"{key}.json" if key else None
    if kept is not None:
        try:
            return json.loads(kept.read_text())
        except (OSError, ValueError):  # not kept yet, or a file cut short: compose it
            pass
    cfg = _compose(profile, list(overrides), conf_dir)
    if kept is not None and json.loads(json.dumps(cfg)) == cfg:  # JSON keeps it as it is (no int keys)
        from parbench.records import write_atomic

        try:
            write_atomic(kept, json.dumps(cfg))
        except OSError:  # a read-only checkout: compose every time
            pass
    return cfg


def _compose(profile: str, overrides: list[str], conf_dir: Path) -> dict:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    _register_resolvers()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir), version_base=None):
            cfg = hydra_compose(config_name=_primary(profile, conf_dir), overrides=_expand_aliases(overrides))
        resolved = OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException) as exc:
        # Hydra appends its search path to "not found" messages; the options list before it
        # is what a user needs.
        message = str(exc).split("\nConfig search path:")[0].rstrip()
        raise ConfigError(f"profile {profile!r} with overrides {list(overrides)}: {message}") from None
    finally:
        GlobalHydra.instance().clear()
    # shared keys first, then the studies in registry order
    shared = {k: v for k, v in resolved.items() if k not in studies.REGISTRY}
    return {"profile": profile, **shared, **{k: resolved[k] for k in studies.REGISTRY if k in resolved}}


# --- validation --------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def schema() -> dict:
    """The whole config's schema: the shared keys, and each registered study's section."""
    doc = yaml_file.read(project.schema_path())
    doc["properties"]["studies"]["items"]["enum"] = studies.names()
    for study in studies.registered():
        section = study.schema()
        section.pop("$schema", None)
        doc["$defs"].update(section.pop("$defs", {}))
        doc["properties"][study.name] = section
        doc["required"].append(study.name)
    return doc


def _where(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _deref(node: dict) -> dict:
    return schema()["$defs"][node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else node


def _schema_at(path) -> dict:
    """The schema node describing the object at `path` (for listing allowed keys). A key
    that is not among an object's `properties` is described by its `additionalProperties`
    schema (a map of user-chosen names to entries of one shape)."""
    node = schema()
    for part in path:
        node = _deref(node)
        if isinstance(part, int):
            node = node["items"]
        else:
            extra = node.get("additionalProperties")
            node = node.get("properties", {}).get(part, extra if isinstance(extra, dict) else {})
    return _deref(node)


def _describe(error) -> str:
    v, kind, arg = error.instance, error.validator, error.validator_value
    if kind == "enum":
        return f"{v!r} is not allowed; allowed: {', '.join(map(str, arg))}"
    if kind == "additionalProperties":
        allowed = sorted(_schema_at(error.absolute_path).get("properties", {}))
        unknown = sorted(set(v) - set(allowed))
        hints = [f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, allowed, 1)) else repr(u)
                 for u in unknown]
        return f"unknown key {', '.join(hints)}; allowed keys: {', '.join(allowed)}"
    if kind == "required":
        return error.message.replace("is a required property", "is missing (required)")
    if kind == "minimum":
        return f"{v!r} is too small; allowed: >= {arg}"
    if kind == "exclusiveMinimum":
        return f"{v!r} is too small; allowed: > {arg}"
    if kind == "maximum":
        return f"{v!r} is too large; allowed: <= {arg}"
    if kind == "type":
        return f"{v!r} has the wrong type; allowed: {arg}"
    if kind == "minItems":
        return f"{v!r} must have at least {arg} entr{'y' if arg == 1 else 'ies'}"
    if kind == "uniqueItems":
        return f"{v!r} lists an entry twice; entries must be unique"
    if kind == "pattern":
        return f"{v!r} does not match {arg}"
    return error.message


def _cross_key_errors(cfg: dict) -> list[str]:
    return [error for study in studies.registered() for error in study.config_errors(cfg)]


def validate(cfg: dict, source: str = "config") -> dict:
    """Check `cfg` against the schema and the cross-key rules; raise ConfigError listing
    every problem found."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    problems = [f"{_where(e.absolute_path)}: {_describe(e)}"
                for e in sorted(validator.iter_errors(cfg), key=lambda e: list(map(str, e.absolute_path)))]
    problems += _cross_key_errors(cfg)
    if problems:
        raise ConfigError(f"invalid {source}:\n  " + "\n  ".join(problems))
    return cfg


def load(profile: str = DEFAULT_PROFILE, overrides: list[str] | tuple[str, ...] = (),
         conf_dir: Path | None = None) -> dict:
    """Compose and validate; the dict every part of parbench works from."""
    cfg = compose(profile, overrides, conf_dir)
    source = f"config (profile {profile!r}" + (f", overrides {list(overrides)}" if overrides else "") + ")"
    return validate(cfg, source)


def load_for_command(command: str, profile: str, overrides: list[str] | tuple[str, ...] = ()) -> dict:
    """`load` for the `parbench <command>` subcommands: a bad profile or override stops the
    command with the reason, before any work."""
    try:
        return load(profile, overrides)
    except ConfigError as exc:
        raise SystemExit(f"parbench {command}: {exc}") from None
