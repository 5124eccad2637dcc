"""Chart titles that fit a 390 px phone: plotly never wraps a title, so ui.charts.theme does."""

from ui.charts.theme import HEAD_COLUMNS, TITLE_COLUMNS, wrap_title


def test_a_long_title_without_a_colon_breaks_between_words():
    title = "Decode step (tutorial's LLM view), Llama-3.1-8B on H100"  # 55 columns > 36
    lines = wrap_title(title)["text"].split("<br>")
    assert len(lines) == 2 and " ".join(lines) == title
    assert all(len(line) <= HEAD_COLUMNS for line in lines)


def test_a_short_title_and_a_colon_title_keep_their_shape():
    assert wrap_title("Roofline") == {"text": "Roofline"}
    head, sub = wrap_title("Roofline: H100, fp16")["text"].split("<br>")
    assert head == "Roofline" and sub == "<sup>H100, fp16</sup>"
    already = "Step time<br><sup>batch 8</sup>"
    assert wrap_title(already) == {"text": already}
    assert TITLE_COLUMNS > HEAD_COLUMNS  # the smaller subtitle text fits more per line
