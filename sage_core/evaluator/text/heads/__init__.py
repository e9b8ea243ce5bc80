"""Learned, schema-driven heads on the frozen all-MiniLM-L6-v2 encoder (applied with numpy).

Four small heads (one hidden ReLU layer each, scikit-learn MLPs), trained by ``python -m sage_core train-heads``
and committed as ``heads.json`` beside this file (plain JSON weights: no pickle, loaded offline):

- **act head**: an agent reply (or sentence) -> one probability per dialogue act (REQUEST, CONFIRM,
  NOTIFY_SUCCESS, OFFER, INFORM, ...), multi-label, Platt-calibrated per act; the mean of two MLPs' logits, one on
  the reply's embedding, one on the embedding of the reply with its numbers and capitalised names masked
  (``act_text``: the act does not depend on the values; ``act_logits``);
- **slot head**: a request sentence against *every* slot of the workflow's schema. The slot is embedded
  from its name and description, its description alone and its name alone (``slot_renderings``; the pair logit is
  their ``SLOT_RENDERING_WEIGHTS`` mean), and the pair is scored from schema-free features
  (elementwise product, absolute difference, cosine), so slots of services never seen in training,
  renamed / paraphrased schemas and slots outside the current intent are scored the same way; a listwise
  logistic stage then weighs each slot's score against the other slots of the schema, the sentence's
  request score, whether the question asks for the kind of value the slot holds and whether it is about the end of
  the trip the slot is (origin or destination; ``slot_rank_features``, ``answer_types``). A second listwise
  stage adds how well the sentence's tokens meet the slot's name and description word by word (``token_matches``, on
  MiniLM's contextual token vectors, against the other slots: ``MAXSIM_RANK_FEATURES``); the two stages' calibrated
  probabilities are averaged. Each clause of a multi-part question is scored as well (``request_units``);
- **slot-mention head** (optional in the file): u_t against every slot of the schema (``slot_text``): p(u_t gives
  a value for the slot at all), whatever the value; Platt-calibrated. Used by S2's UV check for yes/no slots and
  "no preference" values said in words no keyword list has (``verify.s2_symbolic``'s mention verdict);
- **informs head** (optional in the file): a one-sentence user question -> p(it gives a value) ("Can you find 1
  room at a 2 star hotel?") rather than asking about the offer ("Does their menu have vegetarian food?"); values the
  rules read in a question the head reads as asking are dropped (``user_values.drop_values_in_asking_questions``);
- **value-support head** (optional in the file): u_t against every value of a categorical slot, each as
  ``value_claim`` text; a pair MLP, then a listwise logistic over the slot's values (``VALUE_RANK_FEATURES``):
  p(u_t says this value rather than another), for values no word of which occurs in the dialogue ("games" for
  Sports). Used by S2's UV check, times the mention head's p (``verify.s2_symbolic``'s value-head verdict).

Probabilities are calibrated (Platt scaling fitted on held-out data), so an extracted act's confidence
is a probability and the S2 margin built from it (``1 - 2p`` for "failure absent") is meaningful.
Keyword rules stay as high-precision shortcuts in ``agent_acts``; paraphrases are the heads' job.

Modules: ``units`` (what is scored in a text), ``act_input`` (the reply as the act head's second MLP reads it),
``schema_text`` (slots and values in words), ``features`` (pair and ranking features, the MLP forward pass), ``model``
(``Heads``), ``loading`` (``load_heads``), ``blas_threads``.
"""
from sage_core.evaluator.text.heads.units import (clauses, mention_units, question_sentences, request_unit_groups,
                                                  request_units, split_question_pairs)
from sage_core.evaluator.text.heads.schema_text import (SLOT_RENDERING_WEIGHTS, request_slots, schema_slots,
                                                        slot_match_texts, slot_renderings, slot_text, value_candidates,
                                                        value_claim)
from sage_core.evaluator.text.heads.features import (MAXSIM_FEATURES, MAXSIM_RANK_FEATURES, RANK_FEATURES,
                                                     VALUE_RANK_FEATURES, WH_REQUEST_LOGIT_FLOOR, act_logits,
                                                     centred_pair_features, maxsim_features, mlp_logits,
                                                     pair_features, rank_features, request_logit, sigmoid,
                                                     slot_rank_features, SlotTokens, token_matches)
from sage_core.evaluator.text.heads.act_input import act_text
from sage_core.evaluator.text.heads.blas_threads import single_thread_blas
from sage_core.evaluator.text.heads.model import (Embedder, Heads, ListwiseStage, MEMO_MAX, NON_REQUEST_QUESTION_ACTS,
                                                  STATEMENT_REQUEST_MIN, SUM_KINDS, WH_QUESTION_VETOES)
from sage_core.evaluator.text.heads.loading import DEFAULT_HEADS_PATH, DIM, FORMAT, load_heads

__all__ = ["DEFAULT_HEADS_PATH", "DIM", "Embedder", "FORMAT", "Heads", "ListwiseStage", "MAXSIM_FEATURES",
           "MAXSIM_RANK_FEATURES", "MEMO_MAX", "NON_REQUEST_QUESTION_ACTS", "RANK_FEATURES", "SLOT_RENDERING_WEIGHTS",
           "STATEMENT_REQUEST_MIN", "SUM_KINDS", "SlotTokens", "VALUE_RANK_FEATURES", "WH_QUESTION_VETOES",
           "WH_REQUEST_LOGIT_FLOOR", "act_logits", "act_text", "centred_pair_features", "clauses", "load_heads",
           "maxsim_features", "mention_units", "mlp_logits", "pair_features", "question_sentences", "rank_features",
           "request_logit", "request_slots", "request_unit_groups", "request_units", "schema_slots", "sigmoid",
           "single_thread_blas", "slot_match_texts", "slot_rank_features", "slot_renderings", "slot_text",
           "split_question_pairs", "token_matches", "value_candidates", "value_claim"]
