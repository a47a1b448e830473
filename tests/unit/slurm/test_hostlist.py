"""SLURM hostlists: table-driven over the syntax SLURM prints and the classic parser bugs.

The "classic bugs" rows are the inputs that broke home-grown parsers elsewhere:
commas inside brackets, a single node, names not ending in a digit, and a dash
before the bracket.
"""
from __future__ import annotations

import itertools
import time

import pytest

from ari_jupyter.slurm.hostlist import first, HostlistError, compress, count, expand

EXPANSIONS = [
    # (hostlist, expected names)
    ("n1", ["n1"]),
    ("login", ["login"]),
    ("n[1-2]", ["n1", "n2"]),
    ("n[1-3,5]", ["n1", "n2", "n3", "n5"]),
    ("nodes[006,011]", ["nodes006", "nodes011"]),  # comma inside brackets
    ("nodes[006,011-012]", ["nodes006", "nodes011", "nodes012"]),
    ("host-[001-002]", ["host-001", "host-002"]),  # dash before the bracket
    ("frontend", ["frontend"]),  # no digits at all
    ("gpu-a", ["gpu-a"]),
    ("n[8-10]", ["n8", "n9", "n10"]),  # no padding: width of "8" is 1
    ("n[08-10]", ["n08", "n09", "n10"]),  # padding from the range start
    ("n[098-101]", ["n098", "n099", "n100", "n101"]),
    ("n[1-2,001-002]", ["n1", "n2", "n001", "n002"]),  # each range has its own width
    ("n[0]", ["n0"]),
    ("n[00]", ["n00"]),
    ("a[1-2]b[3-4]", ["a1b3", "a1b4", "a2b3", "a2b4"]),  # cartesian product, last fastest
    ("r[1-2]n[01-02]-ib", ["r1n01-ib", "r1n02-ib", "r2n01-ib", "r2n02-ib"]),
    ("x[1-2]y[1]z[7-8]", ["x1y1z7", "x1y1z8", "x2y1z7", "x2y1z8"]),
    ("[1-2]n", ["1n", "2n"]),
    ("n[1-2]-ib", ["n1-ib", "n2-ib"]),
    ("login,n[1-2]", ["login", "n1", "n2"]),  # top-level commas between items
    ("n[1-2],m[3-4]", ["n1", "n2", "m3", "m4"]),
    ("n1, n2", ["n1", "n2"]),
    ("n1 n2\tn3", ["n1", "n2", "n3"]),  # whitespace separates too (scontrol accepts it)
    ("  n[1-2]  ", ["n1", "n2"]),
    ("n2,n1,n2", ["n2", "n1", "n2"]),  # order and duplicates kept
    ("compute-b24-[1-3,5-9],compute-b25-[1,4,8]",
     ["compute-b24-1", "compute-b24-2", "compute-b24-3", "compute-b24-5", "compute-b24-6",
      "compute-b24-7", "compute-b24-8", "compute-b24-9", "compute-b25-1", "compute-b25-4",
      "compute-b25-8"]),
    ("a%d[1-2]", ["a%d1", "a%d2"]),  # printf characters are literal
    ("n[99999999999998-99999999999999]", ["n99999999999998", "n99999999999999"]),
]


@pytest.mark.parametrize("hostlist, names", EXPANSIONS, ids=[row[0] for row in EXPANSIONS])
def test_expand_and_count(hostlist, names):
    assert list(expand(hostlist)) == names
    assert count(hostlist) == len(names)


@pytest.mark.parametrize("hostlist, names", EXPANSIONS, ids=[row[0] for row in EXPANSIONS])
def test_compress_round_trips_every_expansion(hostlist, names):
    assert list(expand(compress(names))) == names


