"""The explorer's privacy note, printed where a site is built and shown on its pages (no heavy imports: the CLI's help reads it)."""

PRIVACY_NOTE = (
    "This site shows every prompt as sent and, unless built with --no-raw-replies, every raw reply"
    " of the models. Check that you may publish them before you do."
)
