"""The text the decision loop itself sends to a model: the re-ask frame and the validators'
error messages (docs/protocol/answers.md#re-asks), as templates like every prompt (issue 20).

The engine's own texts are ``decisions/prompts/*.txt`` (:data:`ENGINE_TEXTS`); a study whose
answer formats write their own error messages keeps them in a folder of its own
(``studies/<study>/prompts/errors/``) and wraps it in a :class:`~coopeval.core.prompts.TemplateFolder`. Every cell id
includes :func:`answer_texts_hash` over the engine's texts and its study's, so rewording an
error message or the re-ask frame gives new Snakemake targets for the cells that can send it
(every cell of that study: any decision can be re-asked).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from coopeval.core.prompts import TemplateFolder

__all__ = ["ENGINE_TEXTS", "answer_texts_hash"]


ENGINE_TEXTS = TemplateFolder(Path(__file__).resolve().parent / "prompts")
"""The re-ask frame and the error messages of the engine's answer formats."""


def answer_texts_hash(*study_texts: TemplateFolder) -> str:
    """The part of a cell id that covers what the decision loop may send back to the model: a
    sha256 (hex, first 16 chars) over the engine's texts and ``study_texts`` (the error messages
    of the study's own formats)."""
    digest = hashlib.sha256()
    for texts in (ENGINE_TEXTS, *study_texts):
        digest.update(texts.content_hash().encode() + b"\0")
    return digest.hexdigest()[:16]