COMPRESSIONS = [
    # (names, shortest form)
    (["n1"], "n1"),
    (["login"], "login"),
    (["n1", "n2", "n3", "n5"], "n[1-3,5]"),
    (["nodes006", "nodes011"], "nodes[006,011]"),
    (["host-001", "host-002"], "host-[001-002]"),
    (["n8", "n9", "n10"], "n[8-10]"),
    (["n08", "n09", "n10"], "n[08-10]"),
    (["n098", "n099", "n100"], "n[098-100]"),
    (["n9", "n09"], "n[9,09]"),  # same number, different padding: both kept
    (["n1-ib", "n2-ib"], "n[1-2]-ib"),
    (["login", "n1", "n2"], "login,n[1-2]"),
    (["n3", "n1", "n2"], "n[3,1-2]"),  # order kept (expand gives the names back as given)
    (["n1", "m1", "n2"], "n1,m1,n2"),
    (["n1", "n1"], "n[1,1]"),
    (["a1b3", "a1b4", "a2b3", "a2b4"], "a[1-2]b[3-4]"),  # every bracket folded
    (["a1b3", "a1b4", "a2b3"], "a1b[3-4],a2b3"),  # a ragged product stays in order
    (["x1y1", "x2y1"], "x[1-2]y1"),
    (["r1-n9", "r2-n9", "r4-n9"], "r[1-2,4]-n9"),
    (["a1b1c1", "a1b1c2", "a1b2c1", "a1b2c2", "a2b1c1", "a2b1c2", "a2b2c1", "a2b2c2"],
     "a[1-2]b[1-2]c[1-2]"),
    ([f"r{r}n{n:03d}" for r in range(1, 41) for n in range(1, 129)], "r[1-40]n[001-128]"),
    (["n0", "n1"], "n[0-1]"),
    (["nid000001", "nid000002", "nid000004"], "nid[000001-000002,000004]"),
    (["a", "b", "c"], "a,b,c"),
    ([f"nid{n:06d}" for n in range(1, 158977)], "nid[000001-158976]"),
]


@pytest.mark.parametrize("names, expected", COMPRESSIONS, ids=[row[1][:40] for row in COMPRESSIONS])
def test_compress(names, expected):
    assert compress(names) == expected
    assert list(expand(expected)) == names


def test_compress_accepts_any_iterable():
    assert compress(expand("n[1-4]")) == "n[1-4]"
    assert compress(iter(["n2", "n3"])) == "n[2-3]"


MALFORMED = [
    # (hostlist, words the message must contain)
    ("", ["empty hostlist"]),
    ("   ", ["empty hostlist"]),
    ("cn[01-", ["'['", "never closed", "cn[01-"]),
    ("cn[5-2]", ["'5-2'", "backwards", "cn[5-2]"]),
    ("cn[1,7-3]", ["'7-3'", "backwards"]),
    ("cn[a-b]", ["'a-b'", "cn[a-b]", "not a number"]),
    ("cn[1-2:2]", ["'1-2:2'", "not a number"]),
    ("cn[-2]", ["'-2'", "not a number"]),
    ("cn[1-]", ["'1-'", "not a number"]),
    ("cn[]", ["empty brackets", "cn[]"]),
    ("cn[1,,2]", ["empty entry", "cn[1,,2]"]),
    ("cn]", ["']'", "closes no '['"]),
    ("cn[1-2]]", ["']'", "closes no '['"]),
    ("cn[1[2]]", ["nested", "cn[1[2]]"]),
    ("cn[1-2", ["never closed"]),
    ("a,,b", ["empty item", "column 3"]),
    (",a", ["empty item", "column 1"]),
    ("a,", ["ends with a separator"]),
    ("n[١-٢]", ["not a number"]),  # non-ASCII digits are not host numbers
]


@pytest.mark.parametrize("hostlist, words", MALFORMED, ids=[row[0] or "<empty>" for row in MALFORMED])
def test_malformed_hostlists_raise_a_clear_error(hostlist, words):
    for function in (count, expand):
        with pytest.raises(HostlistError) as raised:
            function(hostlist)
        for word in words:
            assert word in str(raised.value)


def test_expand_validates_before_the_first_name():
    with pytest.raises(HostlistError):
        expand("n[1-2],cn[5-2]")  # no next() needed


def test_hostlist_error_is_a_value_error():
    assert issubclass(HostlistError, ValueError)
    with pytest.raises(HostlistError, match="string"):
        count(None)  # type: ignore[arg-type]


BAD_NAMES = [
    ([], "empty list"),
    ([""], "empty host name"),
    (["n1", "a b"], "'a b'"),
    (["n[1]"], "'n[1]'"),
    (["a,b"], "'a,b'"),
    (["a\nb"], "'a\\nb'"),
    (["n1", 7], "not int"),
]


@pytest.mark.parametrize("names, words", BAD_NAMES, ids=[repr(row[0]) for row in BAD_NAMES])
def test_compress_rejects_names_a_hostlist_cannot_hold(names, words):
    with pytest.raises(HostlistError) as raised:
        compress(names)
    assert words in str(raised.value)


# ------------------------------------------------------------- Fugaku scale


FUGAKU = "nid[000001-158976]"


def test_fugaku_count_needs_no_expansion():
    start = time.perf_counter()
    assert count(FUGAKU) == 158_976
    assert count("nid[000001-099999,100000-158976]") == 158_976
    # A range far beyond any memory still counts: proof nothing is materialised.
    assert count("n[1-999999999999]") == 999_999_999_999
    assert time.perf_counter() - start < 5  # generous: this is a smoke check, not a benchmark


