"""The planner's share link: each parameter declared once (ui.links.params.Link).

Link parameters (a public contract): model, hardware (comma list), input_tokens, output_tokens,
ttft_ms, tpot_ms, min_tokens_per_s_per_user (a number, or `none` for no limit), tp, pp
(comma lists), ep (comma list: expert-parallel ranks, each tried with the tp it divides) and
attention_dp (`off`, `on` or both: an MoE model's layouts to search), precisions (comma list),
batches (`1,2,4` or ranges `1..256`, `8..512:8`), profile (a built-in profile, or a custom one
fitted on /accuracy: its name with every serving assumption it sets and its band and ground,
as every page carries one: ui.core.profiles), prices, and the serving assumptions by their CLI
names (efficiency, bandwidth_efficiency, attention_efficiency, expert_efficiency,
link_efficiency, link_latency_us, layer_overhead_us, dispatch_overhead_ms, memory_reserve,
dequant_overhead; absent = the profile's value), custom_hw, custom_model. Prices are one
parameter, `prices=H100:6.16,A100:2.7,Gaudi3:none` (USD per accelerator-hour; `none`: no price;
an accelerator left out: the catalogue's list price). The page writes every chosen
accelerator's price back, so a link keeps the prices it was made with. target_rate:
requests/s to plan replicas for under load (the name and range /load uses). Serving model and
profiles: docs/model.md.
"""

from __future__ import annotations

from collections.abc import Mapping

import engine
from ui.core import profiles
from ui.links import assumptions, custom
from ui.links import link_params as lp
from ui.links.params import (
    Link,
    Param,
    ParamError,
    choice,
    listing,
    note,
    number,
    write_list,
    write_number,
)
from ui.widgets import footprint
from ui.words.i18n import _

PAGE = "plan"
MAX_DEGREE = 1024  # a TP or PP degree; the serving model refuses more
NONE = "none"  # the link's word for "no limit" / "no price"
MAX_HARDWARE = 8
DEFAULT_BATCHES = [2**k for k in range(9)]  # 1, 2, 4, ..., 256
SLOS = {"ttft_ms": 2000.0, "tpot_ms": 50.0, "min_tokens_per_s_per_user": NONE}  # defaults
LIMIT = number(0.001, 1e9, none=NONE)  # an SLO in its unit (the field's range too), or none
PRICE = number(0.0, 1e6)  # USD per accelerator-hour (each price field's range too)
TARGET_RATE = number(0.001, 1e6)  # requests/s under load: /load's target_rate range
DEFAULT_TARGET_RATE = 10.0
SWITCHES = ("off", "on")  # attention DP values the planner tries


def _llm_reader(cat: engine.Catalog):
    def read(text: str) -> str:
        model = cat.find_model(text)
        if getattr(model, "arch", None) is None:
            raise ParamError(
                _("{model} has no shapes: the planner needs a decoder LLM").format(model=model.id)
            )
        return lp.found(model, text)

    return read


def _prices_reader(cat: engine.Catalog):
    def read(text: str) -> dict[str, float | None]:
        out = {}
        for item in (p.strip() for p in text.split(",")):
            name, sep, price = item.rpartition(":")
            if not item or not sep:
                raise ParamError(
                    _("{item}: write ACCELERATOR:USD (e.g. H100:6.16)").format(item=repr(item[:40]))
                )
            key = (
                custom.CUSTOM_HW_ID
                if custom.is_custom(name)
                else lp.found(cat.find_hardware(name), name)
            )
            if key in out:
                text = _("{hardware} priced more than once: the last price, {price}, used")
                note(text.format(hardware=key, price=price.strip()[:20]))
            out[key] = None if price.strip().lower() == NONE else PRICE(price)
        if len(out) > 32:
            raise ParamError(_("more than 32 accelerators"))
        return out

    return read


def _write_prices(prices: Mapping[str, float | None]) -> str:
    return ",".join(f"{h}:{NONE if v is None else f'{v:.6g}'}" for h, v in prices.items())


def _whole_list(top: int, max_items: int = 16):
    reader = listing(number(1, top, whole=True), max_items=max_items)
    return lambda text: sorted(reader(text))


def declare(cat: engine.Catalog, custom_profile: engine.Profile | None = None) -> Link:
    """Every link parameter of the planner, as the page and the fuzz tests build them
    (`custom_profile`: the custom profile a link carried; its values beyond the assumption
    fields below are link-only parameters)."""
    degrees = _whole_list(MAX_DEGREE)
    return Link(
        PAGE,
        [
            Param("model", _llm_reader(cat), default="Llama-3.1-70B"),
            lp.hardware_list(cat, ["H100", "A100", "MI300X"], MAX_HARDWARE),
            *lp.tokens(top=engine.MAX_CONTEXT, output_min=2),
            *(
                Param(name=name, read=LIMIT, write=write_number, default=default)
                for name, default in SLOS.items()
            ),
            Param(name="tp", read=degrees, write=write_list, default=[1, 2, 4, 8], widget="text"),
            Param(name="pp", read=degrees, write=write_list, default=[1], widget="text"),
            Param(name="ep", read=degrees, write=write_list, default=[1], widget="text"),
            Param(
                name="attention_dp",
                read=listing(choice(SWITCHES), max_items=2),
                write=write_list,
                default=["off"],
            ),
            Param(
                name="precisions",
                read=listing(lp.format_reader(engine.FORMATS, engine.FORMAT_ALIASES), max_items=8),
                write=write_list,
                default=["fp16", "fp8"],
            ),
            lp.batches(DEFAULT_BATCHES),
            *profiles.params(
                custom_profile, skip=assumptions.SERVING_OVERRIDES, keys=engine.PROFILE_KEYS
            ),
            Param("prices", _prices_reader(cat), _write_prices, widget="link"),
            Param(
                name="target_rate",
                read=TARGET_RATE,
                write=write_number,
                default=DEFAULT_TARGET_RATE,
            ),
            *(assumptions.param(name) for name in assumptions.SERVING_OVERRIDES),
            *footprint.params(),
            *lp.custom_specs(),
        ],
    )
