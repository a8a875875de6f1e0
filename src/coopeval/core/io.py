"""File input and output: declared outputs appear whole or not at all (docs/protocol/engineering.md#journal);
delimited text is read with an explicit schema, never guessed types."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl


def write_parquet_atomic(frame: pl.DataFrame, path: str | Path) -> None:
    """Write to ``<path>.tmp`` then ``os.replace`` (no partial file is ever visible)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    frame.write_parquet(tmp)
    os.replace(tmp, target)


def read_delimited(path: str | Path, schema: Mapping[str, pl.DataType], separator: str = ",") -> pl.DataFrame:
    """Read a CSV (``separator=","``, fields quoted as ``polars.write_csv`` does) or TSV
    (``separator="\\t"``, no quoting: our manifests) file with an explicit column schema.

    Column types are never guessed: an identifier made of digits only stays a string (issue 13
    kind 10c). The header must name exactly the schema's columns, in order.

    Raises
    ------
    ValueError
        If the header differs from the schema (naming the file, both column lists and the fix),
        or a value does not parse as its column's type.
    """
    source = Path(path)
    with source.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\r\n").split(separator)
    if header != list(schema):
        raise ValueError(
            f"{source}: columns {header} differ from the expected {list(schema)}; "
            "the file was written by another version: delete it and rerun the rule that writes it"
        )
    try:
        return pl.read_csv(source, separator=separator, schema=dict(schema), quote_char=None if separator == "\t" else '"')
    except pl.exceptions.ComputeError as exc:
        raise ValueError(f"{source}: a value does not match the declared column types {dict(schema)}: {exc}") from None


def write_text_if_changed(path: str | Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless the file already holds exactly that text
    (its modification time then stays, so it never makes Snakemake rerun anything).

    Returns whether the file was written.
    """
    target = Path(path)
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return True
