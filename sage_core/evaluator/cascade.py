"""The SAGE cascade: every criterion goes to the cheapest stage that will decide it.

S1 (symbolic) -> S2 (encoder/NLI) -> S3 (optional focused LLM, only for
abstentions in the open-class set). Each criterion keeps a trace of every
attempt, abstentions included, and the stage that finally decided it.
Whole-slice evaluation runs S2 in batches across turns so that encoder
calls are shared and cached.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from sage_core.data.errors import ModelUnavailableError
from sage_core.data.types import (
    Criterion,
    CriterionTrace,
    Decision,
    Stage,
    Turn,
    TurnVerdict,
    Verdict,
)
from sage_core.evaluator.aggregate import UNCALIBRATED, TurnConfidenceMap, aggregate, extracted_map_for
from sage_core.evaluator.compile import DEFAULT_EXTRACTION_FLOOR, compile_with_evidence
from sage_core.evaluator.repair import repairs
from sage_core.evaluator.tools import is_tool_step
from sage_core.evaluator.verify.s1 import TurnContext, verify_s1
from sage_core.evaluator.verify.s2_encoders import make_backend
from sage_core.evaluator.verify.s2_symbolic import DEFAULT_TAU, GroundingBackend
from sage_core.specs.workflow import WorkflowRegistry, WorkflowSpec

CONFIG_STAGES = {
    "sage-core": (Stage.S1, Stage.S2),
    "sage-llm": (Stage.S1, Stage.S2, Stage.S3),
    "no_s1": (Stage.S2,),
    "no_s2": (Stage.S1,),
}
# Which abstentions may go to S3: criteria on free-text (non-categorical) slots and
# criteria whose evidence (value or act) was extracted from text rather than annotated.
OPEN_CLASS_DEFAULT = ("free_text_slot", "extracted")


@dataclass
class CascadeConfig:
    name: str = "sage-core"
    stages: tuple[Stage, ...] = CONFIG_STAGES["sage-core"]
    s2_backend: str = "offline"  # "offline" (embedded MiniLM + span grounding) | "nli" (cross-encoder)
    tau: float = DEFAULT_TAU  # S2 abstains when |margin| < tau
    extraction_floor: float = DEFAULT_EXTRACTION_FLOOR  # evidence below this confidence compiles nothing
    s3_open_class: tuple[str, ...] = OPEN_CLASS_DEFAULT
    nli_model: Optional[str] = None
    chunk_size: int = 64  # turns per S2 batch in evaluate()
    # learned act / requested-slot heads for turns without annotated agent acts (text-only): on by default,
    # read from the committed artifact (heads_path None) or the given JSON; use_heads=False = keyword rules only
    use_heads: bool = True
    heads_path: Optional[str] = None
    # turn confidence of turns whose evidence was extracted from text (aggregate.py): None = the map fitted on dev
    # for the offline backend (aggregate.extracted_map_for); annotated turns keep aggregate.UNCALIBRATED
    extracted_confidence: Optional[TurnConfidenceMap] = None

    @classmethod
    def named(cls, name: str, s2_backend: Optional[str] = None, tau: Optional[float] = None,
              **kw: Any) -> "CascadeConfig":
        """A named config (sage-core, sage-llm, no_s1, no_s2); unset parameters keep their documented defaults."""
        if name not in CONFIG_STAGES:
            raise ValueError(f"unknown config '{name}' (use one of {', '.join(CONFIG_STAGES)})")
        return cls(name=name, stages=CONFIG_STAGES[name], s2_backend=s2_backend or "offline",
                   tau=DEFAULT_TAU if tau is None else float(tau), **kw)

    @classmethod
    def from_settings(cls, name: str, settings: Any, s2_backend: Optional[str] = None,
                      tau: Optional[float] = None) -> "CascadeConfig":
        """For entry points: a named config with the values of a ``Settings`` object (explicit arguments win)."""
        return cls.named(name, s2_backend=s2_backend or settings.s2_backend,
                         tau=settings.tau if tau is None else tau, extraction_floor=settings.extraction_floor,
                         nli_model=settings.nli_model_dir or settings.nli_model)


def is_open_class(c: Criterion, spec: WorkflowSpec, open_class: tuple[str, ...]) -> bool:
    """Whether an abstained criterion may be sent to the paid S3 stage."""
    if "all" in open_class:
        return True
    if "extracted" in open_class and float(c.args.get("confidence", 1.0)) < 1.0:
        return True
    slot = c.args.get("slot")
    if "free_text_slot" in open_class and slot in spec.slots:
        sp = spec.slots[slot]
        return not sp.is_categorical and sp.value_type == "text"
    return False


def _blas_for(heads: Any):
    """One BLAS-thread limit around a chunk's compile loop (the heads' per-turn limit then nests for free)."""
    if heads is None:
        return contextlib.nullcontext()
    from sage_core.evaluator.text.heads import single_thread_blas
    return single_thread_blas()


def _abstain_all() -> Verdict:
    return Verdict(Decision.ABSTAIN, 0.0, Stage.NONE, "", "every stage abstained")


@dataclass
class _Work:
    turn: Turn
    ctx: Optional[TurnContext] = None
    criteria: list[Criterion] = field(default_factory=list)
    attempts: list[list[Verdict]] = field(default_factory=list)
    final: list[Optional[Verdict]] = field(default_factory=list)
    ms: float = 0.0
    paid_calls: int = 0
    cost_usd: float = 0.0


class Evaluator:
    """Runs one cascade config over turns of the workflows in ``registry``."""

    def __init__(self, registry: WorkflowRegistry, config: Optional[CascadeConfig] = None,
                 s2: Optional[GroundingBackend] = None, s3: Any = None, heads: Any = None):
        self.registry = registry
        self.config = config or CascadeConfig.named("sage-core")
        self._s2 = s2
        self._s3 = s3
        self._heads = heads

    @property
    def heads(self) -> Any:
        """The learned heads (loaded on the first text-only turn); None when ``config.use_heads`` is off.

        A missing or corrupt heads file is a ``SageInputError`` naming the file.
        """
        if not self.config.use_heads:
            return None
        if self._heads is None:
            from sage_core.evaluator.text.heads import load_heads
            self._heads = load_heads(self.config.heads_path)
        return self._heads

    # --- stages (lazy) -----------------------------------------------------------
    @property
    def s2(self) -> GroundingBackend:
        if self._s2 is None:
            self._s2 = make_backend(self.config.s2_backend, self.config.tau, self.config.nli_model)
            if self.config.use_heads:
                self._s2.heads_loader = lambda: self.heads
        return self._s2

    @property
    def s2_backend_name(self) -> str:
        if Stage.S2 not in self.config.stages:
            return "none"
        return self.s2.name

    @classmethod
    def from_settings(cls, registry: WorkflowRegistry, config: CascadeConfig, settings: Any) -> "Evaluator":
        """For entry points: the S3 stage (sage-llm) is built from the settings' LLM endpoint when one is set."""
        s3 = None
        if Stage.S3 in config.stages and settings.llm_api_key:
            from sage_core.evaluator.verify.s3 import S3Verifier
            s3 = S3Verifier.from_settings(settings)
        return cls(registry, config, s3=s3)

    @property
    def s3(self) -> Any:
        """The LLM stage (sage-llm only): given to the constructor, never read from the environment here."""
        if self._s3 is None:
            raise ModelUnavailableError("S3 not configured: set SAGE_LLM_BASE_URL/SAGE_LLM_API_KEY")
        return self._s3

    # --- evaluation -----------------------------------------------------------------
    def evaluate_turn(self, turn: Turn) -> TurnVerdict:
        return self.evaluate([turn])[0]

    def evaluate(self, turns: list[Turn], progress: Optional[Callable[[int, int], None]] = None
                 ) -> list[TurnVerdict]:
        if Stage.S3 in self.config.stages:
            self.s3  # fail fast, before any work, when S3 is not configured
        out: list[TurnVerdict] = []
        n = len(turns)
        step = max(1, self.config.chunk_size)
        for lo in range(0, n, step):
            out.extend(self._evaluate_chunk(turns[lo:lo + step]))
            if progress:
                progress(len(out), n)
        return out

    def _compile_s1(self, turn: Turn, heads: Any, prefetch_ms: float) -> _Work:
        """Compile one turn's criteria and run S1 on them; ``heads`` (None: keyword rules) read its reply, whose
        share of the chunk's batched encoding, ``prefetch_ms``, is added to its time."""
        stages = self.config.stages
        t0 = time.perf_counter()
        w = _Work(turn)
        if heads is not None:
            w.ms += prefetch_ms
        spec = self.registry.get(turn.workflow, line=getattr(turn, "_line", None))
        w.criteria, uvs, acts = compile_with_evidence(turn, spec, self.config.extraction_floor, self.registry.profile,
                                                      heads)
        w.ctx = TurnContext(turn, spec, uvs, acts, self.registry.profile)
        for c in w.criteria:
            att: list[Verdict] = []
            final = None
            if Stage.S1 in stages:
                v = verify_s1(c, w.ctx)
                att.append(v)
                if v.decision != Decision.ABSTAIN:
                    final = v
            w.attempts.append(att)
            w.final.append(final)
        w.ms += (time.perf_counter() - t0) * 1000
        return w

    def _evaluate_chunk(self, turns: list[Turn]) -> list[TurnVerdict]:
        stages = self.config.stages
        # replies whose acts the heads will read: text-only turns, not a tool-calling agent's steps (those
        # have their own criteria and never consult the heads, so embedding them would be wasted work)
        text_only = [t for t in turns if t.agent_acts is None
                     and not is_tool_step(t, self.registry.get(t.workflow, line=getattr(t, "_line", None)))]
        text_only_ids = {id(t) for t in text_only}
        heads = self.heads if text_only else None
        prefetch_ms = 0.0
        if heads is not None:  # one batched encoder call for the chunk's replies
            t0 = time.perf_counter()
            heads.prefetch_replies([t.agent for t in text_only])
            prefetch_ms = (time.perf_counter() - t0) * 1000 / len(text_only)
        with _blas_for(heads):
            work = [self._compile_s1(turn, heads if id(turn) in text_only_ids else None, prefetch_ms)
                    for turn in turns]
        if Stage.S2 in stages:  # one batched S2 call for the whole chunk
            todo = [(w, i) for w in work for i, f in enumerate(w.final) if f is None]
            if todo:
                t0 = time.perf_counter()
                verdicts = self.s2.verify_many([(w.criteria[i], w.ctx) for w, i in todo])
                share = (time.perf_counter() - t0) * 1000 / len(todo)
                for (w, i), v in zip(todo, verdicts):
                    w.attempts[i].append(v)
                    w.ms += share
                    if v.decision != Decision.ABSTAIN:
                        w.final[i] = v
        if Stage.S3 in stages:
            for w in work:
                for i, c in enumerate(w.criteria):
                    if w.final[i] is None and is_open_class(c, w.ctx.spec, self.config.s3_open_class):
                        t0 = time.perf_counter()
                        v, usage = self.s3.verify(c, w.turn, w.ctx.spec)
                        w.ms += (time.perf_counter() - t0) * 1000
                        w.attempts[i].append(v)
                        paid = getattr(usage, "paid_calls", None)
                        w.paid_calls += int(paid) if paid is not None else int(not getattr(usage, "cached", False))
                        w.cost_usd += float(getattr(usage, "cost_usd", 0.0) or 0.0)
                        if v.decision != Decision.ABSTAIN:
                            w.final[i] = v
        out = []
        s2_name = self.s2_backend_name
        extracted_map = self.config.extracted_confidence or extracted_map_for(self.config.s2_backend)
        for w in work:
            traces = [CriterionTrace(c, att, f or _abstain_all())
                      for c, att, f in zip(w.criteria, w.attempts, w.final)]
            annotated = w.turn.agent_acts is not None and w.turn.user_values is not None
            label, conf = aggregate(traces, UNCALIBRATED if annotated else extracted_map)
            out.append(TurnVerdict(w.turn.turn_id, w.turn.dialogue_id, label, conf, traces, repairs(traces),
                                   self.config.name, s2_name, round(w.ms, 3), w.paid_calls,
                                   round(w.cost_usd, 8)))
        return out


__all__ = ["CascadeConfig", "Evaluator", "CONFIG_STAGES", "is_open_class", "OPEN_CLASS_DEFAULT"]
