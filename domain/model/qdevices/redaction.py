"""The redaction filter: takes every secret of a live call out of a line of text.

Run on every record line, error, downloaded log and traceback before it leaves the process. What it
removes, each replaced by ``[REDACTED]``:

- each secret given (the token, the VLQ envelope passwords, the value of USER_JWT_PWD):
  raw, JSON-escaped (ASCII and non-ASCII, with ``\\/``, and escaped twice as in a JSON string that holds
  JSON), as in a Python ``repr``, and in base64
  (standard and URL-safe, padded or not, and embedded in a longer base64 text at any of the three byte
  alignments); each of these whole, and by every start and every end of 8 characters or more, so a
  truncated copy in a log is cleaned too. A secret of fewer than 8 characters is removed whole only;
- a secret that is itself base64 text (USER_JWT_PWD is base64 of the password) also by its decoded text;
- any JWT-shaped text (three base64url segments, the first starting ``eyJ``);
- Fernet text (``gAAAAA`` + base64url) and any base64 text that holds Fernet text;
- the value after a ``USER_JWT_PWD`` name (``USER_JWT_PWD=...`` or HEAppE's ``{"Name": ..., "Value": ...}``).

``clean_json`` applies it to every string of a JSON value, keys as well as values, at every depth: a
site's result keys (MQSS counts, Piast-Q bitstrings, VLQ results.json) are the site's text too.

Pure and precompiled: the forms of the secrets are computed once in the constructor, and a line with no
secret costs a few substring searches.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MARKER = "[REDACTED]"
# Below this length a start or end of a secret is too common in ordinary text to remove on its own.
MIN_PIECE = 8
# A token shorter than this is refused at the start of a call: a short one is also a word of the
# record (MQSS_TOKEN=mqss would redact the site's name and every path that holds it).
MIN_SECRET_LENGTH = 16


def too_short(secret: str) -> bool:
    return len(secret) < MIN_SECRET_LENGTH

_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
_B64_TEXT = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")

# A JWT: base64url header (always '{"' → "eyJ"), payload, and a signature that is empty for alg "none".
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*")
# Fernet: version byte 0x80 and a timestamp whose high bytes are zero, URL-safe base64; a real token
# is about 100 characters, so 40 keeps a truncated one while passing over short look-alikes.
_FERNET_HEAD = "gAAAAA"
_FERNET = re.compile(r"gAAAAA[A-Za-z0-9_-]{40,}={0,2}")
# A base64 text that holds Fernet text is at least this long around its "gAAAAA" core.
_FERNET_B64_MIN = 56
_USER_JWT_PWD = "USER_JWT_PWD"
_PWD_ASSIGNED = re.compile(r"USER_JWT_PWD\\*[\"']?\s*[:=]\s*\\*[\"']?([^\s\"'\\&,;}]+)")
_PWD_HEAPPE = re.compile(r"USER_JWT_PWD\\*\"\s*,\s*\\*\"Value\\*\"\s*:\s*\\*\"([^\"\\]*)")


@dataclass(frozen=True)
class _Form:
    """One text form of a secret. A base64 form also takes its neighbouring base64 characters and
    padding, which carry a few bits of the secret."""

    text: str
    is_base64: bool


def _b64_core(data: bytes, alignment: int, alphabet_urlsafe: bool) -> str:
    """The base64 characters fixed by ``data`` alone when it starts ``alignment`` bytes into a
    3-byte group: the same characters appear wherever ``data`` sits in a longer base64 text."""
    padded = b"\0" * alignment + data
    encoded = (base64.urlsafe_b64encode if alphabet_urlsafe else base64.standard_b64encode)(padded).decode()
    first = -(-8 * alignment // 6)
    last = 8 * (alignment + len(data)) // 6
    return encoded[first:last]


def _decoded_base64(secret: str) -> str | None:
    """The text a base64 secret stands for (USER_JWT_PWD is base64 of the envelope password)."""
    if len(secret) < MIN_PIECE or not re.fullmatch(r"[A-Za-z0-9+/_-]+={0,2}", secret):
        return None
    body = secret.rstrip("=")
    body += "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(body.replace("-", "+").replace("_", "/"), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if len(text) < MIN_PIECE or not text.isprintable():
        return None
    return text


def _text_forms(secret: str) -> list[str]:
    json_ascii = json.dumps(secret)[1:-1]
    return [
        secret,
        json_ascii,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json_ascii.replace("/", "\\/"),
        # A request body kept as a JSON string inside a record line escapes the secret twice.
        json.dumps(json_ascii)[1:-1],
        repr(secret)[1:-1],
    ]


def _bytes_of(secret: str) -> bytes:
    """The bytes a secret is sent as. A value from the environment may hold undecodable bytes, which
    Python keeps as lone surrogates (surrogateescape): those are the bytes that went out."""
    for errors in ("strict", "surrogateescape", "surrogatepass"):
        try:
            return secret.encode("utf-8", errors)
        except UnicodeEncodeError:
            continue
    return secret.encode("utf-8", "replace")


def _base64_forms(secret: str) -> list[_Form]:
    data = _bytes_of(secret)
    if len(secret) < MIN_PIECE:
        whole = []
        for encode in (base64.standard_b64encode, base64.urlsafe_b64encode):
            padded = encode(data).decode()
            whole += [padded, padded.rstrip("=")]
        # A short secret's base64 is removed as a whole text only: its pieces are too common.
        return [_Form(w, is_base64=False) for w in whole]
    return [_Form(_b64_core(data, a, urlsafe), is_base64=True) for a in range(3) for urlsafe in (False, True)]


def _forms_of(secrets: Iterable[str]) -> list[_Form]:
    seen: dict[str, _Form] = {}
    for secret in secrets:
        variants = [secret]
        decoded = _decoded_base64(secret)
        if decoded is not None:
            variants.append(decoded)
        for variant in variants:
            candidates = [_Form(t, is_base64=False) for t in _text_forms(variant)] + _base64_forms(variant)
            for form in candidates:
                if form.text and form.text not in seen:
                    seen[form.text] = form
    return list(seen.values())


def _common_prefix(text: str, start: int, form: str) -> int:
    if text.startswith(form, start):
        return len(form)
    n = MIN_PIECE
    limit = min(len(form), len(text) - start)
    while n < limit and text[start + n] == form[n]:
        n += 1
    return n


def _common_suffix(text: str, end: int, form: str) -> int:
    if text.endswith(form, 0, end):
        return len(form)
    n = MIN_PIECE
    limit = min(len(form), end)
    while n < limit and text[end - n - 1] == form[-n - 1]:
        n += 1
    return n


def _widen_base64(text: str, start: int, end: int) -> tuple[int, int]:
    if start > 0 and text[start - 1] in _B64_CHARS:
        start -= 1
    if end < len(text) and text[end] in _B64_CHARS:
        end += 1
    while end < len(text) and text[end] == "=":
        end += 1
    return start, end


def _base64_run(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and text[start - 1] in _B64_CHARS:
        start -= 1
    match = _B64_TEXT.match(text, end)
    return start, (match.end() if match else end)


# Up to this many long forms, a substring search per form beats one pass over every window of the line.
_FEW_FORMS = 32

_FERNET_B64_CORES = tuple(
    dict.fromkeys(_b64_core(_FERNET_HEAD.encode(), a, urlsafe) for a in range(3) for urlsafe in (False, True))
)


class Redactor:
    """Removes the given secrets, JWTs and Fernet text from text. Immutable; ``with_secrets`` adds more."""

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        self._secrets: tuple[str, ...] = tuple(dict.fromkeys(s for s in secrets if s))
        forms = _forms_of(self._secrets)
        self._long = tuple(
            (f.text, f.text[:MIN_PIECE], f.text[-MIN_PIECE:], f.is_base64) for f in forms if len(f.text) >= MIN_PIECE
        )
        self._short = tuple(f.text for f in forms if len(f.text) < MIN_PIECE)
        by_anchor: dict[str, list[int]] = {}
        for index, (_, head, tail, _) in enumerate(self._long):
            for anchor in {head, tail}:
                by_anchor.setdefault(anchor, []).append(index)
        self._by_anchor = {anchor: tuple(indices) for anchor, indices in by_anchor.items()}
        self._anchors = frozenset(by_anchor)
        # Any 8-character anchor in a text holds the text's 4-character piece that starts at the next
        # multiple of 4, at an offset of 0 to 3 in the anchor: a scan of every fourth position rules
        # out most lines.
        self._grams = frozenset(anchor[o : o + 4] for anchor in self._anchors for o in range(4))

    def __repr__(self) -> str:  # a traceback that shows locals must not show the secrets
        return f"Redactor(<{len(self._secrets)} secrets>)"

    @property
    def secret_count(self) -> int:
        return len(self._secrets)

    def with_secrets(self, *secrets: str) -> Redactor:
        return Redactor(self._secrets + secrets)

    def clean(self, text: str) -> str:
        spans: list[tuple[int, int]] = []
        for form, head, tail, is_base64 in self._candidates(text):
            self._pieces(text, form, head, tail, is_base64, spans)
        for form in self._short:
            i = text.find(form)
            while i != -1:
                spans.append((i, i + len(form)))
                i = text.find(form, i + 1)
        self._shapes(text, spans)
        if not spans:
            return text
        return _replace(text, spans)

    def _candidates(self, text: str) -> tuple[tuple[str, str, str, bool], ...]:
        """The long forms worth searching for. With few forms, all of them: a substring search each
        is cheapest. With many (the token and one password per VLQ job), one pass over the line's
        8-character windows finds the few whose start or end is there at all."""
        if len(self._long) <= _FEW_FORMS:
            return self._long
        last = len(text) - 3
        if self._grams.isdisjoint(map(text.__getitem__, map(slice, range(0, last, 4), range(4, last + 4, 4)))):
            return ()
        present = self._anchors.intersection(text[i : i + MIN_PIECE] for i in range(len(text) - MIN_PIECE + 1))
        if not present:
            return ()
        indices = sorted({i for anchor in present for i in self._by_anchor[anchor]})
        return tuple(self._long[i] for i in indices)

    @staticmethod
    def _pieces(text: str, form: str, head: str, tail: str, is_base64: bool, spans: list[tuple[int, int]]) -> None:
        found: list[tuple[int, int]] = []
        i = text.find(head)
        while i != -1:
            found.append((i, i + _common_prefix(text, i, form)))
            i = text.find(head, i + 1)
        j = text.find(tail)
        while j != -1:
            end = j + MIN_PIECE
            found.append((end - _common_suffix(text, end, form), end))
            j = text.find(tail, j + 1)
        if is_base64:
            found = [_widen_base64(text, s, e) for s, e in found]
        spans.extend(found)

    @staticmethod
    def _shapes(text: str, spans: list[tuple[int, int]]) -> None:
        if "eyJ" in text:
            spans.extend(m.span() for m in _JWT.finditer(text))
        if _FERNET_HEAD in text:
            spans.extend(m.span() for m in _FERNET.finditer(text))
        for core in _FERNET_B64_CORES:
            i = text.find(core)
            while i != -1:
                start, end = _base64_run(text, i, i + len(core))
                if end - start >= _FERNET_B64_MIN:
                    spans.append((start, end))
                i = text.find(core, i + 1)
        if _USER_JWT_PWD in text:
            for pattern in (_PWD_ASSIGNED, _PWD_HEAPPE):
                spans.extend(m.span(1) for m in pattern.finditer(text) if m.end(1) > m.start(1))


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    spans.sort()
    out: list[str] = []
    pos = 0
    cur_start, cur_end = spans[0]
    for start, end in spans[1:]:
        if start <= cur_end:
            cur_end = max(cur_end, end)
            continue
        out += [text[pos:cur_start], MARKER]
        pos = cur_end
        cur_start, cur_end = start, end
    out += [text[pos:cur_start], MARKER, text[cur_end:]]
    return "".join(out)


def clean_json(value: Any, clean: Callable[[str], str]) -> Any:
    """Every string of a JSON value through ``clean``: mapping keys as well as values, at every depth.

    Two keys that clean to the same text both stay: the later ones get `` (2)``, `` (3)``... so no value
    the site gave is dropped (a result's counts still add up to its shots)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list | tuple):
        return [clean_json(v, clean) for v in value]
    if isinstance(value, dict):
        items = [(clean(k) if isinstance(k, str) else k, clean_json(v, clean)) for k, v in value.items()]
        taken = {k for k, _ in items}
        out: dict[Any, Any] = {}
        for key, item in items:
            if key in out:
                n = 2
                while f"{key} ({n})" in taken:
                    n += 1
                key = f"{key} ({n})"
                taken.add(key)
            out[key] = item
        return out
    return value