def test_fugaku_expands_lazily_and_completely():
    names = expand("n[1-999999999999]")
    assert list(itertools.islice(names, 3)) == ["n1", "n2", "n3"]  # returns at once
    total = 0
    last = None
    for total, last in enumerate(expand(FUGAKU), start=1):
        pass
    assert (total, last) == (158_976, "nid158976")


def test_fugaku_round_trip_and_fragmented_list():
    names = list(expand(FUGAKU))
    assert compress(names) == FUGAKU
    every_other = names[::2]  # 79,488 separate ranges: the fragmented worst case
    folded = compress(every_other)
    assert folded.startswith("nid[000001,000003,000005,")
    assert count(folded) == len(every_other)
    assert list(expand(folded)) == every_other


def test_multi_group_expansion_stays_lazy_in_the_last_group():
    names = expand("r[1-2]n[1-999999999999]")
    assert list(itertools.islice(names, 2)) == ["r1n1", "r1n2"]


@pytest.mark.parametrize("hostlist, head", [
    ("x[1-100000000]y[1-2]", ["x1y1", "x1y2", "x2y1"]),  # a huge leading group
    ("a[1-999999999]b[1-999999999]c[1-2]", ["a1b1c1", "a1b1c2", "a1b2c1"]),
    ("p[1-99999999]-[1-99999999]", ["p1-1", "p1-2", "p1-3"]),
])
def test_multi_group_expansion_is_lazy_in_every_group(hostlist, head):
    # Eager leading groups built a list of 100,000,000 names before the first one (7.8 GB).
    assert list(itertools.islice(expand(hostlist), 3)) == head
    assert first(hostlist) == head[0]


def _numbers(ranges):
    """``[(lo, hi, width), ...]`` -> every number as written (zero-padded to its width)."""
    return [f"{n:0{width}d}" for lo, hi, width in ranges for n in range(lo, hi + 1)]


def _bracket(ranges):
    return ",".join(f"{lo:0{w}d}" if lo == hi else f"{lo:0{w}d}-{hi:0{w}d}" for lo, hi, w in ranges)


# (literals, groups): an item literal[group]literal[group]...literal. The shapes put the
# rendered block's chunk boundaries (64 names, doubling to 8,192) inside one head, between
# heads, and after lazy leading stems.
BLOCK_SHAPES = [
    (["r", "n", ""], [[(1, 40, 1)], [(1, 128, 3)]]),  # 5,120 names, 128 per head
    (["-ib", "n", "-ib"], [[(547, 547, 1), (381, 1200, 1)], [(547, 547, 1), (381, 381, 1)]]),
    (["x", "y", ""], [[(1, 2, 1)], [(1, 30000, 1)]]),  # two heads of 30,000 names each
    (["a", "b", "c", ""], [[(1, 3, 1)], [(1, 70, 2)], [(1, 2, 1)]]),
    (["a", "b", "c", "d", "e"], [[(1, 3, 1)], [(1, 4, 1)], [(1, 5, 1)], [(7, 9, 1)]]),
    (["s", "b", "c", ""], [[(1, 3, 1)], [(1, 30000, 5)], [(1, 3, 1)]]),  # leading stems stay lazy
]


@pytest.mark.parametrize("literals, groups", BLOCK_SHAPES)
def test_multi_group_items_expand_in_order_whole_and_from_the_start(literals, groups):
    """The cartesian product, last group fastest: the same names whole, as a head and first."""
    text = literals[0] + "".join(f"[{_bracket(g)}]{lit}" for g, lit in zip(groups, literals[1:]))
    model = ["".join(itertools.chain.from_iterable(zip(literals, numbers + ("",))))
             for numbers in itertools.product(*map(_numbers, groups))]
    assert list(expand(text)) == model
    assert count(text) == len(model)
    assert list(itertools.islice(expand(text), 50)) == model[:50]
    assert first(text) == model[0]


def test_first_validates_the_whole_hostlist():
    assert first("login,n[1-2]") == "login"
    with pytest.raises(HostlistError):
        first("n1,n[2-")


def test_errors_in_huge_hostlists_stay_readable():
    huge = "nid[" + ",".join(f"{n:06d}" for n in range(1, 100_000, 2)) + ",000009-000003]"
    with pytest.raises(HostlistError) as raised:
        count(huge)
    message = str(raised.value)
    assert "'000009-000003'" in message and "backwards" in message
    assert len(message) < 200
    with pytest.raises(HostlistError) as raised:
        count(huge[:-1])  # the closing bracket lost
    assert "never closed" in str(raised.value) and len(str(raised.value)) < 200


