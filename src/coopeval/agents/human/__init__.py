"""A person in a seat (docs/human-play.md): the ``human/<name>`` agent, the form it shows and the
seat protocol its front ends (:mod:`coopeval.humanplay`) speak."""

from coopeval.agents.human.agent import HUMAN, HumanAgent, make_human
from coopeval.agents.human.context import seat_context
from coopeval.agents.human.form import form_for
from coopeval.agents.human.seat import Question, SeatFolder, seats_root

__all__ = ["HUMAN", "HumanAgent", "Question", "SeatFolder", "form_for", "make_human", "seat_context", "seats_root"]
