"""The global cap: the contract's algorithm, block lists, stream files and its properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from yarp.limits import DEFAULT_CAP_BYTES
from yarp.shell.cap import cap_blocks, cap_files, cap_text, marker

REF = "yr_" + "ab" * 16


def test_marker_text_is_the_contracts():
    assert marker(9000, 5120, REF, "stdout", "complete") == (
        f"\n[yarp: 9000 byte(s) capped at 5120; ref={REF}; stdout complete]\n"
        f"Search omitted output: yarp search {REF} 'term|alternate'\n"
    )


def test_at_or_under_cap_nothing_changes():
    text = b"x" * DEFAULT_CAP_BYTES
    assert cap_text(text, archive_ref=REF) is text
    assert cap_blocks([{"type": "text", "text": text.decode()}], archive_ref=REF) is None


def test_zero_disables():
    text = b"y" * 100_000
    assert cap_text(text, cap=0, archive_ref=REF) == text
    assert cap_blocks([{"type": "text", "text": "y" * 100_000}], cap=0, archive_ref=REF) is None


def test_exact_cut_points():
    text = bytes(range(97, 123)) * 1000  # 26,000 ASCII bytes
    out = cap_text(text, cap=5120, archive_ref=REF, source="stdout", completeness="complete")
    mark = marker(len(text), 5120, REF, "stdout", "complete").encode()
    budget = 5120 - len(mark)
    head = budget // 2
    assert out == text[:head] + mark + text[len(text) - (budget - head):]
    assert len(out) == 5120


def test_utf8_boundaries_move_head_back_and_tail_forward():
    text = ("€" * 10_000).encode()  # 3-byte characters
    out = cap_text(text, cap=2048, archive_ref=REF)
    out.decode("utf-8")
    assert len(out) <= 2048
    mark = marker(len(text), 2048, REF, "result_text", "unknown").encode()
    head_part, tail_part = out.split(mark)
    assert len(head_part) % 3 == 0 and len(tail_part) % 3 == 0


def test_blocks_keep_images_in_order_and_marker_at_first_omitted_byte():
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    blocks = [
        {"type": "text", "text": "a" * 1000},
        image,
        {"type": "text", "text": "b" * 9000},
        {"type": "text", "text": "c" * 9000},
        {"type": "text", "text": "d" * 1000},
    ]
    out = cap_blocks(blocks, cap=4096, archive_ref=REF, source="result_text", completeness="incomplete")
    assert out is not None
    assert out[1] is image
    texts = [b["text"] for b in out if b["type"] == "text"]
    assert texts[0] == "a" * 1000
    assert texts[1].startswith("b") and "[yarp: 20000 byte(s) capped at 4096" in texts[1]
    assert texts[-1].endswith("d" * 1000)
    assert "ccc" not in texts[1]
    assert set(texts[2]) == {"c"} and 0 < len(texts[2]) < 9000  # only the end of the "c" block
    joined = "".join(texts).encode()
    assert len(joined) <= 4096
    assert len(out) == 5
    dropped = cap_blocks(blocks + [{"type": "text", "text": "e" * 9000}], cap=4096, archive_ref=REF)
    assert not any(set(b.get("text", "")) == {"d"} for b in dropped)  # a wholly omitted block disappears
    assert blocks[2]["text"] == "b" * 9000  # input untouched


def test_images_do_not_count():
    blocks = [{"type": "image", "data": "Z" * 100_000}, {"type": "text", "text": "short"}]
    assert cap_blocks(blocks, archive_ref=REF) is None


def test_cap_files_matches_cap_text_and_splits_per_stream(tmp_path):
    out_data = ("stdout line é\n" * 800).encode()
    err_data = ("stderr line ü\n" * 800).encode()
    (tmp_path / "o").write_bytes(out_data)
    (tmp_path / "e").write_bytes(err_data)
    parts = cap_files([str(tmp_path / "o"), str(tmp_path / "e")], cap=5120, archive_ref=REF)
    assert parts is not None and len(parts) == 2
    expected = cap_text(out_data + err_data, cap=5120, archive_ref=REF, source="stdout", completeness="complete")
    assert parts[0] + parts[1] == expected
    assert parts[0].startswith(b"stdout line") and b"[yarp:" in parts[0]
    assert parts[1].endswith(b"stderr line \xc3\xbc\n") and b"[yarp:" not in parts[1]


def test_cap_files_under_cap_is_none(tmp_path):
    (tmp_path / "o").write_bytes(b"small")
    (tmp_path / "e").write_bytes(b"")
    assert cap_files([str(tmp_path / "o"), str(tmp_path / "e")], archive_ref=REF) is None


def test_cap_files_reads_huge_files_without_loading_them(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: 300 MB of NULs, no disk use
    parts = cap_files([str(big)], archive_ref=REF)
    assert len(parts[0]) <= DEFAULT_CAP_BYTES and b"314572800 byte(s) capped" in parts[0]


utf8_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=3000)


@settings(max_examples=150, deadline=None)
@given(text=utf8_text, cap=st.sampled_from([0, 1024, 1500, 2048, 4096]))
def test_properties(text, cap):
    data = text.encode("utf-8")
    out = cap_text(data, cap=cap, archive_ref=REF, source="stdout", completeness="complete")
    out.decode("utf-8")  # valid UTF-8 in, valid UTF-8 out
    if cap == 0 or len(data) <= cap:
        assert out == data
        return
    assert len(out) <= cap
    mark = marker(len(data), cap, REF, "stdout", "complete").encode()
    assert REF.encode() in mark
    index = out.index(mark)
    head, tail = out[:index], out[index + len(mark):]
    assert data.startswith(head) and data.endswith(tail)
    budget = cap - len(mark)
    assert budget // 2 - 3 <= len(head) <= budget // 2
    assert budget - budget // 2 - 3 <= len(tail) <= budget - len(head)


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(utf8_text, min_size=1, max_size=6), cap=st.sampled_from([1024, 2048]))
def test_block_properties(parts, cap):
    blocks = [{"type": "text", "text": p} for p in parts]
    out = cap_blocks(blocks, cap=cap, archive_ref=REF)
    joined = "".join(parts).encode()
    if out is None:
        assert len(joined) <= cap
        return
    capped = "".join(b["text"] for b in out).encode()
    assert capped == cap_text(joined, cap=cap, archive_ref=REF)
    assert len(capped) <= cap