def _long(entries: str, prefix: str = "nid", suffix: str = "") -> str:
    """A scattered allocation long enough for the scattered-list reader (64+ characters)."""
    return f"{prefix}[{entries}]{suffix}"


def _by_hand(prefix: str, numbers: list[str], suffix: str = "") -> list[str]:
    return [f"{prefix}{number}{suffix}" for number in numbers]


SCATTERED = [
    # (hostlist, expected names): shapes the scattered-list reader takes, and shapes it
    # must hand back to the general parser (mixed widths, a single entry at the end)
    (_long("0001,0003-0005,0007,0009-0010,0012,0014,0016,0018,0020-0022,0099-0101,2000"),
     _by_hand("nid", ["0001", "0003", "0004", "0005", "0007", "0009", "0010", "0012", "0014",
                      "0016", "0018", "0020", "0021", "0022", "0099", "0100", "0101", "2000"])),
    (_long("01,03-04,06,08,10,12,14,16,18,20,22,24,26,28,30,32,34-37", prefix="a{0}%s", suffix="-ib"),
     _by_hand("a{0}%s", ["01", "03", "04", "06", "08", "10", "12", "14", "16", "18", "20", "22",
                         "24", "26", "28", "30", "32", "34", "35", "36", "37"], "-ib")),
    (_long("8-10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48"),  # n[8-10]: no padding
     _by_hand("nid", ["8", "9", "10", "12", "14", "16", "18", "20", "22", "24", "26", "28", "30",
                      "32", "34", "36", "38", "40", "42", "44", "46", "48"])),
    (_long("001,003,005,007,009,011,013,015,017,019,021,023,025,027,029,1000-1001"),  # widths 3 and 4
     _by_hand("nid", ["001", "003", "005", "007", "009", "011", "013", "015", "017", "019",
                      "021", "023", "025", "027", "029", "1000", "1001"])),
    (_long(",".join(f"{n:05d}" for n in range(1, 60, 2))), _by_hand("nid", [f"{n:05d}" for n in range(1, 60, 2)])),
    (_long("00003-00001,00005,00007,00009,00011,00013,00015,00017,00019"), None),  # backwards
    (_long("00001,,00005,00007,00009,00011,00013,00015,00017,00019,00021"), None),  # empty entry
    (_long("00001-00003-00004,00007,00009,00011,00013,00015,00017,00019"), None),  # two dashes
    (_long("00001,-00003,00007,00009,00011,00013,00015,00017,00019,00021"), None),  # no start
]


@pytest.mark.parametrize("hostlist, names", SCATTERED)
def test_scattered_lists_read_like_the_general_parser(hostlist, names):
    if names is None:
        with pytest.raises(HostlistError):
            expand(hostlist)
        with pytest.raises(HostlistError):
            count(hostlist)
        return
    assert len(hostlist) >= 64
    assert list(expand(hostlist)) == names
    assert count(hostlist) == len(names)
    assert list(expand(compress(names))) == names


def test_scattered_lists_expand_in_chunks_without_losing_order():
    numbers = [n for n in range(1, 60_000) if n % 3]  # 40,000 names, 20,000 ranges of two
    names = [f"c{n:06d}s" for n in numbers]
    hostlist = compress(names)
    assert hostlist.startswith("c[000001-000002,000004-000005,")
    assert list(expand(hostlist)) == names
    assert count(hostlist) == len(names)


@pytest.mark.parametrize("text, message_id", [
    ("", "hostlist.empty"), ("a,", "hostlist.trailing_separator"), ("n[[1]]", "hostlist.nested"),
    ("n]", "hostlist.stray_close"), ("a,,b", "hostlist.empty_item"), ("n[1-", "hostlist.never_closed"),
    ("n[]", "hostlist.empty_brackets"), ("n[1,,2]", "hostlist.empty_entry"),
    ("n[a]", "hostlist.not_a_range"), ("n[3-1]", "hostlist.backwards"),
])
def test_every_parse_error_is_said_in_the_wizards_languages(text, message_id):
    """A malformed SLURM_JOB_NODELIST is shown in step 1 in the wizard's language: each parse
    error names its catalog message, whose English is the exception's own sentence."""
    from ari_jupyter.i18n import t
    from widget_text import english_sentences

    with pytest.raises(HostlistError) as raised:
        expand(text)
    error = raised.value
    assert error.message_id == message_id
    assert t(message_id, "en", **error.params) == str(error)
    for lang in ("ja", "zh"):
        said = t(message_id, lang, **error.params)
        assert said != str(error) and english_sentences([said]) == [], said
