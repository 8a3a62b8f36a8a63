"""Which models a benchmark really runs: keys come from the environment, and without one the offline
suite falls back to the scripted walkthrough model (said plainly, never silently)."""

from __future__ import annotations

from pathlib import Path

from agent.clients.policies import needs_key
from agent.config import BenchConfig, ConfigError, ModelConfig

SCRIPTED_MODEL = ModelConfig(name="scripted-walkthrough", provider="scripted", model="walkthrough")


FAULTY_MODEL = ModelConfig(name="faulty-walkthrough", provider="faulty", model="walkthrough+faults")


def faulty_notice(seed: int, plans: str = "walkthrough") -> str:
    planned = ("; the planner is answered with a played model's BLIND PLANS (tasks/offline/blind_plans)"
               if plans == "blind" else "; the planner is answered with the walkthrough's own (perfect) plan")
    return (f"FAULT-INJECTED REPLAYS (seed {seed}): the scripted policy makes one seeded mistake per task record and "
            f"follows the graph's feedback{planned}; the fault table (faults.md) says what each node catches. These "
            "are not model results.")


def scripted_notice(replaced: list[ModelConfig]) -> str:
    names = ", ".join(f"{m.name} (${m.api_key_env} not set)" for m in replaced)
    return (
        f"NO LLM KEY: running the SCRIPTED WALKTHROUGH model instead of {names}. The scores show that the "
        "browser, graph, evaluator and reports work end to end, not how well an LLM does. "
        "Set the key variable to run the real agent."
    )


def _named(model: ModelConfig, update: dict[str, str]) -> dict[str, str]:
    """Blind-plan policies get their own name, so their cells never share a folder with the perfect-plan ones."""
    return {**update, "name": update["name"].format(model.name)} if update else {}


def resolve_models(config: BenchConfig, config_path: Path) -> tuple[BenchConfig, list[str]]:
    """The effective config (models with keys, or the scripted stand-in) and the notices to show."""
    missing = [m for m in config.models if needs_key(m) and m.api_key() is None]
    if not missing:
        return config, []
    offline_only = all(ds.suite == "offline" for ds in config.datasets)
    if not (config.run.fallback_to_scripted and offline_only):
        index = config.models.index(missing[0])
        why = ("run.fallback_to_scripted is false" if config.run.fallback_to_scripted is False
               else "the scripted model only knows the offline suite's walkthroughs")
        raise ConfigError(
            f"{config_path}: models.{index}.api_key_env: environment variable ${missing[0].api_key_env} "
            f"is not set (model '{missing[0].name}'); {why}"
        )
    kept = [m for m in config.models if m not in missing]
    if config.faults is not None:  # the ablation without a key: fault-injected replays, plus clean ones
        blind = config.faults.plans == "blind"
        suffix = {"name": "{}+blind-plans", "plans": "blind"} if blind else {}
        kept += [SCRIPTED_MODEL.model_copy(update={"variants": config.faults.clean_variants, **_named(SCRIPTED_MODEL, suffix)}),
                 FAULTY_MODEL.model_copy(update={"fault_seed": config.faults.seed, **_named(FAULTY_MODEL, suffix)})]
        effective = config.model_copy(update={"models": kept})
        return effective, [scripted_notice(missing), faulty_notice(config.faults.seed, config.faults.plans)]
    if not any(m.provider == "scripted" for m in kept):
        kept.append(SCRIPTED_MODEL)
    effective = config.model_copy(update={"models": kept})
    return effective, [scripted_notice(missing)]
