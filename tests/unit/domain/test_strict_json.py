import pytest

from domain.model.strict_json import DecodeError, decode_exact, dumps_canonical

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
def test_refuses_anything_but_the_exact_object(text, message):
    with pytest.raises(DecodeError, match=message):
        decode_exact(text, SPEC, "instance")


def test_round_trip():
    obj = {"host": "h", "pid": 3, "note": None}
    assert decode_exact(dumps_canonical(obj), SPEC, "instance") == obj
