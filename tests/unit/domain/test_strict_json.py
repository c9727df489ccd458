import pytest

from dunscaith.domain.model.strict_json import DecodeError, decode_exact, dumps_canonical

SPEC = {"host": (str,), "pid": (int,), "note": (str, type(None))}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ("[1]", "expected a JSON object"),
        ('{"host":"h","pid":1}', "missing field"),
        ('{"host":"h","pid":1,"note":null,"x":2}', "unexpected field"),
        ('{"host":"h","pid":"1","note":null}', "wrong type"),
        ('{"host":"h","pid":true,"note":null}', "wrong type"),
    ],
)
def test_refuses_anything_but_the_exact_object(text: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode_exact(text, SPEC, "instance")


def test_round_trip() -> None:
    obj = {"host": "h", "pid": 3, "note": None}
    assert decode_exact(dumps_canonical(obj), SPEC, "instance") == obj


def test_a_dataclass_spec_reads_each_field_as_json_carries_it() -> None:
    from dataclasses import dataclass
    from typing import ClassVar, NewType

    from dunscaith.domain.model.strict_json import dataclass_spec

    Name = NewType("Name", str)

    @dataclass(frozen=True)
    class Event:
        KIND: ClassVar[str] = "event"
        name: Name
        count: int
        note: str | None
        argv: tuple[str, ...]

    assert dataclass_spec(Event) == {"name": (str,), "count": (int,), "note": (str, type(None)), "argv": (list,)}


def test_every_job_event_decodes_exactly_the_fields_of_its_dataclass() -> None:
    from dataclasses import fields

    from dunscaith.domain.model.jobs import events as ev

    for kind, cls in ev._BY_KIND.items():
        assert list(ev.field_spec(kind)) == [f.name for f in fields(cls)], kind


# --- bounded depth (issue 10: a site body nested 200,000 deep was a RecursionError, exit 3) ----------

def test_a_body_nested_200000_deep_is_a_decode_error_not_a_recursion_error() -> None:
    import pytest

    from dunscaith.domain.model.strict_json import DecodeError, loads_bounded

    for body in (b"[" * 200_000, b"[" * 200_000 + b"]" * 200_000, '{"a":' * 100_000):
        with pytest.raises(DecodeError, match="nested deeper than 64"):
            loads_bounded(body)


def test_brackets_inside_strings_do_not_count_and_64_levels_read() -> None:
    import json

    from dunscaith.domain.model.strict_json import loads_bounded

    value = {"x": "[" * 500 + '\\"]{' * 50}
    assert loads_bounded(json.dumps(value)) == value
    assert loads_bounded("[" * 64 + "]" * 64) is not None
