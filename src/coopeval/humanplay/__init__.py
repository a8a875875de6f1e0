"""The front ends of the human seats (docs/human-play.md): a web page on localhost
(:mod:`.web`) and a terminal (:mod:`.tty`) over one seat protocol
(:mod:`coopeval.agents.human.seat`), and the ``coopeval play-human`` command (:mod:`.cli`)."""
