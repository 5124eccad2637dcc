"""Links that the page cannot use as given: what is shown is what the link holds,
and the change is said beside the field (AppTest, opened from the entry file as a browser does).
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def open_page(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def test_decode_tp_that_does_not_divide_the_heads_falls_back_and_the_link_says_so():
    # Llama-3.1-8B has 32 attention heads: tp 3 cannot split them
    at = open_page("decode", {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "3"})
    assert url(at, "tp") == "1" and url(at, "pp") == "1"  # the link holds what is shown
    beside = " ".join(w.value for w in at.sidebar.warning)
    assert "tp 3 does not divide" in beside and "tp=1, pp=1" in beside
    assert at.number_input(key="decode:tp").value == 3  # the field keeps what was asked
    assert any("Devices not used" in e.value for e in at.main.error)


def beside(at: AppTest) -> str:
    """The sidebar's warnings (beside the fields), markdown escapes removed."""
    return " ".join(w.value for w in at.sidebar.warning).replace("\\", "")


def test_duplicate_accelerators_are_kept_once_and_the_field_says_so():
    at = open_page("compare", {"model": "ResNet-50", "hardware": "H100,H100,A100"})
    assert "Link value changed: given more than once, kept once: H100." in beside(at)
    assert url(at, "hardware") == "H100,A100"
    at.multiselect(key="compare:hardware").set_value(["H100", "A100", "MI300X"]).run()
    assert "kept once" not in beside(at)  # the field changed: the note is gone


def test_the_last_of_two_prices_wins_and_the_price_fields_say_so():
    at = open_page("plan", {"hardware": "H100", "prices": "H100:6,h100:7"})
    assert "H100 priced more than once: the last price, 7, used" in beside(at)
    assert at.number_input(key="plan:price.H100").value == 7.0


def test_a_garbled_accelerator_in_a_deployment_is_named_with_what_it_became():
    link = {"model": "Llama-3.1-70B", "hardware": "H100,A100", "deployments": "**H100**/tp2"}
    at = open_page("compare", link)
    assert "'**H100**/tp2' read as 2xH100/tp2" in beside(at)
    assert url(at, "deployments") == "2xH100/tp2"


def test_repeated_batch_sizes_and_a_loosely_read_model_are_said_beside_their_fields():
    at = open_page("sweep", {"model": "resnet_50!", "hardware": "A100", "batches": "1,2,2,1..4"})
    said = beside(at)
    assert "'resnet_50!' read as ResNet-50" in said
    assert "3 repeated value(s) kept once" in said  # 1, 2 and 2 again: 1,2,3,4 kept
    assert url(at, "batches") == "1..4" and url(at, "model") == "ResNet-50"


def test_an_oversized_config_upload_is_refused_with_its_true_size():
    at = open_page("decode", {"model": "config.json"})
    uploader = at.file_uploader(key="decode:model_config.file")
    assert "at most 1,000,000 bytes" in uploader.label
    uploader.upload("config.json", b" " * 1_040_000, "application/json")
    at.run()
    refused = " ".join(e.value for e in at.sidebar.error)
    assert "1,040,000 bytes, larger than the limit of 1,000,000 bytes" in refused
    assert "1.0 MB" not in refused
